"""`acl.rt`: devices, streams and memory in pyACL's convention (outputs first, status last).

Device 0 is this host. Runtime calls return ACL_* codes (SPEC §1): misuse is
ACL_ERROR_INVALID_PARAM with a message for `acl.get_recent_err_msg()`, never an exception.
"""

from __future__ import annotations

from aclgen.runtime import constants as C
from aclgen.runtime import memory
from aclgen.runtime.errors import AclError, fail, kind_of
from aclgen.runtime.stream import Stream, live_streams

_device: int | None = None


def _device_id(name: str, device_id) -> int | None:
    if type(device_id) is not int or device_id != 0:
        fail(C.ACL_ERROR_INVALID_PARAM, f"{name}: device id {device_id!r} does not exist (only device 0)")
        return None
    return device_id


def set_device(device_id) -> int:
    global _device
    if _device_id("set_device", device_id) is None:
        return C.ACL_ERROR_INVALID_PARAM
    _device = device_id
    return C.ACL_SUCCESS


def reset_device(device_id) -> int:
    """Release the device: waits for all streams' queued work first (as aclrtResetDevice)."""
    global _device
    if _device_id("reset_device", device_id) is None:
        return C.ACL_ERROR_INVALID_PARAM
    for s in live_streams():
        s.synchronize()
    _device = None
    return C.ACL_SUCCESS


def get_device() -> tuple[int, int]:
    if _device is None:
        return 0, fail(C.ACL_ERROR_INVALID_PARAM, "get_device: no device is set")
    return _device, C.ACL_SUCCESS


def get_device_count() -> tuple[int, int]:
    return 1, C.ACL_SUCCESS


def create_stream() -> tuple[Stream, int]:
    return Stream(), C.ACL_SUCCESS


def _bad_stream(name: str, stream) -> int:
    """The status (and message) for `stream`, which is not a live aclrtStream."""
    if type(stream) is not Stream:
        return fail(C.ACL_ERROR_INVALID_PARAM, f"{name}: expected an aclrtStream, got {kind_of(stream)}")
    return fail(C.ACL_ERROR_INVALID_PARAM, f"{name}: the stream was destroyed")


def synchronize_stream(stream) -> int:
    """Wait for `stream`'s queued work; returns the first failure among it (None: returns 0)."""
    if stream is None:
        return C.ACL_SUCCESS
    if type(stream) is not Stream or stream.destroyed:
        return _bad_stream("synchronize_stream", stream)
    error = stream.synchronize()
    return C.ACL_SUCCESS if error is None else fail(*error)


def destroy_stream(stream) -> int:
    """Destroy after the queued work finished; a failure of that work is returned."""
    if stream is None:
        return fail(C.ACL_ERROR_INVALID_PARAM, "destroy_stream: the default stream cannot be destroyed")
    if type(stream) is not Stream or stream.destroyed:
        return _bad_stream("destroy_stream", stream)
    error = stream.destroy()
    return C.ACL_SUCCESS if error is None else fail(*error)


def synchronize_device() -> int:
    """Wait for every stream; the first failure found, if any."""
    status = C.ACL_SUCCESS
    for s in live_streams():
        error = s.synchronize()
        if error is not None and status == C.ACL_SUCCESS:
            status = fail(*error)
    return status


def malloc(size, policy=C.ACL_MEM_MALLOC_HUGE_FIRST) -> tuple[int, int]:
    """64-byte aligned runtime memory: (address, ACL_SUCCESS), or (0, error)."""
    try:
        return memory.malloc(size, policy).start, C.ACL_SUCCESS
    except AclError as e:
        return 0, fail(e.status, e.message)


def free(ptr) -> int:
    try:
        memory.free(ptr)
    except AclError as e:
        return fail(e.status, e.message)
    return C.ACL_SUCCESS


def memcpy(dst, dst_max, src, count, kind) -> int:
    try:
        memory.memcpy(dst, dst_max, src, count, kind)
    except AclError as e:
        return fail(e.status, e.message)
    return C.ACL_SUCCESS


def memset(ptr, max_count, value, count) -> int:
    try:
        memory.memset(ptr, max_count, value, count)
    except AclError as e:
        return fail(e.status, e.message)
    return C.ACL_SUCCESS
