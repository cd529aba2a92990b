"""activation/swish: aclnnSilu(self, out) and aclnnSwish(self, betaOptional, out).

Formulas (doc pages' 计算公式): Silu: out = self / (1 + e^-self); Swish: out = x * σ(βx), β the
f32 value of betaOptional (NULL means 1.0, as the doc says). Both are x * σ(βx) here, computed in
f32 and rounded once, as x / (1 + e^-βx) with σ(βx) below e^-80 carried scaled
(sigmoid.times_sigmoid) so that a result below FLT_MIN is still rounded once: x * σ(x) for x = -100 is a subnormal, exact to
its last bit, where x / (1 + e^-x) has lost it. ±inf and NaN follow from the formula as from
CANN's kernel, which divides x by 1 + e^(-βx) (x = -inf gives NaN, +inf gives +inf for β > 0).
Bound: 3 ulp of the output dtype against float64.

dtypes: FLOAT16, FLOAT, BFLOAT16; FLOAT16 and FLOAT on the Atlas training and inference series
(the doc's note). out has self's dtype and shape.

Checks (op_api's order), 161001 for a NULL self or out, else 161002: self's dtype, then out's, in
the SoC's list; out's dtype equal to self's; (Swish: betaOptional an aclScalar when given; at
most 8 dims for self, then out); out's shape equal to self's. aclnnSilu has no dims limit: CANN
flattens more than 8 dims into one.
"""

import numpy as np

import aclgen
from aclgen import Scalar
from aclgen.ops.activation.sigmoid import times_sigmoid

HALF_FLOAT_BF16 = ("float16", "float32", "bfloat16")
DTYPES = {"Ascend910B": HALF_FLOAT_BF16, "Ascend910_93": HALF_FLOAT_BF16, "Ascend950": HALF_FLOAT_BF16,
          "Ascend910": HALF_FLOAT_BF16[:2], "Ascend310P": HALF_FLOAT_BF16[:2]}


def silu_check(call):
    """CANN's order: presence, dtypes, one dtype, then the shape (no dims limit)."""
    call.present("self", "out")
    call.dtype_in("self", "out")
    call.same_dtype("out")
    call.out_shape(call.same_shape("out"))


def swish_check(call):
    """CANN's order: presence, dtypes, one dtype, beta, ranks, then the shape."""
    call.present("self", "out")
    call.dtype_in("self", "out")
    call.same_dtype("out")
    call.present("betaOptional")
    call.max_rank("self", "out")
    call.out_shape(call.same_shape("out"))


def swish_reference(x, beta=1.0):
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-np.float64(np.float32(beta)) * x))


@aclgen.operator(
    "Silu",
    inputs=("self",),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    max_rank=None,
    check=silu_check,
    reference=swish_reference,
    tolerance=3,
    backward="SiluBackward",
)
def silu(x):
    """x * sigmoid(x) (SiLU, Swish with beta = 1), element by element."""
    return times_sigmoid(x, x)


@aclgen.operator(
    "Swish",
    inputs=("self",),
    scalars=(Scalar("betaOptional", optional=True, default=1.0),),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=swish_check,
    reference=swish_reference,
    tolerance=3,
    backward="SwishBackward",
)
def swish(x, beta):
    """x * sigmoid(beta * x), element by element (betaOptional NULL: beta = 1)."""
    return times_sigmoid(x, beta * x)
