"""Every constant of SPEC.md §1 at CANN's numeric values, plus the tables that name them.

Kept in one module so `acl` and `aclnn` can re-export them as attributes and so error messages
can print a code by its CANN name (`ACL_INT8`, not `2`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from aclgen import dtypes as dt

# --- aclnn status codes (aclnnStatus) ---------------------------------------------------------
ACLNN_SUCCESS = 0
ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_RUNTIME_ERROR = 361001
ACLNN_ERR_INNER = 561000
ACLNN_ERR_INNER_TILING_ERROR = 561002
ACLNN_ERR_INNER_CREATE_EXECUTOR = 561101
ACLNN_ERR_INNER_NULLPTR = 561103

# --- runtime (acl.rt.*) status codes ----------------------------------------------------------
ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001  # (the C ABI's calls after its runtime failed to start)
ACL_ERROR_REPEAT_INITIALIZE = 100002  # (the C ABI's aclInit called twice: harmless)
ACL_ERROR_BAD_ALLOC = 200000
ACL_ERROR_INTERNAL_ERROR = 500000
ACL_ERROR_RT_FAILURE = 500003  # (the C ABI's aclInit when its runtime cannot start)

# --- aclDataType --------------------------------------------------------------------------------
ACL_DT_UNDEFINED = -1
ACL_FLOAT = 0
ACL_FLOAT16 = 1
ACL_INT8 = 2
ACL_INT32 = 3
ACL_UINT8 = 4
ACL_INT16 = 6
ACL_UINT16 = 7
ACL_UINT32 = 8
ACL_INT64 = 9
ACL_UINT64 = 10
ACL_DOUBLE = 11
ACL_BOOL = 12
ACL_STRING = 13
ACL_COMPLEX64 = 16
ACL_COMPLEX128 = 17
ACL_BF16 = 27
ACL_INT4 = 29
ACL_UINT1 = 30
ACL_COMPLEX32 = 33
ACL_HIFLOAT8 = 34
ACL_FLOAT8_E5M2 = 35
ACL_FLOAT8_E4M3FN = 36
ACL_FLOAT8_E8M0 = 37
ACL_FLOAT6_E3M2 = 38
ACL_FLOAT6_E2M3 = 39
ACL_FLOAT4_E2M1 = 40
ACL_FLOAT4_E1M2 = 41

# --- aclFormat ----------------------------------------------------------------------------------
ACL_FORMAT_UNDEFINED = -1
ACL_FORMAT_NCHW = 0
ACL_FORMAT_NHWC = 1
ACL_FORMAT_ND = 2
ACL_FORMAT_NC1HWC0 = 3
ACL_FORMAT_FRACTAL_Z = 4
ACL_FORMAT_NC1HWC0_C04 = 12
ACL_FORMAT_HWCN = 16
ACL_FORMAT_NDHWC = 27
ACL_FORMAT_FRACTAL_NZ = 29
ACL_FORMAT_NCDHW = 30
ACL_FORMAT_NDC1HWC0 = 32
ACL_FRACTAL_Z_3D = 33
ACL_FORMAT_NC = 35
ACL_FORMAT_NCL = 47

# --- memcpy kinds and malloc policies -----------------------------------------------------------
ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEM_MALLOC_HUGE_ONLY = 1
ACL_MEM_MALLOC_NORMAL_ONLY = 2

FLT_EPSILON = 1.1920928955078125e-07  # 2**-23, C's FLT_EPSILON


FORMAT_NAMES: dict[int, str] = {
    v: k for k, v in globals().items() if k.startswith("ACL_FORMAT_") or k == "ACL_FRACTAL_Z_3D"
}
MEMCPY_KINDS = frozenset((0, 1, 2, 3))
MALLOC_POLICIES = frozenset((0, 1, 2))


# --- one record per aclDataType -----------------------------------------------------------------


@dataclass(frozen=True)
class DataType:
    """An aclDataType and what every layer knows of it. `itemsize` is None for the sub-byte and
    string types (a tensor of them can exist, operators reject it, but it has no byte extent to
    check); `numpy` is the dtype of a host array of it (from_numpy, to_numpy, the Python call);
    `kernel` what kernels compute on, where they compute on it; `dlpack` DLPack's (type code,
    bits); `kind` how a scalar of it is stored ("float", "int", "uint", "bool"; None: no scalar)."""

    code: int
    name: str  # CANN's: "ACL_FLOAT"
    itemsize: int | None = None
    numpy: Any = None  # np.dtype (given as anything np.dtype takes)
    kernel: dt.DType | None = None
    dlpack: tuple[int, int] | None = None
    kind: str | None = None

    def __post_init__(self):
        if self.numpy is not None:
            object.__setattr__(self, "numpy", np.dtype(self.numpy))


def _types(*rows) -> dict[int, DataType]:
    return {globals()[name]: DataType(globals()[name], name, *rest) for name, *rest in rows}


DATA_TYPES: dict[int, DataType] = _types(
    # (name, itemsize, numpy dtype, kernel DType, DLPack's (code, bits), scalar kind)
    ("ACL_DT_UNDEFINED",),
    ("ACL_FLOAT", 4, np.float32, dt.float32, (2, 32), "float"),
    ("ACL_FLOAT16", 2, np.float16, dt.float16, (2, 16), "float"),
    ("ACL_INT8", 1, np.int8, dt.int8, (0, 8), "int"),
    ("ACL_INT32", 4, np.int32, dt.int32, (0, 32), "int"),
    ("ACL_UINT8", 1, np.uint8, dt.uint8, (1, 8), "uint"),
    ("ACL_INT16", 2, np.int16, None, (0, 16), "int"),
    ("ACL_UINT16", 2, np.uint16, None, (1, 16), "uint"),
    ("ACL_UINT32", 4, np.uint32, None, (1, 32), "uint"),
    ("ACL_INT64", 8, np.int64, dt.int64, (0, 64), "int"),
    ("ACL_UINT64", 8, np.uint64, None, (1, 64), "uint"),
    ("ACL_DOUBLE", 8, np.float64, None, (2, 64), "float"),
    ("ACL_BOOL", 1, np.bool_, None, (6, 8), "bool"),
    ("ACL_STRING",),
    ("ACL_COMPLEX64", 8, np.complex64, None, (5, 64)),
    ("ACL_COMPLEX128", 16, np.complex128, None, (5, 128)),
    ("ACL_BF16", 2, ml_dtypes.bfloat16, dt.bfloat16, (4, 16), "float"),
    ("ACL_INT4",),
    ("ACL_UINT1",),
    ("ACL_COMPLEX32", 4),
    ("ACL_HIFLOAT8", 1),
    ("ACL_FLOAT8_E5M2", 1),
    ("ACL_FLOAT8_E4M3FN", 1),
    ("ACL_FLOAT8_E8M0", 1),
    ("ACL_FLOAT6_E3M2",),
    ("ACL_FLOAT6_E2M3",),
    ("ACL_FLOAT4_E2M1",),
    ("ACL_FLOAT4_E1M2",),
)
_OF_NUMPY: dict[np.dtype, int] = {t.numpy: c for c, t in DATA_TYPES.items() if t.numpy is not None}
_OF_KERNEL: dict[str, int] = {t.kernel.name: c for c, t in DATA_TYPES.items() if t.kernel is not None}


def kernel_dtype(code) -> dt.DType | None:
    """The DType kernels compute `code` in (None: kernels never see it)."""
    t = DATA_TYPES.get(code)
    return t.kernel if t is not None else None


def kernel_of(code) -> dt.DType:
    """The DType of a code the checks let through to a kernel (ValueError for another)."""
    k = kernel_dtype(code)
    if k is None:
        raise ValueError(f"{dtype_name(code)} is not a dtype kernels compute in")
    return k


def code_of(d: dt.DType | str) -> int:
    """The aclDataType of a kernel dtype (or its name); ACL_DT_UNDEFINED for another name."""
    return _OF_KERNEL.get(d if isinstance(d, str) else d.name, ACL_DT_UNDEFINED)


def code_of_numpy(npd: np.dtype) -> int | None:
    return _OF_NUMPY.get(npd)


def numpy_of(code) -> np.dtype | None:
    t = DATA_TYPES.get(code)
    return t.numpy if t is not None else None


def itemsize(code) -> int | None:
    t = DATA_TYPES.get(code)
    return t.itemsize if t is not None else None


def dtype_name(code) -> str:
    t = DATA_TYPES.get(code)
    return t.name if t is not None else f"aclDataType({code})"


def format_name(code) -> str:
    return FORMAT_NAMES.get(code, f"aclFormat({code})")


def public() -> dict[str, int | float]:
    """Every constant by name, for `acl` and `aclnn` to re-export as attributes."""
    return {k: v for k, v in globals().items() if k.isupper() and isinstance(v, (int, float)) and not isinstance(v, bool)}
