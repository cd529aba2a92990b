"""activation/silu_grad: aclnnSiluBackward(gradOutput, self, gradInput).

Formula (doc page's 计算公式): gradInput = gradOutput * σ(x) * (1 + x - x * σ(x)), the form
σ(x) * (1 + x * σ(-x)) of it computed as SwishBackward's with β = 1 (swish_grad.swish_gradient:
σ(x) and σ(-x) from one exp, a large gradient times a σ(x) below FLT_MIN kept to its bits).
±inf in x gives NaN (inf * 0, as in the kernel and torch); NaN propagates.

Bound: 16 ulp of the output dtype against float64, at the larger of the result and the size of
its terms (SwishBackward's `scale`: they cancel near x ≈ -1.2785). Measured: 4.6 ulp on a dense
f32 sweep. Its float16 and bfloat16 kernels compute exp in its half-type form (`half_forms`:
2^-16 of each term is far below a half-type ulp of their size).

dtypes: BFLOAT16, FLOAT16, FLOAT; FLOAT16 and FLOAT on the Atlas training series; the Atlas
inference series is not supported (every call 161002). On Ascend 950 (op_api's regbase chips)
gradOutput and self broadcast and may differ in dtype, gradInput then FLOAT; elsewhere the three
share one dtype and one shape.

Checks (op_api's order), 161001 for a NULL tensor, else 161002: gradOutput's, self's and
gradInput's dtypes in the SoC's list; gradInput's dtype (FLOAT for mixed inputs on Ascend 950,
else gradOutput's and self's); at most 8 dims for gradOutput and self; the shapes (Ascend 950:
gradInput of the broadcast shape; elsewhere gradOutput's and self's equal to gradInput's).
"""

import aclgen
from aclgen.ops.activation.swish_grad import swish_gradient, swish_gradient_reference, swish_gradient_scale
from aclgen.runtime.checks import soc

HALF_FLOAT_BF16 = ("float16", "float32", "bfloat16")
DTYPES = {"Ascend910B": HALF_FLOAT_BF16, "Ascend910_93": HALF_FLOAT_BF16, "Ascend950": HALF_FLOAT_BF16,
          "Ascend910": HALF_FLOAT_BF16[:2], "Ascend310P": ()}
MIXED = ("Ascend950",)  # op_api's regbase chips: mixed dtypes and broadcasting


def silu_backward_reference(g, x):
    return swish_gradient_reference(g, x)


silu_backward_reference.scale = swish_gradient_scale  # type: ignore[attr-defined]


def promote(g: str, x: str) -> str:
    """One dtype keeps it; mixed inputs (Ascend 950 only) give float32."""
    return g if g == x else "float32"


def check(call):
    """CANN's order: presence, dtypes, the output's dtype, ranks, shapes; mixed dtypes and
    broadcasting only on Ascend 950."""
    call.present()
    call.dtype_in("gradOutput", "self", "gradInput")
    mixed = soc() in MIXED
    if mixed:
        call.result_dtype()
    else:
        call.same_dtype("gradInput", ref="gradOutput")
        call.same_dtype("gradInput", ref="self")
    call.max_rank("gradOutput", "self")
    if mixed:
        call.out_shape(call.broadcast())
    else:
        call.same_shape("gradOutput", "self", ref="gradInput")
        call.out_shape(call.tensor("gradInput").view_dims)


@aclgen.operator(
    "SiluBackward",
    inputs=("gradOutput", "self"),
    outputs=("gradInput",),
    dtypes=DTYPES,
    broadcast=True,
    promote=promote,
    check=check,
    reference=silu_backward_reference,
    tolerance=16,
    half_forms="terms",
)
def silu_backward(g, x):
    """The gradient of silu at `self` applied to `gradOutput`."""
    return swish_gradient(g, x)
