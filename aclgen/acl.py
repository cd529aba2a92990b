"""`acl`: Ascend's Python runtime interface (pyACL conventions) over aclgen's host runtime.

    import aclgen.acl as acl
    ret = acl.init()
    ptr, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    t = acl.create_tensor(dims, acl.ACL_FLOAT, strides, 0, acl.ACL_FORMAT_ND, dims, ptr)

Outputs come first and the status last; calls without outputs return the status alone. Every
constant of SPEC.md §1 is an attribute here, at CANN's numeric value. Failures never raise: they
return a code and leave a one-line message for `get_recent_err_msg()` on this thread. The numpy
and DLPack helpers are Python conveniences and raise TypeError/ValueError on what they cannot view.
"""

from __future__ import annotations

import os

from aclgen.runtime import array as _array
from aclgen.runtime import constants as _C
from aclgen.runtime import dlpack as _dlpack
from aclgen.runtime import rt  # noqa: F401  (acl.rt.*)
from aclgen.runtime import scalar as _scalar
from aclgen.runtime import soc as _soc
from aclgen.runtime import tensor as _tensor
from aclgen.runtime.array import AclArray
from aclgen.runtime.errors import AclError as _AclError
from aclgen.runtime.errors import fail as _fail
from aclgen.runtime.errors import kind_of as _kind_of
from aclgen.runtime.errors import recent as _recent
from aclgen.runtime.errors import set_recent as _set_recent
from aclgen.runtime.scalar import AclScalar
from aclgen.runtime.tensor import AclTensor

globals().update(_C.public())


def init(config_path: str | None = None) -> int:
    """aclInit. The optional JSON config is only checked for existence (nothing to configure)."""
    if config_path is not None and not os.path.isfile(config_path):
        return _fail(_C.ACL_ERROR_INVALID_PARAM, f"init: config file {config_path!r} does not exist")
    return _C.ACL_SUCCESS


def finalize() -> int:
    return _C.ACL_SUCCESS


def set_soc_version(name: str | None) -> int:
    """Choose the SoC profile (Ascend910, Ascend910B, Ascend910_93, Ascend310P, Ascend950);
    None goes back to $ACLGEN_SOC_VERSION or the default Ascend910B."""
    if not _soc.set_soc_version(name):
        return _fail(_C.ACL_ERROR_INVALID_PARAM, f"set_soc_version: unknown SoC {name!r}")
    return _C.ACL_SUCCESS


def get_soc_name() -> str:
    return _soc.soc_name()


def get_recent_err_msg() -> str:
    """The message of the last failure on this thread ("" if nothing failed yet)."""
    return _recent()


def create_tensor(view_dims, data_type, strides, offset, format, storage_dims, data) -> AclTensor | None:
    """aclCreateTensor (offset and strides in elements; `data` an int address or None).
    Malformed arguments give None; views outside their storage are rejected by operators."""
    try:
        return _tensor.create(view_dims, data_type, strides, offset, format, storage_dims, data)
    except _AclError as e:
        _set_recent(e.message)
        return None


def destroy_tensor(tensor) -> int:
    return _destroy("destroy_tensor", tensor, AclTensor)


def create_scalar(value, data_type) -> AclScalar | None:
    """aclCreateScalar: `value` stored in `data_type`; operators read it back as f32."""
    try:
        return _scalar.create(value, data_type)
    except _AclError as e:
        _set_recent(e.message)
        return None


def destroy_scalar(scalar) -> int:
    return _destroy("destroy_scalar", scalar, AclScalar)


def _create_array(kind: str, values) -> AclArray | None:
    try:
        return _array.create(kind, values)
    except _AclError as e:
        _set_recent(e.message)
        return None


def create_int_array(values) -> AclArray | None:
    """aclCreateIntArray: the int64 values copied (an attribute such as normalizedShape)."""
    return _create_array(_array.ARRAY_INT, values)


def create_float_array(values) -> AclArray | None:
    """aclCreateFloatArray: the values copied as C floats."""
    return _create_array(_array.ARRAY_FLOAT, values)


def create_bool_array(values) -> AclArray | None:
    """aclCreateBoolArray: the bool values copied."""
    return _create_array(_array.ARRAY_BOOL, values)


def destroy_int_array(a) -> int:
    return _destroy("destroy_int_array", a, AclArray)


def destroy_float_array(a) -> int:
    return _destroy("destroy_float_array", a, AclArray)


def destroy_bool_array(a) -> int:
    return _destroy("destroy_bool_array", a, AclArray)


def _destroy(name: str, obj, kind) -> int:
    if obj is None:
        return _C.ACLNN_SUCCESS  # like C's delete of nullptr
    if type(obj) is not kind:
        return _fail(_C.ACLNN_ERR_PARAM_INVALID, f"{name}: expected an {kind.__name__[0].lower()}{kind.__name__[1:]}, "
                                                 f"got {_kind_of(obj)}")
    if obj.destroyed:
        return _fail(_C.ACLNN_ERR_PARAM_INVALID, f"{name}: already destroyed")
    obj.destroyed = True
    return _C.ACLNN_SUCCESS


def from_numpy(array, format: int = _C.ACL_FORMAT_ND) -> AclTensor:
    """A zero-copy aclTensor over a numpy array (dims, strides, offset from the array)."""
    return _tensor.from_numpy(array, format)


def to_numpy(tensor: AclTensor):
    """A zero-copy numpy view of a tensor's elements."""
    return _tensor.to_numpy(tensor)


def from_dlpack(obj, format: int = _C.ACL_FORMAT_ND) -> AclTensor:
    """A zero-copy aclTensor over a CPU tensor of another library (anything with __dlpack__)."""
    return _dlpack.from_dlpack(obj, format)
