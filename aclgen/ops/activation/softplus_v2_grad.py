"""activation/softplus_v2_grad: aclnnSoftplusBackward(gradOutput, self, beta, threshold, gradInput).

Formula (doc page's 计算公式): gradInput = gradOutput where β * self > threshold, else
gradOutput / (1 + e^(-β * self)). z = β * self is the f32 product (CANN's kernel: Muls by the
f32 value of beta) and is compared with the f32 threshold as it is, strictly greater; the
reference takes the branch from the same f32 z and computes the rest in float64. The kernel
compares z with (z - z) + threshold, which is NaN for z = ±inf or NaN: there it takes the other
branch, g / (1 + e^-z), which gives g for +inf and NaN for NaN, the values the plain compare
gives. σ(z) below e^-80 is carried scaled, so a large gradient keeps its bits
(sigmoid.times_sigmoid).
Bound: 4 ulp of the output dtype against that reference for β = 1; for other β the f32 z carries
up to 2^-24 relative error, which e^z turns into about |z| * 2^-24 relative where z < 0.

dtypes: gradOutput and gradInput FLOAT, FLOAT16, BFLOAT16 (FLOAT and FLOAT16 on the Atlas training
series; the Atlas inference series is not supported); self those or INT8, INT32, INT64, UINT8
(the doc's INT16 and BOOL, and DOUBLE, have no aclgen kernel). gradOutput and self may differ in
dtype (op_api casts both to FLOAT); gradInput has self's dtype, as the doc says, or gradOutput's
for an integer self. The three tensors share one shape.

Checks (op_api's order), 161001 for a NULL tensor (then for a NULL beta or threshold, which the
doc's table adds and op_api does not check), else 161002: gradOutput's, self's and gradInput's
dtypes in their lists; gradInput's dtype as above; at most 8 dims for each tensor; gradOutput's
and gradInput's shapes equal to self's.
"""

import numpy as np

import aclgen
from aclgen import select
from aclgen.ops.activation.sigmoid import times_sigmoid
from aclgen.runtime import constants as C
from aclgen.runtime.checks import listing, soc

FLOATS = ("float32", "float16", "bfloat16")
INTS = ("int8", "int32", "int64", "uint8")
DTYPES = {"Ascend910B": FLOATS, "Ascend910_93": FLOATS, "Ascend950": FLOATS,
          "Ascend910": FLOATS[:2], "Ascend310P": ()}
SELF_CODES = {soc_name: tuple(C.code_of(n) for n in (*INTS, *names)) if names else ()
              for soc_name, names in DTYPES.items()}


def promote(g: str, x: str) -> str:
    """self's dtype; gradOutput's for an integer self."""
    return x if x in FLOATS else g


def check(call):
    """CANN's order: presence, dtypes (self's list includes integers), the output's dtype,
    ranks, shapes."""
    call.present("gradOutput", "self", "gradInput")
    call.present("beta", "threshold")
    call.dtype_in("gradOutput")
    codes = SELF_CODES[soc()]
    call.dtype_in("self", allowed_codes=(frozenset(codes), listing(codes)))
    call.dtype_in("gradInput")
    call.result_dtype()
    call.max_rank("gradOutput", "self", "gradInput")
    call.same_shape("gradOutput", "gradInput", ref="self")
    call.out_shape(call.tensor("self").view_dims)


def softplus_backward_reference(g, x, beta=1.0, threshold=20.0):
    b = float(np.float32(beta))
    z32 = (np.float32(b) * x.astype(np.float32)).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(z32 > np.float32(threshold), g, g / (1.0 + np.exp(-b * x)))


@aclgen.operator(
    "SoftplusBackward",
    inputs=("gradOutput", "self"),
    scalars=(aclgen.Scalar("beta", default=1.0), aclgen.Scalar("threshold", default=20.0)),
    outputs=("gradInput",),
    dtypes=DTYPES,
    broadcast=False,
    promote=promote,
    check=check,
    reference=softplus_backward_reference,
    tolerance=4,
)
def softplus_backward(g, x, beta, threshold):
    """The gradient of softplus(beta, threshold) at `self` applied to `gradOutput`."""
    z = beta * x
    return select(z > threshold, g, times_sigmoid(g, z))
