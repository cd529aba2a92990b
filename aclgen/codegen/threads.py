"""A lean native thread pool: the tiling pass's thread split, run on all cores.

A Python ThreadPoolExecutor hand-off costs ~100 µs here, more than a 256K-element kernel runs,
so threads only paid for big calls. This pool's workers are ordinary daemon threads that enter
a native loop (LLVM IR, called through aclgen.codegen.pycall, GIL released) and never come
back to Python: they spin briefly, then sleep on a futex, waiting for a job number to change.
A launch writes each worker's argument vector, bumps the job number, wakes the workers, runs
its own share and waits (spin, then futex) for the others — a few microseconds in all.

Each kernel gets a "packed" entry `void packed(i64 *argv)` that unpacks
`argv = [pointers..., meta, begin, end]` and calls it, so workers need not know its arity.
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
MAX_ARGS = 16
# ctx layout (bytes): 0 job number (i32, futex), 64 finished workers (i32, futex),
# 128 packed entry to run (i64), 136 argument vectors (i64 address), 192 sleeping workers (i32),
# 256 main sleeping (i32): wakes are syscalls, made only when someone sleeps.
JOB, DONE, FN, ARGV, SLEEP_W, SLEEP_M, BUSY = 0, 64, 128, 136, 192, 256, 320


def _syscall() -> int:
    return ctypes.cast(ctypes.CDLL(None).syscall, ctypes.c_void_p).value


def _pool_ir() -> str:
    sc = f"inttoptr (i64 {_syscall()} to ptr)"
    return f"""
declare void @llvm.x86.sse2.pause()

define void @aclgen_worker(ptr %ctx, ptr %unused, i64 %w, i64 %unused2) {{
entry:
  %jobp = getelementptr i8, ptr %ctx, i64 {JOB}
  %donep = getelementptr i8, ptr %ctx, i64 {DONE}
  %fnp = getelementptr i8, ptr %ctx, i64 {FN}
  %argvp = getelementptr i8, ptr %ctx, i64 {ARGV}
  %sleepw = getelementptr i8, ptr %ctx, i64 {SLEEP_W}
  %sleepm = getelementptr i8, ptr %ctx, i64 {SLEEP_M}
  %first = load atomic i32, ptr %jobp acquire, align 4
  br label %wait
wait:
  %last = phi i32 [ %first, %entry ], [ %last, %sleep ], [ %job, %run ], [ %job, %wakemain ]
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
  %stop = icmp eq i32 %job, -1
  br i1 %stop, label %exit, label %run
run:
  %fn = load ptr, ptr %fnp, align 8
  %argv0 = load ptr, ptr %argvp, align 8
  %off = mul i64 %w, {MAX_ARGS * 8}
  %argv = getelementptr i8, ptr %argv0, i64 %off
  call void %fn(ptr %argv)
  %old = atomicrmw add ptr %donep, i32 1 seq_cst
  %msleeps = load atomic i32, ptr %sleepm seq_cst, align 4
  %mwake = icmp ne i32 %msleeps, 0
  br i1 %mwake, label %wakemain, label %wait
wakemain:
  %r2 = call i64 (i64, ...) {sc}(i64 {SYS_FUTEX}, ptr %donep, i32 {FUTEX_WAKE_PRIVATE}, i32 1, ptr null, ptr null, i32 0)
  br label %wait
exit:
  ret void
}}

