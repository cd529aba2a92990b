"""aclnnThresholdBackward(gradOutput, self, threshold, out) (SPEC.md §4.5).

out = 0 where x <= t, else g — a select, so no -0, inf*0 or NaN from g where x <= t. Integer
tensors compare exactly with trunc(t) (the `like-input` parameter is an i64 for them).
"""

import numpy as np

from aclgen.frontend import select
from aclgen.kernel import Param
from aclgen.ops import entry
from aclgen.ops.operator import Operator
from aclgen.runtime import checks, planner
from aclgen.runtime import constants as C

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


# ==============================================================================================
# aclnn binding: aclnnThresholdBackwardGetWorkspaceSize's checks, in CANN's order (SPEC.md §4.5)
# ==============================================================================================

API = "aclnnThresholdBackward"
NAMES = ("gradOutput", "self", "out")


def _dtypes(soc: str, t: float) -> tuple[frozenset, str]:
    """The profile's list; on Ascend950 INT64 only when |t| <= FLT_EPSILON (as CANN decides)."""
    codes, names, ordered = checks.allowed(OP, soc)
    if C.ACL_INT64 in codes and not abs(t) <= C.FLT_EPSILON:
        ordered = tuple(c for c in ordered if c != C.ACL_INT64)
        return frozenset(ordered), checks.listing(ordered) + " (ACL_INT64 needs |threshold| <= FLT_EPSILON)"
    return codes, names


def get_workspace_size(grad_output, self, threshold, out):
    """Check the arguments and plan the call; returns the executor (raises AclError)."""
    args = (grad_output, self, threshold, out)
    executor = planner.reuse(API, args)  # these very objects passed every check before
    if executor is not None:
        return executor
    t = checks.scalar(API, "threshold", threshold)
    o = checks.tensor(API, "out", out)
    g = checks.tensor(API, "gradOutput", grad_output)
    x = checks.tensor(API, "self", self)
    codes, names = _dtypes(checks.soc(), t.f32)
    checks.dtype_in(API, "gradOutput", g, codes, names)
    checks.dtype_in(API, "self", x, codes, names)
    checks.same_dtype(API, "self", x, "gradOutput", g)
    checks.same_dtype(API, "out", o, "gradOutput", g)
    checks.max_dims(API, "gradOutput", g)
    checks.max_dims(API, "self", x)
    checks.max_dims(API, "out", o)
    shape = checks.broadcast(API, "gradOutput", g, "self", x)
    checks.out_shape(API, "out", o, shape)
    kdtype = C.KERNEL_DTYPE[g.dtype]
    slot = t.bits if kdtype.is_float else OP.param_slot(OP.params[0], t.f32, kdtype)
    return planner.build(API, OP, NAMES, (g, x, o), 2, shape, (slot,), memo=(args, None))


# ==============================================================================================
# numpy entry point
# ==============================================================================================


def threshold_backward(grad_output, self, threshold, out=None):
    """`grad_output` where `self > threshold`, else 0 (broadcasting)."""
    done = entry.replay(API, (grad_output, self), (threshold,), out)
    if done is not None:
        return done
    g, x = entry.array(grad_output), entry.array(self)
    shape = ()
    if g is not None and x is not None:
        try:
            shape = np.broadcast_shapes(g.shape, x.shape)
        except ValueError:
            shape = g.shape  # the API names the broadcast failure
    out = entry.output(API, "out", out, shape, g.dtype if g is not None else None)
    args = [entry.tensor(API, "gradOutput", g), entry.tensor(API, "self", x), entry.scalar(threshold)]
    return entry.run(get_workspace_size, API, args, out, "out", (g, x), (threshold,))
