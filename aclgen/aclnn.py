"""`aclnn`: the two-phase operator API (SPEC.md §2), C out-parameters as leading return values.

    workspace_size, executor, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(g, x, out)
    ret = aclnn.aclnnHardswishBackward(workspace, workspace_size, executor, stream)

Both functions exist for every declared operator (aclgen.declaration's registry: the built-ins
of aclgen.ops and any `@aclgen.operator` of the user's), made from the declaration on first
access. Phase 1 runs the operator's checks and plans the call; phase 2 checks executor,
workspace and stream and runs now (stream None) or enqueues. Nothing raises: failures return
SPEC's status and leave a message for acl.get_recent_err_msg().
"""

from __future__ import annotations

import inspect
import re

import aclgen.ops as _ops  # noqa: F401  (the built-ins declare themselves)
from aclgen.declaration import lookup as _lookup
from aclgen.declaration import on_change as _on_change
from aclgen.declaration import registered as _registered
from aclgen.runtime import api as _api
from aclgen.runtime import constants as _C
from aclgen.runtime.executor import destroy as _destroy
from aclgen.runtime.executor import execute as _execute
from aclgen.runtime.executor import set_repeatable as _set_repeatable

ACLNN_SUCCESS = _C.ACLNN_SUCCESS
ACLNN_ERR_PARAM_NULLPTR = _C.ACLNN_ERR_PARAM_NULLPTR
ACLNN_ERR_PARAM_INVALID = _C.ACLNN_ERR_PARAM_INVALID
ACLNN_ERR_RUNTIME_ERROR = _C.ACLNN_ERR_RUNTIME_ERROR
ACLNN_ERR_INNER = _C.ACLNN_ERR_INNER
ACLNN_ERR_INNER_TILING_ERROR = _C.ACLNN_ERR_INNER_TILING_ERROR
ACLNN_ERR_INNER_CREATE_EXECUTOR = _C.ACLNN_ERR_INNER_CREATE_EXECUTOR
ACLNN_ERR_INNER_NULLPTR = _C.ACLNN_ERR_INNER_NULLPTR

_made: set[str] = set()  # names of the functions made so far (kept in globals for speed)


def aclSetAclOpExecutorRepeatable(executor) -> int:
    """Let `executor` run until aclDestroyAclOpExecutor instead of being consumed by one run."""
    return _set_repeatable(executor)


def aclDestroyAclOpExecutor(executor) -> int:
    return _destroy(executor)


def _phase1(op, inplace: bool = False):
    names = op.inplace_args if inplace else op.arg_names
    api = op.inplace_api if inplace else op.api
    phase1 = _api.phase1

    def get_workspace_size(*args):  # positional, as in C
        return phase1(op, args, inplace)

    get_workspace_size.__name__ = get_workspace_size.__qualname__ = f"{api}GetWorkspaceSize"
    get_workspace_size.__doc__ = (f"{api}({', '.join(names)}) -> (workspace_size, executor, status): check the "
                                  f"arguments and plan the call.")
    get_workspace_size.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    return get_workspace_size


def _phase2(op, inplace: bool = False):
    api = op.inplace_api if inplace else op.api

    def run(workspace, workspaceSize, executor, stream):
        return _execute(api, workspace, workspaceSize, executor, stream)

    run.__name__ = run.__qualname__ = api
    run.__doc__ = f"{api}(workspace, workspaceSize, executor, stream) -> status: run the planned call."
    return run


_NAME = re.compile(r"aclnn(Inplace)?(\w+?)(GetWorkspaceSize)?")


def _resolve(m: re.Match):
    """(operator, in place?) of a matched aclnn name, or None."""
    inplace, base, _ = m.groups()
    if inplace:
        op = _lookup(base)
        if op is not None and op.name == base and op.inplace is not None:
            return op, True
        base = f"Inplace{base}"  # an operator whose own name starts with Inplace
    op = _lookup(base)
    return (op, False) if op is not None and op.name == base else None


def __getattr__(name: str):
    m = _NAME.fullmatch(name)
    found = _resolve(m) if m else None
    if m is None or found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    op, inplace = found
    f = _phase1(op, inplace) if m.group(3) else _phase2(op, inplace)
    globals()[name] = f
    _made.add(name)
    return f


def __dir__() -> list[str]:
    ops = [n for op in _registered().values()
           for api in (op.api, *([op.inplace_api] if op.inplace else [])) for n in (f"{api}GetWorkspaceSize", api)]
    return sorted({*globals(), *ops})


def _forget_made() -> None:
    """A declaration was added or removed: functions are made again from the registry."""
    for name in _made:
        globals().pop(name, None)
    _made.clear()


_on_change(_forget_made)
