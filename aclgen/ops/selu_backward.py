"""aclnnSeluBackward(gradOutput, result, gradInput) (SPEC.md §4.2).

y > 0 (or NaN) -> g * SCALE; y <= 0 -> g * (y + SCALE * ALPHA). Integer dtypes compute in f32
and round to nearest even, saturating, on store.
"""

from aclgen.frontend import f32, select
from aclgen.ops.entry import check_dtypes, make_out, same_shapes
from aclgen.ops.operator import Operator, launch

SCALE = f32(1.0507009873554805)
SCALE_ALPHA = f32(1.7580993408473769)


def formula(g, y):
    return select(y <= 0.0, g * (y + SCALE_ALPHA), g * SCALE)


OP = Operator(
    name="selu_backward",
    aclnn="SeluBackward",
    formula=formula,
    inputs=("gradOutput", "result"),
    outputs=("gradInput",),
    dtypes={
        "Ascend910B": ("float32", "float16", "int32", "int8", "bfloat16"),
        "Ascend910_93": ("float32", "float16", "int32", "int8", "bfloat16"),
        "Ascend950": ("float32", "float16", "int32", "int8", "bfloat16"),
        "Ascend910": ("float32", "float16", "int32", "int8"),
        "Ascend310P": ("float32", "float16", "int32", "int8"),
    },
)


def selu_backward(grad_output, result, out=None):
    """The gradient of SELU given its forward `result`, applied to `grad_output`."""
    g, y = check_dtypes(OP, grad_output, result)
    shape = same_shapes(OP, g, y)
    out = make_out(OP, out, shape, g.dtype)
    launch(OP, [g, y], [out])
    return out
