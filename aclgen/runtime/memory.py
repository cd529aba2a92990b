"""Runtime-owned "device" memory: 64-byte aligned blocks in a registry of address ranges.

Every address the runtime hands out is recorded, so any pointer can be checked against the
allocation it claims to be in (memcpy, tensor views, workspaces) and misuse becomes
ACL_ERROR_INVALID_PARAM instead of a crash. A block's storage is a numpy buffer that objects
still using it (tensors, executors, queued stream work) keep alive: `free` only unregisters, so
memory freed too early is never unmapped under a running kernel.
"""

from __future__ import annotations

import bisect
import ctypes
import threading
from typing import Any

import numpy as np

from aclgen.codegen.native import lined_bytes
from aclgen.runtime import constants as C
from aclgen.runtime.errors import AclError

MAX_ALLOC = 1 << 46  # larger requests are refused outright instead of asking the OS


class Block:
    """One allocation: [start, end) bytes; `freed` once `free` unregistered it."""

    __slots__ = ("buffer", "end", "freed", "size", "start")

    def __init__(self, start: int, size: int, buffer: np.ndarray):
        self.start, self.size, self.end = start, size, start + size
        self.buffer = buffer
        self.freed = False

    def __repr__(self) -> str:
        return f"Block(0x{self.start:x}, {self.size} bytes{', freed' if self.freed else ''})"


_lock = threading.Lock()
_blocks: dict[int, Block] = {}
_starts: list[int] = []  # sorted, for finding the block containing an address


def is_address(p) -> bool:
    return type(p) is int or (isinstance(p, int) and not isinstance(p, bool))


def malloc(size, policy) -> Block:
    if not is_address(size) or size <= 0:
        raise AclError(C.ACL_ERROR_INVALID_PARAM, f"malloc: size must be a positive int, got {size!r}")
    if policy not in C.MALLOC_POLICIES or isinstance(policy, bool):
        raise AclError(C.ACL_ERROR_INVALID_PARAM, f"malloc: policy {policy!r} is not one of 0, 1, 2")
    if size > MAX_ALLOC:
        raise AclError(C.ACL_ERROR_BAD_ALLOC, f"malloc: cannot allocate {size} bytes")
    try:
        buffer = lined_bytes(size)
    except (MemoryError, ValueError):
        raise AclError(C.ACL_ERROR_BAD_ALLOC, f"malloc: cannot allocate {size} bytes") from None
    start = buffer.ctypes.data
    block = Block(start, size, buffer)
    with _lock:
        _blocks[start] = block
        bisect.insort(_starts, start)
    return block


def free(ptr) -> None:
    with _lock:
        block = _blocks.pop(ptr, None) if is_address(ptr) else None
        if block is None:
            raise AclError(C.ACL_ERROR_INVALID_PARAM, f"free: {_fmt(ptr)} is not the start of a live allocation")
        del _starts[bisect.bisect_left(_starts, ptr)]
        block.freed = True


def find(addr: int) -> Block | None:
    """The live block containing byte `addr`, or None."""
    i = bisect.bisect_right(_starts, addr) - 1
    if i < 0:
        return None
    block = _blocks.get(_starts[i])
    if block is None or addr >= block.end:
        return None
    return block


def check_range(addr, count: int, what: str) -> Block:
    """The live block holding all of [addr, addr + count), else ACL_ERROR_INVALID_PARAM."""
    if not is_address(addr) or addr == 0:
        raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memcpy: {what} {_fmt(addr)} is not a device address")
    block = find(addr)
    if block is None:
        raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memcpy: {what} {_fmt(addr)} is not inside a runtime allocation")
    if addr + count > block.end:
        raise AclError(
            C.ACL_ERROR_INVALID_PARAM,
            f"memcpy: {what} range of {count} bytes at {_fmt(addr)} ends {addr + count - block.end} bytes "
            f"past its allocation of {block.size} bytes",
        )
    return block


def _host(p, count: int, what: str, writable: bool) -> tuple[int, object]:
    """A host pointer: an int address (trusted, as in C) or an array whose size we can check."""
    if isinstance(p, np.ndarray):
        if not p.flags.c_contiguous:
            raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memcpy: {what} array must be C-contiguous")
        if writable and not p.flags.writeable:
            raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memcpy: {what} array is read-only")
        if count > p.nbytes:
            raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memcpy: count {count} exceeds {what} array of {p.nbytes} bytes")
        return p.ctypes.data, p
    if not is_address(p) or p <= 0:
        raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memcpy: {what} {_fmt(p)} is not a host address")
    return p, None


