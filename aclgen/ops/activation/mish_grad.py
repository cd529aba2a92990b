"""activation/mish_grad: aclnnMishBackward(gradOutput, self, gradInput).

Formula: the doc page gives none beyond "the backward of aclnnMish"; the derivative of
x * tanh(softplus(x)) is d = tanh(sp) + x * (1 - tanh²(sp)) * σ(x), the form CANN's kernel computes
(tanh(sp) - (tanh² - 1) x / (1 + e^-x)), and gradInput = gradOutput * d. tanh(sp), 1 - tanh² and
σ(x) come from one exp (mish.mish_parts: 1 - tanh² without cancellation for large x; the e^x-sized
factors scaled for x < -64, so a large gradient keeps its bits). x = ±inf gives NaN (inf * 0, as in
the kernel and the float64 formula), NaN propagates.

Bound: 16 ulp of the output dtype against float64, at the larger of the result and the size of
its terms g tanh(sp) and g x (1 - tanh²) σ(x) (the reference's `scale`: they cancel near
x ≈ -1.1924). Measured: 4 ulp on a dense f32 sweep.

dtypes: BFLOAT16, FLOAT16, FLOAT32 on Atlas A2/A3 and Ascend 950; FLOAT16 and FLOAT32 on the
Atlas training and inference series (op_api's list for every other chip). gradOutput and self
broadcast; their dtypes promote (two half types, or a half type and FLOAT, give FLOAT), and
gradInput has the promoted dtype (op_api casts to any gradInput dtype self's casts to).

Checks (op_api's order), 161001 for a NULL tensor, else 161002: the dtypes in the SoC's list and
gradInput's equal to the promoted one; at most 8 dims for each tensor; self and gradOutput
broadcastable and gradInput of the broadcast shape.
"""

import numpy as np

import aclgen
from aclgen.ops.activation.mish import mish_parts, tanh_softplus_reference
from aclgen.ops.activation.sigmoid import times_small
from aclgen.ops.activation.sigmoid_grad import promote

HALF_FLOAT_BF16 = ("float16", "float32", "bfloat16")
DTYPES = {"Ascend910B": HALF_FLOAT_BF16, "Ascend910_93": HALF_FLOAT_BF16, "Ascend950": HALF_FLOAT_BF16,
          "Ascend910": HALF_FLOAT_BF16[:2], "Ascend310P": HALF_FLOAT_BF16[:2]}


def check(call):
    """CANN's order: presence, dtypes and their promotion, ranks, the broadcast."""
    call.present()
    call.dtype_in("gradOutput", "self", "gradInput")
    call.result_dtype()
    call.max_rank("gradOutput", "self", "gradInput")
    call.out_shape(call.broadcast("self", "gradOutput"))


def mish_backward_reference(g, x):
    with np.errstate(all="ignore"):
        sp = np.logaddexp(0.0, x)
        sech2 = 1.0 / np.cosh(sp) ** 2
        return g * (tanh_softplus_reference(x) + x * sech2 / (1.0 + np.exp(-x)))


def mish_backward_scale(g, x):
    """The size of the terms g tanh(sp) and g x (1 - tanh²(sp)) σ(x), which cancel near x = -1.1924."""
    with np.errstate(all="ignore"):
        sp = np.logaddexp(0.0, x)
        sech2 = 1.0 / np.cosh(sp) ** 2
        return np.abs(g) * (tanh_softplus_reference(x) + np.abs(x) * sech2 / (1.0 + np.exp(-x)))


mish_backward_reference.scale = mish_backward_scale  # type: ignore[attr-defined]


@aclgen.operator(
    "MishBackward",
    inputs=("gradOutput", "self"),
    outputs=("gradInput",),
    dtypes=DTYPES,
    broadcast=True,
    promote=promote,
    check=check,
    reference=mish_backward_reference,
    tolerance=16,
    half_forms="terms",
)
def mish_backward(g, x):
    """The gradient of mish at `self` applied to `gradOutput` (broadcasting)."""
    t, one_minus_t2, s, k = mish_parts(x)
    return times_small(g, t + x * one_minus_t2 * s, k)
