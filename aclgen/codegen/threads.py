"""A lean native thread pool: the tiling pass's thread split, run on all cores.

A Python ThreadPoolExecutor hand-off costs ~100 µs here, more than a 256K-element kernel runs,
so threads only paid for big calls. This pool's workers are ordinary daemon threads that enter
a native loop (LLVM IR, called through aclgen.codegen.pycall, GIL released) and never come
back to Python: they spin briefly, then sleep on a futex, waiting for a job number to change.

A launch cuts [begin, end) into chunks (multiples of 64 elements, a few per thread) and opens a
job; the caller and every worker then claim chunks one at a time from a shared counter until
none are left, and the caller waits only for chunks already claimed. So a worker that is slow
to wake, or descheduled (another library's OpenMP threads spinning on the same cores), costs at
most the chunk it holds: the caller runs the rest itself instead of waiting a scheduler tick.

Job states live in one 64-bit word: job number (high half, the futex word) and next chunk
(low half). Odd job numbers are open, even ones closed; a claim is a compare-and-swap that
names the job, so a worker that wakes late for a finished job can never claim a chunk of the
next one. Each kernel gets a "packed" entry `void packed(i64 *argv, i64 lo, i64 hi)` that
unpacks argv = [pointers..., meta] and calls it, so workers need not know its arity.
One launch at a time: a caller that finds the pool busy runs its whole range itself.
"""

from __future__ import annotations

import ctypes
import os
import threading

import llvmlite.binding as llvm
import numpy as np

from aclgen.codegen import pycall
from aclgen.codegen.target import host

SYS_FUTEX = 202  # x86-64 Linux
FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE = 128, 129
SPINS = 20000  # ~tens of µs of `pause` before sleeping: launches come in bursts
# A launch's range is cut into chunks of ceil(n / (threads * CHUNKS_PER_THREAD)) elements (a
# slow or descheduled thread then costs little), but no fewer than MIN_CHUNK unless that would
# leave a thread without one; chunks are multiples of 64 elements. Measured against numba
# prange, threshold f32 (ratio, 2 runs): MIN_CHUNK 4096 -> 32768 gave 64K 1.16/1.09x ->
# 1.24/1.19x, 128K 1.03/1.07x -> 1.14/1.10x; at 1M no change (8 chunks either way); 1 chunk per
# thread there was 1.02/1.01x against 4 per thread's 1.04/1.07x.
CHUNKS_PER_THREAD = 4
MIN_CHUNK = 32768
STOP = -1  # job number that makes workers return
# ctx layout (bytes): 0 state (i64: job << 32 | next chunk; the job half at 4 is the futex word),
# 64 finished chunks (i32, futex), 128.. the open job's packed entry, argv, begin, end, chunk
# length and chunk count (i64 each), 192 sleeping workers (i32), 256 caller sleeping (i32),
# 320 busy (i32): wakes are syscalls, made only when someone sleeps.
STATE, JOB, DONE, FN, ARGV, BEGIN, END, CHUNK, NCHUNKS = 0, 4, 64, 128, 136, 144, 152, 160, 168
SLEEP_W, SLEEP_M, BUSY = 192, 256, 320


def _syscall() -> int:
    return ctypes.cast(ctypes.CDLL(None).syscall, ctypes.c_void_p).value


def _field(name: str, offset: int) -> str:
    return f"  %{name} = getelementptr i8, ptr %ctx, i64 {offset}"


