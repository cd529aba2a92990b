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
`aclgen.aclnn` use: the two faces cannot drift.

Starting that interpreter depends on nothing in the caller's shell. The library is compiled
against this Python (its libpython found through the library's RUNPATH) and records this
interpreter (`sys.executable`, so a virtual environment's pyvenv.cfg is found) and its import
path: the first C call starts exactly that interpreter with PYTHONHOME, PYTHONPATH and the like
ignored, whatever `python3` comes first on PATH. cffi's exported functions would answer 0 —
success — when its start fails, so every public function is a C wrapper (`_wrappers`) that
checks the start first: if the runtime could not start, aclInit returns ACL_ERROR_RT_FAILURE,
the other acl functions ACL_ERROR_UNINITIALIZE, the aclnn functions ACLNN_ERR_INNER and those
returning handles NULL, each with the cause for aclGetRecentErrMsg. The Python functions
themselves are exported under abi.PYTHON_SIDE's prefix.

The module's C side holds what must not be Python: `aclGetRecentErrMsg` (a thread-local
message, valid until the thread's next call), `aclDataTypeSize`, `aclFloat16ToFloat` and
`aclFloatToFloat16` (plain conversions, callable before aclInit), stores through out-parameters,
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
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
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

/* aclFloat16ToFloat / aclFloatToFloat16: IEEE binary16 <-> binary32, round to nearest even
   (NaN stays NaN, its payload's top bits kept; beyond 65520 is inf). Pure C: no Python. */
float aclFloat16ToFloat(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
    if (e == 0x1fu) {
        bits = sign | 0x7f800000u | (m << 13);
    } else if (e != 0) {
        bits = sign | ((e + 112u) << 23) | (m << 13);
    } else if (m == 0) {
        bits = sign;
    } else {  /* subnormal: m * 2^-24, normalized */
        e = 113;
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        bits = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t aclFloatToFloat16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t a = x & 0x7fffffffu;
    if (a > 0x7f800000u) {
        return sign | 0x7e00u | (uint16_t)((a >> 13) & 0x3ffu);
    }
    if (a >= 0x477ff000u) {  /* 65520 and above (and inf) */
        return sign | 0x7c00u;
    }
    if (a >= 0x38800000u) {  /* normal: round at bit 13, rebias the exponent */
        return sign | (uint16_t)((a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13);
    }
    int e = (int)(a >> 23);
    if (e < 102) {  /* below 2^-25: rounds to zero */
        return sign;
    }
    uint32_t mant = (a & 0x7fffffu) | 0x800000u, shift = (uint32_t)(126 - e);
    uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) {
        q++;
    }
    return sign | (uint16_t)q;
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

/* -- the start: the recorded interpreter, once; its outcome decides every call ------------- */

static pthread_once_t aclgen_once = PTHREAD_ONCE_INIT;
static int aclgen_state;  /* 0 while starting, 1 started, -1 failed (see aclgen_why) */
static int aclgen_installed;  /* set by the init code once library.install() returned */
static char aclgen_why[4096];

/* The init code's verdict (aclgen/capi/library.py installed, or why not). */
void aclgen_start_succeeded(void) { aclgen_installed = 1; }
void aclgen_start_failed(const char *why) { snprintf(aclgen_why, sizeof aclgen_why, "%s", why); }

/* The current Python exception as text (the GIL held), cleared. */
static void aclgen_exception_text(char *out, size_t size) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    const char *utf8 = text ? PyUnicode_AsUTF8(text) : NULL;
    snprintf(out, size, "%s: %s", type ? ((PyTypeObject *)type)->tp_name : "error", utf8 ? utf8 : "?");
    PyErr_Clear();
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
}

static void aclgen_start_once(void) {
    const char *prefix = "aclgen's C SDK cannot start its Python runtime (" ACLGEN_PYTHON ", as `aclgen sdk` ran)";
    char cause[2048] = "";
    if (!Py_IsInitialized()) {
        /* The recorded interpreter, whatever the shell: no PYTHONHOME, PYTHONPATH, ... and no
           search of PATH for `python3` (which is how another Python's stdlib got picked). */
        PyConfig config;
        PyConfig_InitPythonConfig(&config);
        config.use_environment = 0;
        config.parse_argv = 0;
        config.install_signal_handlers = 0;
        PyStatus status = PyConfig_SetBytesString(&config, &config.executable, ACLGEN_PYTHON);
        if (!PyStatus_Exception(status)) {
            status = Py_InitializeFromConfig(&config);
        }
        PyConfig_Clear(&config);
        if (PyStatus_Exception(status)) {
            snprintf(aclgen_why, sizeof aclgen_why, "%s: %s", prefix, status.err_msg ? status.err_msg : "failed");
            aclgen_state = -1;
            return;
        }
        PyEval_SaveThread();  /* the GIL is taken per call (cffi) */
    }
    /* cffi's own start needs _cffi_backend; without it, it would only print to stderr. */
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *backend = PyImport_ImportModule("_cffi_backend");
    if (backend == NULL) {
        aclgen_exception_text(cause, sizeof cause);
    }
    Py_XDECREF(backend);
    PyGILState_Release(gil);
    if (!cause[0] && cffi_start_python() != 0) {
        snprintf(cause, sizeof cause, "its initialization failed (the traceback is on standard error)");
    }
    if (!cause[0] && !aclgen_installed && !aclgen_why[0]) {
        snprintf(cause, sizeof cause, "aclgen.capi.library was not installed");
    }
    if (cause[0]) {
        snprintf(aclgen_why, sizeof aclgen_why, "%s: %s", prefix, cause);
    }
    __atomic_store_n(&aclgen_state, aclgen_installed && !aclgen_why[0] ? 1 : -1, __ATOMIC_RELEASE);
}

/* 1 when the runtime runs; else 0, with the cause left for aclGetRecentErrMsg. */
static inline int aclgen_started(void) {
    if (__builtin_expect(__atomic_load_n(&aclgen_state, __ATOMIC_ACQUIRE) == 1, 1)) {
        return 1;
    }
    pthread_once(&aclgen_once, aclgen_start_once);
    if (__atomic_load_n(&aclgen_state, __ATOMIC_ACQUIRE) == 1) {
        return 1;
    }
    aclgen_set_error(aclgen_why);
    return 0;
}

/* -- streams C can synchronize without Python ----------------------------------------------- */

/* A live stream's handle and its runtime's `unsettled` word (aclgen/runtime/stream.py: 0 while
   nothing is queued or running and no failure waits): aclrtSynchronizeStream of a settled
   stream returns 0 here. A slot taken by another live stream leaves the new one to Python. */
#define ACLGEN_WATCHED 256
static struct {
    intptr_t handle;
    const int64_t *unsettled;
} aclgen_watched[ACLGEN_WATCHED];

static size_t aclgen_slot(intptr_t handle) { return ((uintptr_t)handle >> 6) % ACLGEN_WATCHED; }

void aclgen_watch_stream(intptr_t handle, intptr_t unsettled) {
    size_t k = aclgen_slot(handle);
    if (__atomic_load_n(&aclgen_watched[k].handle, __ATOMIC_ACQUIRE) != 0) {
        return;
    }
    aclgen_watched[k].unsettled = (const int64_t *)unsettled;
    __atomic_store_n(&aclgen_watched[k].handle, handle, __ATOMIC_RELEASE);
}

void aclgen_unwatch_stream(intptr_t handle) {
    size_t k = aclgen_slot(handle);
    if (__atomic_load_n(&aclgen_watched[k].handle, __ATOMIC_ACQUIRE) == handle) {
        __atomic_store_n(&aclgen_watched[k].handle, 0, __ATOMIC_RELEASE);
    }
}

/* Whether `handle` is a watched stream that is settled. x86-64 only: there the runtime's plain
   store of 0, made after the work's own stores, cannot be seen before them (TSO); elsewhere
   every synchronize asks Python. */
static inline int aclgen_settled(intptr_t handle) {
#if defined(__x86_64__)
    size_t k = aclgen_slot(handle);
    return handle != 0 && __atomic_load_n(&aclgen_watched[k].handle, __ATOMIC_ACQUIRE) == handle &&
           __atomic_load_n(aclgen_watched[k].unsettled, __ATOMIC_ACQUIRE) == 0;
#else
    (void)handle;
    return 0;
#endif
}
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
void aclgen_start_succeeded(void);
void aclgen_start_failed(const char *why);
void aclgen_watch_stream(intptr_t handle, intptr_t unsettled);
void aclgen_unwatch_stream(intptr_t handle);
"""

_ARRAYS_CPP = """\
#include <cstdint>
#include <new>

// aclGetViewShape & co: CANN documents that callers free these arrays with delete[].
extern "C" int64_t *aclgen_new_int64_array(uint64_t n) { return new (std::nothrow) int64_t[n]; }
"""


def _data_type_size() -> str:
    cases = "\n".join(f"    case {code}: return {t.itemsize};" for code, t in sorted(C.DATA_TYPES.items()) if t.itemsize)
    return f"size_t aclDataTypeSize(int dataType) {{\n  switch (dataType) {{\n{cases}\n    default: return 0;\n  }}\n}}\n"


def _site_dirs() -> list[str]:
    """Where this environment's packages are (a venv's own first), for the embedded interpreter."""
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def _not_started_status(f) -> str:
    """What `f` returns when the runtime could not start (see the module docstring), in C."""
    if "*" in f.returns:
        return "0"  # NULL (the module declares pointers as intptr_t)
    if f.returns == "aclError":
        return str(C.ACL_ERROR_RT_FAILURE if f.name == "aclInit" else C.ACL_ERROR_UNINITIALIZE)
    return str(C.ACLNN_ERR_INNER)


_FAST_PATHS = {  # C that answers before the call enters Python (the start checked first)
    "aclrtSynchronizeStream": "if (aclgen_settled(stream)) {\n        return 0;\n    }\n    ",
}


def _wrappers(functions) -> str:
    """The public functions: each checks the start, then calls its Python side (abi.PYTHON_SIDE)."""
    out = []
    for f in functions:
        decl = f.cffi_declaration()
        returns, _, rest = decl.partition(f" {f.name}(")
        params = rest.removesuffix(");")
        args = ", ".join(p.name for p in f.params)
        inner = abi.PYTHON_SIDE + f.name
        out.append(f"{returns} {inner}({params});\n"
                   f"{returns} {f.name}({params}) {{\n"
                   f"    if (!aclgen_started()) {{\n        return {_not_started_status(f)};\n    }}\n"
                   f"    {_FAST_PATHS.get(f.name, '')}return {inner}({args});\n}}\n")
    return "\n".join(out)


def _init_code(exported: Sequence[str], op_files: Sequence[str]) -> str:
    """The embedded interpreter's first code: this environment's packages and import path, then
    aclgen's implementations; its verdict goes to the C start (aclgen_start_succeeded/failed)."""
    path = [p for p in sys.path if p and os.path.isdir(p)]
    return f"""\
import site, sys
for _d in {_site_dirs()!r}:
    site.addsitedir(_d)
for _d in {path!r}:
    if _d not in sys.path:
        sys.path.append(_d)
from {MODULE} import ffi, lib
try:
    from aclgen.capi import library
    library.install(ffi, lib, {list(exported)!r}, {list(op_files)!r})
except BaseException as _exc:
    import traceback
    lib.aclgen_start_failed(("aclgen's C SDK cannot start its Python runtime: "
                             + "".join(traceback.format_exception_only(_exc)).strip()).encode("utf-8", "replace"))
else:
    lib.aclgen_start_succeeded()
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
    ffi.embedding_api("\n".join(f.cffi_declaration().replace(f" {f.name}(", f" {abi.PYTHON_SIDE}{f.name}(")
                                 for f in functions))
    ffi.cdef(_HELPERS_CDEF)
    with tempfile.TemporaryDirectory(prefix="aclgen-sdk-", dir=workdir) as tmp:
        arrays = os.path.join(tmp, "aclgen_arrays.cpp")
        with open(arrays, "w") as f:
            f.write(_ARRAYS_CPP)
        python = sys.executable.replace("\\", "\\\\").replace('"', '\\"')
        ffi.set_source(
            MODULE, f'#define ACLGEN_PYTHON "{python}"\n' + _HELPERS + _data_type_size() + _wrappers(functions),
            sources=[arrays], libraries=["stdc++"],
            extra_compile_args=["-O2"],
            extra_link_args=[f"-Wl,-soname,{LIBRARY}", f"-Wl,-rpath,{sysconfig.get_config_var('LIBDIR')}"],
        )
        ffi.embedding_init_code(_init_code([op.name for op in ops], op_files))
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
