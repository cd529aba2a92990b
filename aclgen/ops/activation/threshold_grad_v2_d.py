"""aclnnThresholdBackward(gradOutput, self, threshold, out) (SPEC.md §4.5).

out = 0 where x <= t, else g — a select, so no -0, inf*0 or NaN from g where x <= t. Integer
tensors compare exactly with trunc(t) (a `like-input` scalar is an i64 for them).
"""

import numpy as np

import aclgen
from aclgen import Scalar, select
from aclgen.runtime import constants as C
from aclgen.runtime.checks import listing

A2 = ("float32", "int32", "float16", "int8", "uint8", "bfloat16")


def check(call):
    """CANN's order: threshold, out, then the inputs; on Ascend950 INT64 only when
    |threshold| <= FLT_EPSILON (as CANN decides it, on the f32 value)."""
    t = call.scalar("threshold").f32
    call.tensor("out")
    call.tensor("gradOutput")
    call.tensor("self")
    codes, text, ordered = call.allowed()
    if C.ACL_INT64 in codes and not abs(t) <= C.FLT_EPSILON:
        ordered = tuple(c for c in ordered if c != C.ACL_INT64)
        codes, text = frozenset(ordered), listing(ordered) + " (ACL_INT64 needs |threshold| <= FLT_EPSILON)"
    call.dtype_in("gradOutput", "self", allowed_codes=(codes, text))
    call.same_dtype("self", "out")
    call.max_rank()
    call.out_shape(call.broadcast())


# SPEC.md §4.5: self = [0.2, 1.2, 2.2, 3.2], grad = [4.5, 4.4, 4.3, 4.2], t = 1.0, float32 [2, 2]
EXAMPLE = aclgen.Example(
    (np.array([4.5, 4.4, 4.3, 4.2], np.float32).reshape(2, 2), np.array([0.2, 1.2, 2.2, 3.2], np.float32).reshape(2, 2),
     1.0),
    tuple("0 4.4 4.3 4.2".split()),
)


@aclgen.operator(
    "ThresholdBackward",
    inputs=("gradOutput", "self"),
    scalars=(Scalar("threshold", kind="like-input"),),
    outputs=("out",),
    dtypes={
        "Ascend910B": A2,
        "Ascend910_93": A2,
        "Ascend950": (*A2, "int64"),
        "Ascend910": ("float32", "int32", "float16", "int8", "uint8"),
        "Ascend310P": ("float32", "int32", "float16", "int8", "uint8"),
    },
    check=check,
    examples=(EXAMPLE,),
)
def threshold_backward(g, x, threshold):
    """`gradOutput` where `self > threshold`, else 0 (broadcasting)."""
    return select(x <= threshold, 0, g)
