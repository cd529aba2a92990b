"""The C ABI's Python side: each exported function of the SDK's library, on the same runtime as
`aclgen.acl` and `aclgen.aclnn` (so C and Python return the same codes and messages).

The embedding module (aclgen/capi/build.py) calls `install(ffi, lib, op_files)` once, from its
init code, in the first C call's thread. Arguments arrive as Python ints (every pointer is an
`intptr_t` on the module's side, see aclgen/capi/abi.py); handles are looked up in
aclgen/capi/handles.py before anything uses them; out-parameters are written through the
module's small C helpers (`aclgen_put_*`). A failure leaves its message for the C-level
`aclGetRecentErrMsg` (thread-local, in the module's C source); an exception escaping into C
would read as success, so every function is guarded and reports it as an internal error.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import aclgen.acl as acl
import aclgen.aclnn as aclnn
from aclgen import ops
from aclgen.capi import abi
from aclgen.capi.handles import UnknownPointer, arrays, executors, scalars, streams, tensors
from aclgen.declaration import lookup
from aclgen.runtime import api, array, rt
from aclgen.runtime import constants as C
from aclgen.runtime.array import AclArray
from aclgen.runtime.errors import AclError, fail, kind_of, recent
from aclgen.runtime.executor import CONSUMED, DESTROYED, Executor, execute
from aclgen.runtime.scalar import AclScalar
from aclgen.runtime.soc import settings
from aclgen.runtime.stream import Stream
from aclgen.runtime.tensor import AclTensor

MAX_DIMS = 1024  # longer dims arrays are refused before they are read (a garbage count, not a shape)
MAX_ARRAY = 1 << 20  # likewise for aclCreate*Array
INVALID, NULL, INNER_NULL = C.ACL_ERROR_INVALID_PARAM, C.ACLNN_ERR_PARAM_NULLPTR, C.ACLNN_ERR_INNER_NULLPTR
_ffi: Any = None  # the embedding module's ffi and lib, set by install()
_lib: Any = None
_initialized = False



def _report(status: int) -> int:
    """Hand a failure's message (this thread's, from the runtime) to aclGetRecentErrMsg."""
    if status:
        assert _lib is not None
        _lib.aclgen_set_error(recent().encode("utf-8", "replace"))
    return status


def _on_error(name: str, internal: int) -> Callable:
    """cffi's `onerror` for `name`: an exception escaping into C is a bug of ours, returned as
    `internal` (NULL for functions returning a pointer) with its message, never as success."""

    def onerror(exc_type, exc, traceback) -> int | None:
        status = fail(internal or C.ACLNN_ERR_INNER, f"{name}: internal error: {exc_type.__name__}: {exc}")
        _report(status)
        return internal if internal else None  # None: def_extern's `error` value, 0

    return onerror


def _string(p: int) -> str | None:
    assert _ffi is not None
    return _ffi.string(_ffi.cast("char *", p)).decode("utf-8", "replace") if p else None


def _int64s(p: int, n: int) -> list[int]:
    assert _ffi is not None
    return list(_ffi.unpack(_ffi.cast("int64_t *", p), n)) if n else []


# ------------------------------------------------------------------------------------ runtime


def aclInit(config_path: int) -> int:
    global _initialized
    ret = acl.init(_string(config_path))
    if ret == 0 and _initialized:
        return _report(fail(C.ACL_ERROR_REPEAT_INITIALIZE, "aclInit: already initialized (harmless)"))
    _initialized = _initialized or ret == 0
    return _report(ret)


def aclFinalize() -> int:
    global _initialized
    _initialized = False
    return _report(acl.finalize())


def aclrtSetDevice(device_id: int) -> int:
    return _report(rt.set_device(device_id))


def aclrtResetDevice(device_id: int) -> int:
    return _report(rt.reset_device(device_id))


def _out(name: str, p: int) -> int:
    """0 when out-parameter `p` is usable, else the runtime's INVALID_PARAM for NULL."""
    return 0 if p else _report(fail(INVALID, f"{name} is nullptr"))


def aclrtGetDevice(p: int) -> int:
    if _out("aclrtGetDevice: deviceId", p):
        return INVALID
    device, ret = rt.get_device()
    if ret == 0:
        _lib.aclgen_put_i32(p, device)
    return _report(ret)


def aclrtGetDeviceCount(p: int) -> int:
    if _out("aclrtGetDeviceCount: count", p):
        return INVALID
    count, ret = rt.get_device_count()
    _lib.aclgen_put_u32(p, count)
    return _report(ret)


