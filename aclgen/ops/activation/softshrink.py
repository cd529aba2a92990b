"""activation/softshrink: aclnnSoftshrink(self, lambd, out).

Formula (doc page's 计算公式): out = x - lambd where x > lambd, x + lambd where x < -lambd,
else 0.

Choices the doc leaves open, and what decided them:
- NaN x: the arch35 kernel selects on `x > lambd` and `x < -lambd`, both false for NaN, so a
  NaN becomes 0 (its comments name this as a known difference from PyTorch, which keeps NaN).
  A NaN lambd passes the sign check (NaN < 0 is false) and gives 0 everywhere.
- x = +-lambd gives 0 (strict compares: doc and kernel agree).
- Arithmetic in f32 (the kernel widens fp16/bf16 to f32), rounded once to the output dtype.

Checks, in op_api's order: self, lambd, out present (161001); self's and out's dtypes listed;
shapes equal and rank <= 8; lambd < 0 (161002). CANN casts the result to any listed out dtype;
aclgen requires out to be of self's dtype (161002). SoCs: Atlas training and inference
products take FLOAT and FLOAT16. Held to 0.5 ulp against the reference (the f32 add rounded once
to the output dtype).
"""

import numpy as np

import aclgen
from aclgen import Scalar, select
from aclgen.runtime import constants as C

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": FLOAT_HALF_BF16[:2]}


def check(call):
    """op_api's order: presence; dtypes listed (out of self's dtype in aclgen); shapes equal;
    rank <= 8; lambd >= 0 (NaN passes)."""
    call.present()
    call.dtype_in("self", "out")
    call.same_dtype("out", ref="self")
    shape = call.same_shape("out", ref="self")
    call.max_rank("self")
    lambd = call.scalar("lambd").f32
    if lambd < 0:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"lambd must be >= 0, got {lambd!r}")
    call.out_shape(shape)


def softshrink_reference(x, lambd):
    lam = np.float32(lambd)
    xf = x.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        hi, lo = (xf - lam).astype(np.float64), (xf + lam).astype(np.float64)
        return np.where(x > lam, hi, np.where(x < -lam, lo, 0.0))


# the doc page's call example: self = 0.1 .. 0.8, lambd = 0.5, FLOAT [4, 2]
EXAMPLE = aclgen.Example(
    (np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], np.float32).reshape(4, 2), 0.5),
    tuple("0 0 0 0 0 0.100000024 0.19999999 0.3".split()),
)


@aclgen.operator(
    "Softshrink",
    inputs=("self",),
    scalars=(Scalar("lambd", default=0.5),),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    reference=softshrink_reference,
    tolerance=0.5,
    examples=(EXAMPLE,),
)
def softshrink(x, lambd):
    """Soft shrinkage: x - lambd above lambd, x + lambd below -lambd, 0 in between (and for NaN)."""
    return select(x > lambd, x - lambd, select(x < -lambd, x + lambd, 0.0))