define void @aclgen_launch(ptr %ctx, ptr %fn, ptr %argv, i64 %workers, i64 %unused) {{
entry:
  %jobp = getelementptr i8, ptr %ctx, i64 {JOB}
  %donep = getelementptr i8, ptr %ctx, i64 {DONE}
  %fnp = getelementptr i8, ptr %ctx, i64 {FN}
  %argvp = getelementptr i8, ptr %ctx, i64 {ARGV}
  %sleepw = getelementptr i8, ptr %ctx, i64 {SLEEP_W}
  %sleepm = getelementptr i8, ptr %ctx, i64 {SLEEP_M}
  store atomic i32 0, ptr %donep monotonic, align 4
  store ptr %fn, ptr %fnp, align 8
  store ptr %argv, ptr %argvp, align 8
  %old = atomicrmw add ptr %jobp, i32 1 seq_cst
  %wsleeps = load atomic i32, ptr %sleepw seq_cst, align 4
  %wwake = icmp ne i32 %wsleeps, 0
  br i1 %wwake, label %wakeworkers, label %work
wakeworkers:
  %r = call i64 (i64, ...) {sc}(i64 {SYS_FUTEX}, ptr %jobp, i32 {FUTEX_WAKE_PRIVATE}, i32 2147483647, ptr null, ptr null, i32 0)
  br label %work
work:
  %mine = mul i64 %workers, {MAX_ARGS * 8}
  %myargv = getelementptr i8, ptr %argv, i64 %mine
  call void %fn(ptr %myargv)
  %want = trunc i64 %workers to i32
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
  %m0 = atomicrmw add ptr %sleepm, i32 1 seq_cst
  %d2 = load atomic i32, ptr %donep seq_cst, align 4
  %all2 = icmp eq i32 %d2, %want
  br i1 %all2, label %awake, label %block
block:
  %r2 = call i64 (i64, ...) {sc}(i64 {SYS_FUTEX}, ptr %donep, i32 {FUTEX_WAIT_PRIVATE}, i32 %d2, ptr null, ptr null, i32 0)
  br label %awake
awake:
  %m1 = atomicrmw sub ptr %sleepm, i32 1 seq_cst
  br label %spin
exit:
  ret void
}}
"""


def packed_ir(name: str, kernel: int, n_ptrs: int) -> str:
    """`void name(i64 *argv)`: call the kernel at `kernel` with argv = [n_ptrs pointers, begin, end]."""
    body, args = [], []
    for i in range(n_ptrs + 2):
        body.append(f"  %a{i}p = getelementptr i64, ptr %argv, i64 {i}")
        body.append(f"  %a{i} = load i64, ptr %a{i}p, align 8")
        if i < n_ptrs:
            body.append(f"  %p{i} = inttoptr i64 %a{i} to ptr")
            args.append(f"ptr %p{i}")
        else:
            args.append(f"i64 %a{i}")
    body.append(f"  call void inttoptr (i64 {kernel} to ptr)({', '.join(args)})")
    return f"define void @{name}(ptr %argv) {{\n" + "\n".join(body) + "\n  ret void\n}\n"


class Pool:
    """`workers` native threads plus the caller; `run(packed, argv)` splits one launch."""

    def __init__(self, workers: int):
        self.workers = workers
        self.ctx = np.zeros(64, np.int64)
        self.ctx_ptr = self.ctx.ctypes.data
        self.lock = threading.Lock()
        self.pid = os.getpid()
        mod = _module(_pool_ir())
        engine = pycall._shared_engine()
        with pycall._lock:
            engine.add_module(mod)
            engine.finalize_object()
            worker = engine.get_function_address("aclgen_worker")
            launch = engine.get_function_address("aclgen_launch")
        pycall._keep.append(mod)
        self._worker = pycall.fastcall(worker, "iiii", "aclgen_worker")
        self.launch_address = launch
        self.launch = pycall.fastcall(launch, "iiiii", "aclgen_launch")
        self.threads = [
            threading.Thread(target=self._worker, args=(self.ctx_ptr, 0, w, 0), daemon=True, name=f"aclgen-{w}")
            for w in range(workers)
        ]
        for t in self.threads:
            t.start()

    def run(self, packed: int, argv: np.ndarray) -> bool:
        """Run `argv` (workers + 1 rows) on the pool; False (nothing run) when it is busy."""
        if not self.lock.acquire(blocking=False):
            return False
        try:
            self.launch(self.ctx_ptr, packed, argv.ctypes.data, self.workers, 0)
        finally:
            self.lock.release()
        return True


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


def packed_entry(kernel) -> int:
    """Address of the kernel's `packed(argv)` entry (made once per kernel)."""
    addr = getattr(kernel, "_packed", None)
    if addr is None:
        name = f"aclgen_packed_{len(pycall._keep)}"
        mod = _module(packed_ir(name, kernel.address, kernel.meta_layout.n_operands + 1))
        engine = pycall._shared_engine()
        with pycall._lock:
            engine.add_module(mod)
            engine.finalize_object()
            addr = engine.get_function_address(name)
            pycall._keep.append(mod)
        kernel._packed = addr
    return addr


