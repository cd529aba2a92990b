"""activation/sigmoid_grad: aclnnSigmoidBackward(gradOutput, output, gradInput).

Formula (doc page's 计算公式): gradInput = gradOutput * σ * (1 - σ), σ being `output`, the forward
sigmoid's result. CANN's kernel multiplies (g * (1 - y)) * y; here (g * y) * (1 - y), and where
that overflows or makes inf * 0 (|g| near FLT_MAX with y in (0, 2)), (g * (1 - y)) * y, which
cannot. NaN propagates (the doc is silent; the kernel's multiplies propagate it). Bound: 2 ulp
of the output dtype against float64 (three roundings of f32 products).

dtypes: FLOAT, FLOAT16, BFLOAT16 on Atlas A2/A3 and 950; FLOAT, FLOAT16 on the Atlas training and
inference series (the doc's note; DOUBLE and the complex types have no aclgen kernel).
gradOutput and output broadcast and may differ in dtype: op_api promotes them (two half types or
a half type and FLOAT give FLOAT) and casts the result to gradInput's dtype; aclgen's gradInput
has the promoted dtype (161002 otherwise).

Checks (op_api's order): the three tensors present (161001); each one's dtype in the SoC's list;
gradOutput and output at most 8 dims; gradInput of the promoted dtype; gradOutput and output
broadcastable and gradInput of the broadcast shape (161002).
"""


import aclgen
from aclgen import select

FLOATS = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOATS, "Ascend910_93": FLOATS, "Ascend950": FLOATS,
          "Ascend910": FLOATS[:2], "Ascend310P": FLOATS[:2]}
INF = float("inf")


def promote(g: str, y: str) -> str:
    """CANN's PromoteType over the float types: one dtype keeps it, two give float32."""
    return g if g == y else "float32"


def check(call):
    """CANN's order: presence, dtypes, ranks, the promoted dtype, then the broadcast."""
    call.present()
    call.dtype_in("gradOutput", "output", "gradInput")
    call.max_rank("gradOutput", "output")
    call.result_dtype()
    call.out_shape(call.broadcast())


def sigmoid_backward_reference(g, y):
    return g * y * (1.0 - y)


@aclgen.operator(
    "SigmoidBackward",
    inputs=("gradOutput", "output"),
    outputs=("gradInput",),
    dtypes=DTYPES,
    broadcast=True,
    promote=promote,
    check=check,
    reference=sigmoid_backward_reference,
    tolerance=2,
)
def sigmoid_backward(g, y):
    """The gradient of sigmoid given its forward `output`, applied to `gradOutput` (broadcasting)."""
    p = g * y * (1.0 - y)
    return select(abs(p) < INF, p, g * (1.0 - y) * y)
