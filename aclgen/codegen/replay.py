"""Guarded replay entry points: a checked call, re-run from Python for a few hundred nanoseconds.

The numpy entry points (`aclgen.ops.hardswish_backward(g, x, out=out)`) check and plan a call
in Python: several microseconds, most of the cost of a 1K call. Once a call has passed every
check, its plan depends only on what a guard can compare cheaply — like a JIT's guarded
specialization, the kernel call is recorded together with those facts, as a CPython builtin
made in LLVM IR (see aclgen.codegen.pycall):

    replay(in0, in1, [parameters...], out) -> out, or None when a guard fails

It runs the kernel only when, for this call,

- every array is exactly a `numpy.ndarray` with the recorded dtype object, rank, dims and byte
  strides, aligned, and `out` writeable;
- `out` is the very memory of each input recorded as aliasing it (an exact in-place update),
  and lies wholly apart from each input recorded as disjoint (partial overlap needs staging);
- every parameter has the recorded type and value (float bits, or int value);
- each ACLGEN_* variable the plan depends on is still the same object in `os.environ`
  (a value set again is usually a new object: a miss, never a wrong hit).

Anything else returns None and the caller takes the full path, which checks, reports errors
and records the new geometry. Recorded facts come from arrays that passed the full checks, so
a guard hit is a call the full path would have accepted with the same plan.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence

import numpy as np

from aclgen.codegen import pycall

# numpy's PyArrayObject (numpy 1.x and 2.x): after PyObject_HEAD come data, nd, dimensions,
# strides, base, descr, flags; probed at first use, replay is off if the layout differs.
DATA, ND, DIMS, STRIDES, DESCR, FLAGS = 16, 24, 32, 40, 56, 64
ALIGNED, WRITEABLE = 0x100, 0x400
FLOAT_VALUE = 16  # PyFloatObject: ob_fval after PyObject_HEAD


@functools.cache
def available() -> bool:
    """Whether this process's numpy and CPython have the layout the guards read."""
    if pycall.array_data_offset() != DATA or ctypes.sizeof(ctypes.c_void_p) != 8:
        return False
    probe = np.zeros((3, 5), np.float32)[:, 1:4]
    base = id(probe)

    def word(off: int) -> int:
        return ctypes.c_int64.from_address(base + off).value

    dims = [ctypes.c_int64.from_address(word(DIMS) + 8 * i).value for i in range(2)]
    strides = [ctypes.c_int64.from_address(word(STRIDES) + 8 * i).value for i in range(2)]
    flags = ctypes.c_int.from_address(base + FLAGS).value
    x = 0.75
    return (ctypes.c_int.from_address(base + ND).value == 2 and dims == [3, 3] and strides == [20, 4]
            and word(DESCR) == id(probe.dtype) and flags & (ALIGNED | WRITEABLE) == ALIGNED | WRITEABLE
            and ctypes.c_double.from_address(id(x) + FLOAT_VALUE).value == x)


