"""activation/swish_grad: aclnnSwishBackward(gradOutput, self, betaOptional, gradInput).

Formula (doc page's 计算公式): gradInput = gradOutput * σ(βx) * (1 + βx * (1 - σ(βx))), β the f32
value of betaOptional (NULL means 1.0, as the doc says). 1 - σ(z) is computed as σ(-z) and both
come from one exp (sigmoid.sigmoid_quotient), and a large gradient times a σ(z) below FLT_MIN
keeps its bits; CANN's kernel forms 1 - σ(z) by subtraction. ±inf in x gives
NaN (inf * 0 in the formula, as in the kernel and torch), NaN propagates.

Bound: 16 ulp of the output dtype against float64, at the larger of the result and the size of
its terms g σ(z) and g z σ(z) σ(-z) (the reference's `scale`): near z = βx ≈ -1.2785 they cancel
and the error is a few ulp of the terms, not of the result (f32's exp is not exact; CANN and
torch cancel the same way). Measured: 3.8 ulp on a dense f32 sweep with g = 1 and 1e30
(`python benchmarks/sigmoid_sweep.py`).

dtypes: BFLOAT16, FLOAT16, FLOAT; no BFLOAT16 on the Atlas training and inference series (the
doc's note). gradOutput, self and gradInput share one dtype and one shape.

Checks (op_api's order), 161001 for a NULL tensor, else 161002: gradOutput's dtype, then self's,
in the SoC's list; betaOptional an aclScalar when given; gradInput's dtype equal to gradOutput's
and self's; at most 8 dims for each tensor; gradOutput's and self's shapes equal to gradInput's.
"""

import numpy as np

import aclgen
from aclgen import Scalar, clamp, muladd
from aclgen.ops.activation.sigmoid import sigmoid_quotient

HALF_FLOAT_BF16 = ("float16", "float32", "bfloat16")
DTYPES = {"Ascend910B": HALF_FLOAT_BF16, "Ascend910_93": HALF_FLOAT_BF16, "Ascend950": HALF_FLOAT_BF16,
          "Ascend910": HALF_FLOAT_BF16[:2], "Ascend310P": HALF_FLOAT_BF16[:2]}
FLT_MAX = float(np.finfo(np.float32).max)  # exact in f32


def swish_gradient(g, z, x=None):
    """g * σ(z) * (1 + z * σ(-z)) for z = βx: the gradient of swish (SwishBackward,
    SiluBackward with z = x, FastGeluBackward with z = 1.702x). Given `x`, a z that overflowed
    f32 while x is finite is taken as ±FLT_MAX (the gradient is then 0 or g, as the exact
    formula gives; an infinite z would make inf * 0 = NaN), and an infinite x stays infinite.
    1 + z σ(-z) is one multiply-add (`muladd`): one rounding fewer, and 345 -> 327 µs for
    SiluBackward f32 at 1M (two threads, interleaved with torch's 275)."""
    if x is not None:
        z = clamp(z, -FLT_MAX, FLT_MAX) + (x - x)  # x - x: +0, or NaN for an infinite x
    m, e, d = sigmoid_quotient(z, small="rare")
    q = 1.0 / d
    return g * m * q * muladd(z, e * q, 1.0) * m


def swish_gradient_reference(g, z):
    """float64: g * σ(z) * (1 + z * (1 - σ(z)))."""
    with np.errstate(all="ignore"):
        s = 1.0 / (1.0 + np.exp(-z))
        return g * s * (1.0 + z * (1.0 - s))


def swish_gradient_scale(g, z):
    """The size of the terms g σ(z) and g z σ(z) (1 - σ(z)), which cancel near z = -1.2785."""
    with np.errstate(all="ignore"):
        s = 1.0 / (1.0 + np.exp(-z))
        return np.abs(g) * (s + np.abs(z) * s * (1.0 - s))


def check(call):
    """CANN's order: presence, input dtypes, beta, the output's dtype, ranks, shapes."""
    call.present("gradOutput", "self", "gradInput")
    call.dtype_in("gradOutput", "self")
    call.present("betaOptional")
    call.same_dtype("gradInput", ref="gradOutput")
    call.same_dtype("gradInput", ref="self")
    call.max_rank("gradOutput", "self", "gradInput")
    call.same_shape("gradOutput", "self", ref="gradInput")
    call.out_shape(call.tensor("gradInput").view_dims)


def swish_backward_reference(g, x, beta=1.0):
    return swish_gradient_reference(g, float(np.float32(beta)) * x)


swish_backward_reference.scale = (  # type: ignore[attr-defined]
    lambda g, x, beta=1.0: swish_gradient_scale(g, float(np.float32(beta)) * x))


@aclgen.operator(
    "SwishBackward",
    inputs=("gradOutput", "self"),
    scalars=(Scalar("betaOptional", optional=True, default=1.0),),
    outputs=("gradInput",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    reference=swish_backward_reference,
    tolerance=16,
    half_forms="terms",
)
def swish_backward(g, x, beta):
    """The gradient of swish(beta) at `self` applied to `gradOutput` (betaOptional NULL: beta = 1)."""
    return swish_gradient(g, beta * x, x)
