"""activation/celu_v2: aclnnCelu(self, alpha, out) and aclnnInplaceCelu(selfRef, alpha).

Formula (doc page's 计算公式): out = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

Choices, and what decided them:
- exp(u) - 1 is computed as expm1(u), u = x / alpha (the arch35 kernel guards the same
  cancellation with Kahan's expm1 identity). In f32, in the doc's order: u, expm1(u) * alpha,
  the min with 0, the max of x with 0, their sum; rounded once to fp16/bf16.
- max and min propagate NaN (the kernel's Mins does: its comments name a NaN leaking through
  it), so NaN x gives NaN. A negative alpha is allowed: the min then keeps x > 0 at x and
  sends x -> -inf to -inf. -0 gives -0.
- alpha = 0 is refused, and so is a NaN alpha (op_api tests !(alpha > 0 || alpha < 0)).

Checks, in op_api's order: self, alpha, out present (161001); self's dtype listed; alpha's
dtype castable to FLOAT (every aclScalar dtype is); out's dtype castable from self's; rank
<= 8; shapes equal; alpha = 0 or NaN (161002). CANN casts the result to out's dtype; aclgen
requires out of self's dtype (161002). SoCs: Atlas inference products unsupported; Atlas
training products FLOAT and FLOAT16.
Held to 3 ulp against a float64 reference from u = f32(x / alpha) (expm1 <= 1 ulp, a multiply,
an add; measured 1.5 in f32).
"""

import numpy as np

import aclgen
from aclgen import Scalar, expm1, maximum, minimum
from aclgen.runtime import constants as C

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": ()}


def check(call):
    """op_api's order: presence; self's dtype listed; out of self's dtype (aclgen does not
    cast); rank <= 8; shapes equal; alpha neither 0 nor NaN."""
    call.present()
    call.dtype_in("self")
    call.same_dtype("out", ref="self")
    call.max_rank("self")
    shape = call.same_shape("out", ref="self")
    alpha = call.scalar("alpha").f32
    if not (alpha > 0 or alpha < 0):
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"alpha must not be 0 (or NaN), got {alpha!r}")
    call.out_shape(shape)


def celu_reference(x, alpha):
    a = np.float32(alpha)
    with np.errstate(all="ignore"):
        u = (x.astype(np.float32) / a).astype(np.float64)  # the formula's f32 quotient
        return np.maximum(x, 0.0) + np.minimum(float(a) * np.expm1(u), 0.0)


# the doc page's call example: self = [-2, -1, 0, 1], alpha = 1, FLOAT [2, 2]
EXAMPLE = aclgen.Example((np.array([[-2, -1], [0, 1]], np.float32), 1.0), tuple("-0.86466473 -0.63212055 0 1".split()))


@aclgen.operator(
    "Celu",
    inputs=("self",),
    scalars=(Scalar("alpha", default=1.0),),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    inplace="self",
    check=check,
    reference=celu_reference,
    tolerance=3,
    examples=(EXAMPLE,),
)
def celu(x, alpha):
    """CELU: max(0, x) + min(0, alpha * expm1(x / alpha)); NaN stays NaN."""
    return maximum(x, 0.0) + minimum(expm1(x / alpha) * alpha, 0.0)
