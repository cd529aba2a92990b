"""activation/hard_sigmoid_grad: aclnnHardsigmoidBackward(gradOutput, self, out).

The doc page gives no formula (it names the API as aclnnHardsigmoid's backward), so the kernel
(arch35 hard_sigmoid_grad.h, with op_api's alpha = 1/6 and beta = 0.5) decides it: out =
gradOutput * alpha where 0 < alpha * self + beta < 1, else 0 (a select: an infinite gradOutput
outside gives 0). aclgen computes that function exactly: the condition is -3 < self < 3 (the
kernel's f32 rounding of self * f32(1/6) + 0.5 reaches 1 already at self = 2.9999998), the value
gradOutput / 6, rounded once to the output dtype. So self = -3 and self = 3 give 0, and a NaN
self gives 0.

Mixed gradOutput/self dtypes promote as CANN's PromoteType does among the listed ones (equal:
that dtype; otherwise FLOAT). Checks, in op_api's order: gradOutput, self, out present
(161001); gradOutput's and self's dtypes listed; the promoted dtype castable to out's; ranks
<= 8; gradOutput and out of self's shape (161002). CANN casts the result to any out dtype the
promoted one casts to; aclgen requires out of the promoted dtype (161002).
SoCs: Atlas training and inference products take FLOAT and FLOAT16.
Held to 0.5 ulp against a float64 reference (one division).
"""

import numpy as np

import aclgen
from aclgen import select

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": FLOAT_HALF_BF16[:2]}


def promote(g: str, x: str) -> str:
    """PromoteType among FLOAT, FLOAT16, BFLOAT16: equal dtypes keep theirs, others give FLOAT."""
    return g if g == x else "float32"


def check(call):
    """op_api's order: presence; input dtypes listed; out of the promoted dtype; ranks <= 8;
    one shape."""
    call.present()
    call.dtype_in("gradOutput", "self")
    call.result_dtype()
    call.max_rank("gradOutput", "self", "out")
    shape = call.same_shape("gradOutput", ref="self")
    call.same_shape("out", ref="self")
    call.out_shape(shape)


def hardsigmoid_backward_reference(g, x):
    with np.errstate(invalid="ignore"):
        return np.where((x > -3) & (x < 3), g / 6, 0.0)


# the doc page's call example: gradOutput = self = 0..7, FLOAT [4, 2]
EXAMPLE = aclgen.Example(
    (np.arange(8, dtype=np.float32).reshape(4, 2), np.arange(8, dtype=np.float32).reshape(4, 2)),
    tuple("0 0.16666667 0.33333334 0 0 0 0 0".split()),
)


@aclgen.operator(
    "HardsigmoidBackward",
    inputs=("gradOutput", "self"),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    promote=promote,
    check=check,
    reference=hardsigmoid_backward_reference,
    tolerance=0.5,
    examples=(EXAMPLE,),
)
def hardsigmoid_backward(g, x):
    """The gradient of hardsigmoid at `self` applied to `gradOutput`: gradOutput / 6 where
    -3 < self < 3, else 0."""
    return select((x > -3.0) & (x < 3.0), g / 6.0, 0.0)
