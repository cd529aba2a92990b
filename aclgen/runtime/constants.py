"""Every constant of SPEC.md §1 at CANN's numeric values, plus the tables that name them.

Kept in one module so `acl` and `aclnn` can re-export them as attributes and so error messages
can print a code by its CANN name (`ACL_INT8`, not `2`).
"""

from __future__ import annotations

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


_DTYPE_CONSTANTS = (
    "ACL_DT_UNDEFINED", "ACL_FLOAT", "ACL_FLOAT16", "ACL_INT8", "ACL_INT32", "ACL_UINT8", "ACL_INT16",
    "ACL_UINT16", "ACL_UINT32", "ACL_INT64", "ACL_UINT64", "ACL_DOUBLE", "ACL_BOOL", "ACL_STRING",
    "ACL_COMPLEX64", "ACL_COMPLEX128", "ACL_BF16", "ACL_INT4", "ACL_UINT1", "ACL_COMPLEX32",
    "ACL_HIFLOAT8", "ACL_FLOAT8_E5M2", "ACL_FLOAT8_E4M3FN", "ACL_FLOAT8_E8M0", "ACL_FLOAT6_E3M2",
    "ACL_FLOAT6_E2M3", "ACL_FLOAT4_E2M1", "ACL_FLOAT4_E1M2",
)
DTYPE_NAMES: dict[int, str] = {globals()[k]: k for k in _DTYPE_CONSTANTS}
FORMAT_NAMES: dict[int, str] = {
    v: k for k, v in globals().items() if k.startswith("ACL_FORMAT_") or k == "ACL_FRACTAL_Z_3D"
}
MEMCPY_KINDS = frozenset((0, 1, 2, 3))
MALLOC_POLICIES = frozenset((0, 1, 2))

# Bytes per element of the codes with a whole-byte layout; sub-byte and string types have none,
# so a tensor of them can exist (operators reject it) but has no byte extent we could check.
ITEMSIZE: dict[int, int] = {
    ACL_FLOAT: 4, ACL_FLOAT16: 2, ACL_INT8: 1, ACL_INT32: 4, ACL_UINT8: 1, ACL_INT16: 2,
    ACL_UINT16: 2, ACL_UINT32: 4, ACL_INT64: 8, ACL_UINT64: 8, ACL_DOUBLE: 8, ACL_BOOL: 1,
    ACL_COMPLEX64: 8, ACL_COMPLEX128: 16, ACL_BF16: 2, ACL_COMPLEX32: 4, ACL_HIFLOAT8: 1,
    ACL_FLOAT8_E5M2: 1, ACL_FLOAT8_E4M3FN: 1, ACL_FLOAT8_E8M0: 1,
}

# The aclgen DType (what kernels compute on) of each code that has one.
KERNEL_DTYPE: dict[int, dt.DType] = {
    ACL_FLOAT: dt.float32, ACL_FLOAT16: dt.float16, ACL_BF16: dt.bfloat16, ACL_INT8: dt.int8,
    ACL_INT32: dt.int32, ACL_INT64: dt.int64, ACL_UINT8: dt.uint8,
}
CODE_OF_DTYPE: dict[str, int] = {d.name: c for c, d in KERNEL_DTYPE.items()}


def dtype_name(code) -> str:
    return DTYPE_NAMES.get(code, f"aclDataType({code})")


def format_name(code) -> str:
    return FORMAT_NAMES.get(code, f"aclFormat({code})")


def public() -> dict[str, int | float]:
    """Every constant by name, for `acl` and `aclnn` to re-export as attributes."""
    return {k: v for k, v in globals().items() if k.isupper() and isinstance(v, (int, float)) and not isinstance(v, bool)}
