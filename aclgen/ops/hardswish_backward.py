"""aclnnHardswishBackward(gradOutput, self, out): out = g * d(x) (SPEC.md §4.1).

d = 0 for x < -3, x * f32(1/3) + 0.5 for -3 <= x <= 3 (both ends inclusive), 1 for x > 3;
a NaN x fails both compares and gives d = 1, so out = g.
"""

from aclgen.frontend import f32, select
from aclgen.ops.operator import Operator, launch
from aclgen.ops.entry import check_dtypes, same_shapes, make_out

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")


def formula(g, x):
    d = select(x < -3.0, 0.0, select(x <= 3.0, x * f32(1 / 3) + 0.5, 1.0))
    return g * d


OP = Operator(
    name="hardswish_backward",
    aclnn="HardswishBackward",
    formula=formula,
    inputs=("gradOutput", "self"),
    outputs=("out",),
    dtypes={
        "Ascend910B": FLOAT_HALF_BF16,
        "Ascend910_93": FLOAT_HALF_BF16,
        "Ascend950": FLOAT_HALF_BF16,
        "Ascend910": ("float32", "float16"),
        "Ascend310P": ("float32", "float16"),
    },
)


def hardswish_backward(grad_output, self, out=None):
    """The gradient of hardswish at `self` applied to `grad_output` (same shapes and dtypes)."""
    g, x = check_dtypes(OP, grad_output, self)
    shape = same_shapes(OP, g, x)
    out = make_out(OP, out, shape, g.dtype)
    launch(OP, [g, x], [out])
    return out
