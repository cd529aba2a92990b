"""The LLVM IR of the native entry points, built with llvmlite's IRBuilder.

Pure functions: each returns an `ir.Module`; none holds state or owns an engine
(aclgen.codegen.native compiles or loads them into its engine and turns them into Python objects).

- `arity_module(n)`: the entry points of every kernel with n pointer arguments: `packed`, the
  kernel behind the one signature `packed(argv, lo, hi)` that workers and replays call, and
  `call`, a METH_FASTCALL CPython function taking Python ints that runs the kernel with the GIL
  released, split over the pool when its call words name one (`CallWords`).
- `pool_module`: the thread pool's worker loop, its Python entry, and its launch.
- `replay_module`: the guarded replay, one METH_FASTCALL function serving every record.

No module holds an address of this process: the kernel to run, the pool and the records are
data (arrays passed in), and the C API functions and the objects compared by identity are
symbols named `aclgen_rt_<name>` (SYMBOLS) that aclgen.codegen.native binds to this process's
addresses before it loads any of them. So the object code is the same in every process and is
kept in the compile cache: a warm cache does no LLVM work. The prefix matters: another LLVM
user in the process (numba) registers its own meanings for names such as PyExc_TypeError (the
object instead of the variable holding it), and MCJIT would follow them.

Pointers are typed (i8*, i64*, function pointers) as numba's call wrappers write them; LLVM
reads them as opaque `ptr`s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, cast

from llvmlite import ir

VOID = ir.VoidType()
I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = I8.as_pointer()  # any C pointer: PyObject *, a kernel operand, the pool's context
I32P, I64P = I32.as_pointer(), I64.as_pointer()
FASTCALL = ir.FunctionType(PTR, [PTR, PTR.as_pointer(), I64])  # (self, args, nargs) -> object
PACKED = ir.FunctionType(VOID, [PTR, I64, I64])  # packed(i64 *argv, i64 lo, i64 hi)


if TYPE_CHECKING:

    class _Builder(ir.IRBuilder):
        """What pyright should read for the IRBuilder methods used here that llvmlite wraps in
        untyped decorators (@_binop, @_castop) over docstring-only bodies: pyright takes the
        body's `None` as their result. Binary ops return the new instruction; casts return it,
        or `value` itself when it already has type `typ`."""

        def add(self, lhs: ir.Value, rhs: ir.Value, name: str = "", flags: Sequence[str] = ()) -> ir.Instruction: ...
        def sub(self, lhs: ir.Value, rhs: ir.Value, name: str = "", flags: Sequence[str] = ()) -> ir.Instruction: ...
        def mul(self, lhs: ir.Value, rhs: ir.Value, name: str = "", flags: Sequence[str] = ()) -> ir.Instruction: ...
        def udiv(self, lhs: ir.Value, rhs: ir.Value, name: str = "", flags: Sequence[str] = ()) -> ir.Instruction: ...
        def and_(self, lhs: ir.Value, rhs: ir.Value, name: str = "", flags: Sequence[str] = ()) -> ir.Instruction: ...
        def or_(self, lhs: ir.Value, rhs: ir.Value, name: str = "", flags: Sequence[str] = ()) -> ir.Instruction: ...
        def shl(self, lhs: ir.Value, rhs: ir.Value, name: str = "", flags: Sequence[str] = ()) -> ir.Instruction: ...
        def lshr(self, lhs: ir.Value, rhs: ir.Value, name: str = "", flags: Sequence[str] = ()) -> ir.Instruction: ...
        def bitcast(self, value: ir.Value, typ: ir.Type, name: str = "") -> ir.Value: ...
        def inttoptr(self, value: ir.Value, typ: ir.Type, name: str = "") -> ir.Value: ...
        def ptrtoint(self, value: ir.Value, typ: ir.Type, name: str = "") -> ir.Value: ...
        def zext(self, value: ir.Value, typ: ir.Type, name: str = "") -> ir.Value: ...
        def sext(self, value: ir.Value, typ: ir.Type, name: str = "") -> ir.Value: ...
        def trunc(self, value: ir.Value, typ: ir.Type, name: str = "") -> ir.Value: ...
else:
    _Builder = ir.IRBuilder


def kernel_type(n_ptrs: int) -> ir.FunctionType:
    """void kernel(ptr p_0, ..., ptr p_{n_ptrs-1}, i64 begin, i64 end) (meta is the last ptr)."""
    return ir.FunctionType(VOID, [PTR] * n_ptrs + [I64, I64])


def i64(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


def i32(value: int) -> ir.Constant:
    return ir.Constant(I32, value)


# ----------------------------------------------------------------------------------------------
# Object layouts the guards read (CPython 3.x on 64-bit; numpy 1.x and 2.x). They are probed once
# per process (aclgen.codegen.native.available); replay is off where they differ.
# ----------------------------------------------------------------------------------------------

OB_TYPE = 8  # PyObject: ob_refcnt, then ob_type
FLOAT_VALUE = 16  # PyFloatObject: ob_fval after PyObject_HEAD
VAR_SIZE = 16  # PyVarObject (tuple, list): ob_size after PyObject_HEAD
SEQ_ITEMS = 24  # a tuple's items start here; a list's ob_item (the items' array) is here
# numpy's PyArrayObject: after PyObject_HEAD come data, nd, dimensions, strides, base, descr, flags
ARRAY_DATA, ARRAY_ND, ARRAY_DIMS, ARRAY_STRIDES, ARRAY_DESCR, ARRAY_FLAGS = 16, 24, 32, 40, 56, 64
ALIGNED, WRITEABLE = 0x100, 0x400  # NPY_ARRAY_* flags

_C_API = {  # name: (return type, argument types)
    "PyLong_AsLongLong": (I64, [PTR]),
    "PyLong_AsLongLongAndOverflow": (I64, [PTR, I32P]),
    "PyErr_Occurred": (PTR, []),
    "PyErr_SetString": (VOID, [PTR, PTR]),
    "PyEval_SaveThread": (PTR, []),
    "PyEval_RestoreThread": (VOID, [PTR]),
    "Py_IncRef": (VOID, [PTR]),
    "PyDict_GetItem": (PTR, [PTR, PTR]),
    "PyTuple_New": (PTR, [I64]),
    "PyTuple_SetItem": (I32, [PTR, I64, PTR]),
}
C_API_NAMES = tuple(_C_API)
LIBC_NAMES = ("syscall",)  # libc's syscall(): the pool's futex waits and wakes
OBJECT_NAMES = ("None", "TypeError", "ndarray", "tuple")  # objects compared or returned by identity
SYMBOLS = (*C_API_NAMES, *LIBC_NAMES, *OBJECT_NAMES)


def symbol(name: str) -> str:
    """The symbol generated code names `name` of SYMBOLS by."""
    return f"aclgen_rt_{name}"


class _Emitter:
    """An IRBuilder over one new function, with the helpers every entry point needs."""

    def __init__(self, module: ir.Module, name: str, fnty: ir.FunctionType, linkage: str = ""):
        self.module = module
        self.fn = ir.Function(module, fnty, name)
        if linkage:
            self.fn.linkage = linkage
        self.b = _Builder(self.fn.append_basic_block("entry"))

    def block(self, name: str) -> ir.Block:
        return self.fn.append_basic_block(name)

    def at(self, block: ir.Block) -> None:
        self.b.position_at_end(block)

    def call_at(self, address: ir.Value, fnty: ir.FunctionType, args, name: str = ""):
        """Call the function at `address` (an i64 or pointer value: code is data here)."""
        b = self.b
        # every llvmlite value (a constant, an instruction, an argument) has a `type`; their base
        # class ir.Value doesn't declare it
        if isinstance(cast("ir.Constant | ir.NamedValue", address).type, ir.IntType):
            target = b.inttoptr(address, fnty.as_pointer())
        else:
            target = b.bitcast(address, fnty.as_pointer())
        return b.call(target, args, name=name)

    def c_api(self, name: str, *args):
        """Call C API function `name` (through its SYMBOLS symbol)."""
        ret, params = _C_API[name]
        return self.b.call(self._declare(name, ir.FunctionType(ret, params)), list(args), name=name)

    def syscall(self, *args):
        return self.b.call(self._declare("syscall", ir.FunctionType(I64, [I64], var_arg=True)), list(args))

    def _declare(self, name: str, fnty: ir.FunctionType) -> ir.Function:
        fn = self.module.globals.get(symbol(name))
        if fn is None:
            fn = ir.Function(self.module, fnty, symbol(name))
        return cast(ir.Function, fn)

    def py_object(self, name: str) -> ir.Value:
        """The PyObject * of OBJECT_NAMES' `name` (through its symbol: its address is the object)."""
        g = self.module.globals.get(symbol(name))
        if g is None:
            g = ir.GlobalVariable(self.module, I8, symbol(name))
        return cast(ir.Value, g)

    def py_object_id(self, name: str) -> ir.Value:
        """`name`'s object address as an i64, to compare with a loaded field."""
        return self.b.ptrtoint(self.py_object(name), I64)

    def field(self, base: ir.Value, offset: int | ir.Value, typ: ir.Type) -> ir.Value:
        """A `typ *` to the field `offset` bytes into `base` (an i8*)."""
        off = i64(offset) if isinstance(offset, int) else offset
        return self.b.bitcast(self.b.gep(base, [off]), typ.as_pointer())

    def load(self, base: ir.Value, offset: int | ir.Value, typ: ir.Type) -> ir.Value:
        return self.b.load(self.field(base, offset, typ))

    def index(self, array: ir.Value, i: int | ir.Value) -> ir.Value:
        """&array[i] for a typed pointer `array`."""
        return self.b.gep(array, [i64(i) if isinstance(i, int) else i])

    def check(self, ok: ir.Value, fail: ir.Block, name: str = "ok") -> ir.Block:
        """Go on in a new block (returned) when `ok`, else branch to `fail`."""
        go = self.block(name)
        self.b.cbranch(ok, go, fail)
        self.at(go)
        return go

    def all(self, *conds: ir.Value) -> ir.Value:
        result = conds[0]
        for c in conds[1:]:
            result = self.b.and_(result, c)
        return result

    @contextlib.contextmanager
    def loop(self, count: ir.Value, name: str) -> Iterator[ir.Value]:
        """for i in range(count): the body is what the `with` block emits; it may branch away
        (a guard), and it continues the loop from whatever block it ends in."""
        b = self.b
        before = b.block
        head, body, done = self.block(f"{name}.head"), self.block(f"{name}.body"), self.block(f"{name}.done")
        b.branch(head)
        self.at(head)
        i = b.phi(I64, name)
        i.add_incoming(i64(0), before)
        b.cbranch(b.icmp_unsigned("<", i, count), body, done)
        self.at(body)
        yield i
        i.add_incoming(b.add(i, i64(1)), b.block)
        b.branch(head)
        self.at(done)

    def pause(self) -> None:
        """x86's `pause`: a spin-wait hint (saves power, frees the core's other hyperthread)."""
        fn = self.module.globals.get("llvm.x86.sse2.pause")
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(VOID, []), "llvm.x86.sse2.pause")
        self.b.call(fn, [])

    def c_string(self, name: str, text: str) -> ir.Value:
        data = bytearray(text.encode() + b"\0")
        g = ir.GlobalVariable(self.module, ir.ArrayType(I8, len(data)), name)
        g.global_constant, g.linkage = True, "private"
        # GlobalVariable.__init__ sets `initializer = None`, which pyright takes as its only type
        g.initializer = ir.Constant(g.value_type, data)  # pyright: ignore[reportAttributeAccessIssue]
        return self.b.bitcast(g, PTR)


