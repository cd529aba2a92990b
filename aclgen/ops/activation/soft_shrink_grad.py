"""aclnnSoftshrinkBackward(gradOutput, self, lambd, gradInput) (SPEC.md §4.3).

gradInput = 0 where |x| <= lambd, else g (so |x| = lambd gives 0 and a NaN x gives g).
gradOutput and self broadcast; when their dtypes differ the result is float32.
"""

import numpy as np

import aclgen
from aclgen import select
from aclgen.runtime import constants as C

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")


def promote(g: str, x: str) -> str:
    """Mixed input dtypes promote to float32; matching ones keep their dtype."""
    return g if g == x else "float32"


def check(call):
    """CANN's order: the output dtype (561103) is checked last, after lambd and the shapes."""
    call.present()
    call.dtype_in()
    call.max_rank()
    call.out_shape(call.broadcast())
    lambd = call.scalar("lambd").f32
    if lambd < 0:  # NaN compares false: accepted
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"lambd must be >= 0, got {lambd!r}")
    call.result_dtype(status=C.ACLNN_ERR_INNER_NULLPTR)


# SPEC.md §4.3: grad = 0..7, self = [1, 1, 1, 2, 1, 2, 3, 3], lambd = 1.2, float32 [4, 2]
EXAMPLE = aclgen.Example(
    (np.arange(8, dtype=np.float32).reshape(4, 2), np.array([1, 1, 1, 2, 1, 2, 3, 3], np.float32).reshape(4, 2), 1.2),
    tuple("0 0 0 3 0 5 6 7".split()),
)


@aclgen.operator(
    "SoftshrinkBackward",
    inputs=("gradOutput", "self"),
    scalars=("lambd",),
    outputs=("gradInput",),
    dtypes={
        "Ascend910B": FLOAT_HALF_BF16,
        "Ascend910_93": FLOAT_HALF_BF16,
        "Ascend950": FLOAT_HALF_BF16,
        "Ascend910": ("float32", "float16"),
        "Ascend310P": ("float32", "float16"),
    },
    check=check,
    promote=promote,
    examples=(EXAMPLE,),
)
def softshrink_backward(g, x, lambd):
    """The gradient of softshrink(lambd) at `self` applied to `gradOutput` (broadcasting)."""
    return select(abs(x) <= lambd, 0.0, g)
