"""Helpers every example shares, as CANN's aclnn samples define them (CHECK_RET, CreateAclTensor)."""

from __future__ import annotations

import sys

import numpy as np

import aclgen.acl as acl


def check(ret: int, what: str) -> None:
    """CHECK_RET: stop the program with the status and the runtime's message."""
    if ret != acl.ACL_SUCCESS:
        sys.exit(f"{what} failed. ERROR: {ret} ({acl.get_recent_err_msg()})")


def contiguous_strides(shape) -> list[int]:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    return strides


def create_acl_tensor(host: np.ndarray, data_type: int):
    """Device memory holding `host` and an aclTensor over it: (device address, tensor)."""
    size = host.nbytes
    device_addr, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    check(ret, "aclrtMalloc")
    check(acl.rt.memcpy(device_addr, size, host.ctypes.data, size, acl.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")
    shape = list(host.shape)
    tensor = acl.create_tensor(shape, data_type, contiguous_strides(shape), 0, acl.ACL_FORMAT_ND, shape, device_addr)
    if tensor is None:
        sys.exit(f"aclCreateTensor failed ({acl.get_recent_err_msg()})")
    return device_addr, tensor


def copy_to_host(device_addr: int, like: np.ndarray) -> np.ndarray:
    result = np.empty_like(like)
    check(acl.rt.memcpy(result.ctypes.data, result.nbytes, device_addr, result.nbytes,
                        acl.ACL_MEMCPY_DEVICE_TO_HOST), "copy result from device to host")
    return result


def print_result(result: np.ndarray) -> None:
    """One line per element, CANN's format, with float32's shortest round-trip digits."""
    for i, v in enumerate(result.ravel()):
        print(f"result[{i}] is: {np.float32(v)!s}")
