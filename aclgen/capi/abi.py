"""The C ABI as data: CANN's functions, types and constants (shared/C_API.md), and each declared
operator's two functions, made from its declaration.

One table, two readers: aclgen/capi/headers.py writes the public headers from it (CANN's types
and parameter names), and aclgen/capi/build.py the cffi embedding module (every pointer as an
`intptr_t`: the same registers on LP64, and Python receives ints instead of cdata).
"""

from __future__ import annotations

from dataclasses import dataclass

from aclgen.declaration import snake
from aclgen.runtime import constants as C

# The embedding module exports each Python-implemented function under this prefix; the public
# name is a C wrapper that checks the runtime started first (aclgen/capi/build.py).
PYTHON_SIDE = "aclgen_py_"


@dataclass(frozen=True)
class Param:
    type: str  # C type as the public header writes it
    name: str

    @property
    def is_pointer(self) -> bool:
        return "*" in self.type or self.type == "aclrtStream"


@dataclass(frozen=True)
class Function:
    name: str
    returns: str
    params: tuple[Param, ...]
    header: str  # which public header declares it (acl_rt, acl_base_rt, acl_meta, aclnn_base, or an operator's)
    python: bool = True  # implemented in Python (aclgen/capi/library.py); False: in the module's C source

    def declaration(self, prefix: str = "") -> str:
        args = ", ".join(f"{p.type} {p.name}" for p in self.params) or "void"
        return f"{prefix}{self.returns} {self.name}({args});"

    def cffi_declaration(self) -> str:
        """The declaration the embedding module is built with: pointers as intptr_t."""
        args = ", ".join(("intptr_t" if p.is_pointer else _cffi_scalar(p.type)) + f" {p.name}"
                         for p in self.params) or "void"
        returns = "intptr_t" if "*" in self.returns else _cffi_scalar(self.returns)
        return f"{returns} {self.name}({args});"


# C types the public headers use, as the embedding module sees them (enums are ints on this ABI)
_SCALARS = {"aclError": "int", "aclnnStatus": "int32_t", "aclDataType": "int", "aclFormat": "int",
            "aclrtMemcpyKind": "int", "aclrtMemMallocPolicy": "int", "aclrtRunMode": "int",
            "bool": "_Bool"}  # C99's own name: the module's generated prototypes come before any #include


def _cffi_scalar(t: str) -> str:
    return _SCALARS.get(t, t)


def _f(header: str, returns: str, name: str, *params: str, python: bool = True) -> Function:
    """Function(header, returns, name, "type name", ...)."""
    ps = []
    for p in params:
        t, _, n = p.rpartition(" ")
        ps.append(Param(t.strip(), n))
    return Function(name, returns, tuple(ps), header, python)


RT, BASE_RT, META, ACLNN_BASE = "acl_rt", "acl_base_rt", "acl_meta", "aclnn_base"

