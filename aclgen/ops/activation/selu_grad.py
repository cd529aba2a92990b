"""aclnnSeluBackward(gradOutput, result, gradInput) (SPEC.md §4.2).

y > 0 (or NaN) -> g * SCALE; y <= 0 -> g * (y + SCALE * ALPHA). Integer dtypes compute in f32
and round to nearest even, saturating, on store. SPEC §6's default checks, in CANN's order,
with no dims limit (our kernels take any rank).
"""

import numpy as np

import aclgen
from aclgen import f32, select

SCALE = f32(1.0507009873554805)
SCALE_ALPHA = f32(1.7580993408473769)
A2 = ("float32", "float16", "int32", "int8", "bfloat16")


# SPEC.md §4.2: grad = 1, y = [-2, -1, 0, 1, 2, 3, -0.5, 0.5], float32 [4, 2]
EXAMPLE = aclgen.Example(
    (np.ones((4, 2), np.float32), np.array([-2, -1, 0, 1, 2, 3, -0.5, 0.5], np.float32).reshape(4, 2)),
    tuple("-0.2419007 0.7580993 1.7580993 1.050701 1.050701 1.050701 1.2580993 1.050701".split()),
)


@aclgen.operator(
    "SeluBackward",
    inputs=("gradOutput", "result"),
    outputs=("gradInput",),
    dtypes={
        "Ascend910B": A2,
        "Ascend910_93": A2,
        "Ascend950": A2,
        "Ascend910": ("float32", "float16", "int32", "int8"),
        "Ascend310P": ("float32", "float16", "int32", "int8"),
    },
    broadcast=False,
    max_rank=None,
    examples=(EXAMPLE,),
)
def selu_backward(g, y):
    """The gradient of SELU given its forward `result`, applied to `gradOutput`."""
    return select(y <= 0.0, g * (y + SCALE_ALPHA), g * SCALE)