def parallel_ir(name: str, kernel: int, packed: int, n_ptrs: int, p: Pool) -> str:
    """`name` has the kernel's own signature and runs [begin, end) on the pool: the caller takes
    the first chunk, worker w chunk w + 1 (chunks are multiples of 64 elements). If the pool is
    busy (another thread's launch), the caller runs the whole range itself."""
    rows = p.workers + 1
    params = ", ".join([f"ptr %p{i}" for i in range(n_ptrs)] + ["i64 %b", "i64 %e"])
    direct = ", ".join([f"ptr %p{i}" for i in range(n_ptrs)] + ["i64 %b", "i64 %e"])
    busy = p.ctx_ptr + BUSY
    lines = [
        f"define void @{name}({params}) {{",
        "entry:",
        f"  %prev = atomicrmw xchg ptr inttoptr (i64 {busy} to ptr), i32 1 acquire",
        "  %free = icmp eq i32 %prev, 0",
        "  br i1 %free, label %split, label %alone",
        "alone:",
        f"  call void inttoptr (i64 {kernel} to ptr)({direct})",
        "  ret void",
        "split:",
        f"  %argv = alloca [{rows * MAX_ARGS} x i64], align 64",
        "  %n = sub i64 %e, %b",
        f"  %n1 = add i64 %n, {rows - 1}",
        f"  %c0 = sdiv i64 %n1, {rows}",
        "  %c1 = add i64 %c0, 63",
        "  %chunk = and i64 %c1, -64",
    ]
    for r in range(rows):
        # row r runs chunk (r + 1) % rows: workers 0..W-1 take chunks 1..W, the caller chunk 0
        k = (r + 1) % rows
        lines += [
            f"  %lo{r}.raw = mul i64 %chunk, {k}",
            f"  %lo{r}.b = add i64 %b, %lo{r}.raw",
            f"  %lo{r}.c = icmp slt i64 %lo{r}.b, %e",
            f"  %lo{r} = select i1 %lo{r}.c, i64 %lo{r}.b, i64 %e",
            f"  %hi{r}.b = add i64 %lo{r}, %chunk",
            f"  %hi{r}.c = icmp slt i64 %hi{r}.b, %e",
            f"  %hi{r} = select i1 %hi{r}.c, i64 %hi{r}.b, i64 %e",
        ]
        for i in range(n_ptrs):
            lines += [
                f"  %s{r}.{i} = getelementptr i64, ptr %argv, i64 {r * MAX_ARGS + i}",
                f"  %v{r}.{i} = ptrtoint ptr %p{i} to i64",
                f"  store i64 %v{r}.{i}, ptr %s{r}.{i}, align 8",
            ]
        lines += [
            f"  %s{r}.lo = getelementptr i64, ptr %argv, i64 {r * MAX_ARGS + n_ptrs}",
            f"  store i64 %lo{r}, ptr %s{r}.lo, align 8",
            f"  %s{r}.hi = getelementptr i64, ptr %argv, i64 {r * MAX_ARGS + n_ptrs + 1}",
            f"  store i64 %hi{r}, ptr %s{r}.hi, align 8",
        ]
    lines += [
        f"  call void inttoptr (i64 {p.launch_address} to ptr)(ptr inttoptr (i64 {p.ctx_ptr} to ptr), "
        f"ptr inttoptr (i64 {packed} to ptr), ptr %argv, i64 {p.workers}, i64 0)",
        f"  store atomic i32 0, ptr inttoptr (i64 {busy} to ptr) release, align 4",
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
        mod = _module(parallel_ir(name, kernel.address, packed, kernel.meta_layout.n_operands + 1, p))
        engine = pycall._shared_engine()
        with pycall._lock:
            engine.add_module(mod)
            engine.finalize_object()
            addr = engine.get_function_address(name)
            pycall._keep.append((mod, p))  # the pool must outlive code that names its context
        cache[key] = addr
    return addr