def memcpy(dst, dst_max, src, count, kind) -> None:
    """Copy `count` bytes; device sides must lie in live allocations, count <= dst_max."""
    if kind not in C.MEMCPY_KINDS or isinstance(kind, bool):
        raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memcpy: kind {kind!r} is not one of 0, 1, 2, 3")
    for name, v in (("dst_max", dst_max), ("count", count)):
        if not is_address(v) or v < 0:
            raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memcpy: {name} must be an int >= 0, got {v!r}")
    if count > dst_max:
        raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memcpy: count {count} is larger than dst_max {dst_max}")
    dst_dev = kind in (C.ACL_MEMCPY_HOST_TO_DEVICE, C.ACL_MEMCPY_DEVICE_TO_DEVICE)
    src_dev = kind in (C.ACL_MEMCPY_DEVICE_TO_HOST, C.ACL_MEMCPY_DEVICE_TO_DEVICE)
    if dst_dev:
        check_range(dst, count, "dst")
        d = dst
    else:
        d, _ = _host(dst, count, "dst", True)
    if src_dev:
        check_range(src, count, "src")
        s = src
    else:
        s, _ = _host(src, count, "src", False)
    if count:
        ctypes.memmove(d, s, count)


def memset(ptr, max_count, value, count) -> None:
    """Set `count` bytes of device memory to `value` (aclrtMemset)."""
    for name, v in (("max_count", max_count), ("count", count)):
        if not is_address(v) or v < 0:
            raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memset: {name} must be an int >= 0, got {v!r}")
    if count > max_count:
        raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memset: count {count} is larger than max_count {max_count}")
    if not is_address(value) or not 0 <= value <= 255:
        raise AclError(C.ACL_ERROR_INVALID_PARAM, f"memset: value must be a byte 0..255, got {value!r}")
    check_range(ptr, count, "ptr")
    if count:
        ctypes.memset(ptr, value, count)


def raw_view(addr: int, dims, strides, np_dtype: np.dtype, owner=None) -> np.ndarray:
    """A writable numpy view of elements at `addr` with element `strides` (all >= 0). The caller
    has checked the extent; the view keeps `owner` (whatever holds the memory) alive."""
    itemsize = np_dtype.itemsize
    if any(n == 0 for n in dims):
        return np.empty(tuple(dims), np_dtype)
    extent = (sum((n - 1) * s for n, s in zip(dims, strides)) + 1) * itemsize
    # Any: it carries `_owner` (ctypes objects take attributes), and numpy's stubs for Python
    # < 3.12 list the buffer types frombuffer takes without ctypes arrays
    buf: Any = (ctypes.c_char * extent).from_address(addr)
    buf._owner = owner  # numpy keeps `buf` as the view's base, so this chain keeps memory alive
    flat = np.frombuffer(buf, np_dtype)
    return np.lib.stride_tricks.as_strided(
        flat, shape=tuple(dims), strides=tuple(s * itemsize for s in strides), writeable=True
    )


_maps: list[tuple[int, int]] = []  # rw- mappings of this process, merged, as last read


def _read_maps() -> list[tuple[int, int]]:
    with open("/proc/self/maps", "rb") as f:
        lines = f.read().splitlines()
    spans: list[tuple[int, int]] = []
    for line in lines:
        span, perms = line.split(b" ", 2)[:2]
        if perms[:2] != b"rw":
            continue
        start, end = (int(x, 16) for x in span.split(b"-"))
        if spans and spans[-1][1] == start:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def _covered(spans, lo: int, hi: int) -> bool:
    i = bisect.bisect_right(spans, (lo, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= lo and hi <= spans[i][1]


def host_mapped(lo: int, hi: int) -> bool:
    """Whether bytes [lo, hi) lie in readable and writable mappings of this process: a raw host
    pointer given to create_tensor (foreign memory, a random int) must not reach a kernel
    otherwise. Checks the mappings last read from /proc/self/maps and reads them again on a
    miss (Linux); elsewhere the pointer is trusted, as in C."""
    global _maps
    if _covered(_maps, lo, hi):
        return True
    try:
        _maps = _read_maps()
    except OSError:
        return True
    return _covered(_maps, lo, hi)


def _fmt(p) -> str:
    return f"0x{p:x}" if is_address(p) else repr(p)


def live_blocks() -> int:
    return len(_blocks)