def _pool_ir() -> str:
    sc = f"inttoptr (i64 {_syscall()} to ptr)"
    fields = "\n".join(_field(n, o) for n, o in (
        ("statep", STATE), ("jobp", JOB), ("donep", DONE), ("fnp", FN), ("argvp", ARGV),
        ("beginp", BEGIN), ("endp", END), ("chunkp", CHUNK), ("nchunksp", NCHUNKS),
        ("sleepw", SLEEP_W), ("sleepm", SLEEP_M)))
    return f"""
declare void @llvm.x86.sse2.pause()

; claim and run chunks of open job %job until none are left (or the job is no longer open)
define internal void @aclgen_claim(ptr %ctx, i64 %job) {{
entry:
{fields}
  %fn = load ptr, ptr %fnp, align 8
  %argv = load ptr, ptr %argvp, align 8
  %b = load i64, ptr %beginp, align 8
  %e = load i64, ptr %endp, align 8
  %chunk = load i64, ptr %chunkp, align 8
  %n = load i64, ptr %nchunksp, align 8
  br label %loop
loop:
  %s = load atomic i64, ptr %statep acquire, align 8
  %sj = lshr i64 %s, 32
  %same = icmp eq i64 %sj, %job
  br i1 %same, label %check, label %out
check:
  %k = and i64 %s, 4294967295
  %has = icmp ult i64 %k, %n
  br i1 %has, label %cas, label %out
cas:
  %s1 = add i64 %s, 1
  %pair = cmpxchg ptr %statep, i64 %s, i64 %s1 acq_rel monotonic, align 8
  %ok = extractvalue {{ i64, i1 }} %pair, 1
  br i1 %ok, label %run, label %loop
run:
  %off = mul i64 %k, %chunk
  %lo = add i64 %b, %off
  %hi0 = add i64 %lo, %chunk
  %short = icmp slt i64 %hi0, %e
  %hi = select i1 %short, i64 %hi0, i64 %e
  call void %fn(ptr %argv, i64 %lo, i64 %hi)
  %d0 = atomicrmw add ptr %donep, i32 1 seq_cst
  %d1 = add i32 %d0, 1
  %d64 = zext i32 %d1 to i64
  %all = icmp eq i64 %d64, %n
  br i1 %all, label %last, label %loop
last:
  %msleeps = load atomic i32, ptr %sleepm seq_cst, align 4
  %mwake = icmp ne i32 %msleeps, 0
  br i1 %mwake, label %wakemain, label %out
wakemain:
  %r = call i64 (i64, ...) {sc}(i64 {SYS_FUTEX}, ptr %donep, i32 {FUTEX_WAKE_PRIVATE}, i32 1, ptr null, ptr null, i32 0)
  br label %out
out:
  ret void
}}

define void @aclgen_worker(ptr %ctx, i64 %unused0, i64 %unused1, i64 %unused2) {{
entry:
{fields}
  %first = load atomic i32, ptr %jobp acquire, align 4
  br label %wait
wait:
  %last = phi i32 [ %first, %entry ], [ %last, %sleep ], [ %job, %idle ], [ %job, %run ]
  br label %spin
spin:
  %i = phi i32 [ 0, %wait ], [ %i1, %pause ]
  %job = load atomic i32, ptr %jobp acquire, align 4
  %new = icmp ne i32 %job, %last
  br i1 %new, label %got, label %pause
pause:
  call void @llvm.x86.sse2.pause()
  %i1 = add i32 %i, 1
  %more = icmp slt i32 %i1, {SPINS}
  br i1 %more, label %spin, label %sleep
sleep:
  %s0 = atomicrmw add ptr %sleepw, i32 1 seq_cst
  %r = call i64 (i64, ...) {sc}(i64 {SYS_FUTEX}, ptr %jobp, i32 {FUTEX_WAIT_PRIVATE}, i32 %last, ptr null, ptr null, i32 0)
  %s1 = atomicrmw sub ptr %sleepw, i32 1 seq_cst
  br label %wait
got:
  %stop = icmp eq i32 %job, {STOP}
  br i1 %stop, label %exit, label %check
check:
  %bit = and i32 %job, 1
  %open = icmp ne i32 %bit, 0
  br i1 %open, label %run, label %idle
idle:
  br label %wait
run:
  %job64 = zext i32 %job to i64
  call void @aclgen_claim(ptr %ctx, i64 %job64)
  br label %wait
exit:
  ret void
}}

define void @aclgen_launch(ptr %ctx, ptr %fn, ptr %argv, i64 %b, i64 %e, i64 %threads) {{
entry:
{fields}
  %n = sub i64 %e, %b
  %per = mul i64 %threads, {CHUNKS_PER_THREAD}
  %c0 = add i64 %n, %per
  %c1 = sub i64 %c0, 1
  %c2 = udiv i64 %c1, %per
  %c3 = add i64 %c2, 63
  %c4 = and i64 %c3, -64
  %h0 = add i64 %n, %threads
  %h1 = sub i64 %h0, 1
  %h2 = udiv i64 %h1, %threads
  %h3 = add i64 %h2, 63
  %h4 = and i64 %h3, -64
  %fewer = icmp ult i64 %h4, {MIN_CHUNK}
  %least = select i1 %fewer, i64 %h4, i64 {MIN_CHUNK}
  %small = icmp ult i64 %c4, %least
  %chunk = select i1 %small, i64 %least, i64 %c4
  %m0 = add i64 %n, %chunk
  %m1 = sub i64 %m0, 1
  %nchunks = udiv i64 %m1, %chunk
  store atomic i32 0, ptr %donep monotonic, align 4
  store ptr %fn, ptr %fnp, align 8
  store ptr %argv, ptr %argvp, align 8
  store i64 %b, ptr %beginp, align 8
  store i64 %e, ptr %endp, align 8
  store i64 %chunk, ptr %chunkp, align 8
  store i64 %nchunks, ptr %nchunksp, align 8
  %closed = load atomic i32, ptr %jobp monotonic, align 4
  %job = add i32 %closed, 1
  %job64 = zext i32 %job to i64
  %opened = shl i64 %job64, 32
  %old = atomicrmw xchg ptr %statep, i64 %opened seq_cst
  %wsleeps = load atomic i32, ptr %sleepw seq_cst, align 4
  %wwake = icmp ne i32 %wsleeps, 0
  br i1 %wwake, label %wakeworkers, label %work
wakeworkers:
  %r = call i64 (i64, ...) {sc}(i64 {SYS_FUTEX}, ptr %jobp, i32 {FUTEX_WAKE_PRIVATE}, i32 2147483647, ptr null, ptr null, i32 0)
  br label %work
work:
  call void @aclgen_claim(ptr %ctx, i64 %job64)
  %want = trunc i64 %nchunks to i32
  br label %spin
spin:
  %i = phi i32 [ 0, %work ], [ %i1, %pause ], [ 0, %awake ]
  %d = load atomic i32, ptr %donep acquire, align 4
  %all = icmp eq i32 %d, %want
  br i1 %all, label %exit, label %pause
pause:
  call void @llvm.x86.sse2.pause()
  %i1 = add i32 %i, 1
  %more = icmp slt i32 %i1, {SPINS}
  br i1 %more, label %spin, label %sleep
sleep:
  %m2 = atomicrmw add ptr %sleepm, i32 1 seq_cst
  %d2 = load atomic i32, ptr %donep seq_cst, align 4
  %all2 = icmp eq i32 %d2, %want
  br i1 %all2, label %awake, label %block
block:
  %r2 = call i64 (i64, ...) {sc}(i64 {SYS_FUTEX}, ptr %donep, i32 {FUTEX_WAIT_PRIVATE}, i32 %d2, ptr null, ptr null, i32 0)
  br label %awake
awake:
  %m3 = atomicrmw sub ptr %sleepm, i32 1 seq_cst
  br label %spin
exit:
  %next = add i64 %job64, 1
  %closing = shl i64 %next, 32
  %old2 = atomicrmw xchg ptr %statep, i64 %closing seq_cst
  ret void
}}
"""


