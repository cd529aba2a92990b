"""activation/elu: aclnnElu(self, alpha, scale, inputScale, out) and aclnnInplaceElu.

Formula (doc page's 计算公式): out = scale * x for x > 0, alpha * scale * (exp(x * inputScale)
- 1) for x <= 0.

Choices, and what decided them:
- exp(z) - 1 is computed as expm1(z) (z = x * inputScale): for z in [-0.1, 0) the difference
  loses most of its digits in f32 (the arch35 kernel switches to a polynomial there for the same
  reason). The f32 order is the kernel's: expm1(z) * alpha, the select on x > 0, then * scale;
  rounded once to fp16/bf16.
- NaN x fails x > 0 and gives NaN through expm1. -0 gives -0 (for alpha, scale > 0).
- An infinite or NaN alpha or inputScale: op_api does not run the kernel then, but a Threshold
  (x > 0 ? x : -alpha) followed by * scale; so every x <= 0, and NaN x, gives -alpha * scale
  (the limit of the x <= 0 branch for inputScale = +inf). aclgen computes the same.

Checks, in op_api's order: self, alpha, scale, inputScale, out present (161001); self's dtype
listed; scale's, alpha's, inputScale's dtypes castable to FLOAT (every aclScalar dtype is);
out's dtype castable from self's; shapes equal; rank <= 8 (161002). CANN casts the result to
out's dtype; aclgen requires out of self's dtype (161002). DOUBLE (listed) is not an aclgen
dtype. SoCs: Atlas training products FLOAT and FLOAT16 (Atlas inference products: FLOAT,
FLOAT16 and BFLOAT16 per the doc's table, which has no note for them).
Held to 3 ulp against a float64 reference from z = f32(x * inputScale) (expm1 <= 1 ulp, then
two f32 multiplies; measured 1.9 in f32).
"""

import numpy as np

import aclgen
from aclgen import Scalar, expm1, isfinite, select

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": FLOAT_HALF_BF16}


def check(call):
    """op_api's order: presence; self's dtype listed; out of self's dtype (aclgen does not
    cast); shapes equal; rank <= 8."""
    call.present()
    call.dtype_in("self")
    call.same_dtype("out", ref="self")
    shape = call.same_shape("out", ref="self")
    call.max_rank("self")
    call.out_shape(shape)


def elu_reference(x, alpha, scale, input_scale):
    a, s, k = (np.float64(np.float32(v)) for v in (alpha, scale, input_scale))
    with np.errstate(all="ignore"):
        if not (np.isfinite(a) and np.isfinite(k)):
            return np.where(x > 0, x * s, -a * s)
        z = (x.astype(np.float32) * np.float32(k)).astype(np.float64)  # the formula's f32 product
        return np.where(x > 0, x * s, a * s * np.expm1(z))


# the doc page's call example: self = [-2, -1, 0, 1], alpha = scale = inputScale = 1, FLOAT [2, 2]
EXAMPLE = aclgen.Example((np.array([[-2, -1], [0, 1]], np.float32), 1.0, 1.0, 1.0),
                         tuple("-0.86466473 -0.63212055 0 1".split()))


@aclgen.operator(
    "Elu",
    inputs=("self",),
    scalars=(Scalar("alpha", default=1.0), Scalar("scale", default=1.0), Scalar("inputScale", default=1.0)),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    inplace="self",
    check=check,
    reference=elu_reference,
    tolerance=3,
    examples=(EXAMPLE,),
)
def elu(x, alpha, scale, input_scale):
    """ELU: scale * x for x > 0, alpha * scale * expm1(x * inputScale) otherwise."""
    regular = expm1(x * input_scale) * alpha
    limit = -alpha
    negative = select(isfinite(alpha) & isfinite(input_scale), regular, limit)
    return select(x > 0.0, x, negative) * scale
