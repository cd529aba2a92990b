"""CANN's public headers, written from the facts in aclgen/capi/abi.py and the registry.

    include/acl/acl.h, acl_rt.h, acl_base.h, acl_base_rt.h   the runtime (valid C and C++)
    include/aclnn/acl_meta.h, aclnn_base.h, opdev/op_errno.h  tensors, scalars, executors, codes
    include/aclnnop/aclnn_util.h, aclnn_<op>.h               ACLNN_API and one header per operator

CANN's own acl_meta.h and aclnn_base.h are C++-only (`<cstdint>`, a global `constexpr`); ours
keep what C++ programs use (`aclDataType::ACL_FLOAT` needs real enums, `OK` is there for C++)
behind `__cplusplus` guards, so every header also compiles as C11.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from aclgen.capi import abi

BANNER = "/* Written by `aclgen sdk` from the CANN C API's documented declarations and values. */\n"


def _guard(name: str, body: str, includes: Iterable[str] = (), c_linkage: bool = True) -> str:
    lines = [BANNER, f"#ifndef {name}", f"#define {name}", ""]
    lines += [f"#include {inc}" for inc in includes]
    if includes:
        lines.append("")
    if c_linkage:
        lines += ["#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    lines.append(body.rstrip("\n"))
    if c_linkage:
        lines += ["", "#ifdef __cplusplus", "}", "#endif"]
    lines += ["", f"#endif  /* {name} */", ""]
    return "\n".join(lines)


def _enum(name: str, values: dict[str, int]) -> str:
    items = ",\n".join(f"    {k} = {v}" for k, v in values.items())
    return f"typedef enum {name} {{\n{items}\n}} {name};\n"


def _functions(header: str, prefix: str) -> str:
    return "\n".join(f.declaration(prefix) for f in abi.FUNCTIONS if f.header == header) + "\n"


def acl_base_rt() -> str:
    consts = "\n".join(f"static const int {k} = {v};" for k, v in abi.ACL_ERRORS.items())
    body = f"""\
#ifdef FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#else
#define ACL_FUNC_VISIBILITY
#endif
#define ACL_DEPRECATED
#define ACL_DEPRECATED_MESSAGE(message)

typedef int aclError;
typedef uint16_t aclFloat16;
typedef void* aclrtStream;
typedef void* aclrtEvent;
typedef void* aclrtContext;

{consts}

{_enum("aclDataType", abi.data_types())}
{_enum("aclFormat", abi.formats())}
{_enum("aclLogLevel", abi.LOG_LEVELS)}
{_enum("aclMemType", abi.MEM_TYPES)}
{_functions(abi.BASE_RT, "ACL_FUNC_VISIBILITY ")}"""
    return _guard("INC_EXTERNAL_ACL_ACL_BASE_RT_H_", body, ["<stdint.h>", "<stddef.h>"])


def acl_base() -> str:
    return _guard("INC_EXTERNAL_ACL_ACL_BASE_H_", "", ['"acl_base_rt.h"'], c_linkage=False)


def acl_rt() -> str:
    body = "\n".join([
        _enum("aclrtRunMode", abi.RUN_MODES),
        _enum("aclrtStreamStatus", abi.STREAM_STATUS),
        _enum("aclrtMemcpyKind", abi.MEMCPY_KINDS),
        _enum("aclrtMemMallocPolicy", abi.MALLOC_POLICIES),
        _functions(abi.RT, "ACL_FUNC_VISIBILITY "),
    ])
    return _guard("INC_EXTERNAL_ACL_ACL_RT_H_", body, ["<stdint.h>", "<stddef.h>", "<stdbool.h>", '"acl_base.h"'])


def acl() -> str:
    major, minor, patch = abi.ACL_VERSION
    body = f"#define ACL_MAJOR_VERSION {major}\n#define ACL_MINOR_VERSION {minor}\n#define ACL_PATCH_VERSION {patch}\n"
    return _guard("INC_EXTERNAL_ACL_ACL_H_", body, ['"acl_rt.h"'], c_linkage=False)


def acl_meta() -> str:
    opaque = ["aclOpExecutor", "aclTensor", "aclScalar", "aclIntArray", "aclFloatArray", "aclBoolArray",
              "aclTensorList", "aclScalarList"]
    body = "\n".join([f"typedef struct {t} {t};" for t in opaque]) + f"""

#ifndef ACLNN_META
#define ACLNN_META
typedef int32_t aclnnStatus;
#ifdef __cplusplus
constexpr aclnnStatus OK = 0;
#endif
#endif

{_functions(abi.META, "ACL_FUNC_VISIBILITY ")}"""
    return _guard("OP_API_INC_ACL_META_H_", body, ["<stdint.h>", "<stdlib.h>", "<stdbool.h>", '"acl/acl_base.h"'])


def aclnn_base() -> str:
    return _guard("OP_API_INC_ACLNN_BASE_H_", _functions(abi.ACLNN_BASE, "ACL_FUNC_VISIBILITY "),
                  ["<stdint.h>", "<stdlib.h>", '"aclnn/acl_meta.h"'])


def op_errno() -> str:
    body = "\n".join(f"#define {k} {v}" for k, v in abi.ACLNN_ERRORS.items()) + "\n"
    return _guard("OP_API_INC_OPDEV_OP_ERRNO_H_", body, c_linkage=False)


def aclnn_util() -> str:
    return _guard("OP_API_INC_ACLNN_UTIL_H_", '#define ACLNN_API __attribute__((visibility("default")))\n',
                  c_linkage=False)


def operator_header(*ops) -> str:
    """aclnn_<op>.h: the functions of declared operators that share one header (GeGlu and GeGluV3
    in CANN's aclnn_geglu.h; usually one), each with its in-place form and its documentation."""
    body = ""
    for op in ops:
        functions = abi.operator_functions(op)
        doc = op.doc or op.signature
        body += (f"/**\n * {op.api}: {doc}\n * {op.signature}\n"
                 f" * First phase: check the arguments and plan the call; second phase: run it on `stream`.\n"
                 + (f" * {op.inplace_api} writes the result into {op.inplace}Ref.\n" if op.inplace else "")
                 + " */\n" + "".join(f"{f.declaration('ACLNN_API ')}\n" for f in functions))
    guard = "OP_API_INC_" + abi.header_name(ops[0]).upper().replace(".", "_") + "_"
    return _guard(guard, body, ['"aclnn/aclnn_base.h"', '"aclnn_util.h"'])


def write(include: str, ops) -> list[str]:
    """Write the header tree under `include` for the operators `ops`; returns the files written."""
    files = {
        "acl/acl.h": acl(), "acl/acl_rt.h": acl_rt(), "acl/acl_base.h": acl_base(),
        "acl/acl_base_rt.h": acl_base_rt(), "aclnn/acl_meta.h": acl_meta(), "aclnn/aclnn_base.h": aclnn_base(),
        "aclnn/opdev/op_errno.h": op_errno(), "aclnnop/aclnn_util.h": aclnn_util(),
    }
    shared: dict[str, list] = {}
    for op in ops:
        shared.setdefault(abi.header_name(op), []).append(op)
    for name, group in shared.items():
        files[f"aclnnop/{name}"] = operator_header(*group)
    written = []
    for rel, text in files.items():
        path = os.path.join(include, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        written.append(path)
    return written
