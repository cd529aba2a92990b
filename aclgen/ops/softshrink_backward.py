"""aclnnSoftshrinkBackward(gradOutput, self, lambd, gradInput) (SPEC.md §4.3).

gradInput = 0 where |x| <= lambd, else g (so |x| = lambd gives 0 and a NaN x gives g).
gradOutput and self broadcast; when their dtypes differ the result is float32.
"""

import numpy as np

from aclgen.compiler import Param
from aclgen.frontend import select
from aclgen.ops.entry import OperatorError, broadcast_shape, check_dtypes, check_rank, make_out
from aclgen.ops.operator import Operator, launch

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")


def formula(g, x, lambd):
    return select(abs(x) <= lambd, 0.0, g)


OP = Operator(
    name="softshrink_backward",
    aclnn="SoftshrinkBackward",
    formula=formula,
    inputs=("gradOutput", "self"),
    params=(Param("lambd"),),
    outputs=("gradInput",),
    dtypes={
        "Ascend910B": FLOAT_HALF_BF16,
        "Ascend910_93": FLOAT_HALF_BF16,
        "Ascend950": FLOAT_HALF_BF16,
        "Ascend910": ("float32", "float16"),
        "Ascend310P": ("float32", "float16"),
    },
)


def result_dtype(a: np.dtype, b: np.dtype) -> np.dtype:
    """Mixed input dtypes promote to float32; matching ones keep their dtype."""
    return a if a == b else np.dtype(np.float32)


def softshrink_backward(grad_output, self, lambd, out=None):
    """The gradient of softshrink(lambd) at `self` applied to `grad_output` (broadcasting)."""
    g, x = check_dtypes(OP, grad_output, self, same=False)
    shape = broadcast_shape(OP, g, x)
    check_rank(OP, shape)
    if float(lambd) < 0:
        raise OperatorError(f"{OP.name}: lambd must be >= 0, got {lambd}")
    out = make_out(OP, out, shape, result_dtype(g.dtype, x.dtype))
    launch(OP, [g, x], [out], [float(lambd)])
    return out