def packed_ir(name: str, kernel: int, n_ptrs: int) -> str:
    """`void name(i64 *argv, i64 lo, i64 hi)`: call the kernel at `kernel` with argv's n_ptrs
    pointers (operands, then the launch record) and [lo, hi)."""
    body, args = [], []
    for i in range(n_ptrs):
        body.append(f"  %a{i}p = getelementptr i64, ptr %argv, i64 {i}")
        body.append(f"  %a{i} = load i64, ptr %a{i}p, align 8")
        body.append(f"  %p{i} = inttoptr i64 %a{i} to ptr")
        args.append(f"ptr %p{i}")
    args += ["i64 %lo", "i64 %hi"]
    body.append(f"  call void inttoptr (i64 {kernel} to ptr)({', '.join(args)})")
    return f"define void @{name}(ptr %argv, i64 %lo, i64 %hi) {{\n" + "\n".join(body) + "\n  ret void\n}\n"


class Pool:
    """`workers` native threads plus the caller, claiming the chunks of one launch at a time."""

    def __init__(self, workers: int):
        self.workers = workers
        self.ctx = np.zeros(64, np.int64)
        self.ctx_ptr = self.ctx.ctypes.data
        self.pid = os.getpid()
        mod = _module(_pool_ir())
        engine = pycall._shared_engine()
        with pycall._lock:
            engine.add_module(mod)
            engine.finalize_object()
            worker = engine.get_function_address("aclgen_worker")
            self.launch_address = engine.get_function_address("aclgen_launch")
        pycall._keep.append(mod)
        self._worker = pycall.fastcall(worker, "iiii", "aclgen_worker")
        self.threads = [
            threading.Thread(target=self._worker, args=(self.ctx_ptr, 0, 0, 0), daemon=True, name=f"aclgen-{w}")
            for w in range(workers)
        ]
        for t in self.threads:
            t.start()


