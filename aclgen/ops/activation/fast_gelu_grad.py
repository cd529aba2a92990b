"""activation/fast_gelu_grad: aclnnFastGeluBackward(gradOutput, self, gradInput).

Formula (doc page's 计算公式): dx = dy * ((r - 1) * (-1.702 x) + 1) * r, r = 1 / (e^(-1.702 x) + 1),
which is SwishBackward's dy * σ(z) * (1 + z * σ(-z)) with z = 1.702 x (swish_grad.swish_gradient:
σ(z) and σ(-z) from one exp, a large gradient times a σ(z) below FLT_MIN kept to its bits).
z = f32(1.702) * x rounded to f32, as CANN's kernel computes it. ±inf in x gives NaN (inf * 0,
as in the kernel), NaN propagates.

Bound: 128 ulp of the output dtype against the float64 formula, at the larger of the result
and the size of its terms (SwishBackward's `scale`: they cancel near z ≈ -1.2785, x ≈ -0.751).
The f32 z carries up to 2^-24 relative error, which e^z turns into about |z| * 2^-24 relative
for z < 0 (FastGelu's docstring): measured 36 ulp on a dense f32 sweep, 5 for |z| < 2.

dtypes: FLOAT16, FLOAT32, BFLOAT16 on Atlas A2/A3 and Ascend 950; the Atlas training and
inference series are not supported (every call 161002). The three tensors share dtype and shape.

Checks (op_api's order), 161001 for a NULL tensor, else 161002: gradOutput's dtype equal to
self's, gradInput's to gradOutput's; gradInput's dtype in the SoC's list; gradOutput's shape equal
to self's, gradInput's to gradOutput's; at most 8 dims for self; gradInput's and gradOutput's
formats equal to self's.
"""

import aclgen
from aclgen.ops.activation.fast_gelu import ALPHA, FLOATS
from aclgen.ops.activation.swish_grad import swish_gradient, swish_gradient_reference, swish_gradient_scale

DTYPES = {"Ascend910B": FLOATS, "Ascend910_93": FLOATS, "Ascend950": FLOATS, "Ascend910": (), "Ascend310P": ()}


def check(call):
    """CANN's order: presence, one dtype, the dtype list, shapes, the rank, formats."""
    call.present()
    call.same_dtype("gradOutput", ref="self")
    call.same_dtype("gradInput", ref="gradOutput")
    call.dtype_in("gradInput")
    call.same_shape("gradOutput", ref="self")
    call.same_shape("gradInput", ref="gradOutput")
    call.max_rank("self")
    call.same_format("gradInput", "gradOutput", ref="self")
    call.out_shape(call.tensor("self").view_dims)


def fast_gelu_backward_reference(dy, x):
    return swish_gradient_reference(dy, 1.702 * x)


fast_gelu_backward_reference.scale = lambda dy, x: swish_gradient_scale(dy, 1.702 * x)  # type: ignore[attr-defined]


@aclgen.operator(
    "FastGeluBackward",
    inputs=("gradOutput", "self"),
    outputs=("gradInput",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    reference=fast_gelu_backward_reference,
    tolerance=128,
    half_forms="terms",
)
def fast_gelu_backward(dy, x):
    """The gradient of fast_gelu at `self` applied to `gradOutput`."""
    return swish_gradient(dy, ALPHA * x, x)
