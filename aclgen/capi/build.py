"""`aclgen sdk`: lay out CANN's install tree, with one library behind CANN's library names.

    DIR/include/...                 the headers (aclgen/capi/headers.py)
    DIR/lib64/libaclgen_cann.so     the implementation: a cffi embedding module (below)
    DIR/lib64/libascendcl.so, libacl_rt.so, libnnopbase.so, libopapi_nn.so, libopapi_math.so,
        libopapi.so                 symlinks to it: every documented link line resolves, and the
                                    programs record its soname, so one copy is loaded
    DIR/set_env.sh, DIR/bin/setenv.bash   what a program needs at run time: `source DIR/set_env.sh`
    DIR/opp/lib64                   (CANN's ASCEND_OPP_PATH; build.sh adds it to -L)

Why cffi's embedding mode: a C call into the library starts (once) a Python interpreter inside
the C program and calls a Python function (aclgen/capi/library.py) with the GIL taken for the
calling thread, so every C function is a thin door into the very runtime `aclgen.acl` and
`aclgen.aclnn` use: the two faces cannot drift. The module is compiled against this Python (its
libpython is found through the library's RUNPATH) and its init code puts this environment's
site directories on `sys.path`, so a program finds aclgen where it is installed, venv included.

The module's C side holds what must not be Python: `aclGetRecentErrMsg` (a thread-local
message, valid until the thread's next call), `aclDataTypeSize`, stores through out-parameters,
and a C++ `new int64_t[n]` for the arrays aclGetViewShape & co return (callers `delete[]` them).
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
import tempfile
from collections.abc import Sequence

from aclgen.capi import abi, headers
from aclgen.runtime import constants as C

LIBRARY = "libaclgen_cann.so"
MODULE = "aclgen_cann"
CANN_NAMES = ("libascendcl.so", "libacl_rt.so", "libnnopbase.so", "libopapi_nn.so", "libopapi_math.so", "libopapi.so")

_HELPERS = """\
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* aclGetRecentErrMsg: the calling thread's latest failure message, cleared once returned. */
static _Thread_local char *aclgen_pending;
static _Thread_local char *aclgen_returned;

void aclgen_set_error(const char *message) {
    free(aclgen_pending);
    aclgen_pending = strdup(message);
}

const char *aclGetRecentErrMsg(void) {
    free(aclgen_returned);
    aclgen_returned = aclgen_pending;
    aclgen_pending = NULL;
    return aclgen_returned;
}

void aclgen_put_u64(intptr_t p, uint64_t v) { *(uint64_t *)p = v; }
void aclgen_put_i64(intptr_t p, int64_t v) { *(int64_t *)p = v; }
void aclgen_put_u32(intptr_t p, uint32_t v) { *(uint32_t *)p = v; }
void aclgen_put_i32(intptr_t p, int32_t v) { *(int32_t *)p = v; }
void aclgen_put_ptr(intptr_t p, intptr_t v) { *(intptr_t *)p = v; }
/* aclnnXxxGetWorkspaceSize's two results in one call */
void aclgen_put_plan(intptr_t ws, uint64_t size, intptr_t ex, intptr_t handle) {
    *(uint64_t *)ws = size;
    *(intptr_t *)ex = handle;
}
int64_t *aclgen_new_int64_array(uint64_t n);  /* C++ new[]: see aclgen_arrays.cpp */
"""

_HELPERS_CDEF = """\
void aclgen_set_error(const char *message);
void aclgen_put_u64(intptr_t p, uint64_t v);
void aclgen_put_i64(intptr_t p, int64_t v);
void aclgen_put_u32(intptr_t p, uint32_t v);
void aclgen_put_i32(intptr_t p, int32_t v);
void aclgen_put_ptr(intptr_t p, intptr_t v);
void aclgen_put_plan(intptr_t ws, uint64_t size, intptr_t ex, intptr_t handle);
int64_t *aclgen_new_int64_array(uint64_t n);
"""

_ARRAYS_CPP = """\
#include <cstdint>
#include <new>