# ----------------------------------------------------------------------------------------------
# Calling kernels from Python
# ----------------------------------------------------------------------------------------------


class CallWords:
    """A kernel's call words (an int64 array): what its `call` builtin (the array is the builtin's
    `self`) and a replay record (Header.CALL: the array's data) run. KERNEL: the kernel's address;
    PACKED: its arity's packed entry; CTX: the pool to split over (0: none), THREADS its threads,
    LAUNCH its launch function; GRAIN and LEAST how it cuts the kernel's range (CHUNK_GRAIN)."""

    KERNEL, PACKED, CTX, THREADS, LAUNCH, GRAIN, LEAST, SIZE = range(8)


def packed_name(n_ptrs: int) -> str:
    return f"aclgen_packed_{n_ptrs}"


def call_name(n_ptrs: int) -> str:
    return f"aclgen_call_{n_ptrs}"


def arity_name(n_ptrs: int) -> str:
    return f"aclgen_arity_{n_ptrs}"


def _int_args(e: _Emitter, args: ir.Value, nargs: ir.Value, n: int, title: str) -> list[ir.Value]:
    """Check that a METH_FASTCALL function got `n` arguments and convert them with
    PyLong_AsLongLong; a wrong count raises TypeError, a non-int TypeError, an int beyond int64
    OverflowError (the function returns NULL with the exception set), never a crash."""
    b = e.b
    bad_count, failed = e.block("bad_count"), e.block("failed")
    go = e.check(b.icmp_signed("==", nargs, i64(n)), bad_count, "arg0")
    values = []
    for i in range(n):
        value = e.c_api("PyLong_AsLongLong", b.load(e.index(args, i)))
        values.append(value)
        maybe_error, nxt = e.block(f"arg{i}.error"), e.block(f"arg{i + 1}")
        b.cbranch(b.icmp_signed("==", value, i64(-1)), maybe_error, nxt)  # -1 is also a value
        e.at(maybe_error)
        b.cbranch(b.icmp_unsigned("==", e.c_api("PyErr_Occurred"), PTR(None)), nxt, failed)
        e.at(nxt)
        go = nxt  # where the converted values are ready
    e.at(bad_count)
    message = e.c_string(f"{e.fn.name}.message", f"{title}() takes {n} int arguments")
    e.c_api("PyErr_SetString", e.py_object("TypeError"), message)
    b.ret(PTR(None))
    e.at(failed)  # the conversion's own exception is set
    b.ret(PTR(None))
    e.at(go)
    return values