_SOC_NAMES: dict[str, Any] = {}  # aclrtGetSocName's strings: one C copy per name, alive for good


def aclrtGetSocName() -> int:
    """The SoC profile the runtime runs as (ACLGEN_SOC_VERSION, default Ascend910B), as a C
    string the caller must not free; NULL with a message when the setting is unusable."""
    s = settings()
    if s.soc_error:
        _report(fail(C.ACL_ERROR_INVALID_PARAM, f"aclrtGetSocName: {s.soc_error}"))
        return 0
    name = _SOC_NAMES.get(s.soc)
    if name is None:
        assert _ffi is not None
        name = _SOC_NAMES[s.soc] = _ffi.new("char[]", s.soc.encode())
    return int(_ffi.cast("intptr_t", name))


def aclrtSynchronizeDevice() -> int:
    return _report(rt.synchronize_device())


def aclrtGetRunMode(p: int) -> int:
    if _out("aclrtGetRunMode: runMode", p):
        return INVALID
    _lib.aclgen_put_i32(p, abi.RUN_MODES["ACL_HOST"])  # the program runs on the host that is the device
    return 0


def aclrtCreateStream(p: int) -> int:
    if _out("aclrtCreateStream: stream", p):
        return INVALID
    stream, ret = rt.create_stream()
    if ret == 0:
        handle = streams.add(stream)
        _lib.aclgen_watch_stream(handle, ctypes.addressof(stream.unsettled))  # (build.py: C's fast path)
        _lib.aclgen_put_ptr(p, handle)
    return _report(ret)


def aclrtDestroyStream(handle: int) -> int:
    stream = streams.get(handle) if handle else None
    ret = rt.destroy_stream(stream)
    if isinstance(stream, Stream) and stream.destroyed:
        _lib.aclgen_unwatch_stream(handle)
        streams.kill(handle, stream)  # destroyed even when it reports a failure of its queued work
    return _report(ret)


def aclrtSynchronizeStream(handle: int) -> int:
    ret = rt.synchronize_stream((streams.live(handle) or streams.get(handle)) if handle else None)
    return _report(ret) if ret else 0  # (every CANN program's per-call pattern ends here)


def aclrtMalloc(p: int, size: int, policy: int) -> int:
    if _out("aclrtMalloc: devPtr", p):
        return INVALID
    address, ret = rt.malloc(size, policy)
    if ret == 0:
        _lib.aclgen_put_ptr(p, address)
    return _report(ret)


def aclrtFree(p: int) -> int:
    if not p:
        return _report(fail(INVALID, "aclrtFree: devPtr is nullptr"))
    return _report(rt.free(p))


def aclrtMemcpy(dst: int, dest_max: int, src: int, count: int, kind: int) -> int:
    if count == 0:
        return 0
    if not dst or not src:
        return _report(fail(INVALID, f"aclrtMemcpy: {'dst' if not dst else 'src'} is nullptr"))
    return _report(rt.memcpy(dst, dest_max, src, count, kind))


def aclrtMemset(p: int, max_count: int, value: int, count: int) -> int:
    if count == 0:
        return 0
    if not p:
        return _report(fail(INVALID, "aclrtMemset: devPtr is nullptr"))
    return _report(rt.memset(p, max_count, value & 0xFF, count))  # as C's memset: the low byte


# ------------------------------------------------------------------------ tensors and scalars


def aclCreateTensor(view_dims: int, n: int, dtype: int, stride: int, offset: int, fmt: int,
                    storage_dims: int, storage_n: int, data: int) -> int:
    if (not view_dims and n) or (not storage_dims and storage_n):
        what = "viewDims" if not view_dims and n else "storageDims"
        _report(fail(NULL, f"aclCreateTensor: {what} is nullptr but its count is not 0"))
        return 0
    if n > MAX_DIMS or storage_n > MAX_DIMS:
        _report(fail(C.ACLNN_ERR_PARAM_INVALID, f"aclCreateTensor: {max(n, storage_n)} dims, at most {MAX_DIMS}"))
        return 0
    dims = _int64s(view_dims, n)
    strides = _int64s(stride, n) if stride else None
    t = acl.create_tensor(dims, dtype, strides, offset, fmt, _int64s(storage_dims, storage_n), data or None)
    if t is None:
        _report(C.ACLNN_ERR_PARAM_INVALID)
        return 0
    return tensors.add(t)


