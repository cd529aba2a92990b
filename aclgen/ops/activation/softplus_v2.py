"""activation/softplus_v2: aclnnSoftplus(self, beta, threshold, out).

Formula (doc page's 计算公式): out = self where β * self > threshold, else log(1 + e^(β * self)) / β.
z = β * self is the f32 product of self and the f32 value of beta, compared with the f32
threshold as it is, strictly greater (the doc's `<=` / `>` split; a NaN z takes the log branch
and stays NaN). log(1 + e^z) is computed without overflow as max(z, 0) + log1p(e^-|z|), so a
threshold above 88 still gives z / β, not inf. x = +inf gives +inf (z > threshold), -inf gives 0.
The reference takes the branch from the same f32 z and computes the rest in float64.

Bound: 4 ulp of the output dtype against that reference for β = 1; for other β the f32 z carries
up to 2^-24 relative error, which e^z turns into about |z| * 2^-24 relative where z < 0.

dtypes: FLOAT16, FLOAT, BFLOAT16 on Atlas A2/A3; FLOAT16 and FLOAT on the Atlas training and
inference series; Ascend 950 is not supported (every call 161002), as the doc's table says. out
has self's dtype (op_api casts to any dtype self's casts to; aclgen does not) and shape.

Checks (op_api's order), 161001 for a NULL self, beta, threshold or out, else 161002: self's
dtype in the SoC's list; out's dtype equal to self's; at most 8 dims for self; out's shape equal
to self's.
"""

import numpy as np

import aclgen
from aclgen import Scalar, exp, log1p, maximum, select

DTYPES = {"Ascend910B": ("float16", "float32", "bfloat16"), "Ascend910_93": ("float16", "float32", "bfloat16"),
          "Ascend950": (), "Ascend910": ("float16", "float32"), "Ascend310P": ("float16", "float32")}


def check(call):
    """CANN's order: presence, self's dtype, out's dtype, the rank, the shape."""
    call.present()
    call.dtype_in("self")
    call.same_dtype("out")
    call.max_rank("self")
    call.out_shape(call.same_shape("out"))


def softplus_reference(x, beta=1.0, threshold=20.0):
    b = float(np.float32(beta))
    z32 = (np.float32(b) * x.astype(np.float32)).astype(np.float64)
    with np.errstate(all="ignore"):
        return np.where(z32 > np.float32(threshold), x, np.logaddexp(0.0, b * x) / b)


@aclgen.operator(
    "Softplus",
    inputs=("self",),
    scalars=(Scalar("beta", default=1.0), Scalar("threshold", default=20.0)),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    reference=softplus_reference,
    tolerance=4,
    backward="SoftplusBackward",
)
def softplus(x, beta, threshold):
    """log(1 + e^(beta x)) / beta, or x where beta x > threshold, element by element."""
    z = beta * x
    return select(z > threshold, x, (maximum(z, 0.0) + log1p(exp(-abs(z)))) / beta)
