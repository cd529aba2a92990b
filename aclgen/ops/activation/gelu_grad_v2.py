"""activation/gelu_grad_v2: aclnnGeluBackwardV2(gradOutput, self, approximate, gradInput).

Formula (doc page's 计算公式): gradInput = gradOutput * d(x), `approximate` (char*) choosing d:
- "none": d = 1/2 + erf(x/√2)/2 + x/√(2π) * e^(-x²/2) = Φ(x) + x φ(x) (GeluBackward's formula,
  gelu.gelu_slope); x = ±inf gives NaN (inf * 0 in x φ(x), as in the doc's formula and the
  kernel).
- "tanh": the derivative of the tanh approximation x * σ(z), z = 2√(2/π)(x + 0.044715 x³) (the doc
  gives only the forward): d = σ(z) + x σ(z) σ(-z) z'(x), z' = 2√(2/π)(1 + 3 * 0.044715 x²).
  CANN's kernel replaces a NaN second term by 0, so x = +inf gives d = 1 and -inf gives d = 0,
  the limits (NaN x stays NaN through σ(z)); so does this formula and its reference. σ(z) and
  σ(-z) come from one exp (gelu.tanh_slope_terms), their product scaled where it is below e^-80.

Bound: 256 ulp of the output dtype against the float64 formulas, at the larger of the result and
the size of d's two terms times |g| (the reference's `scale`: they cancel near x ≈ -0.7518 for
"none", x ≈ -0.7528 for "tanh"); the tails' rounded arguments as aclnnGelu's and
aclnnGeluBackward's docstrings say, and as there, below x ≈ -13 (none) or -10.5 (tanh) the
derivative is subnormal and a gradient times it keeps only the subnormal's bits (results below
FLT_MIN, or |g| > 2^24, are then off by up to a subnormal step times |g|, as in CANN and torch).

dtypes: FLOAT16, BFLOAT16, FLOAT32; FLOAT16 and FLOAT32 on the Atlas training and inference
series (the doc's note). gradOutput and self broadcast; their dtypes promote (two half types, or
a half type and FLOAT, give FLOAT) and gradInput must have the promoted dtype (as op_api says).

Checks (op_api's order): gradOutput, self, gradInput, then approximate present (161001); the
dtypes in the SoC's list and gradInput's equal to the promoted one (161002); gradOutput and self
broadcastable, gradInput of the broadcast shape (161002); approximate "none" or "tanh" (161002).
op_api has no dims limit here.
"""

import numpy as np

import aclgen
from aclgen import Attr, isnan, select
from aclgen.ops.activation.gelu import (
    DTYPES,
    SQRT_8_OVER_PI,
    gelu_slope,
    sigmoid_reference,
    tanh_slope_terms,
    tanh_z_reference,
)
from aclgen.ops.activation.gelu_grad import gelu_backward_reference, gelu_backward_scale
from aclgen.ops.activation.sigmoid_grad import promote
from aclgen.runtime import constants as C


def check(call):
    """CANN's order: presence (approximate's value last), dtypes and their promotion, the
    broadcast, approximate's value."""
    call.present("gradOutput", "self", "gradInput")
    if call.values["approximate"] is None:
        raise call.error(C.ACLNN_ERR_PARAM_NULLPTR, "approximate is nullptr")
    call.dtype_in("gradOutput", "self", "gradInput")
    call.result_dtype()
    call.out_shape(call.broadcast())
    call.attr("approximate")


def _tanh_terms(x):
    """σ(z) and x σ(z) σ(-z) z'(x) (a NaN one as 0, as CANN's kernel), in float64."""
    z = tanh_z_reference(x)
    s = sigmoid_reference(z)
    second = x * s * sigmoid_reference(-z) * SQRT_8_OVER_PI * (1.0 + 3.0 * 0.044715 * x * x)
    return s, np.where(np.isnan(second), 0.0, second)


def gelu_backward_v2_reference(g, x, approximate="none"):
    if approximate == "none":
        return gelu_backward_reference(g, x)
    with np.errstate(all="ignore"):
        s, second = _tanh_terms(x)
        return g * (s + second)


def gelu_backward_v2_scale(g, x, approximate="none"):
    """The size of the derivative's two terms times |g| (they cancel near x = -0.75)."""
    if approximate == "none":
        return gelu_backward_scale(g, x)
    with np.errstate(all="ignore"):
        s, second = _tanh_terms(x)
        return np.abs(g) * (s + np.abs(second))


gelu_backward_v2_reference.scale = gelu_backward_v2_scale  # type: ignore[attr-defined]


@aclgen.operator(
    "GeluBackwardV2",
    inputs=("gradOutput", "self"),
    attrs=(Attr("approximate", "str", default="none", choices=("none", "tanh")),),
    outputs=("gradInput",),
    dtypes=DTYPES,
    broadcast=True,
    max_rank=None,
    promote=promote,
    check=check,
    reference=gelu_backward_v2_reference,
    tolerance=256,
    half_forms="terms",
)
def gelu_backward_v2(g, x, approximate):
    """The gradient of GELU (approximate "none": exact, "tanh": the tanh approximation) at `self`
    applied to `gradOutput` (broadcasting)."""
    if approximate == "none":
        return g * gelu_slope(x)
    sigma, second = tanh_slope_terms(x)
    return g * (sigma + select(isnan(second), 0.0, second))
