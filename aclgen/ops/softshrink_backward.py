"""aclnnSoftshrinkBackward(gradOutput, self, lambd, gradInput) (SPEC.md §4.3).

gradInput = 0 where |x| <= lambd, else g (so |x| = lambd gives 0 and a NaN x gives g).
gradOutput and self broadcast; when their dtypes differ the result is float32.
"""

import numpy as np

from aclgen.frontend import select
from aclgen.kernel import Param
from aclgen.ops import entry
from aclgen.ops.operator import Operator
from aclgen.runtime import checks, planner
from aclgen.runtime import constants as C
from aclgen.runtime.errors import AclError

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


# ==============================================================================================
# aclnn binding: aclnnSoftshrinkBackwardGetWorkspaceSize's checks, in SPEC.md §4.3's order
# ==============================================================================================

API = "aclnnSoftshrinkBackward"
NAMES = ("gradOutput", "self", "gradInput")


def get_workspace_size(grad_output, self, lambd, grad_input):
    """Check the arguments and plan the call; returns the executor (raises AclError)."""
    args = (grad_output, self, lambd, grad_input)
    executor = planner.reuse(API, args)  # these very objects passed every check before
    if executor is not None:
        return executor
    g = checks.tensor(API, "gradOutput", grad_output)
    x = checks.tensor(API, "self", self)
    lam = checks.scalar(API, "lambd", lambd)
    o = checks.tensor(API, "gradInput", grad_input)
    codes, names, _ = checks.allowed(OP, checks.soc())
    checks.dtype_in(API, "gradOutput", g, codes, names)
    checks.dtype_in(API, "self", x, codes, names)
    checks.dtype_in(API, "gradInput", o, codes, names)
    checks.max_dims(API, "gradOutput", g)
    checks.max_dims(API, "self", x)
    checks.max_dims(API, "gradInput", o)
    shape = checks.broadcast(API, "gradOutput", g, "self", x)
    checks.out_shape(API, "gradInput", o, shape)
    if lam.f32 < 0:  # NaN compares false: accepted
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"{API}: lambd must be >= 0, got {lam.f32!r}")
    promoted = g.dtype if g.dtype == x.dtype else C.ACL_FLOAT
    if o.dtype != promoted:
        raise AclError(C.ACLNN_ERR_INNER_NULLPTR,
                       f"{API}: gradInput dtype {C.dtype_name(o.dtype)} must equal the result dtype "
                       f"{C.dtype_name(promoted)} of gradOutput {C.dtype_name(g.dtype)} and self {C.dtype_name(x.dtype)}")
    return planner.build(API, OP, NAMES, (g, x, o), 2, shape, (lam.bits,), memo=(args, None))


# ==============================================================================================
# numpy entry point
# ==============================================================================================


def softshrink_backward(grad_output, self, lambd, out=None):
    """The gradient of softshrink(lambd) at `self` applied to `grad_output` (broadcasting)."""
    done = entry.replay(API, (grad_output, self), (lambd,), out)
    if done is not None:
        return done
    g, x = entry.array(grad_output), entry.array(self)
    shape, dtype = (), None
    if g is not None and x is not None:
        try:
            shape = np.broadcast_shapes(g.shape, x.shape)
        except ValueError:
            shape = g.shape  # the API names the broadcast failure
        dtype = result_dtype(g.dtype, x.dtype)
    out = entry.output(API, "gradInput", out, shape, dtype)
    args = [entry.tensor(API, "gradOutput", g), entry.tensor(API, "self", x), entry.scalar(lambd)]
    return entry.run(get_workspace_size, API, args, out, "gradInput", (g, x), (lambd,))