def extent(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> tuple[int, int]:
    """Byte range [lo, hi) around the data pointer that an array's elements occupy."""
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + itemsize
    return lo, hi


class Record:
    """What a replay checks and runs; built from arrays that passed the full path."""

    def __init__(self, arrays: Sequence[np.ndarray], params: Sequence, env: tuple[dict, Sequence[bytes]],
                 kernel_address: int, sources: Sequence[tuple[int, int]], meta_ptr: int, numel: int):
        self.arrays = [(a.dtype, a.shape, a.strides) for a in arrays]  # keeps the dtypes alive
        out = arrays[-1]
        self.aliases = [a.__array_interface__["data"][0] == out.__array_interface__["data"][0] for a in arrays[:-1]]
        self.params = [(type(p), p) for p in params]
        env_dict, keys = env
        self.env = env_dict
        self.env_values = [(k, env_dict.get(k)) for k in keys]  # keeps keys and values alive
        self.kernel_address, self.sources, self.meta_ptr, self.numel = kernel_address, tuple(sources), meta_ptr, numel


def _ir(name: str, r: Record) -> str:
    api = {f: f"inttoptr (i64 {pycall._c_api(f)} to ptr)" for f in _C_API}
    none = f"inttoptr (i64 {id(None)} to ptr)"
    n_arrays, n_params = len(r.arrays), len(r.params)
    n_args = n_arrays + n_params
    out_index = n_args - 1  # args: inputs, parameters, out
    arg_of = list(range(n_arrays - 1)) + [out_index]
    L = [
        f"define ptr @{name}(ptr %self, ptr %args, i64 %nargs) {{",
        "entry:",
        f"  %count = icmp eq i64 %nargs, {n_args}",
        "  br i1 %count, label %guards, label %miss",
        "miss:",
        f"  call void {api['Py_IncRef']}(ptr {none})",
        f"  ret ptr {none}",
    ]
    label = 0

    def check(cond: str) -> None:
        nonlocal label
        label += 1
        L.extend([f"  br i1 {cond}, label %c{label}, label %miss", f"c{label}:"])

    L.append("guards:")
    for i, (key, value) in enumerate(r.env_values):
        L.append(f"  %env{i} = call ptr {api['PyDict_GetItem']}(ptr inttoptr (i64 {id(r.env)} to ptr), "
                 f"ptr inttoptr (i64 {id(key)} to ptr))")
        want = "null" if value is None else f"inttoptr (i64 {id(value)} to ptr)"
        L.append(f"  %env{i}.ok = icmp eq ptr %env{i}, {want}")
        check(f"%env{i}.ok")
    nd_type = id(np.ndarray)
    for i, (dtype, shape, strides) in enumerate(r.arrays):
        a = f"%a{i}"
        L += [
            f"  {a}.p = getelementptr ptr, ptr %args, i64 {arg_of[i]}",
            f"  {a} = load ptr, ptr {a}.p, align 8",
            f"  {a}.tp = getelementptr i8, ptr {a}, i64 8",
            f"  {a}.t = load ptr, ptr {a}.tp, align 8",
            f"  {a}.tok = icmp eq ptr {a}.t, inttoptr (i64 {nd_type} to ptr)",
        ]
        check(f"{a}.tok")
        need = ALIGNED | (WRITEABLE if i == n_arrays - 1 else 0)
        L += [
            f"  {a}.ndp = getelementptr i8, ptr {a}, i64 {ND}",
            f"  {a}.nd = load i32, ptr {a}.ndp, align 4",
            f"  {a}.ndok = icmp eq i32 {a}.nd, {len(shape)}",
            f"  {a}.dsp = getelementptr i8, ptr {a}, i64 {DESCR}",
            f"  {a}.ds = load ptr, ptr {a}.dsp, align 8",
            f"  {a}.dsok = icmp eq ptr {a}.ds, inttoptr (i64 {id(dtype)} to ptr)",
            f"  {a}.flp = getelementptr i8, ptr {a}, i64 {FLAGS}",
            f"  {a}.fl = load i32, ptr {a}.flp, align 4",
            f"  {a}.flm = and i32 {a}.fl, {need}",
            f"  {a}.flok = icmp eq i32 {a}.flm, {need}",
            f"  {a}.ok1 = and i1 {a}.ndok, {a}.dsok",
            f"  {a}.ok2 = and i1 {a}.ok1, {a}.flok",
        ]
        check(f"{a}.ok2")
        if shape:
            L += [
                f"  {a}.dmp = getelementptr i8, ptr {a}, i64 {DIMS}",
                f"  {a}.dm = load ptr, ptr {a}.dmp, align 8",
                f"  {a}.stp = getelementptr i8, ptr {a}, i64 {STRIDES}",
                f"  {a}.st = load ptr, ptr {a}.stp, align 8",
            ]
            conds = []
            for d, (n, s) in enumerate(zip(shape, strides)):
                for what, ptr, want in (("n", "dm", n), ("s", "st", s)):
                    v = f"{a}.{what}{d}"
                    L += [f"  {v}.p = getelementptr i64, ptr {a}.{ptr}, i64 {d}",
                          f"  {v} = load i64, ptr {v}.p, align 8",
                          f"  {v}.ok = icmp eq i64 {v}, {want}"]
                    conds.append(f"{v}.ok")
            acc = conds[0]
            for k, c in enumerate(conds[1:]):
                L.append(f"  {a}.all{k} = and i1 {acc}, {c}")
                acc = f"{a}.all{k}"
            check(acc)
        L += [f"  {a}.dp = getelementptr i8, ptr {a}, i64 {DATA}",
              f"  {a}.d = load i64, ptr {a}.dp, align 8"]
    for j, (tp, value) in enumerate(r.params):
        p = f"%q{j}"
        L += [
            f"  {p}.p = getelementptr ptr, ptr %args, i64 {n_arrays - 1 + j}",
            f"  {p} = load ptr, ptr {p}.p, align 8",
            f"  {p}.tp = getelementptr i8, ptr {p}, i64 8",
            f"  {p}.t = load ptr, ptr {p}.tp, align 8",
            f"  {p}.tok = icmp eq ptr {p}.t, inttoptr (i64 {id(tp)} to ptr)",
        ]
        check(f"{p}.tok")
        if tp is float:
            bits = int.from_bytes(np.float64(value).tobytes(), "little", signed=True)
            L += [f"  {p}.vp = getelementptr i8, ptr {p}, i64 {FLOAT_VALUE}",
                  f"  {p}.v = load i64, ptr {p}.vp, align 8",
                  f"  {p}.ok = icmp eq i64 {p}.v, {bits}"]
        else:  # int
            L += [f"  {p}.ovf = alloca i32, align 4",
                  f"  {p}.v = call i64 {api['PyLong_AsLongLongAndOverflow']}(ptr {p}, ptr {p}.ovf)",
                  f"  {p}.o = load i32, ptr {p}.ovf, align 4",
                  f"  {p}.vok = icmp eq i64 {p}.v, {value}",
                  f"  {p}.ook = icmp eq i32 {p}.o, 0",
                  f"  {p}.ok = and i1 {p}.vok, {p}.ook"]
        check(f"{p}.ok")
    o = n_arrays - 1
    odt, oshape, ostrides = r.arrays[o]
    olo, ohi = extent(oshape, ostrides, odt.itemsize)
    for i, same in enumerate(r.aliases):
        if same:
            L.append(f"  %al{i} = icmp eq i64 %a{i}.d, %a{o}.d")
        else:  # [a + lo, a + hi) and [out + olo, out + ohi) do not meet
            dt, shape, strides = r.arrays[i]
            lo, hi = extent(shape, strides, dt.itemsize)
            L += [f"  %al{i}.ahi = add i64 %a{i}.d, {hi}",
                  f"  %al{i}.olo = add i64 %a{o}.d, {olo}",
                  f"  %al{i}.below = icmp ule i64 %al{i}.ahi, %al{i}.olo",
                  f"  %al{i}.alo = add i64 %a{i}.d, {lo}",
                  f"  %al{i}.ohi = add i64 %a{o}.d, {ohi}",
                  f"  %al{i}.above = icmp ule i64 %al{i}.ohi, %al{i}.alo",
                  f"  %al{i} = or i1 %al{i}.below, %al{i}.above"]
        check(f"%al{i}")
    values = []
    for k, (src, delta) in enumerate(r.sources):
        L += [f"  %k{k}.i = add i64 %a{src}.d, {delta}", f"  %k{k} = inttoptr i64 %k{k}.i to ptr"]
        values.append(f"ptr %k{k}")
    values += [f"ptr inttoptr (i64 {r.meta_ptr} to ptr)", "i64 0", f"i64 {r.numel}"]
    L += [
        f"  %ts = call ptr {api['PyEval_SaveThread']}()",
        f"  call void inttoptr (i64 {r.kernel_address} to ptr)({', '.join(values)})",
        f"  call void {api['PyEval_RestoreThread']}(ptr %ts)",
        f"  call void {api['Py_IncRef']}(ptr %a{o})",
        f"  ret ptr %a{o}",
        "}",
    ]
    return "\n".join(L)


_C_API = ("PyDict_GetItem", "PyLong_AsLongLongAndOverflow", "PyEval_SaveThread", "PyEval_RestoreThread",
          "Py_IncRef")


def entry(record: Record, name: str = "replay"):
    """The builtin `replay(*inputs, *params, out)` for `record` (see the module docstring)."""
    return pycall.builtin(lambda symbol: _ir(symbol, record), name, keep=record)