def _module(ir: str) -> llvm.ModuleRef:
    mod = llvm.parse_assembly(ir)
    mod.triple = host().triple
    mod.verify()
    return mod


_pool: Pool | None = None
_pool_lock = threading.Lock()


def pool(threads: int) -> Pool | None:
    """The process's pool for `threads` threads in all (None for 1, or off x86-64 Linux)."""
    global _pool
    if threads <= 1 or not host().triple.startswith("x86_64") or not os.uname().sysname == "Linux":
        return None
    p = _pool
    if p is not None and p.workers == threads - 1 and p.pid == os.getpid():
        return p
    with _pool_lock:
        if _pool is None or _pool.workers != threads - 1 or _pool.pid != os.getpid():
            _pool = Pool(threads - 1)  # an old pool's threads stay parked; pools change rarely
        return _pool


def _add(name: str, ir: str, keep) -> int:
    mod = _module(ir)
    engine = pycall._shared_engine()
    with pycall._lock:
        engine.add_module(mod)
        engine.finalize_object()
        addr = engine.get_function_address(name)
        pycall._keep.append((mod, keep))
    return addr


def packed_entry(kernel) -> int:
    """Address of the kernel's `packed(argv, lo, hi)` entry (made once per kernel)."""
    addr = getattr(kernel, "_packed", None)
    if addr is None:
        addr = kernel._packed = packed_address(kernel.address, kernel.meta_layout.n_operands + 1)
    return addr


_packed: dict[tuple[int, int], int] = {}


def packed_address(target: int, n_ptrs: int) -> int:
    """Address of `packed(argv, lo, hi)` calling the function at `target` (n_ptrs pointers, then
    the i64 range): one entry point for every arity (the pool's workers, guarded replays)."""
    addr = _packed.get((target, n_ptrs))
    if addr is None:
        name = f"aclgen_packed_{len(pycall._keep)}"
        addr = _packed[(target, n_ptrs)] = _add(name, packed_ir(name, target, n_ptrs), None)
    return addr


def parallel_ir(name: str, kernel: int, packed: int, n_ptrs: int, p: Pool) -> str:
    """`name` has the kernel's own signature and runs [begin, end) on the pool, chunk by chunk.
    If the pool is busy (another thread's launch), the caller runs the whole range itself."""
    params = ", ".join([f"ptr %p{i}" for i in range(n_ptrs)] + ["i64 %b", "i64 %e"])
    busy = f"inttoptr (i64 {p.ctx_ptr + BUSY} to ptr)"
    lines = [
        f"define void @{name}({params}) {{",
        "entry:",
        f"  %prev = atomicrmw xchg ptr {busy}, i32 1 acquire",
        "  %free = icmp eq i32 %prev, 0",
        "  br i1 %free, label %split, label %alone",
        "alone:",
        f"  call void inttoptr (i64 {kernel} to ptr)({params})",
        "  ret void",
        "split:",
        f"  %argv = alloca [{n_ptrs} x i64], align 64",
    ]
    for i in range(n_ptrs):
        lines += [
            f"  %s{i} = getelementptr i64, ptr %argv, i64 {i}",
            f"  store ptr %p{i}, ptr %s{i}, align 8",
        ]
    lines += [
        f"  call void inttoptr (i64 {p.launch_address} to ptr)(ptr inttoptr (i64 {p.ctx_ptr} to ptr), "
        f"ptr inttoptr (i64 {packed} to ptr), ptr %argv, i64 %b, i64 %e, i64 {p.workers + 1})",
        f"  store atomic i32 0, ptr {busy} release, align 4",
        "  ret void",
        "}",
    ]
    return "\n".join(lines)


def parallel_entry(kernel, threads: int) -> int | None:
    """Address of a variant of `kernel` (same signature) that splits its range over `threads`
    threads through the pool, or None when there is no pool for that many."""
    p = pool(threads)
    if p is None:
        return None
    cache = kernel.__dict__.setdefault("_parallel", {})
    key = (id(p), threads)
    addr = cache.get(key)
    if addr is None:
        packed = packed_entry(kernel)
        name = f"aclgen_parallel_{len(pycall._keep)}"
        # the pool must outlive code that names its context
        addr = cache[key] = _add(name, parallel_ir(name, kernel.address, packed, kernel.meta_layout.n_operands + 1, p), p)
    return addr
