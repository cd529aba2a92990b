"""aclScalar: a value stored in its data type; operators read it back as f32 (CANN's ToFloat).

Storing first and widening second is what makes `create_scalar(1.1, ACL_FLOAT16)` mean the
fp16 value nearest 1.1, and `create_scalar(2.9, ACL_INT32)` mean 2, as in C.
"""

from __future__ import annotations

import math

import numpy as np

from aclgen.runtime import constants as C
from aclgen.runtime.errors import AclError
from aclgen.runtime.tensor import next_serial


class AclScalar:
    __slots__ = ("bits", "destroyed", "dtype", "f32", "serial", "value")
    block = None  # like a tensor without runtime memory (the planner's memo treats both alike)

    def __init__(self, value, dtype: int):
        self.value = value  # as stored: a numpy scalar of the dtype, a Python int/float/bool
        self.dtype = dtype
        with np.errstate(over="ignore"):
            f = np.float32(float(value))
        self.f32 = float(f)  # ToFloat: what operators compare with
        self.bits = int(f.view(np.uint32))  # its launch-record slot
        self.destroyed = False
        self.serial = next_serial()

    def __repr__(self) -> str:
        return f"aclScalar({self.value!r}, {C.dtype_name(self.dtype)})"


def _wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def create(value, data_type) -> AclScalar:
    """aclCreateScalar: store `value` in `data_type` (floats round, integers truncate and wrap)."""
    if isinstance(value, (np.ndarray,)) and value.ndim == 0:
        value = value.item()
    if not isinstance(value, (int, float, np.integer, np.floating, bool, np.bool_)):
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"create_scalar: value must be a real number, got {value!r}")
    t = C.DATA_TYPES.get(data_type)
    kind = t.kind if t is not None else None
    if t is None or kind is None:
        raise AclError(C.ACLNN_ERR_PARAM_INVALID,
                       f"create_scalar: data_type {C.dtype_name(data_type)} cannot hold a scalar here")
    if kind == "float":
        with np.errstate(over="ignore"):
            f = float(value)  # a Python float is a C double: ACL_DOUBLE keeps it as it is
            return AclScalar(f if t.numpy == np.float64 else t.numpy.type(f), data_type)
    if kind == "bool":
        return AclScalar(bool(value), data_type)
    f = value if isinstance(value, (int, np.integer)) else float(value)
    if isinstance(f, float) and not math.isfinite(f):
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"create_scalar: {value!r} has no {C.dtype_name(data_type)} value")
    return AclScalar(_wrap(int(f), 8 * (t.itemsize or 0), kind == "int"), data_type)  # int() truncates toward 0


def truncated(f32: float) -> int:
    """trunc(f32) as an i64, for exact compares with integer tensors (ThresholdBackward): past
    the i64 range it saturates, and NaN, which compares false, becomes -2^63 (x <= t never holds)."""
    if f32 != f32:
        return -(2**63)
    if f32 >= 2.0**63:
        return 2**63 - 1
    if f32 < -(2.0**63):
        return -(2**63)
    return int(f32)
