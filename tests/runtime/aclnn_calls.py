"""Shared helpers of the runtime tests: tensors over numpy or runtime memory, every operator's API."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import aclgen.acl as acl
import aclgen.aclnn as aclnn
from tests.registry import resolve

NP = {
    acl.ACL_FLOAT: np.float32, acl.ACL_FLOAT16: np.float16, acl.ACL_BF16: ml_dtypes.bfloat16,
    acl.ACL_INT8: np.int8, acl.ACL_INT32: np.int32, acl.ACL_INT64: np.int64, acl.ACL_UINT8: np.uint8,
    acl.ACL_DOUBLE: np.float64, acl.ACL_INT16: np.int16, acl.ACL_BOOL: np.bool_,
}
_scratch = np.zeros(1 << 16, np.uint8)  # backing for tensors of dtypes numpy lacks


def t(shape=(4, 2), dtype=acl.ACL_FLOAT, fmt=acl.ACL_FORMAT_ND):
    """A tensor of zeros over numpy memory (or scratch memory for dtypes without numpy)."""
    npd = NP.get(dtype)
    if npd is None:
        tensor = acl.create_tensor(list(shape), dtype, None, 0, fmt, list(shape), _scratch.ctypes.data)
        assert tensor is not None, acl.get_recent_err_msg()
        return tensor
    return acl.from_numpy(np.zeros(shape, npd), fmt)


def s(value=1.0, dtype=acl.ACL_FLOAT):
    scalar = acl.create_scalar(value, dtype)
    assert scalar is not None, acl.get_recent_err_msg()
    return scalar


def gws(op: str):
    """aclnn<Op>GetWorkspaceSize of the operator `op` names (tests/registry.py's names)."""
    return getattr(aclnn, f"{resolve(op).api}GetWorkspaceSize")


def run(op: str):
    """aclnn<Op> of the operator `op` names."""
    return getattr(aclnn, resolve(op).api)


def call(op: str, *args, stream=None) -> int:
    """Both phases with a runtime workspace when one is needed; returns the first failing code."""
    ws, ex, ret = gws(op)(*args)
    if ret:
        return ret
    ptr = None
    if ws:
        ptr, ret = acl.rt.malloc(ws, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == 0
    ret = run(op)(ptr, ws, ex, stream)
    if stream is not None and ret == 0:
        ret = acl.rt.synchronize_stream(stream)
    if ptr is not None:
        acl.rt.free(ptr)
    return ret
