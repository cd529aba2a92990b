"""aclnnSeluBackward(gradOutput, result, gradInput) (SPEC.md §4.2).

y > 0 (or NaN) -> g * SCALE; y <= 0 -> g * (y + SCALE * ALPHA). Integer dtypes compute in f32
and round to nearest even, saturating, on store.
"""

from aclgen.frontend import f32, select
from aclgen.ops import entry
from aclgen.ops.operator import Operator
from aclgen.runtime import checks, planner

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


# ==============================================================================================
# aclnn binding: aclnnSeluBackwardGetWorkspaceSize's checks, in SPEC.md §4.2's order
# (no dims limit: our kernels take any rank)
# ==============================================================================================

API = "aclnnSeluBackward"
NAMES = ("gradOutput", "result", "gradInput")


def get_workspace_size(grad_output, result, grad_input):
    """Check the arguments and plan the call; returns the executor (raises AclError)."""
    args = (grad_output, result, grad_input)
    executor = planner.reuse(API, args)  # these very objects passed every check before
    if executor is not None:
        return executor
    g = checks.tensor(API, "gradOutput", grad_output)
    y = checks.tensor(API, "result", result)
    o = checks.tensor(API, "gradInput", grad_input)
    codes, names, _ = checks.allowed(OP, checks.soc())
    checks.dtype_in(API, "gradOutput", g, codes, names)
    checks.dtype_in(API, "result", y, codes, names)
    checks.dtype_in(API, "gradInput", o, codes, names)
    checks.same_dtype(API, "result", y, "gradOutput", g)
    checks.same_dtype(API, "gradInput", o, "gradOutput", g)
    checks.same_shape(API, "result", y, "gradOutput", g)
    checks.same_shape(API, "gradInput", o, "gradOutput", g)
    return planner.build(API, OP, NAMES, (g, y, o), 2, g.view_dims, memo=(args, None))


# ==============================================================================================
# numpy entry point
# ==============================================================================================


def selu_backward(grad_output, result, out=None):
    """The gradient of SELU given its forward `result`, applied to `grad_output`."""
    done = entry.replay(API, (grad_output, result), (), out)
    if done is not None:
        return done
    g, y = entry.array(grad_output), entry.array(result)
    out = entry.output(API, "gradInput", out, entry.shape_of(g), g.dtype if g is not None else None)
    args = [entry.tensor(API, "gradOutput", g), entry.tensor(API, "result", y)]
    return entry.run(get_workspace_size, API, args, out, "gradInput", (g, y), ())
