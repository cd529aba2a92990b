"""aclnnThresholdBackward(gradOutput, self, threshold, out) (SPEC.md §4.5).

out = 0 where x <= t, else g — a select, so no -0, inf*0 or NaN from g where x <= t. Integer
tensors compare exactly with trunc(t) (the `like-input` parameter is an i64 for them).
"""

from aclgen.compiler import Param
from aclgen.frontend import select
from aclgen.ops.entry import broadcast_shape, check_dtypes, check_rank, make_out
from aclgen.ops.operator import Operator, launch

A2 = ("float32", "int32", "float16", "int8", "uint8", "bfloat16")


def formula(g, x, threshold):
    return select(x <= threshold, 0, g)


OP = Operator(
    name="threshold_backward",
    aclnn="ThresholdBackward",
    formula=formula,
    inputs=("gradOutput", "self"),
    params=(Param("threshold", kind="like-input"),),
    outputs=("out",),
    dtypes={
        "Ascend910B": A2,
        "Ascend910_93": A2,
        "Ascend950": (*A2, "int64"),
        "Ascend910": ("float32", "int32", "float16", "int8", "uint8"),
        "Ascend310P": ("float32", "int32", "float16", "int8", "uint8"),
    },
)


def threshold_backward(grad_output, self, threshold, out=None):
    """`grad_output` where `self > threshold`, else 0 (broadcasting)."""
    g, x = check_dtypes(OP, grad_output, self)
    shape = broadcast_shape(OP, g, x)
    check_rank(OP, shape)
    out = make_out(OP, out, shape, g.dtype)
    launch(OP, [g, x], [out], [float(threshold)])
    return out