FUNCTIONS: tuple[Function, ...] = (
    # acl/acl_rt.h
    _f(RT, "aclError", "aclInit", "const char* configPath"),
    _f(RT, "aclError", "aclFinalize"),
    _f(RT, "aclError", "aclrtSetDevice", "int32_t deviceId"),
    _f(RT, "aclError", "aclrtResetDevice", "int32_t deviceId"),
    _f(RT, "aclError", "aclrtGetDevice", "int32_t* deviceId"),
    _f(RT, "aclError", "aclrtGetDeviceCount", "uint32_t* count"),
    _f(RT, "aclError", "aclrtSynchronizeDevice"),
    _f(RT, "aclError", "aclrtGetRunMode", "aclrtRunMode* runMode"),
    _f(RT, "aclError", "aclrtCreateStream", "aclrtStream* stream"),
    _f(RT, "aclError", "aclrtDestroyStream", "aclrtStream stream"),
    _f(RT, "aclError", "aclrtSynchronizeStream", "aclrtStream stream"),
    _f(RT, "aclError", "aclrtMalloc", "void** devPtr", "size_t size", "aclrtMemMallocPolicy policy"),
    _f(RT, "aclError", "aclrtFree", "void* devPtr"),
    _f(RT, "aclError", "aclrtMemcpy", "void* dst", "size_t destMax", "const void* src", "size_t count",
       "aclrtMemcpyKind kind"),
    _f(RT, "aclError", "aclrtMemset", "void* devPtr", "size_t maxCount", "int32_t value", "size_t count"),
    _f(RT, "const char*", "aclGetRecentErrMsg", python=False),
    _f(RT, "const char*", "aclrtGetSocName"),
    # acl/acl_base_rt.h
    _f(BASE_RT, "size_t", "aclDataTypeSize", "aclDataType dataType", python=False),
    _f(BASE_RT, "float", "aclFloat16ToFloat", "aclFloat16 value", python=False),
    _f(BASE_RT, "aclFloat16", "aclFloatToFloat16", "float value", python=False),
    # aclnn/acl_meta.h
    _f(META, "aclTensor*", "aclCreateTensor", "const int64_t* viewDims", "uint64_t viewDimsNum",
       "aclDataType dataType", "const int64_t* stride", "int64_t offset", "aclFormat format",
       "const int64_t* storageDims", "uint64_t storageDimsNum", "void* tensorData"),
    _f(META, "aclnnStatus", "aclDestroyTensor", "const aclTensor* tensor"),
    _f(META, "aclScalar*", "aclCreateScalar", "void* value", "aclDataType dataType"),
    _f(META, "aclnnStatus", "aclDestroyScalar", "const aclScalar* scalar"),
    _f(META, "aclIntArray*", "aclCreateIntArray", "const int64_t* value", "uint64_t size"),
    _f(META, "aclnnStatus", "aclDestroyIntArray", "const aclIntArray* array"),
    _f(META, "aclFloatArray*", "aclCreateFloatArray", "const float* value", "uint64_t size"),
    _f(META, "aclnnStatus", "aclDestroyFloatArray", "const aclFloatArray* array"),
    _f(META, "aclBoolArray*", "aclCreateBoolArray", "const bool* value", "uint64_t size"),
    _f(META, "aclnnStatus", "aclDestroyBoolArray", "const aclBoolArray* array"),
    _f(META, "aclnnStatus", "aclGetIntArraySize", "const aclIntArray* array", "uint64_t* size"),
    _f(META, "aclnnStatus", "aclSetAclOpExecutorRepeatable", "aclOpExecutor* executor"),
    _f(META, "aclnnStatus", "aclDestroyAclOpExecutor", "aclOpExecutor* executor"),
    _f(META, "aclnnStatus", "aclGetViewShape", "const aclTensor* tensor", "int64_t** viewDims",
       "uint64_t* viewDimsNum"),
    _f(META, "aclnnStatus", "aclGetStorageShape", "const aclTensor* tensor", "int64_t** storageDims",
       "uint64_t* storageDimsNum"),
    _f(META, "aclnnStatus", "aclGetViewStrides", "const aclTensor* tensor", "int64_t** stridesValue",
       "uint64_t* stridesNum"),
    _f(META, "aclnnStatus", "aclGetViewOffset", "const aclTensor* tensor", "int64_t* offset"),
    _f(META, "aclnnStatus", "aclGetFormat", "const aclTensor* tensor", "aclFormat* format"),
    _f(META, "aclnnStatus", "aclGetDataType", "const aclTensor* tensor", "aclDataType* dataType"),
    # aclnn/aclnn_base.h
    _f(ACLNN_BASE, "aclnnStatus", "aclnnInit", "const char* configPath"),
    _f(ACLNN_BASE, "aclnnStatus", "aclnnFinalize"),
)

