"""Calling kernels from Python without ctypes' overhead: a CPython entry point in LLVM IR.

A ctypes call of a six-argument function costs 1.5-2 µs here, more than a 1K-element kernel
runs. Like numba's dispatchers, we instead generate a tiny METH_FASTCALL C function in LLVM IR
per kernel signature,

    PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)

that converts its arguments (Python ints, or numpy arrays whose data pointer it reads from
the array object), releases the GIL, calls the kernel, and returns None; it is wrapped into a
builtin function object with `PyCFunction_NewEx`. A call then costs about as much as any
builtin (~0.1 µs).

Argument kinds: "i" a Python int (pointer or i64), "a" a `numpy.ndarray` (exactly that type;
its data pointer — the address of element [0, ..., 0] — is read from the object, so no
`.ctypes` lookup). Wrong types or counts raise TypeError, never a crash.
"""

from __future__ import annotations

import ctypes
import functools
import threading

import llvmlite.binding as llvm
import numpy as np

from aclgen.codegen.target import host, new_target_machine

METH_FASTCALL = 0x80


class _MethodDef(ctypes.Structure):
    _fields_ = [
        ("ml_name", ctypes.c_char_p),
        ("ml_meth", ctypes.c_void_p),
        ("ml_flags", ctypes.c_int),
        ("ml_doc", ctypes.c_char_p),
    ]


_new_function = ctypes.pythonapi.PyCFunction_NewEx
_new_function.restype = ctypes.py_object
_new_function.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]

_lock = threading.Lock()
_engine: llvm.ExecutionEngine | None = None
_keep: list = []  # method defs and names must outlive the function objects


def _shared_engine() -> llvm.ExecutionEngine:
    global _engine
    if _engine is None:
        _engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), new_target_machine(2))
    return _engine


@functools.cache
def array_data_offset() -> int | None:
    """Byte offset of `data` in numpy's PyArrayObject (after PyObject_HEAD), if it checks out."""
    head = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
    for probe in (np.zeros(3, np.float32), np.arange(10, dtype=np.int8)[3:]):
        if ctypes.c_void_p.from_address(id(probe) + head).value != probe.ctypes.data:
            return None
    return head


def _ir(name: str, target: int, kinds: str) -> str:
    n = len(kinds)
    api = {f: f"inttoptr (i64 {_c_api(f)} to ptr)" for f in _C_API}
    none = f"inttoptr (i64 {id(None)} to ptr)"
    lines = [
        f'@msg = private constant [{len(_message(kinds)) + 1} x i8] c"{_message(kinds)}\\00"',
        f"define ptr @{name}(ptr %self, ptr %args, i64 %nargs) {{",
        "entry:",
        f"  %count_ok = icmp eq i64 %nargs, {n}",
        "  br i1 %count_ok, label %arg0, label %bad",
        "bad:",
        f"  call void {api['PyErr_SetString']}(ptr inttoptr (i64 {id(TypeError)} to ptr), ptr @msg)",
        "  ret ptr null",
        "failed:",
        "  ret ptr null",
    ]
    offset = array_data_offset() or 16
    nd_type = id(np.ndarray)
    for i, k in enumerate(kinds):
        nxt = f"arg{i + 1}" if i + 1 < n else "call"
        lines += [f"arg{i}:", f"  %o{i}p = getelementptr ptr, ptr %args, i64 {i}", f"  %o{i} = load ptr, ptr %o{i}p"]
        if k == "i":
            lines += [
                f"  %v{i} = call i64 {api['PyLong_AsLongLong']}(ptr %o{i})",
                f"  %m{i} = icmp eq i64 %v{i}, -1",
                f"  br i1 %m{i}, label %chk{i}, label %{nxt}",
                f"chk{i}:",
                f"  %e{i} = call ptr {api['PyErr_Occurred']}()",
                f"  %z{i} = icmp eq ptr %e{i}, null",
                f"  br i1 %z{i}, label %{nxt}, label %failed",
            ]
        else:  # exactly a numpy.ndarray: read its data pointer
            lines += [
                f"  %t{i}p = getelementptr i8, ptr %o{i}, i64 8",
                f"  %t{i} = load ptr, ptr %t{i}p",
                f"  %ok{i} = icmp eq ptr %t{i}, inttoptr (i64 {nd_type} to ptr)",
                f"  br i1 %ok{i}, label %get{i}, label %bad",
                f"get{i}:",
                f"  %d{i}p = getelementptr i8, ptr %o{i}, i64 {offset}",
                f"  %d{i} = load ptr, ptr %d{i}p",
                f"  %v{i} = ptrtoint ptr %d{i} to i64",
                f"  br label %{nxt}",
            ]
    values = []
    for i in range(n):
        if i < n - 2:
            lines_cast = f"  %p{i} = inttoptr i64 %v{i} to ptr"
            values.append((lines_cast, f"ptr %p{i}"))
        else:
            values.append((None, f"i64 %v{i}"))
    lines += ["call:"]
    lines += [c for c, _ in values if c]
    lines += [
        f"  %ts = call ptr {api['PyEval_SaveThread']}()",
        f"  call void inttoptr (i64 {target} to ptr)({', '.join(v for _, v in values)})",
        f"  call void {api['PyEval_RestoreThread']}(ptr %ts)",
        f"  call void {api['Py_IncRef']}(ptr {none})",
        f"  ret ptr {none}",
        "}",
    ]
    return "\n".join(lines)