def _return_none(e: _Emitter) -> None:
    none = e.py_object("None")
    e.c_api("Py_IncRef", none)
    e.b.ret(none)


def _dispatch(e: _Emitter, words: ir.Value, argv: ir.Value, lo: ir.Value, hi: ir.Value) -> None:
    """Run the kernel of `words` (an i64 *: CallWords) on argv (its pointers, then the kernel at
    argv[n]) over [lo, hi): split over the pool its words name, or by the calling thread alone
    when they name none, the range is empty, or the pool is busy (another thread's launch: one
    launch at a time). The GIL is the caller's business."""
    b = e.b
    ctx = b.load(e.index(words, CallWords.CTX))
    packed = b.inttoptr(b.load(e.index(words, CallWords.PACKED)), PACKED.as_pointer())
    alone, split, take, done = e.block("alone"), e.block("split"), e.block("take"), e.block("ran")
    b.cbranch(b.and_(b.icmp_unsigned("!=", ctx, i64(0)), b.icmp_signed(">", hi, lo)), split, alone)

    e.at(split)
    ctx_p = b.inttoptr(ctx, PTR)
    busy = e.field(ctx_p, Ctx.BUSY, I32)
    free = b.icmp_unsigned("==", b.atomic_rmw("xchg", busy, i32(1), "acquire"), i32(0))
    b.cbranch(free, take, alone)
    e.at(take)
    launch_type = ir.FunctionType(VOID, [PTR, PTR, PTR, I64, I64, I64, I64, I64])
    e.call_at(b.load(e.index(words, CallWords.LAUNCH)), launch_type,
              [ctx_p, b.bitcast(packed, PTR), argv, lo, hi,
               *(b.load(e.index(words, w)) for w in (CallWords.THREADS, CallWords.GRAIN, CallWords.LEAST))])
    b.store_atomic(i32(0), busy, "release", 4)
    b.branch(done)

    e.at(alone)
    b.call(packed, [argv, lo, hi])
    b.branch(done)
    e.at(done)


def arity_module(n_ptrs: int) -> ir.Module:
    """The entry points of every kernel with n_ptrs pointer arguments (its operands, then the
    launch record): the kernel is data (argv[n_ptrs], CallWords.KERNEL), so one compile serves
    them all and none is made per kernel.

    - `packed_name(n)`: `void (i64 *argv, i64 lo, i64 hi)` calls the kernel at argv[n] with
      argv[0..n-1] and [lo, hi). One signature for every arity: pool workers and replays call it.
    - `call_name(n)`: `PyObject *(words, args, nargs)`, METH_FASTCALL on a builtin whose `self`
      is the kernel's CallWords array, called as call(p_0, ..., p_{n-1}, begin, end) with Python
      ints: runs [begin, end) with the GIL released (`_dispatch`) and returns None. A ctypes
      call of a six-argument function costs 1.5-2 µs, more than a 1K-element kernel runs; this
      costs about 0.1 µs.
    """
    module = ir.Module(arity_name(n_ptrs))
    e = _Emitter(module, packed_name(n_ptrs), PACKED)
    b = e.b
    argv, lo, hi = e.fn.args
    argv_words = b.bitcast(argv, I64P)
    pointers = [b.inttoptr(b.load(e.index(argv_words, i)), PTR) for i in range(n_ptrs)]
    e.call_at(b.load(e.index(argv_words, n_ptrs)), kernel_type(n_ptrs), pointers + [lo, hi])
    b.ret_void()

    e = _Emitter(module, call_name(n_ptrs), FASTCALL)
    b = e.b
    self_, args, nargs = e.fn.args
    values = _int_args(e, args, nargs, n_ptrs + 2, "kernel call")
    words = b.bitcast(e.load(self_, ARRAY_DATA, PTR), I64P)
    argv = b.alloca(I64, size=n_ptrs + 1, name="argv")
    for i, value in enumerate(values[:n_ptrs]):
        b.store(value, e.index(argv, i))
    b.store(b.load(e.index(words, CallWords.KERNEL)), e.index(argv, n_ptrs))
    state = e.c_api("PyEval_SaveThread")
    _dispatch(e, words, b.bitcast(argv, PTR), values[n_ptrs], values[n_ptrs + 1])
    e.c_api("PyEval_RestoreThread", state)
    _return_none(e)
    return module


