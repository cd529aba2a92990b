"""The two phases of any declared operator, as every face calls them.

    executor = get_workspace_size(op, args)        # raises AclError (the Python call's path)
    ws, executor, status = phase1(op, args)        # the aclnn convention: never raises
    status = phase2(op, workspace, ws, executor, stream)

Phase 1: a call with the very objects of a checked call skips the checks (planner.reuse);
otherwise the operator's check sequence (its `check`, or SPEC §6's default) runs, then the one
planner builds the executor. Phase 2 is aclgen.runtime.executor.execute.
"""

from __future__ import annotations

from aclgen.runtime import checks, planner
from aclgen.runtime import constants as C
from aclgen.runtime.errors import AclError, fail
from aclgen.runtime.executor import Executor, execute


def get_workspace_size(op, args: tuple, inplace: bool = False) -> Executor:
    """Check `args` (CANN's C order, `op.arg_names`; with `inplace`, aclnnInplace<Name>'s,
    `op.inplace_args`) and plan the call; raises AclError."""
    if inplace:
        if len(args) != len(op.inplace_args):
            raise AclError(C.ACLNN_ERR_PARAM_INVALID,
                           f"{op.inplace_api}GetWorkspaceSize takes {len(op.inplace_args)} arguments "
                           f"({', '.join(op.inplace_args)}), got {len(args)}")
        args = op.from_inplace(args)
    executor = planner.reuse(op, args)  # these very objects passed every check before
    if executor is not None:
        return executor
    if len(args) != len(op.arg_names):
        raise AclError(C.ACLNN_ERR_PARAM_INVALID,
                       f"{op.api}GetWorkspaceSize takes {len(op.arg_names)} arguments "
                       f"({', '.join(op.arg_names)}), got {len(args)}")
    call = checks.Call(op, args, op.inplace_api if inplace else op.api)
    (op.check or checks.default)(call)
    if call.shape is None:
        raise AclError(C.ACLNN_ERR_INNER, f"{op.api}: its check did not set the iteration shape")
    return planner.build(call, args)


def phase1(op, args: tuple, inplace: bool = False) -> tuple[int, Executor | None, int]:
    """(workspace_size, executor, ACLNN_SUCCESS) or (0, None, status) with the message set."""
    try:
        ex = get_workspace_size(op, args, inplace)
    except AclError as e:
        return 0, None, fail(e.status, e.message)
    except Exception as e:  # a compiler or runtime bug: reported, never raised into the caller
        return 0, None, fail(C.ACLNN_ERR_INNER, f"{op.api}: internal error: {type(e).__name__}: {e}")
    return ex.workspace_size, ex, C.ACLNN_SUCCESS


def phase2(op, workspace, workspace_size, executor, stream) -> int:
    """Run (stream None) or enqueue an executor `op`'s phase 1 made; checks it first."""
    return execute(op.api, workspace, workspace_size, executor, stream)