# The C API is called at addresses taken from this process (ctypes), not through symbol lookup:
# another LLVM user in the process (numba) registers its own meanings for names such as
# PyExc_TypeError (the object instead of the variable holding it), and MCJIT would follow them.
_C_API = ("PyLong_AsLongLong", "PyErr_Occurred", "PyErr_SetString", "PyEval_SaveThread",
          "PyEval_RestoreThread", "Py_IncRef")


def _c_api(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value


def _message(kinds: str) -> str:
    names = {"i": "int", "a": "numpy.ndarray"}
    return "kernel call takes (" + ", ".join(names[k] for k in kinds) + ")"


def fastcall(address: int, kinds: str, name: str = "kernel"):
    """A builtin function calling the kernel at `address` with arguments of `kinds` (see module
    docstring): the last two are the i64 range, the others pointers."""
    if "a" in kinds and array_data_offset() is None:
        raise RuntimeError("numpy's array layout is not the expected one; use int arguments")
    if len(kinds) < 3 or kinds[-2:] != "ii":
        raise ValueError("a kernel call ends with its (begin, end) ints")
    return builtin(lambda symbol: _ir(symbol, address, kinds), name)


def builtin(make_ir, name: str):
    """A builtin function from `make_ir(symbol)`, the LLVM IR of a METH_FASTCALL function named
    `symbol` (its `self` argument is NULL)."""
    return bind(method_def(make_ir, name), None)


def method_def(make_ir, name: str) -> int:
    """Compile `make_ir(symbol)` (a METH_FASTCALL function named `symbol`) and return the
    address of a PyMethodDef for it, kept for the life of the process."""
    with _lock:
        symbol = f"aclgen_call_{len(_keep)}"
        mod = llvm.parse_assembly(make_ir(symbol))
        mod.triple = host().triple
        mod.verify()
        engine = _shared_engine()
        engine.add_module(mod)
        engine.finalize_object()
        addr = engine.get_function_address(symbol)
        label = ctypes.c_char_p(name.encode())
        mdef = _MethodDef(label.value, addr, METH_FASTCALL, None)
        _keep.append((mdef, label, mod))
        return ctypes.addressof(mdef)


def bind(mdef: int, self):
    """A builtin function object for the method def at `mdef`, passing `self` (which it keeps
    alive) to every call."""
    return _new_function(mdef, self, None)
