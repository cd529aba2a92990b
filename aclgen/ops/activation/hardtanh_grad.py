"""activation/hardtanh_grad: aclnnHardtanhBackward(gradOutput, self, min, max, out).

Formula (doc page's 计算公式): out = gradOutput * grad_self, grad_self = 0 where self > max or
self < min, 1 otherwise.

Choices, and what decided them:
- The bounds: the doc is explicit, self = min and self = max are "otherwise" and pass
  gradOutput. The arch35 kernel (hardtanh_grad_dag.h) passes it only for min < self < max, as
  PyTorch's hardtanh_backward does; the doc's formula is the contract, so aclgen follows it.
- NaN self: both of the doc's compares are false, so it is "otherwise" and passes gradOutput;
  the kernel agrees (it ORs a self != self mask into its pass mask).
- The product with a 0/1 factor: the kernel selects (gradOutput or 0), so an infinite or NaN
  gradOutput outside the bounds gives 0, not NaN; the doc's product does not say what 0 * inf
  is, so the kernel decided. Exact: no rounding.
- min > max: nothing passes except NaN self (the doc's compares as written).

Checks, in op_api's order: self, gradOutput, out, min, max present (161001); gradOutput's,
self's and out's dtypes listed; gradOutput of self's dtype; ranks <= 8; gradOutput of self's
shape (161002). op_api does not compare out with them (its copy-out does); aclgen requires out
of self's dtype and shape (161002). Held to 0 ulp against the reference (a select).
"""

import numpy as np

import aclgen
from aclgen import Scalar, select

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": FLOAT_HALF_BF16[:2]}


def check(call):
    """op_api's order: presence (self first); dtypes listed; gradOutput (and, in aclgen, out)
    of self's dtype; ranks <= 8; one shape."""
    call.present("self", "gradOutput", "out", "min", "max")
    call.dtype_in("gradOutput", "self", "out")
    call.same_dtype("gradOutput", "out", ref="self")
    call.max_rank("gradOutput", "self")
    shape = call.same_shape("gradOutput", ref="self")
    call.out_shape(shape)


def hardtanh_backward_reference(g, x, lo, hi):
    lo, hi = float(np.float32(lo)), float(np.float32(hi))
    with np.errstate(invalid="ignore"):
        return np.where((x > hi) | (x < lo), 0.0, g)


# the doc page's call example: gradOutput = 0..7, self = [1, 1, 1, 2, 1, 2, 3, 3], min = 1.2,
# max = 2.4, FLOAT [4, 2]
EXAMPLE = aclgen.Example(
    (np.arange(8, dtype=np.float32).reshape(4, 2), np.array([1, 1, 1, 2, 1, 2, 3, 3], np.float32).reshape(4, 2),
     1.2, 2.4),
    tuple("0 0 0 3 0 5 0 0".split()),
)


@aclgen.operator(
    "HardtanhBackward",
    inputs=("gradOutput", "self"),
    scalars=(Scalar("min", default=-1.0), Scalar("max", default=1.0)),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    reference=hardtanh_backward_reference,
    tolerance=0,
    examples=(EXAMPLE,),
)
def hardtanh_backward(g, x, lo, hi):
    """The gradient of hardtanh(min, max) at `self` applied to `gradOutput`: passed for
    min <= self <= max (bounds included, as the doc says) and NaN self, else 0."""
    return select((x > hi) | (x < lo), 0.0, g)