def aclDestroyTensor(handle: int) -> int:
    if not handle:
        return 0  # as C++'s delete of nullptr
    t = tensors.get(handle)
    ret = acl.destroy_tensor(t)
    if ret == 0 and isinstance(t, AclTensor):
        t.block = None  # what a dead handle answers with keeps no memory alive
        tensors.kill(handle, t)
    return _report(ret)


def aclCreateScalar(value: int, dtype: int) -> int:
    if not value:
        _report(fail(NULL, "aclCreateScalar: value is nullptr"))
        return 0
    t = C.DATA_TYPES.get(dtype)
    if t is None or t.kind is None:
        _report(fail(C.ACLNN_ERR_PARAM_INVALID, f"aclCreateScalar: data type {C.dtype_name(dtype)} cannot hold a scalar"))
        return 0
    assert _ffi is not None
    stored = np.frombuffer(_ffi.buffer(_ffi.cast("char *", value), t.itemsize), t.numpy)[0]  # its bytes, as C holds it
    s = acl.create_scalar(stored.item() if t.kind != "float" else float(stored), dtype)
    if s is None:
        _report(C.ACLNN_ERR_PARAM_INVALID)
        return 0
    return scalars.add(s)


def aclDestroyScalar(handle: int) -> int:
    if not handle:
        return 0
    s = scalars.get(handle)
    ret = acl.destroy_scalar(s)
    if ret == 0 and isinstance(s, AclScalar):
        scalars.kill(handle, s)
    return _report(ret)


def _create_array(kind: str, ctype: str, value: int, size: int) -> int:
    name = f"aclCreate{kind.removeprefix('acl')}"
    if not value and size:
        _report(fail(NULL, f"{name}: value is nullptr but size is {size}"))
        return 0
    if size > MAX_ARRAY:
        _report(fail(C.ACLNN_ERR_PARAM_INVALID, f"{name}: size {size} is more than {MAX_ARRAY}"))
        return 0
    assert _ffi is not None
    items = list(_ffi.unpack(_ffi.cast(f"{ctype} *", value), size)) if size else []
    try:
        a = array.create(kind, items)
    except AclError as e:
        _report(fail(e.status, f"{name}: {e.message}"))
        return 0
    return arrays.add(a)


def _destroy_array(kind: str, handle: int) -> int:
    if not handle:
        return 0
    a = arrays.get(handle)
    if not isinstance(a, AclArray) or a.kind != kind or a.destroyed:
        return _report(fail(C.ACLNN_ERR_PARAM_INVALID, f"aclDestroy{kind.removeprefix('acl')}: {kind_of(a)} is not a "
                                                       f"live {kind}"))
    a.destroyed = True
    arrays.kill(handle, a)
    return 0


def aclCreateIntArray(value: int, size: int) -> int:
    return _create_array(array.ARRAY_INT, "int64_t", value, size)


def aclCreateFloatArray(value: int, size: int) -> int:
    return _create_array(array.ARRAY_FLOAT, "float", value, size)


def aclCreateBoolArray(value: int, size: int) -> int:
    return _create_array(array.ARRAY_BOOL, "bool", value, size)


def aclDestroyIntArray(handle: int) -> int:
    return _destroy_array(array.ARRAY_INT, handle)


def aclDestroyFloatArray(handle: int) -> int:
    return _destroy_array(array.ARRAY_FLOAT, handle)


def aclDestroyBoolArray(handle: int) -> int:
    return _destroy_array(array.ARRAY_BOOL, handle)


def aclGetIntArraySize(handle: int, size_out: int) -> int:
    if not handle or not size_out:
        return _report(fail(NULL, f"aclGetIntArraySize: {'array' if not handle else 'size'} is nullptr"))
    a = arrays.get(handle)
    if not isinstance(a, AclArray) or a.kind != array.ARRAY_INT or a.destroyed:
        return _report(fail(C.ACLNN_ERR_PARAM_INVALID, f"aclGetIntArraySize: {kind_of(a)} is not a live aclIntArray"))
    assert _ffi is not None
    _ffi.cast("uint64_t *", size_out)[0] = len(a.values)
    return 0


def _live_tensor(name: str, handle: int, *outs: int):
    """The tensor of a query's handle, or the status (161001 NULL, 161002 not a live tensor)."""
    if not handle or not all(outs):
        return _report(fail(NULL, f"{name}: {'tensor' if not handle else 'an output argument'} is nullptr"))
    t = tensors.get(handle)
    if isinstance(t, UnknownPointer) or t.destroyed:
        what = "was destroyed" if t.destroyed else f"is not an aclTensor this library returned (0x{handle:x})"
        return _report(fail(C.ACLNN_ERR_PARAM_INVALID, f"{name}: tensor {what}"))
    return t


