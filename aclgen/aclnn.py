"""`aclnn`: the two-phase operator API (SPEC.md §2), C out-parameters as leading return values.

    workspace_size, executor, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(g, x, out)
    ret = aclnn.aclnnHardswishBackward(workspace, workspace_size, executor, stream)

Phase 1 runs the operator's own check sequence (in its file under `aclgen/ops/`) and plans the
call; phase 2 checks executor, workspace and stream and runs now (stream None) or enqueues.
Nothing raises: failures return SPEC's status and leave a message for acl.get_recent_err_msg().
"""

from __future__ import annotations

from importlib import import_module as _import_module

from aclgen.runtime import constants as _C
from aclgen.runtime.errors import AclError as _AclError
from aclgen.runtime.errors import fail as _fail
from aclgen.runtime.executor import destroy as _destroy
from aclgen.runtime.executor import execute as _execute
from aclgen.runtime.executor import set_repeatable as _set_repeatable

# The operator modules (`aclgen.ops` re-exports functions under the same names, so import by path).
_hardswish = _import_module("aclgen.ops.hardswish_backward")
_selu = _import_module("aclgen.ops.selu_backward")
_softshrink = _import_module("aclgen.ops.softshrink_backward")
_swiglu = _import_module("aclgen.ops.swi_glu_grad")
_threshold = _import_module("aclgen.ops.threshold_backward")

ACLNN_SUCCESS = _C.ACLNN_SUCCESS
ACLNN_ERR_PARAM_NULLPTR = _C.ACLNN_ERR_PARAM_NULLPTR
ACLNN_ERR_PARAM_INVALID = _C.ACLNN_ERR_PARAM_INVALID
ACLNN_ERR_RUNTIME_ERROR = _C.ACLNN_ERR_RUNTIME_ERROR
ACLNN_ERR_INNER = _C.ACLNN_ERR_INNER
ACLNN_ERR_INNER_TILING_ERROR = _C.ACLNN_ERR_INNER_TILING_ERROR
ACLNN_ERR_INNER_CREATE_EXECUTOR = _C.ACLNN_ERR_INNER_CREATE_EXECUTOR
ACLNN_ERR_INNER_NULLPTR = _C.ACLNN_ERR_INNER_NULLPTR


def _phase1(binding, api: str, *args):
    """(workspace_size, executor, ACLNN_SUCCESS) or (0, None, status) with the message set."""
    try:
        ex = binding(*args)
    except _AclError as e:
        return 0, None, _fail(e.status, e.message)
    except Exception as e:  # a compiler or runtime bug: reported, never raised into the caller
        return 0, None, _fail(_C.ACLNN_ERR_INNER, f"{api}: internal error: {type(e).__name__}: {e}")
    return ex.workspace_size, ex, 0


def aclnnHardswishBackwardGetWorkspaceSize(gradOutput, self, out):
    return _phase1(_hardswish.get_workspace_size, _hardswish.API, gradOutput, self, out)


def aclnnHardswishBackward(workspace, workspaceSize, executor, stream):
    return _execute(_hardswish.API, workspace, workspaceSize, executor, stream)


def aclnnSeluBackwardGetWorkspaceSize(gradOutput, result, gradInput):
    return _phase1(_selu.get_workspace_size, _selu.API, gradOutput, result, gradInput)


def aclnnSeluBackward(workspace, workspaceSize, executor, stream):
    return _execute(_selu.API, workspace, workspaceSize, executor, stream)


def aclnnSoftshrinkBackwardGetWorkspaceSize(gradOutput, self, lambd, gradInput):
    return _phase1(_softshrink.get_workspace_size, _softshrink.API, gradOutput, self, lambd, gradInput)


def aclnnSoftshrinkBackward(workspace, workspaceSize, executor, stream):
    return _execute(_softshrink.API, workspace, workspaceSize, executor, stream)


def aclnnSwiGluGradGetWorkspaceSize(yGrad, x, dim, out):
    return _phase1(_swiglu.get_workspace_size, _swiglu.API, yGrad, x, dim, out)


def aclnnSwiGluGrad(workspace, workspaceSize, executor, stream):
    return _execute(_swiglu.API, workspace, workspaceSize, executor, stream)


def aclnnThresholdBackwardGetWorkspaceSize(gradOutput, self, threshold, out):
    return _phase1(_threshold.get_workspace_size, _threshold.API, gradOutput, self, threshold, out)


def aclnnThresholdBackward(workspace, workspaceSize, executor, stream):
    return _execute(_threshold.API, workspace, workspaceSize, executor, stream)


def aclSetAclOpExecutorRepeatable(executor) -> int:
    """Let `executor` run until aclDestroyAclOpExecutor instead of being consumed by one run."""
    return _set_repeatable(executor)


def aclDestroyAclOpExecutor(executor) -> int:
    return _destroy(executor)
