"""Phase 1 of an aclnn call for the checks-and-codes tables of the family tests: tensors made to
a shape and dtype, and the status and message GetWorkspaceSize answers."""

from __future__ import annotations

import numpy as np

import aclgen.acl as acl
import aclgen.aclnn as aclnn

NULL, INVALID, TILING = 161001, 161002, 561002


def tensor(shape=(2, 3), dtype: object = np.float32, fill=0.0, fmt=acl.ACL_FORMAT_ND):
    return acl.from_numpy(np.full(shape, fill, np.dtype(dtype)), fmt)  # type: ignore[call-overload]


def status(api: str, *args) -> tuple[int, str]:
    """(the status, the recent error message when it is not 0) of `api`GetWorkspaceSize(*args)."""
    ret = getattr(aclnn, f"{api}GetWorkspaceSize")(*args)[2]
    return ret, acl.get_recent_err_msg() if ret else ""