# ----------------------------------------------------------------------------------------------
# The thread pool
# ----------------------------------------------------------------------------------------------

SYS_FUTEX = 202  # x86-64 Linux
FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE = 128, 129
SPINS = 20000  # ~tens of µs of `pause` before sleeping: launches come in bursts
# A launch's range is cut into chunks of ceil(n / (threads * CHUNKS_PER_THREAD)) units, so a
# slow or descheduled thread costs little, but no fewer than its kernel's `least` unless that would
# leave a thread without one, and each a multiple of the kernel's `grain` (CallWords): for
# elementwise kernels (units: elements) CHUNK_GRAIN and MIN_CHUNK (small chunks lost up to 10%
# against numba's prange at 64K-128K elements); for a kernel a row at a time (units: rows) 1 and 1,
# so 64 rows split over 2 threads; for one whose blocks of rows sum across rows, the block.
CHUNK_GRAIN = 64
CHUNKS_PER_THREAD = 4
MIN_CHUNK = 32768
STOP = -1  # the job number that makes workers return
JOB_MASK = 0x7FFFFFFF  # job numbers wrap below STOP


class Ctx:
    """Byte offsets in the pool's context. Words written by different threads sit a cache line
    apart; wakes are syscalls, made only when someone sleeps (the *_SLEEPING counts)."""

    STATE = 0  # i64: job << 32 | next chunk to claim
    JOB = 4  # i32: the job half of STATE (little-endian), the futex workers sleep on
    DONE = 64  # i32: chunks finished, the futex the caller sleeps on
    FN, ARGV, BEGIN, END, CHUNK, N_CHUNKS = 128, 136, 144, 152, 160, 168  # the open job
    WORKERS_SLEEPING = 192  # i32
    CALLER_SLEEPING = 256  # i32
    BUSY = 320  # i32: a launch holds the pool
    SIZE = 384


def _futex(e: _Emitter, ctx: ir.Value, offset: int, op: int, value: ir.Value) -> None:
    """futex(ctx + offset, op, value): wait while the word is `value`, or wake `value` sleepers."""
    e.syscall(i64(SYS_FUTEX), e.field(ctx, offset, I32), i64(op), e.b.zext(value, I64), i64(0), i64(0), i64(0))


def _claim(module: ir.Module, name: str) -> ir.Function:
    """`void claim(ctx, i64 job)`: claim and run chunks of open job `job` until none are left
    or the job is no longer open (a worker that wakes late never claims the next job's chunks:
    a claim is a compare-and-swap of the whole state word, job number included)."""
    e = _Emitter(module, name, ir.FunctionType(VOID, [PTR, I64]), linkage="internal")
    b = e.b
    ctx, job = e.fn.args
    fn = b.load(e.field(ctx, Ctx.FN, PTR))
    argv = b.load(e.field(ctx, Ctx.ARGV, PTR))
    begin, end, chunk, n_chunks = (e.load(ctx, f, I64) for f in (Ctx.BEGIN, Ctx.END, Ctx.CHUNK, Ctx.N_CHUNKS))
    state_p = e.field(ctx, Ctx.STATE, I64)
    loop, out = e.block("loop"), e.block("out")
    b.branch(loop)

    e.at(loop)
    state = b.load_atomic(state_p, "acquire", 8)
    e.check(b.icmp_unsigned("==", b.lshr(state, i64(32)), job), out, "same_job")
    k = b.and_(state, i64(0xFFFFFFFF))
    e.check(b.icmp_unsigned("<", k, n_chunks), out, "has_chunk")
    swapped = b.extract_value(b.cmpxchg(state_p, state, b.add(state, i64(1)), "acq_rel", "monotonic"), 1)
    e.check(swapped, loop, "run")
    lo = b.add(begin, b.mul(k, chunk))
    hi = b.add(lo, chunk)
    hi = b.select(b.icmp_signed("<", hi, end), hi, end)
    e.call_at(fn, PACKED, [argv, lo, hi])
    finished = b.add(b.atomic_rmw("add", e.field(ctx, Ctx.DONE, I32), i32(1), "seq_cst"), i32(1))
    e.check(b.icmp_unsigned("==", b.zext(finished, I64), n_chunks), loop, "last")
    caller_sleeps = b.load_atomic(e.field(ctx, Ctx.CALLER_SLEEPING, I32), "seq_cst", 4)
    wake = e.block("wake_caller")
    b.cbranch(b.icmp_unsigned("!=", caller_sleeps, i32(0)), wake, out)
    e.at(wake)
    _futex(e, ctx, Ctx.DONE, FUTEX_WAKE_PRIVATE, i32(1))
    b.branch(out)

    e.at(out)
    b.ret_void()
    return e.fn


def _pause(e: _Emitter, i: ir.Value, spin: ir.Block, sleep: ir.Block) -> ir.Value:
    """The pause block of a spin loop: one pause, then back to `spin` until SPINS rounds have
    gone, then to `sleep`. Returns the round count after this one (`i` is the spin's phi)."""
    b = e.b
    e.pause()
    i1 = b.add(i, i32(1))
    b.cbranch(b.icmp_signed("<", i1, i32(SPINS)), spin, sleep)
    return i1


