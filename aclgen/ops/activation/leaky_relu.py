"""activation/leaky_relu: aclnnLeakyRelu(self, negativeSlope, out) and aclnnInplaceLeakyRelu.

Formula (doc page's 计算公式): out = max(0, x) + negativeSlope * min(0, x).

Choices, and what decided them: the kernel (arch35 leaky_relu_dag.h) computes
`x > 0 ? x : x * negativeSlope`, which is the doc's formula wherever that formula is exact
and settles what it leaves open: x > 0 returns x itself (even for an infinite or NaN slope),
-0 gives -0 * slope, NaN gives NaN * slope (NaN), -inf with slope 0 gives NaN. One f32
multiply, rounded once to the output dtype.

How it is computed: for a slope in (0, 1], the usual case, `x > p ? x : p` with p = x * slope
is the same function in every lane, ±0, ±inf and NaN included (p <= x for x > 0 and p >= x for
x < 0, since rounding is monotone; a positive slope keeps zeros' signs and infinities), and it
is one maxps instead of a compare and a blend: bfloat16 at 1M elements 39 instructions a
32-lane step instead of 43 (llvm-mca), about 5% of the time. Any other slope (0, negative,
above 1, NaN) is `unlikely` and takes the kernel's formula as written.

Checks, in op_api's order: self, negativeSlope, out present (161001); self's dtype listed;
out's dtype castable from self's; rank <= 8; out of self's shape (161002). CANN casts the
result to out's dtype; aclgen requires out of self's dtype (161002). DOUBLE (listed for some
products) is not an aclgen dtype. SoCs: Atlas inference products unsupported; Atlas training
products FLOAT and FLOAT16. Held to 0.5 ulp against the reference (the f32 multiply, rounded once).
"""

import numpy as np

import aclgen
from aclgen import Scalar, logical_and, logical_not, select, unlikely

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": ()}


def check(call):
    """op_api's order: presence; self's dtype listed; out of self's dtype (aclgen does not
    cast); rank <= 8; out of self's shape."""
    call.present()
    call.dtype_in("self")
    call.same_dtype("out", ref="self")
    call.max_rank("self")
    call.out_shape(call.same_shape("out", ref="self"))


def leaky_relu_reference(x, negative_slope):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(x > 0, x, (x.astype(np.float32) * np.float32(negative_slope)).astype(np.float64))


# the doc page's call example: self = [1, 2, 3, 4], negativeSlope = 0.01, FLOAT [4]
EXAMPLE = aclgen.Example((np.array([1, 2, 3, 4], np.float32), 0.01), tuple("1 2 3 4".split()))


@aclgen.operator(
    "LeakyRelu",
    inputs=("self",),
    scalars=(Scalar("negativeSlope", default=0.01),),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    inplace="self",
    check=check,
    reference=leaky_relu_reference,
    tolerance=0.5,
    examples=(EXAMPLE,),
)
def leaky_relu(x, negative_slope):
    """Leaky ReLU: x where x > 0, else x * negativeSlope."""
    p = x * negative_slope
    other_slope = unlikely(logical_not(logical_and(negative_slope > 0.0, negative_slope <= 1.0)))
    return select(other_slope, select(x > 0.0, x, p), select(x > p, x, p))
