"""DLPack import of CPU tensors from other libraries (torch, numpy, jax, ...), zero-copy.

We read the DLManagedTensor ourselves rather than going through `np.from_dlpack` because numpy
cannot represent bfloat16 (kDLBfloat); reading the struct covers every dtype aclTensor has. The
capsule is renamed "used_dltensor" (the protocol's way of taking ownership) and the producer's
deleter runs when the last aclTensor or view using the memory is gone.
"""

from __future__ import annotations

import ctypes
import sys

from aclgen.runtime import constants as C
from aclgen.runtime.tensor import AclTensor, from_layout

KDL_CPU = 1
# (DLDataTypeCode, bits) -> aclDataType
_CODES = {t.dlpack: code for code, t in C.DATA_TYPES.items() if t.dlpack is not None}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype, _get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype, _is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_set_name = ctypes.pythonapi.PyCapsule_SetName
_set_name.restype, _set_name.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]


class _Owner:
    """Holds the consumed DLManagedTensor; calls the producer's deleter when collected."""

    def __init__(self, managed):
        self.managed = managed

    def __del__(self):
        deleter = self.managed.contents.deleter
        if deleter:
            deleter(self.managed)


def from_dlpack(obj, format: int = C.ACL_FORMAT_ND) -> AclTensor:
    """An aclTensor over a CPU tensor exporting `__dlpack__` (or a "dltensor" capsule)."""
    capsule = obj.__dlpack__() if hasattr(obj, "__dlpack__") else obj
    if not _is_valid(capsule, b"dltensor"):
        raise TypeError("from_dlpack: expected an object with __dlpack__ or an unused 'dltensor' capsule")
    managed = ctypes.cast(_get_pointer(capsule, b"dltensor"), ctypes.POINTER(_DLManagedTensor))
    t = managed.contents.dl_tensor
    if t.device.device_type != KDL_CPU:
        raise ValueError(f"from_dlpack: only CPU tensors can be imported, got device type {t.device.device_type}")
    code = _CODES.get((t.dtype.code, t.dtype.bits))
    if code is None or t.dtype.lanes != 1:
        raise TypeError(f"from_dlpack: DLPack dtype (code {t.dtype.code}, bits {t.dtype.bits}, "
                        f"lanes {t.dtype.lanes}) has no aclDataType")
    if format not in C.FORMAT_NAMES:
        raise ValueError(f"from_dlpack: format {format!r} is not an aclFormat")
    _set_name(capsule, b"used_dltensor")  # ours now: the capsule's destructor leaves it alone
    owner = _Owner(managed)
    shape = [t.shape[k] for k in range(t.ndim)]
    if t.strides:
        strides = [t.strides[k] for k in range(t.ndim)]
    else:
        strides, acc = [0] * t.ndim, 1
        for k in reversed(range(t.ndim)):
            strides[k], acc = acc, acc * max(shape[k], 1)
    elem0 = (t.data or 0) + t.byte_offset
    return from_layout(elem0, shape, strides, code, format, owner, False)


# ------------------------------------------------------------------------------------ export

KDL_CODE = {code: key for key, code in _CODES.items()}  # aclDataType -> (DLDataTypeCode, bits)
_exports: dict[int, tuple] = {}  # id of a live DLManagedTensor -> what it keeps alive


@_Deleter
def _release(managed) -> None:
    _exports.pop(ctypes.addressof(managed.contents), None)


class Exported:
    """A numpy array's memory as a DLPack producer (`__dlpack__`, `__dlpack_device__`), so that
    any consumer (`torch.from_dlpack`, `jax.numpy.from_dlpack`) can view it without a copy —
    bfloat16 included, which numpy's own `__dlpack__` cannot export."""

    def __init__(self, array, code: int):
        self.array, self.code = array, code

    def __dlpack_device__(self) -> tuple[int, int]:
        return (KDL_CPU, 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        a = self.array
        type_code, bits = KDL_CODE[self.code]
        ndim = a.ndim
        shape = (ctypes.c_int64 * max(ndim, 1))(*a.shape)
        strides = (ctypes.c_int64 * max(ndim, 1))(*(s // a.itemsize for s in a.strides))
        managed = _DLManagedTensor()
        t = managed.dl_tensor
        t.data = a.ctypes.data
        t.device = _DLDevice(KDL_CPU, 0)
        t.ndim = ndim
        t.dtype = _DLDataType(type_code, bits, 1)
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = 0
        managed.deleter = _release
        _exports[ctypes.addressof(managed)] = (managed, shape, strides, a)
        return _new_capsule(ctypes.addressof(managed), b"dltensor", _unused_capsule)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _unused_capsule(capsule) -> None:
    """A capsule no consumer took (still named "dltensor"): release what it keeps alive."""
    if _capsule_valid(capsule, b"dltensor"):
        _exports.pop(_capsule_pointer(capsule, b"dltensor"), None)


# Own prototypes (ctypes.pythonapi's attributes are shared objects: the import side above set
# theirs for Python objects; the capsule destructor gets a raw pointer).
_new_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))
_capsule_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def library_of(obj):
    """`from_dlpack` of the library whose tensor `obj` is (torch, jax, cupy...), or None."""
    root = type(obj).__module__.split(".")[0]
    root = {"jaxlib": "jax"}.get(root, root)
    mod = sys.modules.get(root)
    if mod is None:
        return None
    for path in ("from_dlpack", "numpy.from_dlpack", "dlpack.from_dlpack", "utils.dlpack.from_dlpack"):
        f = mod
        for part in path.split("."):
            f = getattr(f, part, None)
            if f is None:
                break
        if callable(f):
            return f
    return None