def _worker(module: ir.Module, name: str, claim: ir.Function) -> ir.Function:
    """`void worker(ctx)`: wait for the job number to change (spin, then sleep on its futex),
    run open jobs' chunks, return on STOP."""
    e = _Emitter(module, name, ir.FunctionType(VOID, [PTR]), linkage="internal")
    b = e.b
    (ctx,) = e.fn.args
    job_p = e.field(ctx, Ctx.JOB, I32)
    first = b.load_atomic(job_p, "acquire", 4)
    entry = b.block
    wait, spin, pause, sleep, got, run, leave = (
        e.block(n) for n in ("wait", "spin", "pause", "sleep", "got", "run", "exit"))
    b.branch(wait)

    e.at(wait)
    last = b.phi(I32, "last")  # the last job number seen
    b.branch(spin)
    e.at(spin)
    i = b.phi(I32, "i")
    job = b.load_atomic(job_p, "acquire", 4)
    b.cbranch(b.icmp_unsigned("!=", job, last), got, pause)

    e.at(pause)
    i1 = _pause(e, i, spin, sleep)
    i.add_incoming(i32(0), wait)
    i.add_incoming(i1, pause)

    e.at(sleep)
    sleeping = e.field(ctx, Ctx.WORKERS_SLEEPING, I32)
    b.atomic_rmw("add", sleeping, i32(1), "seq_cst")
    _futex(e, ctx, Ctx.JOB, FUTEX_WAIT_PRIVATE, last)
    b.atomic_rmw("sub", sleeping, i32(1), "seq_cst")
    b.branch(wait)

    e.at(got)
    not_stop = e.check(b.icmp_signed("!=", job, i32(STOP)), leave, "not_stop")
    b.cbranch(b.icmp_unsigned("!=", b.and_(job, i32(1)), i32(0)), run, wait)  # odd: open

    e.at(run)
    b.call(claim, [ctx, b.zext(job, I64)])
    b.branch(wait)
    for value, block in ((first, entry), (last, sleep), (job, not_stop), (job, run)):
        last.add_incoming(value, block)

    e.at(leave)
    b.ret_void()
    return e.fn


def _launch(module: ir.Module, name: str, claim: ir.Function) -> None:
    """`void launch(ctx, packed fn, i64 *argv, i64 begin, i64 end, i64 threads, i64 grain,
    i64 least)`: cut the range into chunks (multiples of `grain`, from `least` units: see
    CHUNK_GRAIN), open a job, claim chunks like any worker, then wait for the chunks others
    claimed (spin, then sleep on DONE's futex) and close the job."""
    e = _Emitter(module, name, ir.FunctionType(VOID, [PTR, PTR, PTR, I64, I64, I64, I64, I64]))
    b = e.b
    ctx, fn, argv, begin, end, threads, grain, at_least = e.fn.args

    def ceil_div(n, d):
        return b.udiv(b.sub(b.add(n, d), i64(1)), d)

    def round_up(n):
        return b.mul(ceil_div(n, grain), grain)

    def umin(x, y):
        return b.select(b.icmp_unsigned("<", x, y), x, y)

    n = b.sub(end, begin)
    spread = round_up(ceil_div(n, b.mul(threads, i64(CHUNKS_PER_THREAD))))
    one_each = round_up(ceil_div(n, threads))
    least = umin(one_each, round_up(at_least))
    chunk = b.select(b.icmp_unsigned("<", spread, least), least, spread)
    n_chunks = ceil_div(n, chunk)

    done_p = e.field(ctx, Ctx.DONE, I32)
    b.store_atomic(i32(0), done_p, "monotonic", 4)
    b.store(fn, e.field(ctx, Ctx.FN, PTR))
    b.store(argv, e.field(ctx, Ctx.ARGV, PTR))
    for offset, value in ((Ctx.BEGIN, begin), (Ctx.END, end), (Ctx.CHUNK, chunk), (Ctx.N_CHUNKS, n_chunks)):
        b.store(value, e.field(ctx, offset, I64))
    closed = b.load_atomic(e.field(ctx, Ctx.JOB, I32), "monotonic", 4)
    job = b.zext(b.and_(b.add(closed, i32(1)), i32(JOB_MASK)), I64)
    state_p = e.field(ctx, Ctx.STATE, I64)
    b.atomic_rmw("xchg", state_p, b.shl(job, i64(32)), "seq_cst")  # open: publishes the fields too
    workers_sleeping = b.load_atomic(e.field(ctx, Ctx.WORKERS_SLEEPING, I32), "seq_cst", 4)
    wake, work = e.block("wake_workers"), e.block("work")
    b.cbranch(b.icmp_unsigned("!=", workers_sleeping, i32(0)), wake, work)
    e.at(wake)
    _futex(e, ctx, Ctx.JOB, FUTEX_WAKE_PRIVATE, i32(0x7FFFFFFF))
    b.branch(work)

    e.at(work)
    b.call(claim, [ctx, job])
    want = b.trunc(n_chunks, I32)
    spin, pause, sleep, block, awake, leave = (e.block(x) for x in ("spin", "pause", "sleep", "block", "awake", "exit"))
    b.branch(spin)
    e.at(spin)
    i = b.phi(I32, "i")
    finished = b.load_atomic(done_p, "acquire", 4)
    b.cbranch(b.icmp_unsigned("==", finished, want), leave, pause)

    e.at(pause)
    i1 = _pause(e, i, spin, sleep)
    for value, blk in ((i32(0), work), (i1, pause), (i32(0), awake)):
        i.add_incoming(value, blk)

    e.at(sleep)
    caller_sleeping = e.field(ctx, Ctx.CALLER_SLEEPING, I32)
    b.atomic_rmw("add", caller_sleeping, i32(1), "seq_cst")
    finished = b.load_atomic(done_p, "seq_cst", 4)  # again, now that the last claimer will wake us
    b.cbranch(b.icmp_unsigned("==", finished, want), awake, block)
    e.at(block)
    _futex(e, ctx, Ctx.DONE, FUTEX_WAIT_PRIVATE, finished)
    b.branch(awake)
    e.at(awake)
    b.atomic_rmw("sub", caller_sleeping, i32(1), "seq_cst")
    b.branch(spin)

    e.at(leave)
    closing = b.and_(b.add(job, i64(1)), i64(JOB_MASK))  # even: closed
    b.atomic_rmw("xchg", state_p, b.shl(closing, i64(32)), "seq_cst")
    b.ret_void()