def _array_out(name: str, handle: int, pp: int, pn: int, values: Callable) -> int:
    """aclGetViewShape & co: a C++ `new int64_t[n]` array the caller frees with `delete[]`."""
    t = _live_tensor(name, handle, pp, pn)
    if isinstance(t, int):
        return t
    items = values(t)
    array = _lib.aclgen_new_int64_array(len(items))
    if array == _ffi.NULL:
        return _report(fail(INNER_NULL, f"{name}: cannot allocate {len(items)} int64_t"))
    for k, v in enumerate(items):
        array[k] = v
    _lib.aclgen_put_ptr(pp, int(_ffi.cast("intptr_t", array)))
    _lib.aclgen_put_u64(pn, len(items))
    return 0


def aclGetViewShape(handle: int, pp: int, pn: int) -> int:
    return _array_out("aclGetViewShape", handle, pp, pn, lambda t: t.view_dims)


def aclGetStorageShape(handle: int, pp: int, pn: int) -> int:
    return _array_out("aclGetStorageShape", handle, pp, pn, lambda t: t.storage_dims)


def aclGetViewStrides(handle: int, pp: int, pn: int) -> int:
    return _array_out("aclGetViewStrides", handle, pp, pn, lambda t: t.strides)


def _field_out(name: str, handle: int, p: int, value: Callable, put: str) -> int:
    t = _live_tensor(name, handle, p)
    if isinstance(t, int):
        return t
    getattr(_lib, put)(p, value(t))
    return 0


def aclGetViewOffset(handle: int, p: int) -> int:
    return _field_out("aclGetViewOffset", handle, p, lambda t: t.offset, "aclgen_put_i64")


def aclGetFormat(handle: int, p: int) -> int:
    return _field_out("aclGetFormat", handle, p, lambda t: t.format, "aclgen_put_i32")


def aclGetDataType(handle: int, p: int) -> int:
    return _field_out("aclGetDataType", handle, p, lambda t: t.dtype, "aclgen_put_i32")


# ------------------------------------------------------------------------------ executors


def aclSetAclOpExecutorRepeatable(handle: int) -> int:
    if not handle:
        return _report(fail(INNER_NULL, "aclSetAclOpExecutorRepeatable: executor is nullptr"))
    return _report(aclnn.aclSetAclOpExecutorRepeatable(executors.get(handle)))


def aclDestroyAclOpExecutor(handle: int) -> int:
    if not handle:
        return _report(fail(INNER_NULL, "aclDestroyAclOpExecutor: executor is nullptr"))
    ex = executors.get(handle)
    ret = aclnn.aclDestroyAclOpExecutor(ex)
    if ret == 0 and isinstance(ex, Executor):
        executors.kill(handle, (ex.api, DESTROYED))
    return _report(ret)


def aclnnInit(config_path: int) -> int:
    return 0


def aclnnFinalize() -> int:
    return 0


# ------------------------------------------------------------------------------ the operators


def phase1(op, inplace: bool = False) -> Callable:
    """aclnn<Op>GetWorkspaceSize(<arguments in CANN's order>..., workspaceSize*, executor**), or
    aclnnInplace<Op>'s.

    Generated with the operator's arity, so a call is a handful of dict lookups around the
    runtime's phase 1 (a live handle in one C-level lookup, the rest only when it is not live)."""
    arg_names = op.inplace_args if inplace else op.arg_names
    kinds = ["t" if n not in op.kinds else _door_kind(op, n) for n in arg_names]  # <input>Ref: a tensor
    names = [f"a{i}" for i in range(len(kinds))]
    look = {"t": "(T({0}) or TG({0})) if {0} else None", "s": "(S({0}) or SG({0})) if {0} else None",
            "a": "(A({0}) or AG({0})) if {0} else None", "c": "STR({0}) if {0} else None", "v": "{0}"}
    objs = ", ".join(look[k].format(n) for k, n in zip(kinds, names))
    name = f"{op.inplace_api if inplace else op.api}GetWorkspaceSize"
    source = (
        f"def get_workspace_size({', '.join(names)}, ws_out, ex_out):\n"
        f"    if not ws_out or not ex_out:\n"
        f"        return nullptr_out(ws_out)\n"
        f"    size, ex, ret = check(op, ({objs},), INPLACE)\n"
        f"    if ret or ex is None:\n"
        f"        return report(ret)\n"
        f"    put_plan(ws_out, size, ex_out, add(ex))\n"
        f"    return 0\n"
    )

    def nullptr_out(ws_out: int) -> int:
        return _report(fail(NULL, f"{name}: {'workspaceSize' if not ws_out else 'executor'} is nullptr"))

    namespace = {"T": tensors.live, "TG": tensors.get, "S": scalars.live, "SG": scalars.get, "A": arrays.live,
                 "AG": arrays.get, "STR": _c_string, "op": op, "INPLACE": inplace,
                 "check": api.phase1, "report": _report, "nullptr_out": nullptr_out, "add": executors.add,
                 "put_plan": _lib.aclgen_put_plan}
    exec(compile(source, f"<aclgen C ABI {name}>", "exec"), namespace)
    fn = namespace["get_workspace_size"]
    fn.__name__ = name
    return fn


