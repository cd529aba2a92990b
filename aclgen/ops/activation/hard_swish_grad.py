"""aclnnHardswishBackward(gradOutput, self, out): out = g * d(x) (SPEC.md §4.1).

d = 0 for x < -3, x * f32(1/3) + 0.5 for -3 <= x <= 3 (both ends inclusive), 1 for x > 3;
a NaN x fails both compares and gives d = 1, so out = g.
"""

import numpy as np

import aclgen
from aclgen import f32, select

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")


def check(call):
    """CANN's order: only the inputs' dtypes are looked up in the list; `out` must match them."""
    call.present()
    call.dtype_in("gradOutput", "self")
    call.same_dtype("self", "out")
    call.max_rank()
    call.shape = call.same_shape("self", "out")


# SPEC.md §4.1: self = gradOutput = 0..7, float32 [4, 2]
EXAMPLE = aclgen.Example(
    (np.arange(8, dtype=np.float32).reshape(4, 2), np.arange(8, dtype=np.float32).reshape(4, 2)),
    tuple("0 0.8333334 2.3333335 4.5 4 5 6 7".split()),
)


@aclgen.operator(
    "HardswishBackward",
    inputs=("gradOutput", "self"),
    outputs=("out",),
    dtypes={
        "Ascend910B": FLOAT_HALF_BF16,
        "Ascend910_93": FLOAT_HALF_BF16,
        "Ascend950": FLOAT_HALF_BF16,
        "Ascend910": ("float32", "float16"),
        "Ascend310P": ("float32", "float16"),
    },
    broadcast=False,
    check=check,
    examples=(EXAMPLE,),
)
def hardswish_backward(g, x):
    """The gradient of hardswish at `self` applied to `gradOutput` (same shapes and dtypes)."""
    d = select(x < -3.0, 0.0, select(x <= 3.0, x * f32(1 / 3) + 0.5, 1.0))
    return g * d