POOL_WORKER, POOL_LAUNCH = "aclgen_pool_worker", "aclgen_pool_launch"


def pool_module() -> ir.Module:
    """The pool's Python entry for its threads, POOL_WORKER: a METH_FASTCALL function taking the
    context's address that runs the worker loop with the GIL released and returns on STOP; and
    POOL_LAUNCH, `void launch(ctx, packed fn, i64 *argv, i64 begin, i64 end, i64 threads, i64 grain,
    i64 least)`.

    A launch cuts [begin, end) into chunks and opens a job; the caller and every worker then
    claim chunks one at a time from a shared counter until none are left, and the caller waits
    only for chunks already claimed. So a worker that is slow to wake, or descheduled (another
    library's OpenMP threads spinning on the same cores), costs at most the chunk it holds: the
    caller runs the rest itself instead of waiting a scheduler tick. Odd job numbers are open,
    even ones closed. Workers spin briefly, then sleep on the job number's futex.
    """
    module = ir.Module("aclgen_pool")
    claim = _claim(module, "aclgen_pool_claim")
    worker = _worker(module, "aclgen_pool_work", claim)
    _launch(module, POOL_LAUNCH, claim)
    e = _Emitter(module, POOL_WORKER, FASTCALL)
    _self, args, nargs = e.fn.args
    (ctx,) = _int_args(e, args, nargs, 1, "pool worker")
    state = e.c_api("PyEval_SaveThread")
    e.b.call(worker, [e.b.inttoptr(ctx, PTR)])
    e.c_api("PyEval_RestoreThread", state)
    _return_none(e)
    return module


# ----------------------------------------------------------------------------------------------
# Guarded replay
# ----------------------------------------------------------------------------------------------

MAX_POINTERS = 16  # kernel pointers a replay passes, the launch record included
MAX_ARRAYS = 16  # array arguments (inputs and outputs) a record guards
WORKSPACE_SOURCE = MAX_ARRAYS  # a Source's ARRAY that names the record's workspace


class Header:
    """Words 0..SIZE-1 of a replay record (an int64 array): where each section starts (*_AT, a
    word index) and how many entries it has (N_*), and the call's argument counts."""

    N_LAUNCHES, LAUNCHES_AT = 0, 1  # the kernels run, in order (none for an empty call)
    NARGS = 3  # inputs + params + outputs
    N_OUTPUTS = 4
    OUTPUTS_ARG = 5  # the first output's argument index
    N_ENV, ENV_DICT, ENV_AT = 6, 7, 8  # ENV_DICT: os.environ's own dict
    N_ARRAYS, ARRAY_WORDS, ARRAYS_AT = 9, 10, 11  # ARRAY_WORDS: the size of every array entry
    N_RELATIONS, RELATIONS_AT = 12, 13
    N_PARAMS, PARAMS_AT = 14, 15
    N_SOURCES, SOURCES_AT = 16, 17  # every launch's pointers, one launch after the other
    WORKSPACE = 18  # the record's own workspace's address (0: none), source WORKSPACE_SOURCE
    BUSY = 19  # 1 while a replay uses the workspace: another replay of the record is then a miss
    SIZE = 20


class LaunchEntry:
    """One kernel run: its CallWords (their data's address), the launch record's address (the
    kernel's last pointer), the range [0, NUMEL) and its pointers: N_SOURCES entries of the
    sources section from FIRST_SOURCE on."""

    CALL, META, NUMEL, FIRST_SOURCE, N_SOURCES, SIZE = range(6)


class EnvEntry:
    """A variable the plan read: its key object, and the value object it must still be (0: unset)."""

    KEY, VALUE, SIZE = 0, 1, 2


class ArrayEntry:
    """An array argument (inputs, then outputs): ndim dims follow at DIMS, then ndim byte strides."""

    ARG, DTYPE, NDIM, FLAGS, LO, HI, DIMS = range(7)  # FLAGS: those it must have; [LO, HI): extent


class Relation:
    """Arrays A and B (array indices) are the SAME memory, or lie wholly apart (DISJOINT)."""

    A, B, KIND, SIZE = 0, 1, 2, 3
    SAME, DISJOINT = 1, 2


class ParamEntry:
    """A scalar or attribute argument: its exact type object, a KIND and a VALUE. FLOAT_BITS: a
    float's bits; INT: an int's value; SAME: the object itself (VALUE its address: True, False, a str,
    None); SEQUENCE: a tuple or list of VALUE items, each an entry of its own right after it (ITEM
    its index; -1 for an argument itself)."""

    ARG, TYPE, KIND, VALUE, ITEM, SIZE = range(6)
    FLOAT_BITS, INT, SAME, SEQUENCE = 0, 1, 2, 3


class Source:
    """A kernel pointer: the data pointer of array ARRAY plus DELTA bytes (ARRAY =
    WORKSPACE_SOURCE: the record's workspace)."""

    ARRAY, DELTA, SIZE = 0, 1, 2


class _Words:
    """A record's words in generated code: `rec[k]` loads word k (an int or an i64 value),
    `rec.at(start, k)` word start + k."""

    def __init__(self, e: _Emitter, base: ir.Value):
        self.e, self.base = e, base

    def __getitem__(self, k: int | ir.Value) -> ir.Value:
        return self.e.b.load(self.e.index(self.base, k))

    def at(self, start: ir.Value, k: int) -> ir.Value:
        return self[self.e.b.add(start, i64(k))]

    def entry(self, section: int, size: int | ir.Value, i: ir.Value) -> ir.Value:
        """Where entry i of the section whose start is header word `section` begins."""
        step = self.e.b.mul(i, i64(size) if isinstance(size, int) else size)
        return self.e.b.add(self[section], step)


