"""activation/hard_swish_grad_v2: aclnnHardswishBackwardV2(gradOutput, self, out).

Formula (doc page's 计算公式): out = gradOutput * d, d = 0 for self <= -3, self / 3 + 0.5 for
-3 < self < 3, 1 for self >= 3 (aclnnHardswishBackward has the ends the other way round).

Choices, and what decided them:
- self / 3 + 0.5 is computed as (self + 1.5) / 3, the same function: in f32, self / 3 + 0.5
  cancels near self = -1.5 and is thousands of ulps off there (the arch35 kernel's
  self * f32(1/3) + 0.5 and PyTorch's self / 3 + 0.5 both are), while self + 1.5 is exact
  there. Then the product with gradOutput, in f32, rounded once to the output dtype.
- The product is a product (doc and kernel both multiply): an infinite gradOutput where d = 0
  gives NaN.
- NaN self: the kernel's two selects (self > -3, then self < 3) both fail, so d = 1 and out =
  gradOutput; the doc's branches do not name NaN, so the kernel decided.

Checks, in op_api's order: gradOutput, self, out present (161001); gradOutput's and self's
dtypes listed; gradOutput and out of self's dtype; ranks <= 8; gradOutput and out of self's
shape (161002). SoCs: Atlas inference products unsupported; Atlas training products FLOAT and
FLOAT16. Held to 1.5 ulp against a float64 reference (an add, a division, a product).
"""

import numpy as np

import aclgen
from aclgen import select

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": ()}


def check(call):
    """op_api's order: presence; gradOutput's and self's dtypes listed; one dtype; ranks <= 8;
    one shape."""
    call.present()
    call.dtype_in("gradOutput", "self")
    call.same_dtype("gradOutput", "out", ref="self")
    call.max_rank("gradOutput", "self")
    call.same_shape("gradOutput", ref="self")
    call.out_shape(call.same_shape("out", ref="self"))


def hardswish_backward_v2_reference(g, x):
    with np.errstate(invalid="ignore", over="ignore"):
        return g * np.where(x <= -3, 0.0, np.where(x < 3, x / 3 + 0.5, 1.0))


# the doc page's call example: gradOutput = self = 0..7, FLOAT [4, 2]
EXAMPLE = aclgen.Example(
    (np.arange(8, dtype=np.float32).reshape(4, 2), np.arange(8, dtype=np.float32).reshape(4, 2)),
    tuple("0 0.8333333 2.3333333 3 4 5 6 7".split()),
)


@aclgen.operator(
    "HardswishBackwardV2",
    inputs=("gradOutput", "self"),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    reference=hardswish_backward_v2_reference,
    tolerance=1.5,
    examples=(EXAMPLE,),
)
def hardswish_backward_v2(g, x):
    """The gradient of hardswish at `self` applied to `gradOutput` (0 at self = -3, gradOutput at
    self = 3; NaN self passes gradOutput)."""
    d = select(x <= -3.0, 0.0, select(x < 3.0, (x + 1.5) / 3.0, 1.0))
    return g * d