# CANN's acl status constants (static const int in acl/acl_base_rt.h)
ACL_ERRORS = {
    "ACL_SUCCESS": 0, "ACL_ERROR_NONE": 0,
    "ACL_ERROR_INVALID_PARAM": 100000, "ACL_ERROR_UNINITIALIZE": 100001, "ACL_ERROR_REPEAT_INITIALIZE": 100002,
    "ACL_ERROR_INVALID_FILE": 100003, "ACL_ERROR_REPEAT_FINALIZE": 100037,
    "ACL_ERROR_BAD_ALLOC": 200000, "ACL_ERROR_API_NOT_SUPPORT": 200001, "ACL_ERROR_INVALID_DEVICE": 200002,
    "ACL_ERROR_MEMORY_ADDRESS_UNALIGNED": 200003, "ACL_ERROR_RESOURCE_NOT_MATCH": 200004,
    "ACL_ERROR_INVALID_RESOURCE_HANDLE": 200005, "ACL_ERROR_FEATURE_UNSUPPORTED": 200006,
    "ACL_ERROR_STORAGE_OVER_LIMIT": 300000,
    "ACL_ERROR_INTERNAL_ERROR": 500000, "ACL_ERROR_FAILURE": 500001, "ACL_ERROR_GE_FAILURE": 500002,
    "ACL_ERROR_RT_FAILURE": 500003, "ACL_ERROR_DRV_FAILURE": 500004,
}

# aclnn status codes (#defines of aclnn/opdev/op_errno.h)
ACLNN_ERRORS = {
    "ACLNN_SUCCESS": C.ACLNN_SUCCESS, "ACLNN_ERR_PARAM_NULLPTR": C.ACLNN_ERR_PARAM_NULLPTR,
    "ACLNN_ERR_PARAM_INVALID": C.ACLNN_ERR_PARAM_INVALID, "ACLNN_ERR_RUNTIME_ERROR": C.ACLNN_ERR_RUNTIME_ERROR,
    "ACLNN_ERR_INNER": C.ACLNN_ERR_INNER, "ACLNN_ERR_INNER_INFERSHAPE_ERROR": 561001,
    "ACLNN_ERR_INNER_TILING_ERROR": C.ACLNN_ERR_INNER_TILING_ERROR, "ACLNN_ERR_INNER_FIND_KERNEL_ERROR": 561003,
    "ACLNN_ERR_INNER_CREATE_EXECUTOR": C.ACLNN_ERR_INNER_CREATE_EXECUTOR, "ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR": 561102,
    "ACLNN_ERR_INNER_NULLPTR": C.ACLNN_ERR_INNER_NULLPTR,
}

MEMCPY_KINDS = {
    "ACL_MEMCPY_HOST_TO_HOST": 0, "ACL_MEMCPY_HOST_TO_DEVICE": 1, "ACL_MEMCPY_DEVICE_TO_HOST": 2,
    "ACL_MEMCPY_DEVICE_TO_DEVICE": 3, "ACL_MEMCPY_DEFAULT": 4, "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE": 5,
    "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE": 6, "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE": 7,
}
MALLOC_POLICIES = {
    "ACL_MEM_MALLOC_HUGE_FIRST": 0, "ACL_MEM_MALLOC_HUGE_ONLY": 1, "ACL_MEM_MALLOC_NORMAL_ONLY": 2,
    "ACL_MEM_MALLOC_HUGE_FIRST_P2P": 3, "ACL_MEM_MALLOC_HUGE_ONLY_P2P": 4, "ACL_MEM_MALLOC_NORMAL_ONLY_P2P": 5,
    "ACL_MEM_MALLOC_HUGE1G_ONLY": 6, "ACL_MEM_MALLOC_HUGE1G_ONLY_P2P": 7,
    "ACL_MEM_TYPE_LOW_BAND_WIDTH": 0x0100, "ACL_MEM_TYPE_HIGH_BAND_WIDTH": 0x1000,
    "ACL_MEM_ACCESS_USER_SPACE_READONLY": 0x100000,
}
RUN_MODES = {"ACL_DEVICE": 0, "ACL_HOST": 1}
STREAM_STATUS = {"ACL_STREAM_STATUS_COMPLETE": 0, "ACL_STREAM_STATUS_NOT_READY": 1,
                 "ACL_STREAM_STATUS_RESERVED": 0xFFFF}
