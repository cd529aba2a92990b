"""activation/hard_shrink: aclnnHardshrink(self, lambd, out).

Formula (doc page's 计算公式): out = x where x > lambd or x < -lambd, else 0.

Choices the doc leaves open, and what decided them:
- A negative lambd (the doc's table says nothing about its sign): op_api replaces it by 0
  before the kernel runs (`lambd < 0 ? 0 : lambd`), so every nonzero x passes. A NaN lambd is
  not negative there, so it reaches the kernel as NaN.
- The compare: the kernel computes `|x| <= lambd ? 0 : x` (arch35 hard_shrink.h), so
  |x| = lambd gives 0 (the doc's strict compares agree), a NaN x keeps its NaN, and a NaN lambd
  makes every compare false (out = x). The 0 written is +0, for x = -0 too.
- fp16/bf16 compare and select in f32 (the kernel widens them the same way): exact.

Checks, in op_api's order: self, lambd, out present (161001); self's then out's dtype in the
SoC's list; shapes equal; rank <= 8 (161002). CANN casts the result to out's dtype when out
is another listed dtype; aclgen computes in self's dtype and requires out to match it (161002).
SoCs: the doc page lists Ascend 950 as unsupported (every call 161002 there); Atlas training
and inference products take FLOAT and FLOAT16. Held to 0 ulp against the reference (a select).
"""

import numpy as np

import aclgen
from aclgen import Scalar, select

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": (),
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": FLOAT_HALF_BF16[:2]}


def check(call):
    """op_api's order: presence; self's and out's dtypes listed; out of self's dtype (aclgen
    does not cast the result); out of self's shape; rank <= 8."""
    call.present()
    call.dtype_in("self")
    call.dtype_in("out")
    call.same_dtype("out", ref="self")
    shape = call.same_shape("out", ref="self")
    call.max_rank("self")
    call.out_shape(shape)


def hardshrink_reference(x, lambd):
    lam = max(float(np.float32(lambd)), 0.0) if not np.isnan(np.float32(lambd)) else np.nan
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x) <= lam, 0.0, x)


# the doc page's call example: self = 0.1 .. 0.8, lambd = 0.5, FLOAT [4, 2]
EXAMPLE = aclgen.Example(
    (np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], np.float32).reshape(4, 2), 0.5),
    tuple("0 0 0 0 0 0.6 0.7 0.8".split()),
)


@aclgen.operator(
    "Hardshrink",
    inputs=("self",),
    scalars=(Scalar("lambd", default=0.5),),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    reference=hardshrink_reference,
    tolerance=0,
    examples=(EXAMPLE,),
)
def hardshrink(x, lambd):
    """Hard shrinkage: x where |x| > lambd, else 0 (a negative lambd counts as 0)."""
    lam = select(lambd < 0, 0.0, lambd)
    return select(abs(x) <= lam, 0.0, x)
