"""aclnnHardswishBackward(gradOutput, self, out): out = g * d(x) (SPEC.md §4.1).

d = 0 for x < -3, x * f32(1/3) + 0.5 for -3 <= x <= 3 (both ends inclusive), 1 for x > 3;
a NaN x fails both compares and gives d = 1, so out = g.
"""

from aclgen.frontend import f32, select
from aclgen.ops import entry
from aclgen.ops.operator import Operator
from aclgen.runtime import checks, planner

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


# ==============================================================================================
# aclnn binding: aclnnHardswishBackwardGetWorkspaceSize's checks, in SPEC.md §4.1's order
# ==============================================================================================

API = "aclnnHardswishBackward"
NAMES = ("gradOutput", "self", "out")


def get_workspace_size(grad_output, self, out):
    """Check the arguments and plan the call; returns the executor (raises AclError)."""
    args = (grad_output, self, out)
    executor = planner.reuse(API, args)  # these very objects passed every check before
    if executor is not None:
        return executor
    g = checks.tensor(API, "gradOutput", grad_output)
    x = checks.tensor(API, "self", self)
    o = checks.tensor(API, "out", out)
    codes, names, _ = checks.allowed(OP, checks.soc())
    checks.dtype_in(API, "gradOutput", g, codes, names)
    checks.dtype_in(API, "self", x, codes, names)
    checks.same_dtype(API, "self", x, "gradOutput", g)
    checks.same_dtype(API, "out", o, "gradOutput", g)
    checks.max_dims(API, "gradOutput", g)
    checks.max_dims(API, "self", x)
    checks.max_dims(API, "out", o)
    checks.same_shape(API, "self", x, "gradOutput", g)
    checks.same_shape(API, "out", o, "gradOutput", g)
    return planner.build(API, OP, NAMES, (g, x, o), 2, g.view_dims, memo=(args, None))


# ==============================================================================================
# numpy entry point
# ==============================================================================================


def hardswish_backward(grad_output, self, out=None):
    """The gradient of hardswish at `self` applied to `grad_output` (same shapes and dtypes)."""
    done = entry.replay(API, (grad_output, self), (), out)
    if done is not None:
        return done
    g, x = entry.array(grad_output), entry.array(self)
    dtype = g.dtype if g is not None else None
    out = entry.output(API, "out", out, entry.shape_of(g), dtype)
    args = [entry.tensor(API, "gradOutput", g), entry.tensor(API, "self", x)]
    return entry.run(get_workspace_size, API, args, out, "out", (g, x), ())