def _door_kind(op, name: str) -> str:
    """How the C door reads argument `name`: t(ensor), s(calar) or a(rray) handles, a C string
    (c), or a plain value (v: bool, int64_t, float, double)."""
    kind = op.kinds[name]
    if kind in ("input", "output"):
        return "t"
    if kind == "scalar":
        return "s"
    c_type = abi.c_type(op, name)
    return "a" if "Array" in c_type else "c" if c_type == "const char*" else "v"


def _c_string(address: int) -> str:
    assert _ffi is not None
    return _ffi.string(_ffi.cast("char *", address)).decode("utf-8", "replace")


def phase2(op, inplace: bool = False) -> Callable:
    """aclnn<Op>(workspace, workspaceSize, executor, stream); a consumed executor's handle dies."""
    api_name = op.inplace_api if inplace else op.api
    live_ex, get_ex, live_stream, get_stream = executors.live, executors.get, streams.live, streams.get
    kill = executors.kill

    def run(workspace: int, size: int, handle: int, stream: int) -> int:
        ex = (live_ex(handle) or get_ex(handle)) if handle else None
        s = (live_stream(stream) or get_stream(stream)) if stream else None
        ret = execute(api_name, workspace or None, size, ex, s)
        if ret:
            return _report(ret)
        if type(ex) is Executor and ex.state == CONSUMED:  # (execute succeeded: it is one)
            kill(handle, (api_name, CONSUMED))
        return 0

    run.__name__ = api_name
    return run


def _missing(name: str, why: str) -> Callable:
    def missing(*args) -> int:
        return _report(fail(C.ACLNN_ERR_INNER, f"{name}: {why}"))

    missing.__name__ = name
    return missing


# ---------------------------------------------------------------------------------- install

_RUNTIME_FUNCTIONS = {f.name for f in abi.FUNCTIONS if f.python}


def install(ffi, lib, exported_operators: Sequence[str], op_files: Sequence[str]) -> None:
    """Attach every exported function: the runtime's, then each operator's (looked up by aclnn
    name after loading `op_files`; one that cannot be found answers with ACLNN_ERR_INNER)."""
    global _ffi, _lib
    _ffi, _lib = ffi, lib
    problems = {}
    for path in op_files:
        try:
            ops.load(path)
        except Exception as exc:  # the C call reports it; nothing may raise into C
            problems[path] = f"{type(exc).__name__}: {exc}"
    here = globals()
    for name in _RUNTIME_FUNCTIONS:
        internal = C.ACL_ERROR_INTERNAL_ERROR if name.startswith("aclrt") or name in ("aclInit", "aclFinalize") \
            else C.ACLNN_ERR_INNER
        fn = here[name]
        if abi.returns_pointer(name):
            internal = 0  # pointer results: NULL
        ffi.def_extern(name=abi.PYTHON_SIDE + name, error=internal, onerror=_on_error(name, internal))(fn)
    for name in exported_operators:
        op = lookup(name)
        if op is None or op.name != name:
            why = f"operator {name} was not declared in this process" + (f" ({problems})" if problems else "")
            first, second = _missing(f"aclnn{name}GetWorkspaceSize", why), _missing(f"aclnn{name}", why)
        else:
            first, second = phase1(op), phase2(op)
            if op.inplace:
                for fn in (phase1(op, True), phase2(op, True)):
                    ffi.def_extern(name=abi.PYTHON_SIDE + fn.__name__, error=C.ACLNN_ERR_INNER,
                                   onerror=_on_error(fn.__name__, C.ACLNN_ERR_INNER))(fn)
        for fn in (first, second):
            ffi.def_extern(name=abi.PYTHON_SIDE + fn.__name__, error=C.ACLNN_ERR_INNER,
                           onerror=_on_error(fn.__name__, C.ACLNN_ERR_INNER))(fn)
