"""activation/hard_swish: aclnnHardswish(self, out) and aclnnInplaceHardswish.

Formula (doc page's 计算公式): out = x for x >= 3, 0 for x <= -3, x * (x + 3) / 6 otherwise.

Choices, and what decided them: the doc's piecewise formula is the contract, computed in f32
in its order ((x * (x + 3)) / 6) and rounded once to the output dtype: x >= 3 returns x itself
(the arch35 kernel computes max(x, -3) * clamp(x + 3, 0, 6) * f32(1/6) everywhere, which can
be 1 ulp off x there). NaN is neither >= 3 nor <= -3, so the middle branch makes it NaN (the
kernel's min/max propagate NaN too). -0 gives -0.

Checks, in op_api's order: self, out present (161001); self's and out's dtypes listed; out's
dtype castable from self's; shapes equal (161002); op_api checks no rank, nor does aclgen.
CANN casts the result to out's dtype; aclgen requires out of self's dtype (161002).
The doc names the in-place API's tensor `self`; aclgen's in-place variants name it selfRef.
SoCs: Atlas inference products unsupported; Atlas training products FLOAT and FLOAT16.
Held to 0.5 ulp against an f32 step-by-step reference (one rounding to fp16/bf16; f32 exact).
"""

import numpy as np

import aclgen
from aclgen import select

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": ()}


def check(call):
    """op_api's order: presence; dtypes listed; out of self's dtype (aclgen does not cast);
    shapes equal."""
    call.present()
    call.dtype_in("self")
    call.dtype_in("out")
    call.same_dtype("out", ref="self")
    call.out_shape(call.same_shape("out", ref="self"))


def hardswish_reference(x):
    xf = x.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        mid = (xf * (xf + np.float32(3))) / np.float32(6)
        return np.where(xf >= 3, xf, np.where(xf <= -3, np.float32(0), mid)).astype(np.float64)


# the doc page's call example: self = [-4, -3, -2, 0, 1, 2, 4, 5], FLOAT [4, 2]
EXAMPLE = aclgen.Example((np.array([-4, -3, -2, 0, 1, 2, 4, 5], np.float32).reshape(4, 2),),
                         tuple("0 0 -0.33333334 0 0.6666667 1.6666666 4 5".split()))


@aclgen.operator(
    "Hardswish",
    inputs=("self",),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    max_rank=None,
    inplace="self",
    check=check,
    reference=hardswish_reference,
    tolerance=0.5,
    examples=(EXAMPLE,),
)
def hardswish(x):
    """Hardswish: x for x >= 3, 0 for x <= -3, x * (x + 3) / 6 between."""
    return select(x >= 3.0, x, select(x <= -3.0, 0.0, x * (x + 3.0) / 6.0))
