"""acl.rt memory: aligned runtime blocks, free misuse, memcpy/memset checks (never a crash)."""

from __future__ import annotations

import numpy as np
import pytest

import aclgen.acl as acl

INVALID = acl.ACL_ERROR_INVALID_PARAM


@pytest.fixture
def block():
    ptr, ret = acl.rt.malloc(256, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    yield ptr
    acl.rt.free(ptr)


def test_malloc_is_aligned_and_usable():
    ptrs = []
    for size in (1, 3, 64, 1000, 1 << 20):
        ptr, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
        assert ret == 0 and isinstance(ptr, int) and ptr % 64 == 0
        ptrs.append(ptr)
    for p in ptrs:
        assert acl.rt.free(p) == 0


@pytest.mark.parametrize("size,policy,status", [
    (0, 0, INVALID), (-5, 0, INVALID), (1.5, 0, INVALID), (16, 7, INVALID), (16, None, INVALID),
    (1 << 60, 0, acl.ACL_ERROR_BAD_ALLOC),
])
def test_malloc_misuse(size, policy, status):
    ptr, ret = acl.rt.malloc(size, policy)
    assert (ptr, ret) == (0, status)
    assert acl.get_recent_err_msg().startswith("malloc: ")


def test_free_misuse(block):
    assert acl.rt.free(block + 64) == INVALID  # inside a block, not its start
    assert "is not the start of a live allocation" in acl.get_recent_err_msg()
    assert acl.rt.free(12345) == INVALID
    assert acl.rt.free(None) == INVALID
    ptr, _ = acl.rt.malloc(8, 0)
    assert acl.rt.free(ptr) == 0
    assert acl.rt.free(ptr) == INVALID  # double free


def test_memcpy_round_trip(block):
    host = np.arange(64, dtype=np.float32)
    assert acl.rt.memcpy(block, 256, host.ctypes.data, 256, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    other, _ = acl.rt.malloc(256, 0)
    assert acl.rt.memcpy(other, 256, block, 256, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
    back = np.zeros(64, np.float32)
    assert acl.rt.memcpy(back, back.nbytes, other, 256, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0  # array as host side
    assert np.array_equal(back, host)
    h2 = np.zeros(64, np.float32)
    assert acl.rt.memcpy(h2.ctypes.data, 256, host.ctypes.data, 256, acl.ACL_MEMCPY_HOST_TO_HOST) == 0
    assert np.array_equal(h2, host)
    assert acl.rt.memcpy(block, 256, host.ctypes.data, 0, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0  # nothing
    acl.rt.free(other)


def test_memcpy_misuse(block):
    host = np.zeros(128, np.float32)
    h = host.ctypes.data
    cases = [
        ((block, 256, h, 300, acl.ACL_MEMCPY_HOST_TO_DEVICE), "count 300 is larger than dst_max 256"),
        ((block, 512, h, 512, acl.ACL_MEMCPY_HOST_TO_DEVICE), "ends 256 bytes past its allocation of 256 bytes"),
        ((block + 200, 100, h, 100, acl.ACL_MEMCPY_HOST_TO_DEVICE), "past its allocation"),
        ((h, 256, h, 256, acl.ACL_MEMCPY_HOST_TO_DEVICE), "is not inside a runtime allocation"),
        ((h, 256, h, 256, acl.ACL_MEMCPY_DEVICE_TO_HOST), "src"),
        ((block, 256, h, 256, 4), "kind 4 is not one of 0, 1, 2, 3"),
        ((block, 256, h, 256, -1), "kind"),
        ((block, 256, None, 256, acl.ACL_MEMCPY_HOST_TO_DEVICE), "src None is not a host address"),
        ((None, 256, block, 256, acl.ACL_MEMCPY_DEVICE_TO_HOST), "dst None is not a host address"),
        ((block, 256, h, -1, acl.ACL_MEMCPY_HOST_TO_DEVICE), "count must be an int >= 0"),
        ((0, 256, h, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE), "dst 0x0 is not a device address"),
        ((np.zeros(4, np.float32), 256, block, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST), "exceeds dst array of 16 bytes"),
    ]
    for args, fragment in cases:
        assert acl.rt.memcpy(*args) == INVALID, args
        assert fragment in acl.get_recent_err_msg(), (args, acl.get_recent_err_msg())


def test_memcpy_from_freed_block_rejected():
    ptr, _ = acl.rt.malloc(64, 0)
    acl.rt.free(ptr)
    host = np.zeros(16, np.float32)
    assert acl.rt.memcpy(host, 64, ptr, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST) == INVALID


def test_memset(block):
    assert acl.rt.memset(block, 256, 0x7F, 256) == 0
    back = np.zeros(256, np.uint8)
    acl.rt.memcpy(back, 256, block, 256, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert (back == 0x7F).all()
    assert acl.rt.memset(block, 256, 0, 257) == INVALID
    assert acl.rt.memset(block, 512, 0, 512) == INVALID
    assert acl.rt.memset(block, 16, 300, 16) == INVALID


def test_device_and_lifecycle_calls():
    assert acl.init() == 0
    assert acl.init("/nonexistent/acl.json") == INVALID
    assert acl.rt.set_device(0) == 0
    assert acl.rt.get_device() == (0, 0)
    assert acl.rt.set_device(1) == INVALID
    assert "device id 1 does not exist" in acl.get_recent_err_msg()
    assert acl.rt.get_device_count() == (1, 0)
    assert acl.rt.reset_device(3) == INVALID
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0
