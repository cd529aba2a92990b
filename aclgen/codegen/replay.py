"""Guarded replay entry points: a checked call, re-run from Python for a few hundred nanoseconds.

The numpy entry points (`aclgen.ops.hardswish_backward(g, x, out=out)`) check and plan a call
in Python: several microseconds, most of the cost of a 1K call. Once a call has passed every
check, its plan depends only on facts a guard can compare cheaply; like a JIT's guarded
specialization, those facts are recorded next to the kernel call, and

    replay(in0, in1, [parameters...], out) -> out, or None when a guard fails

runs the kernel only when, for this call,

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

One native function (LLVM IR, METH_FASTCALL) serves every record: a record is an int64 array
passed as the builtin's `self`, so recording a new geometry builds an array and a function
object (microseconds) and compiles nothing. The kernel is called through its `packed(argv, lo,
hi)` entry (aclgen.codegen.threads), which takes any number of pointers.

Record layout (int64 words): a header, then sections the header points to.

    0 packed entry   1 launch record (meta)   2 numel   3 nargs   4 arrays   5 params
    6 env entries    7 env dict               8 arrays at   9 params at   10 sources at
    11 sources       12 out's argument index  13 out's extent lo  14 out's extent hi
    16..            env: (key object, value object or 0) per entry
    arrays (out first): argument index, dtype object, rank, flags needed, alias (0 out,
                    1 same memory as out, 2 disjoint from out), extent lo, hi, dims, strides
    params:         argument index, type object, kind (0 float bits, 1 int), value
    sources:        array index, byte delta        (the kernel's pointers, meta follows)
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
HEADER = 16
MAX_POINTERS = 16
SAME, DISJOINT = 1, 2


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


def record(arrays: Sequence[np.ndarray], params: Sequence, env: tuple[dict, Sequence[bytes]], packed: int,
           sources: Sequence[tuple[int, int]], meta_ptr: int, numel: int) -> tuple[np.ndarray, list]:
    """(the record array, the objects it names, which must outlive it) for a checked call with
    `arrays` = inputs then out and kernel pointers `sources` = (array index, byte delta)."""
    if len(sources) + 1 > MAX_POINTERS:
        raise ValueError("too many kernel pointers for a replay")
    keep: list = []
    inputs, out = list(arrays[:-1]), arrays[-1]
    n_in, n_params = len(inputs), len(params)
    env_dict, keys = env
    words = [0] * HEADER
    for k in keys:
        v = env_dict.get(k)
        keep += [k, v]
        words += [id(k), 0 if v is None else id(v)]
    arrays_at = len(words)
    out_data = out.ctypes.data
    order = [(n_in + n_params, out, 0)] + [
        (i, a, SAME if a.ctypes.data == out_data else DISJOINT) for i, a in enumerate(inputs)]
    for arg, a, alias in order:
        keep.append(a.dtype)
        lo, hi = extent(a.shape, a.strides, a.itemsize)
        need = ALIGNED | (WRITEABLE if a is out else 0)
        words += [arg, id(a.dtype), a.ndim, need, alias, lo, hi, *a.shape, *a.strides]
    params_at = len(words)
    for j, p in enumerate(params):
        keep.append(type(p))
        value = int.from_bytes(np.float64(p).tobytes(), "little", signed=True) if type(p) is float else p
        words += [n_in + j, id(type(p)), 0 if type(p) is float else 1, value]
    sources_at = len(words)
    # kernel pointers name arrays by their position in `arrays`; the record lists out first
    position = {len(arrays) - 1: 0, **{i: i + 1 for i in range(n_in)}}
    for src, delta in sources:
        words += [position[src], delta]
    olo, ohi = extent(out.shape, out.strides, out.itemsize)
    words[:HEADER] = [packed, meta_ptr, numel, n_in + n_params + 1, len(arrays), n_params, len(keys),
                      id(env_dict), arrays_at, params_at, sources_at, len(sources), n_in + n_params, olo, ohi, 0]
    keep.append(env_dict)
    return np.array(words, np.int64), keep


def _ir() -> str:
    api = {f: f"inttoptr (i64 {pycall._c_api(f)} to ptr)" for f in _C_API}
    none = f"inttoptr (i64 {id(None)} to ptr)"
    nd_type = id(np.ndarray)

    def word(name: str, index) -> str:
        """`%name` = record word `index` (a constant or an SSA value)."""
        return f"  %{name}.p = getelementptr i64, ptr %rec, i64 {index}\n  %{name} = load i64, ptr %{name}.p, align 8"

    return f"""