REPLAY = "aclgen_replay"


def replay_module() -> ir.Module:
    """`PyObject *REPLAY(PyObject *record, PyObject *const *args, Py_ssize_t nargs)`, called as
    `replay(*inputs, *params, *outputs)` on a builtin whose `self` is the record (an int64
    ndarray laid out as Header and the entry classes above say): run the recorded launches when
    every guard holds and return the output (one) or a tuple of the outputs (several); return
    None (a miss) otherwise.

    The guards: nargs; each env entry's value object (PyDict_GetItem on os.environ's own dict,
    compared by identity: a value set again is usually a new object, a miss, never a wrong
    hit); each array exactly a numpy.ndarray with the recorded dtype object, rank, dims, byte
    strides and flags (ALIGNED, and WRITEABLE for outputs); each relation; each parameter's
    exact type and value. A record with a workspace (partial sums across rows) takes it for the
    call, or misses while another thread's replay of the same record has it. The GIL is released
    around the kernel."""
    module = ir.Module(REPLAY)
    e = _Emitter(module, REPLAY, FASTCALL)
    b = e.b
    record, args, nargs = e.fn.args
    argv = b.alloca(I64, size=MAX_POINTERS + 1, name="argv")  # + the kernel (packed's argv)
    data = b.alloca(I64, size=MAX_ARRAYS + 1, name="data")  # each array's data pointer, the workspace's
    overflow = b.alloca(I32, name="overflow")
    miss = e.block("miss")
    rec = _Words(e, b.bitcast(e.load(record, ARRAY_DATA, PTR), I64P))
    e.check(b.icmp_signed("==", nargs, rec[Header.NARGS]), miss, "env")
    _guard_env(e, rec, miss)
    _guard_arrays(e, rec, args, data, miss)
    _guard_relations(e, rec, data, miss)
    _guard_params(e, rec, args, overflow, miss)
    workspace = rec[Header.WORKSPACE]
    b.store(workspace, e.index(data, i64(WORKSPACE_SOURCE)))
    busy = e.index(rec.base, i64(Header.BUSY))
    owns = b.icmp_unsigned("!=", workspace, i64(0))
    take, run = e.block("workspace.take"), e.block("launch")
    b.cbranch(owns, take, run)
    e.at(take)
    e.check(_eq(e, b.atomic_rmw("xchg", busy, i64(1), "acquire"), i64(0)), miss, "workspace.taken")
    b.branch(run)
    e.at(run)
    _run(e, rec, data, argv)
    give, done = e.block("workspace.give"), e.block("outputs")
    b.cbranch(owns, give, done)
    e.at(give)
    b.store_atomic(i64(0), busy, "release", 8)
    b.branch(done)
    e.at(done)
    _return_outputs(e, rec, args)

    e.at(miss)
    _return_none(e)
    return module