// aclGetViewShape & co: CANN documents that callers free these arrays with delete[].
extern "C" int64_t *aclgen_new_int64_array(uint64_t n) { return new (std::nothrow) int64_t[n]; }
"""


def _data_type_size() -> str:
    cases = "\n".join(f"    case {code}: return {size};" for code, size in sorted(C.ITEMSIZE.items()))
    return f"size_t aclDataTypeSize(int dataType) {{\n  switch (dataType) {{\n{cases}\n    default: return 0;\n  }}\n}}\n"


def _site_dirs() -> list[str]:
    """Where this environment's packages are (a venv's own first), for the embedded interpreter."""
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def _failure_statuses(functions) -> dict[str, int]:
    """What each function returns when the runtime cannot start (cffi's own default, 0, would
    read as success): NULL for pointers, ACL_ERROR_INTERNAL_ERROR or ACLNN_ERR_INNER."""
    out = {}
    for f in functions:
        if "*" in f.returns:
            out[f.name] = 0
        else:
            out[f.name] = C.ACL_ERROR_INTERNAL_ERROR if f.returns == "aclError" else C.ACLNN_ERR_INNER
    return out


def _init_code(functions, exported: Sequence[str], op_files: Sequence[str]) -> str:
    """The embedded interpreter's first code: this environment's packages on sys.path, then
    aclgen's implementations; if aclgen cannot start, every function fails loudly instead."""
    return f"""\
import site, sys
for _d in {_site_dirs()!r}:
    site.addsitedir(_d)
from {MODULE} import ffi, lib
try:
    from aclgen.capi import library
    library.install(ffi, lib, {list(exported)!r}, {list(op_files)!r})
except BaseException as _exc:
    import traceback
    _why = "aclgen's C SDK cannot start its Python runtime: " + "".join(traceback.format_exception_only(_exc)).strip()
    sys.stderr.write(_why + "\\n")
    def _failing(status):
        def fail(*args):
            lib.aclgen_set_error(_why.encode("utf-8", "replace"))
            return status
        return fail
    for _name, _status in {_failure_statuses(functions)!r}.items():
        ffi.def_extern(name=_name)(_failing(_status))
"""


class BuildError(Exception):
    """The library did not compile or link (no C compiler, no Python headers, ...)."""


def compile_library(lib64: str, ops, op_files: Sequence[str], workdir: str | None = None) -> str:
    """Build the embedding module for `ops` into `lib64`; returns the library's path."""
    import cffi

    ffi = cffi.FFI()
    functions = [f for f in abi.FUNCTIONS if f.python]
    for op in ops:
        functions += abi.operator_functions(op)
    ffi.embedding_api("\n".join(f.cffi_declaration() for f in functions))
    ffi.cdef(_HELPERS_CDEF)
    with tempfile.TemporaryDirectory(prefix="aclgen-sdk-", dir=workdir) as tmp:
        arrays = os.path.join(tmp, "aclgen_arrays.cpp")
        with open(arrays, "w") as f:
            f.write(_ARRAYS_CPP)
        ffi.set_source(
            MODULE, _HELPERS + _data_type_size(), sources=[arrays], libraries=["stdc++"],
            extra_compile_args=["-O2"],
            extra_link_args=[f"-Wl,-soname,{LIBRARY}", f"-Wl,-rpath,{sysconfig.get_config_var('LIBDIR')}"],
        )
        ffi.embedding_init_code(_init_code(functions, [op.name for op in ops], op_files))
        try:
            built = ffi.compile(tmpdir=tmp, target=LIBRARY)
        except cffi.VerificationError as exc:
            raise BuildError(f"building {LIBRARY} failed (a C compiler and Python's headers are needed): {exc}") from None
        target = os.path.join(lib64, LIBRARY)
        os.replace(built, target + ".tmp")
        os.replace(target + ".tmp", target)  # a running program keeps the old inode
    return target


def set_env(root: str) -> str:
    return f"""\
# aclgen's CANN-compatible SDK (`aclgen sdk`): source this file before building or running a
# program against it, as CANN's set_env.sh.
export ASCEND_TOOLKIT_HOME="{root}"
export ASCEND_HOME_PATH="$ASCEND_TOOLKIT_HOME"
export ASCEND_OPP_PATH="$ASCEND_TOOLKIT_HOME/opp"
export LD_LIBRARY_PATH="$ASCEND_TOOLKIT_HOME/lib64${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"
"""


def sdk(prefix: str, op_files: Sequence[str] = (), workdir: str | None = None) -> dict:
    """Lay out the SDK under `prefix` for the built-ins and the operators `op_files` declare."""
    import aclgen.ops
    from aclgen.ops import load

    root = os.path.abspath(prefix)
    files = [os.path.abspath(f) for f in op_files]
    user_ops = [op for path in files for op in load(path)]
    ops = [*aclgen.ops.OPERATORS.values(), *user_ops]
    lib64, opp = os.path.join(root, "lib64"), os.path.join(root, "opp", "lib64")
    for d in (lib64, opp, os.path.join(root, "bin")):
        os.makedirs(d, exist_ok=True)
    written = headers.write(os.path.join(root, "include"), ops)
    library = compile_library(lib64, ops, files, workdir)
    for name in CANN_NAMES:
        link = os.path.join(lib64, name)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(LIBRARY, link)
    env = set_env(root)
    for path in (os.path.join(root, "set_env.sh"), os.path.join(root, "bin", "setenv.bash")):
        with open(path, "w") as f:
            f.write(env)
    return {"root": root, "library": library, "headers": written, "operators": [op.api for op in ops],
            "python": sys.executable}