define ptr @aclgen_replay(ptr %self, ptr %args, i64 %nargs) {{
entry:
  %argv = alloca [{MAX_POINTERS} x i64], align 8
  %data = alloca [{MAX_POINTERS} x i64], align 8
  %ovf = alloca i32, align 4
  %recpp = getelementptr i8, ptr %self, i64 {DATA}
  %rec = load ptr, ptr %recpp, align 8
{word("want", 3)}
  %nargs.ok = icmp eq i64 %nargs, %want
  br i1 %nargs.ok, label %env, label %miss
miss:
  call void {api['Py_IncRef']}(ptr {none})
  ret ptr {none}

env:
{word("n_env", 6)}
{word("dict.i", 7)}
  %dict = inttoptr i64 %dict.i to ptr
  br label %env.loop
env.loop:
  %e = phi i64 [ 0, %env ], [ %e1, %env.body ]
  %e.more = icmp ult i64 %e, %n_env
  br i1 %e.more, label %env.check, label %arrays
env.check:
  %e2 = shl i64 %e, 1
  %ek = add i64 %e2, {HEADER}
{word("key.i", "%ek")}
  %ev = add i64 %ek, 1
{word("val", "%ev")}
  %key = inttoptr i64 %key.i to ptr
  %got = call ptr {api['PyDict_GetItem']}(ptr %dict, ptr %key)
  %got.i = ptrtoint ptr %got to i64
  %e.ok = icmp eq i64 %got.i, %val
  br i1 %e.ok, label %env.body, label %miss
env.body:
  %e1 = add i64 %e, 1
  br label %env.loop

arrays:
{word("n_arrays", 4)}
{word("arrays_at", 8)}
{word("olo", 13)}
{word("ohi", 14)}
  br label %arr.loop
arr.loop:
  %a = phi i64 [ 0, %arrays ], [ %a1, %arr.next ]
  %pos = phi i64 [ %arrays_at, %arrays ], [ %pos.next, %arr.next ]
  %a.more = icmp ult i64 %a, %n_arrays
  br i1 %a.more, label %arr.head, label %params
arr.head:
{word("argi", "%pos")}
  %pos1 = add i64 %pos, 1
{word("descr", "%pos1")}
  %pos2 = add i64 %pos, 2
{word("nd", "%pos2")}
  %pos3 = add i64 %pos, 3
{word("need", "%pos3")}
  %objp = getelementptr ptr, ptr %args, i64 %argi
  %obj = load ptr, ptr %objp, align 8
  %tp.p = getelementptr i8, ptr %obj, i64 8
  %tp = load ptr, ptr %tp.p, align 8
  %tp.ok = icmp eq ptr %tp, inttoptr (i64 {nd_type} to ptr)
  br i1 %tp.ok, label %arr.fields, label %miss
arr.fields:
  %ndp = getelementptr i8, ptr %obj, i64 {ND}
  %nd32 = load i32, ptr %ndp, align 4
  %ndv = sext i32 %nd32 to i64
  %nd.ok = icmp eq i64 %ndv, %nd
  %dsp = getelementptr i8, ptr %obj, i64 {DESCR}
  %ds = load ptr, ptr %dsp, align 8
  %ds.i = ptrtoint ptr %ds to i64
  %ds.ok = icmp eq i64 %ds.i, %descr
  %flp = getelementptr i8, ptr %obj, i64 {FLAGS}
  %fl32 = load i32, ptr %flp, align 4
  %fl = zext i32 %fl32 to i64
  %flm = and i64 %fl, %need
  %fl.ok = icmp eq i64 %flm, %need
  %ok1 = and i1 %nd.ok, %ds.ok
  %ok2 = and i1 %ok1, %fl.ok
  br i1 %ok2, label %dims, label %miss
dims:
  %dmp = getelementptr i8, ptr %obj, i64 {DIMS}
  %dm = load ptr, ptr %dmp, align 8
  %stp = getelementptr i8, ptr %obj, i64 {STRIDES}
  %st = load ptr, ptr %stp, align 8
  %dims_at = add i64 %pos, 7
  br label %dim.loop
dim.loop:
  %d = phi i64 [ 0, %dims ], [ %d1, %dim.body ]
  %d.more = icmp ult i64 %d, %nd
  br i1 %d.more, label %dim.check, label %arr.data
dim.check:
  %wn.k = add i64 %dims_at, %d
{word("wn", "%wn.k")}
  %ws.k = add i64 %wn.k, %nd
{word("ws", "%ws.k")}
  %n.p = getelementptr i64, ptr %dm, i64 %d
  %n = load i64, ptr %n.p, align 8
  %s.p = getelementptr i64, ptr %st, i64 %d
  %s = load i64, ptr %s.p, align 8
  %n.ok = icmp eq i64 %n, %wn
  %s.ok = icmp eq i64 %s, %ws
  %d.ok = and i1 %n.ok, %s.ok
  br i1 %d.ok, label %dim.body, label %miss
dim.body:
  %d1 = add i64 %d, 1
  br label %dim.loop
arr.data:
  %dp = getelementptr i8, ptr %obj, i64 {DATA}
  %dv = load i64, ptr %dp, align 8
  %slot = getelementptr i64, ptr %data, i64 %a
  store i64 %dv, ptr %slot, align 8
  %pos4 = add i64 %pos, 4
{word("alias", "%pos4")}
  %pos5 = add i64 %pos, 5
{word("lo", "%pos5")}
  %pos6 = add i64 %pos, 6
{word("hi", "%pos6")}
  %out = load i64, ptr %data, align 8
  %is.same = icmp eq i64 %alias, {SAME}
  %same.ok = icmp eq i64 %dv, %out
  %a.hi = add i64 %dv, %hi
  %o.lo = add i64 %out, %olo
  %below = icmp ule i64 %a.hi, %o.lo
  %o.hi = add i64 %out, %ohi
  %a.lo = add i64 %dv, %lo
  %above = icmp ule i64 %o.hi, %a.lo
  %apart = or i1 %below, %above
  %is.disjoint = icmp eq i64 %alias, {DISJOINT}
  %is.out = icmp eq i64 %alias, 0
  %c.same = and i1 %is.same, %same.ok
  %c.apart = and i1 %is.disjoint, %apart
  %c1 = or i1 %is.out, %c.same
  %alias.ok = or i1 %c1, %c.apart
  br i1 %alias.ok, label %arr.next, label %miss
arr.next:
  %a1 = add i64 %a, 1
  %nd2 = shl i64 %nd, 1
  %pos7 = add i64 %pos, 7
  %pos.next = add i64 %pos7, %nd2
  br label %arr.loop

params:
{word("n_params", 5)}
{word("params_at", 9)}
  br label %par.loop
par.loop:
  %j = phi i64 [ 0, %params ], [ %j1, %par.next ]
  %j.more = icmp ult i64 %j, %n_params
  br i1 %j.more, label %par.head, label %call
par.head:
  %j4 = shl i64 %j, 2
  %pp = add i64 %params_at, %j4
{word("pargi", "%pp")}
  %pp1 = add i64 %pp, 1
{word("ptype", "%pp1")}
  %pp2 = add i64 %pp, 2
{word("pkind", "%pp2")}
  %pp3 = add i64 %pp, 3
{word("pvalue", "%pp3")}
  %pobjp = getelementptr ptr, ptr %args, i64 %pargi
  %pobj = load ptr, ptr %pobjp, align 8
  %ptp.p = getelementptr i8, ptr %pobj, i64 8
  %ptp = load ptr, ptr %ptp.p, align 8
  %ptp.i = ptrtoint ptr %ptp to i64
  %ptp.ok = icmp eq i64 %ptp.i, %ptype
  br i1 %ptp.ok, label %par.kind, label %miss
par.kind:
  %is.float = icmp eq i64 %pkind, 0
  br i1 %is.float, label %par.float, label %par.int
par.float:
  %fv.p = getelementptr i8, ptr %pobj, i64 {FLOAT_VALUE}
  %fv = load i64, ptr %fv.p, align 8
  %fv.ok = icmp eq i64 %fv, %pvalue
  br i1 %fv.ok, label %par.next, label %miss
par.int:
  %iv = call i64 {api['PyLong_AsLongLongAndOverflow']}(ptr %pobj, ptr %ovf)
  %ov = load i32, ptr %ovf, align 4
  %iv.ok = icmp eq i64 %iv, %pvalue
  %ov.ok = icmp eq i32 %ov, 0
  %int.ok = and i1 %iv.ok, %ov.ok
  br i1 %int.ok, label %par.next, label %miss
par.next:
  %j1 = add i64 %j, 1
  br label %par.loop

call:
{word("n_src", 11)}
{word("src_at", 10)}
  br label %src.loop
src.loop:
  %k = phi i64 [ 0, %call ], [ %k1, %src.body ]
  %k.more = icmp ult i64 %k, %n_src
  br i1 %k.more, label %src.body, label %run
src.body:
  %k2 = shl i64 %k, 1
  %sk = add i64 %src_at, %k2
{word("sarr", "%sk")}
  %sk1 = add i64 %sk, 1
{word("sdelta", "%sk1")}
  %sslot = getelementptr i64, ptr %data, i64 %sarr
  %sdata = load i64, ptr %sslot, align 8
  %sptr = add i64 %sdata, %sdelta
  %aslot = getelementptr i64, ptr %argv, i64 %k
  store i64 %sptr, ptr %aslot, align 8
  %k1 = add i64 %k, 1
  br label %src.loop
run:
{word("meta", 1)}
  %mslot = getelementptr i64, ptr %argv, i64 %n_src
  store i64 %meta, ptr %mslot, align 8
{word("packed.i", 0)}
{word("numel", 2)}
{word("outarg", 12)}
  %packed = inttoptr i64 %packed.i to ptr
  %ts = call ptr {api['PyEval_SaveThread']}()
  call void %packed(ptr %argv, i64 0, i64 %numel)
  call void {api['PyEval_RestoreThread']}(ptr %ts)
  %outp = getelementptr ptr, ptr %args, i64 %outarg
  %outo = load ptr, ptr %outp, align 8
  call void {api['Py_IncRef']}(ptr %outo)
  ret ptr %outo
}}
"""


_C_API = ("PyDict_GetItem", "PyLong_AsLongLongAndOverflow", "PyEval_SaveThread", "PyEval_RestoreThread",
          "Py_IncRef")


@functools.cache
def _method() -> int:
    """Address of a PyMethodDef for the one native replay function (compiled once)."""
    return pycall.method_def(lambda symbol: _ir().replace("@aclgen_replay", f"@{symbol}"), "replay")


def entry(rec: np.ndarray):
    """The builtin `replay(*inputs, *params, out)` checking and running record `rec`."""
    return pycall.bind(_method(), rec)
