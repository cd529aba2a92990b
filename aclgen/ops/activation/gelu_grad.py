"""activation/gelu_grad: aclnnGeluBackward(gradOutput, self, gradInput).

Formula (doc page's 计算公式): gradInput = gradOutput * (1/2 + erf(x/√2)/2 + x/√(2π) * e^(-x²/2)),
the derivative of the exact GELU x * Φ(x). CANN's arch35 kernel computes the derivative of the
tanh approximation instead; the doc's erf formula is followed here, as gelu.gelu_slope computes
it: φ(x) = e^(-x²/2)/√(2π) and the Mills ratio M(t) = Φ(-t)/φ(t), t = |x|, give φ(t)(M(t) - t)
below 0 and 1 + φ(t)(t - M(t)) above (no cancellation in the left tail, where 1/2 + erf/2 has
it). x = ±inf gives NaN (inf * 0 in the formula's x * e^(-x²/2)); NaN propagates.

Bound: 256 ulp of the output dtype against the float64 formula, at the larger of the result and
the size of its terms g Φ(x) and g x φ(x) (the reference's `scale`: they cancel near x ≈ -0.7518,
where the error is a few ulp of the terms, not of the result). The
f32 x² carries a relative error that exp turns into about x² * 2^-25 relative in the tail (64
ulp near x = -11.5 on a dense f32 sweep; 8.5 ulp for |x| < 5). Below x ≈ -13.2, e^(-x²/2) is subnormal and so is the
derivative: a gradient times it keeps only the subnormal's bits (results below FLT_MIN, or
|g| > 2^24, are then off by up to a subnormal step times |g|, as in CANN and torch).

dtypes: FLOAT, FLOAT16, BFLOAT16; FLOAT and FLOAT16 on the Atlas training and inference series
(the doc's note). gradOutput and self broadcast; their dtypes promote (two half types, or a half
type and FLOAT, give FLOAT), and gradInput has the promoted dtype (op_api casts the result to any
gradInput dtype; aclgen does not).

Checks (op_api's order), 161001 for a NULL tensor, else 161002: the dtypes in the SoC's list and
gradInput's equal to the promoted one; at most 8 dims for gradOutput and self; gradOutput and
self broadcastable and gradInput of the broadcast shape.
"""

import numpy as np

import aclgen
from aclgen.ops.activation.gelu import DTYPES, gelu_slope, normal_cdf_reference, normal_pdf_reference
from aclgen.ops.activation.sigmoid_grad import promote


def check(call):
    """CANN's order: presence, dtypes and their promotion, ranks, the broadcast."""
    call.present()
    call.dtype_in("gradOutput", "self", "gradInput")
    call.result_dtype()
    call.max_rank("gradOutput", "self")
    call.out_shape(call.broadcast())


def gelu_backward_reference(g, x):
    with np.errstate(all="ignore"):
        return g * (normal_cdf_reference(x) + x * normal_pdf_reference(x))


def gelu_backward_scale(g, x):
    """The size of the terms g Φ(x) and g x φ(x), which cancel near x = -0.7518."""
    with np.errstate(all="ignore"):
        return np.abs(g) * (normal_cdf_reference(x) + np.abs(x) * normal_pdf_reference(x))


gelu_backward_reference.scale = gelu_backward_scale  # type: ignore[attr-defined]


@aclgen.operator(
    "GeluBackward",
    inputs=("gradOutput", "self"),
    outputs=("gradInput",),
    dtypes=DTYPES,
    broadcast=True,
    promote=promote,
    check=check,
    reference=gelu_backward_reference,
    tolerance=256,
    half_forms="terms",
)
def gelu_backward(g, x):
    """The gradient of the exact GELU x * Φ(x) at `self` applied to `gradOutput` (broadcasting)."""
    return g * gelu_slope(x)
