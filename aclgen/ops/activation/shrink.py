"""activation/shrink: aclnnShrink(self, lambd, bias, out).

Formula (doc page's 计算公式): out = x - bias where x > lambd, x + bias where x < -lambd,
0 where -lambd <= x <= lambd.

Choices the doc leaves open, and what decided them:
- NaN x: neither compare holds, so 0 (the arch35 kernel selects on the two compares the same
  way). A NaN lambd passes the sign check (NaN < 0 is false) and makes every element 0.
- Arithmetic: x - bias and x + bias in f32, rounded once to the output dtype. The arch35 kernel
  adds in fp16 for fp16 tensors with bias rounded to fp16 first; the doc's formula uses bias
  itself, which aclgen does.

Checks, in op_api's order: self, lambd, bias, out present (161001); self's then out's dtype
listed; shapes equal; lambd < 0; self and out of one format (161002). op_api checks no rank,
so neither does aclgen. CANN casts the result to any listed out dtype; aclgen requires out to
be of self's dtype (161002). SoCs: Atlas training products unsupported (every call 161002).
Held to 0.5 ulp against the reference (the f32 add rounded once to the output dtype).
"""

import numpy as np

import aclgen
from aclgen import Scalar, select
from aclgen.runtime import constants as C

FLOAT_HALF = ("float32", "float16")
DTYPES = {"Ascend910B": FLOAT_HALF, "Ascend910_93": FLOAT_HALF, "Ascend950": FLOAT_HALF, "Ascend910": (),
          "Ascend310P": FLOAT_HALF}


def check(call):
    """op_api's order: presence; dtypes listed (out of self's dtype in aclgen); shapes equal;
    lambd >= 0 (NaN passes); self and out share a format."""
    call.present()
    call.dtype_in("self")
    call.dtype_in("out")
    call.same_dtype("out", ref="self")
    shape = call.same_shape("out", ref="self")
    lambd = call.scalar("lambd").f32
    if lambd < 0:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"lambd must be >= 0, got {lambd!r}")
    x, out = call.tensor("self"), call.tensor("out")
    if x.format != out.format:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"out format {C.format_name(out.format)} must equal self "
                                                    f"format {C.format_name(x.format)}")
    call.out_shape(shape)


def shrink_reference(x, lambd, bias):
    lam, b = np.float64(np.float32(lambd)), np.float64(np.float32(bias))
    xf = x.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        hi = (xf - np.float32(b)).astype(np.float64)
        lo = (xf + np.float32(b)).astype(np.float64)
        return np.where(x > lam, hi, np.where(x < -lam, lo, 0.0))


# the doc page's call example: self = 0.1 .. 0.8, lambd = 0.5, bias = 0, FLOAT [4, 2]
EXAMPLE = aclgen.Example(
    (np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], np.float32).reshape(4, 2), 0.5, 0.0),
    tuple("0 0 0 0 0 0.6 0.7 0.8".split()),
)


@aclgen.operator(
    "Shrink",
    inputs=("self",),
    scalars=(Scalar("lambd", default=0.5), Scalar("bias", default=0.0)),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    max_rank=None,
    check=check,
    reference=shrink_reference,
    tolerance=0.5,
    examples=(EXAMPLE,),
)
def shrink(x, lambd, bias):
    """x - bias above lambd, x + bias below -lambd, 0 in between."""
    return select(x > lambd, x - bias, select(x < -lambd, x + bias, 0.0))