LOG_LEVELS = {"ACL_DEBUG": 0, "ACL_INFO": 1, "ACL_WARNING": 2, "ACL_ERROR": 3}
MEM_TYPES = {"ACL_MEMTYPE_DEVICE": 0, "ACL_MEMTYPE_HOST": 1, "ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT": 2}
ACL_VERSION = (1, 17, 0)


def data_types() -> dict[str, int]:
    """aclDataType: every name of SPEC §1 (aclgen.runtime.constants) at CANN's value."""
    return {t.name: code for code, t in sorted(C.DATA_TYPES.items())}


def formats() -> dict[str, int]:
    names = {name: code for code, name in sorted(C.FORMAT_NAMES.items())}
    names.update({"ACL_FORMAT_FRACTAL_NZ_C0_16": 50, "ACL_FORMAT_FRACTAL_NZ_C0_32": 51,
                  "ACL_FORMAT_FRACTAL_NZ_C0_2": 52, "ACL_FORMAT_FRACTAL_NZ_C0_4": 53,
                  "ACL_FORMAT_FRACTAL_NZ_C0_8": 54})
    return names


# ------------------------------------------------------------------------------ the operators


def returns_pointer(name: str) -> bool:
    """Whether runtime function `name` returns a pointer (its failure value is NULL)."""
    return any(f.name == name and "*" in f.returns for f in FUNCTIONS)


def c_type(op, name: str) -> str:
    """The C type of argument `name` of a declared operator: inputs `const aclTensor*`, outputs
    `aclTensor*`, aclScalars `const aclScalar*`, attributes their kind's C type."""
    kind = op.kinds[name]
    if kind == "attr":
        return next(a.kind.c_type for a in op.attrs if a.name == name)
    return {"input": "const aclTensor*", "output": "aclTensor*", "scalar": "const aclScalar*"}[kind]


def operator_functions(op) -> tuple[Function, ...]:
    """aclnn<Name>GetWorkspaceSize and aclnn<Name> of a declared operator (aclgen.declaration):
    its arguments in CANN's order (`c_type`), then the workspace size and executor
    out-parameters; and aclnnInplace<Name>'s two where it has them (<input>Ref: `aclTensor*`)."""
    header = header_name(op)
    apis = [(op.api, op.arg_names)] + ([(op.inplace_api, op.inplace_args)] if op.inplace else [])
    out: list[Function] = []
    for api, names in apis:
        params = [Param("aclTensor*" if n.endswith("Ref") and n not in op.kinds else c_type(op, n), n) for n in names]
        params += [Param("uint64_t*", "workspaceSize"), Param("aclOpExecutor**", "executor")]
        out.append(Function(f"{api}GetWorkspaceSize", "aclnnStatus", tuple(params), header))
        out.append(Function(api, "aclnnStatus", (Param("void*", "workspace"), Param("uint64_t", "workspaceSize"),
                                                 Param("aclOpExecutor*", "executor"), Param("aclrtStream", "stream")),
                            header))
    return tuple(out)


def header_name(op) -> str:
    """CANN's operator header name, whatever the formula's Python name: the one CANN's doc pages
    include (aclgen/ops/catalog.py: aclnn_geglu.h for GeGlu and GeGluV3, aclnn_logsigmoid.h), else
    aclnn_ and the aclnn name in snake case (aclnn_swi_glu_grad.h, aclnn_gelu_v2.h)."""
    from aclgen.ops.catalog import HEADERS

    return HEADERS.get(op.api) or f"aclnn_{snake(op.name)}.h"