def _eq(e: _Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    return e.b.icmp_unsigned("==", x, y)


def _guard_env(e: _Emitter, rec: _Words, miss: ir.Block) -> None:
    b = e.b
    env = b.inttoptr(rec[Header.ENV_DICT], PTR)
    with e.loop(rec[Header.N_ENV], "env") as k:
        at = rec.entry(Header.ENV_AT, EnvEntry.SIZE, k)
        value = e.c_api("PyDict_GetItem", env, b.inttoptr(rec.at(at, EnvEntry.KEY), PTR))  # borrowed
        e.check(_eq(e, b.ptrtoint(value, I64), rec.at(at, EnvEntry.VALUE)), miss, "env.same")


def _guard_arrays(e: _Emitter, rec: _Words, args: ir.Value, data: ir.Value, miss: ir.Block) -> None:
    b = e.b
    with e.loop(rec[Header.N_ARRAYS], "array") as a:
        at = rec.entry(Header.ARRAYS_AT, rec[Header.ARRAY_WORDS], a)
        obj = b.load(e.index(args, rec.at(at, ArrayEntry.ARG)))
        e.check(_eq(e, e.load(obj, OB_TYPE, I64), e.py_object_id("ndarray")), miss, "array.fields")
        ndim, need = rec.at(at, ArrayEntry.NDIM), rec.at(at, ArrayEntry.FLAGS)
        flags = b.zext(e.load(obj, ARRAY_FLAGS, I32), I64)
        e.check(e.all(_eq(e, b.sext(e.load(obj, ARRAY_ND, I32), I64), ndim),
                      _eq(e, e.load(obj, ARRAY_DESCR, I64), rec.at(at, ArrayEntry.DTYPE)),
                      _eq(e, b.and_(flags, need), need)), miss, "array.dims")
        dims = b.bitcast(e.load(obj, ARRAY_DIMS, PTR), I64P)
        strides = b.bitcast(e.load(obj, ARRAY_STRIDES, PTR), I64P)
        dims_at = b.add(at, i64(ArrayEntry.DIMS))
        strides_at = b.add(dims_at, ndim)
        with e.loop(ndim, "dim") as d:
            same_dim = _eq(e, b.load(e.index(dims, d)), rec[b.add(dims_at, d)])
            same_stride = _eq(e, b.load(e.index(strides, d)), rec[b.add(strides_at, d)])
            e.check(b.and_(same_dim, same_stride), miss, "dim.same")
        b.store(e.load(obj, ARRAY_DATA, I64), e.index(data, a))


def _guard_relations(e: _Emitter, rec: _Words, data: ir.Value, miss: ir.Block) -> None:
    b = e.b

    def extent(a: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
        """(data pointer, first byte, end) of array a's elements."""
        start = b.load(e.index(data, a))
        at = rec.entry(Header.ARRAYS_AT, rec[Header.ARRAY_WORDS], a)
        return start, b.add(start, rec.at(at, ArrayEntry.LO)), b.add(start, rec.at(at, ArrayEntry.HI))

    with e.loop(rec[Header.N_RELATIONS], "relation") as r:
        at = rec.entry(Header.RELATIONS_AT, Relation.SIZE, r)
        a, a_lo, a_hi = extent(rec.at(at, Relation.A))
        c, c_lo, c_hi = extent(rec.at(at, Relation.B))
        apart = b.or_(b.icmp_unsigned("<=", a_hi, c_lo), b.icmp_unsigned("<=", c_hi, a_lo))
        same = _eq(e, rec.at(at, Relation.KIND), i64(Relation.SAME))
        e.check(b.select(same, _eq(e, a, c), apart), miss, "relation.holds")


def _guard_params(e: _Emitter, rec: _Words, args: ir.Value, overflow: ir.Value, miss: ir.Block) -> None:
    """Each entry's object (an argument, or item ITEM of the tuple or list argument ARG, whose own
    entry came first and checked its type and length) of exactly the recorded type and value."""
    b = e.b
    with e.loop(rec[Header.N_PARAMS], "param") as j:
        at = rec.entry(Header.PARAMS_AT, ParamEntry.SIZE, j)
        arg = b.load(e.index(args, rec.at(at, ParamEntry.ARG)))
        item = rec.at(at, ParamEntry.ITEM)
        whole, of_seq, got = e.block("param.arg"), e.block("param.item"), e.block("param.object")
        b.cbranch(b.icmp_signed("<", item, i64(0)), whole, of_seq)
        e.at(of_seq)
        is_tuple = _eq(e, e.load(arg, OB_TYPE, I64), e.py_object_id("tuple"))
        items = b.select(is_tuple, b.ptrtoint(b.gep(arg, [i64(SEQ_ITEMS)]), I64), e.load(arg, SEQ_ITEMS, I64))
        member = b.load(e.index(b.inttoptr(items, PTR.as_pointer()), item))
        b.branch(got)
        e.at(whole)
        b.branch(got)
        e.at(got)
        obj = b.phi(PTR, "param.obj")
        obj.add_incoming(member, of_seq)
        obj.add_incoming(arg, whole)
        e.check(_eq(e, e.load(obj, OB_TYPE, I64), rec.at(at, ParamEntry.TYPE)), miss, "param.value")
        value, kind = rec.at(at, ParamEntry.VALUE), rec.at(at, ParamEntry.KIND)
        as_float, as_int, same = e.block("param.float"), e.block("param.int"), e.block("param.same")
        as_object, as_seq = e.block("param.is"), e.block("param.seq")
        switch = b.switch(kind, as_object)
        switch.add_case(i64(ParamEntry.FLOAT_BITS), as_float)
        switch.add_case(i64(ParamEntry.INT), as_int)
        switch.add_case(i64(ParamEntry.SEQUENCE), as_seq)
        e.at(as_float)
        b.cbranch(_eq(e, e.load(obj, FLOAT_VALUE, I64), value), same, miss)
        e.at(as_int)  # an exact int: no exception possible, an overflow is flagged
        got_int = e.c_api("PyLong_AsLongLongAndOverflow", obj, overflow)
        b.cbranch(b.and_(_eq(e, got_int, value), _eq(e, b.load(overflow), i32(0))), same, miss)
        e.at(as_object)
        b.cbranch(_eq(e, b.ptrtoint(obj, I64), value), same, miss)
        e.at(as_seq)
        b.cbranch(_eq(e, e.load(obj, VAR_SIZE, I64), value), same, miss)
        e.at(same)


def _run(e: _Emitter, rec: _Words, data: ir.Value, argv: ir.Value) -> None:
    """Each launch in turn, with the GIL released around them all: argv = the kernel's pointers
    (array data + delta, then the launch record, then the kernel for its packed entry); a launch
    of no elements runs nothing."""
    b = e.b
    state = e.c_api("PyEval_SaveThread")
    with e.loop(rec[Header.N_LAUNCHES], "launch") as j:
        entry = rec.entry(Header.LAUNCHES_AT, LaunchEntry.SIZE, j)
        numel = rec.at(entry, LaunchEntry.NUMEL)
        go, ran = e.block("run"), e.block("after_run")
        b.cbranch(b.icmp_signed(">", numel, i64(0)), go, ran)
        e.at(go)
        first, n = rec.at(entry, LaunchEntry.FIRST_SOURCE), rec.at(entry, LaunchEntry.N_SOURCES)
        with e.loop(n, "source") as k:
            at = rec.entry(Header.SOURCES_AT, Source.SIZE, b.add(first, k))
            start = b.load(e.index(data, rec.at(at, Source.ARRAY)))
            b.store(b.add(start, rec.at(at, Source.DELTA)), e.index(argv, k))
        words = b.inttoptr(rec.at(entry, LaunchEntry.CALL), I64P)
        b.store(rec.at(entry, LaunchEntry.META), e.index(argv, n))
        b.store(b.load(e.index(words, CallWords.KERNEL)), e.index(argv, b.add(n, i64(1))))
        _dispatch(e, words, b.bitcast(argv, PTR), i64(0), numel)
        b.branch(ran)
        e.at(ran)
    e.c_api("PyEval_RestoreThread", state)


def _return_outputs(e: _Emitter, rec: _Words, args: ir.Value) -> None:
    b = e.b
    first, n = rec[Header.OUTPUTS_ARG], rec[Header.N_OUTPUTS]
    one, several, failed = e.block("one_output"), e.block("outputs"), e.block("failed")
    b.cbranch(_eq(e, n, i64(1)), one, several)
    e.at(one)
    out = b.load(e.index(args, first))
    e.c_api("Py_IncRef", out)
    b.ret(out)

    e.at(several)
    result = e.c_api("PyTuple_New", n)
    e.check(b.icmp_unsigned("!=", result, PTR(None)), failed, "fill")
    with e.loop(n, "output") as o:
        item = b.load(e.index(args, b.add(first, o)))
        e.c_api("Py_IncRef", item)
        e.c_api("PyTuple_SetItem", result, o, item)  # steals the new reference
    b.ret(result)
    e.at(failed)  # PyTuple_New's MemoryError is set
    b.ret(PTR(None))
