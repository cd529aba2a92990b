"""`aclgen bench`: aclgen against its CPU peers, side by side, in one process.

    aclgen bench                                   the table of issue 4 (see below), calls, compile
    aclgen bench hardswish_backward --sizes 1K,1M --dtypes float32 --rounds 5
    aclgen bench --json out.json --plot roofline.png

What runs. For every (operator, dtype, size) row each tool computes the same operator on the same
inputs into its own output:

| tool | what |
|---|---|
| `aclgen` | the numpy entry point `aclgen.ops.<op>(..., out=out)` |
| `numpy` | a straightforward vectorized numpy formula (fp16/bf16: computed in f32, cast on store) |
| `torch` | torch eager: `aten.hardswish_backward`, `aten.elu_backward(g, α, λ, 1, True, y)` for Selu, `aten.softshrink_backward`, `aten.threshold_backward`; SwiGluGrad as `cat(silu_backward(g·B, A), g·silu(A))` |
| `torch.compile` | the same functions through `torch.compile(dynamic=False)` (inductor, C++ on the CPU) |
| `numba` | an `@njit` loop over the elements (float32; fp16 when numba can) |
| `numba-prange` | the same loop as `@njit(parallel=True)` with `prange` |

Tools that are not installed, or cannot handle a dtype, are skipped with the reason recorded. Every
peer's output is compared with aclgen's after warm-up; a disagreement is reported (a peer that
computes something else would make its timing meaningless), never silently timed.

How it times. Warm-up first (compiles, first-touch of memory, calibration of the repetitions so a
sample lasts about `--target-ms`), then `--rounds` rounds; a round times one sample of every tool,
in an order that rotates from round to round, so slow drifts of a shared, noisy machine hit every
tool alike. A sample is the mean per call over its repetitions; a tool's time is the median of its
samples. The garbage collector is off while timing. Each sample follows `SETTLE_S` (50 ms) of
untimed calls of the same tool: OpenMP runtimes (torch, numba prange) keep their worker threads
spinning for up to tens of milliseconds after a parallel region, and on a two-core machine those
threads slow whichever tool runs next (measured: aclgen's 1M calls at 1.4x their time for 40 ms
after torch's); idling instead lets the cores drop to a slow state that takes ~20-40 ms to
leave (2x slower samples right after a pause). The lead-in times each tool on warm cores of its
own.

Bandwidth. Bytes per call = inputs + output (each read or written once; write-allocate traffic is
not counted, as in STREAM). The reference is a triad `a = b + s·c` over float32 arrays of the same
total size, timed in the same rounds with numpy and, where installed, numba prange and torch
(multi-threaded); the best of them is the triad bandwidth, and each tool's GB/s is also reported as
a fraction of it.

Sizes are elements of the output (1K = 1024); SwiGluGrad's size is that of yGrad (x and out have 2N).
Without --sizes and --dtypes the matrix is issue 4's: float32 at 1K, 64K, 1M, 16M and float16,
bfloat16 at 1M; giving either option runs the full product of the two lists.

`calls` times the small-call costs at 1K float32 (an `aclgen.ops` call, a repeatable aclnn
executor re-run, the full two-phase call). `compile` times a new kernel variant compiled cold, the
peers' compile times (numba parallel njit, torch.compile), and a fresh process's first call when
its kernels are in the on-disk cache (`ACLGEN_CACHE_DIR`; median of `WARM_RUNS` processes).
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from aclgen.knobs import overridden

TOOLS = ("aclgen", "numpy", "torch", "torch.compile", "numba", "numba-prange")
PEERS = TOOLS[1:]
PARTS = ("table", "calls", "compile")
DEFAULT_SIZES = "1K,64K,1M,16M"
DEFAULT_DTYPES = "float32,float16,bfloat16"
# Issue 4's matrix: float32 at every size, the half types at 1M.
ISSUE_MATRIX = [("float32", n) for n in (1 << 10, 1 << 16, 1 << 20, 1 << 24)] + [
    ("float16", 1 << 20),
    ("bfloat16", 1 << 20),
]
PARAMS = {"lambd": 0.5, "threshold": 0.5}
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
SIMPLE_OPS = ("hardswish_backward", "selu_backward", "softshrink_backward", "threshold_backward")

# Issue 4's targets (ratios are best-peer time / aclgen time: > 1 means aclgen is faster).
TARGETS = {
    "ratio_16M_simple": 1.2,
    "ratio_16M_swi_glu_grad": 2.5,
    "ratio_64K_1M": 1.0,
    "ratio_half_vs_torch": 2.0,
    "ops_call_us": 2.0,
    "executor_rerun_us": 1.5,
    "two_phase_us": 6.0,
    "compile_ms": 150.0,
    "warm_start_ms": 150.0,
}


class Skip(Exception):
    """A tool cannot run this row (not installed, dtype unsupported); the message says why."""


def _user_error(message: str) -> Exception:
    from aclgen.tools import UsageError

    return UsageError(message)


# -- arguments ----------------------------------------------------------------------------------


def parse_size(text: str) -> int:
    """`1K` = 1024, `64k`, `1M` = 2**20, `16M`, `1G`, or a plain number of elements."""
    t = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    digits = t[:-1] if scale > 1 else t
    try:
        n = int(digits) * scale
    except ValueError:
        raise _user_error(f"bad size {text!r}: write elements like 1024, 1K, 64K, 1M, 16M") from None
    if n < 2:
        raise _user_error(f"bad size {text!r}: need at least 2 elements")
    return n


def size_label(n: int) -> str:
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def _list(spec: str) -> list[str]:
    return [s.strip() for s in spec.split(",") if s.strip()]


def matrix(sizes: str | None, dtypes: str | None) -> list[tuple[str, int]]:
    """(dtype name, size) pairs to run: issue 4's matrix unless a list was given."""
    from aclgen import dtypes as dt

    if sizes is None and dtypes is None:
        return list(ISSUE_MATRIX)
    names = []
    for name in _list(dtypes or DEFAULT_DTYPES):
        try:
            d = dt.dtype(name)
        except ValueError as exc:
            raise _user_error(str(exc)) from None
        if not d.is_float:
            raise _user_error(f"--dtypes: {d.name}: the benchmark covers the float types (float32, float16, bfloat16)")
        names.append(d.name)
    return [(d, n) for d in names for n in (parse_size(s) for s in _list(sizes or DEFAULT_SIZES))]


def operators(names: Sequence[str]) -> list:
    from aclgen.ops import OPERATORS

    if not names:
        return list(OPERATORS.values())
    by_aclnn = {op.name.lower(): op for op in OPERATORS.values()}
    out = []
    for name in names:
        op = OPERATORS.get(name.replace("-", "_")) or by_aclnn.get(name.lower().removeprefix("aclnn"))
        if op is None:
            raise _user_error(f"unknown operator {name!r}; known: {', '.join(OPERATORS)}")
        out.append(op)
    return out


def tools(spec: str | None) -> list[str]:
    if spec is None:
        return list(TOOLS)
    chosen = _list(spec)
    for t in chosen:
        if t not in TOOLS:
            raise _user_error(f"--tools: unknown tool {t!r}; known: {', '.join(TOOLS)}")
    return ["aclgen"] + [t for t in TOOLS[1:] if t in chosen]  # aclgen is what is measured


def parts(spec: str | None) -> list[str]:
    chosen = _list(spec) if spec is not None else list(PARTS)
    for p in chosen:
        if p not in PARTS:
            raise _user_error(f"--parts: unknown part {p!r}; known: {', '.join(PARTS)}")
    return chosen


# -- optional peers -----------------------------------------------------------------------------


def _torch():
    try:
        import torch
    except ImportError:
        raise Skip("torch is not installed") from None
    return torch


def _numba():
    try:
        import numba
    except ImportError:
        raise Skip("numba is not installed") from None
    return numba


def versions() -> dict[str, str | None]:
    import importlib.metadata as md

    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in ("aclgen", "numpy", "llvmlite", "xdsl", "torch", "numba", "matplotlib"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = None
    return out


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    flags: set[str] = set()
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and cpu in ("", platform.machine()):
                    cpu = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    info = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "features": [f for f in ("avx2", "fma", "f16c", "avx512f", "avx512bf16") if f in flags],
        "os": platform.platform(),
    }
    with contextlib.suppress(Exception):
        from aclgen.codegen.target import host

        info["llvm_cpu"] = host().cpu
        info["f32_lanes"] = host().f32_lanes
    with contextlib.suppress(Exception):
        from aclgen.knobs import knobs

        info["aclgen_knobs"] = knobs().as_dict()
    return info


# -- problems and implementations ---------------------------------------------------------------


@dataclass
class Problem:
    """One row's inputs: numpy arrays in the row's dtype, 1-D (the launcher merges dims anyway)."""

    op: object
    dtype: object  # aclgen.dtypes.DType
    n: int  # output elements of the simple ops; yGrad's for SwiGluGrad
    inputs: list[np.ndarray]
    params: list[float]
    out_shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.inputs) + int(np.prod(self.out_shape)) * self.dtype.np_dtype.itemsize

    def empty_out(self) -> np.ndarray:
        out = np.empty(self.out_shape, self.dtype.np_dtype)
        out.fill(0)  # first touch outside the timing
        return out


def make_problem(op, dtype, n: int, seed: int = 0) -> Problem:
    rng = np.random.default_rng(seed)

    def rand(k: int) -> np.ndarray:
        return (rng.standard_normal(k, dtype=np.float32) * 4).astype(dtype.np_dtype)

    if op.python_name == "swi_glu_grad":
        return Problem(op, dtype, n, [rand(n), rand(2 * n)], [], (2 * n,))
    params = [PARAMS[p.name] for p in op.params]
    return Problem(op, dtype, n, [rand(n) for _ in op.inputs], params, (n,))


def _aclgen_impl(p: Problem, out: np.ndarray) -> Callable[[], object]:
    import aclgen.ops as ops

    entry = getattr(ops, p.op.python_name)
    if p.op.python_name == "swi_glu_grad":
        g, x = p.inputs
        return lambda: entry(g, x, -1, out=out)
    args = [*p.inputs, *p.params]
    return lambda: entry(*args, out=out)


def _numpy_formula(name: str, params: Sequence[float]) -> Callable:
    """The operator in plain float32 numpy (SPEC.md §4), written as one would for a peer."""
    f32 = np.float32
    if name == "hardswish_backward":
        third, half, three = f32(1 / 3), f32(0.5), f32(3)
        return lambda g, x: np.where(x < -three, f32(0), np.where(x <= three, g * (x * third + half), g))
    if name == "selu_backward":
        scale, sa = f32(SELU_SCALE), f32(SELU_SCALE * SELU_ALPHA)
        return lambda g, y: np.where(y <= 0, g * (y + sa), g * scale)
    if name == "softshrink_backward":
        lambd = f32(params[0])
        return lambda g, x: np.where(np.abs(x) <= lambd, f32(0), g)
    if name == "threshold_backward":
        t = f32(params[0])
        return lambda g, x: np.where(x <= t, f32(0), g)
    raise KeyError(name)


def _numpy_impl(p: Problem, out: np.ndarray) -> Callable[[], object]:
    f32 = np.float32
    widen = p.dtype.np_dtype != np.dtype(np.float32)
    ins = p.inputs
    if p.op.python_name == "swi_glu_grad":
        n = p.n
        one = f32(1)

        def swiglu() -> None:
            g, x = (a.astype(f32) for a in ins) if widen else ins
            a, b = x[:n], x[n:]
            with np.errstate(over="ignore"):
                s = one / (one + np.exp(-a))
            out[:n] = g * b * (s + s * (one - s) * a)
            out[n:] = g * s * a

        return swiglu
    formula = _numpy_formula(p.op.python_name, p.params)

    def simple() -> None:
        args = [a.astype(f32) for a in ins] if widen else ins
        out[...] = formula(*args)

    return simple


def _to_torch(torch, a: np.ndarray):
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _from_torch(torch, t, like: np.ndarray) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().view(like.dtype)
    return t.numpy()


def _torch_function(torch, name: str, params: Sequence[float]) -> Callable:
    aten = torch.ops.aten
    if name == "hardswish_backward":
        return lambda g, x: aten.hardswish_backward(g, x)
    if name == "selu_backward":
        return lambda g, y: aten.elu_backward(g, SELU_ALPHA, SELU_SCALE, 1.0, True, y)
    if name == "softshrink_backward":
        lambd = params[0]
        return lambda g, x: aten.softshrink_backward(g, x, lambd)
    if name == "threshold_backward":
        t = params[0]
        return lambda g, x: aten.threshold_backward(g, x, t)
    if name == "swi_glu_grad":
        silu = torch.nn.functional.silu

        def swiglu(g, x):
            a, b = x.chunk(2, dim=-1)
            return torch.cat([aten.silu_backward(g * b, a), g * silu(a)], dim=-1)

        return swiglu
    raise KeyError(name)


class _TorchCall:
    """A torch peer: the functional call (torch allocates its result, as eager code does)."""

    def __init__(self, torch, fn: Callable, p: Problem, out: np.ndarray):
        self.torch, self.fn, self.out = torch, fn, out
        self.args = [_to_torch(torch, a) for a in p.inputs]
        self.result = None

    def __call__(self) -> None:
        self.result = self.fn(*self.args)

    def fetch(self) -> np.ndarray:
        self()
        return _from_torch(self.torch, self.result, self.out)


def _torch_impl(p: Problem, out: np.ndarray) -> Callable[[], object]:
    torch = _torch()
    return _TorchCall(torch, _torch_function(torch, p.op.python_name, p.params), p, out)


def _torch_compile_impl(p: Problem, out: np.ndarray) -> Callable[[], object]:
    torch = _torch()
    # The functions of every row share code objects, and dynamo stops recompiling one after
    # cache_size_limit variants (falling back to eager, silently): start each row afresh.
    torch._dynamo.reset()
    fn = torch.compile(_torch_function(torch, p.op.python_name, p.params), dynamic=False)
    return _TorchCall(torch, fn, p, out)


_NUMBA_KERNELS: dict[bool, dict[str, Callable]] = {}


def numba_kernels(parallel: bool) -> dict[str, Callable]:
    """The operators as numba loops (f32 constants, so float32 stays float32)."""
    if parallel in _NUMBA_KERNELS:
        return _NUMBA_KERNELS[parallel]
    numba = _numba()
    loop = numba.prange if parallel else range
    jit = numba.njit(parallel=parallel, fastmath=False, cache=False)
    f32 = np.float32
    zero, one, half, three, third = f32(0), f32(1), f32(0.5), f32(3), f32(1 / 3)
    scale, sa = f32(SELU_SCALE), f32(SELU_SCALE * SELU_ALPHA)

    @jit
    def hardswish_backward(g, x, out):
        for i in loop(x.size):
            xi = x[i]
            out[i] = zero if xi < -three else (g[i] * (xi * third + half) if xi <= three else g[i])

    @jit
    def selu_backward(g, y, out):
        for i in loop(y.size):
            yi = y[i]
            out[i] = g[i] * (yi + sa) if yi <= zero else g[i] * scale

    @jit
    def softshrink_backward(g, x, lambd, out):
        for i in loop(x.size):
            out[i] = zero if abs(x[i]) <= lambd else g[i]

    @jit
    def threshold_backward(g, x, t, out):
        for i in loop(x.size):
            out[i] = zero if x[i] <= t else g[i]

    @jit
    def swi_glu_grad(g, x, out):
        n = g.size
        for i in loop(n):
            a, b, gi = x[i], x[n + i], g[i]
            s = one / (one + np.exp(-a))
            out[i] = gi * b * (s + s * (one - s) * a)
            out[n + i] = gi * s * a

    kernels = {
        "hardswish_backward": hardswish_backward,
        "selu_backward": selu_backward,
        "softshrink_backward": softshrink_backward,
        "threshold_backward": threshold_backward,
        "swi_glu_grad": swi_glu_grad,
    }
    _NUMBA_KERNELS[parallel] = kernels
    return kernels


def _numba_impl(parallel: bool) -> Callable:
    def build(p: Problem, out: np.ndarray) -> Callable[[], object]:
        if p.dtype.name not in ("float32", "float16"):
            raise Skip(f"numba has no {p.dtype.name}")
        kernel = numba_kernels(parallel)[p.op.python_name]
        args = [*p.inputs, *(np.float32(v) for v in p.params), out]
        try:
            kernel(*args)  # compile now: an unsupported dtype is a skip, not a crash
        except Exception as exc:
            raise Skip(f"numba cannot compile these loops for {p.dtype.name} ({type(exc).__name__})") from None
        return lambda: kernel(*args)

    return build


IMPLS: dict[str, Callable[[Problem, np.ndarray], Callable[[], object]]] = {
    "aclgen": _aclgen_impl,
    "numpy": _numpy_impl,
    "torch": _torch_impl,
    "torch.compile": _torch_compile_impl,
    "numba": _numba_impl(False),
    "numba-prange": _numba_impl(True),
}


# -- timing -------------------------------------------------------------------------------------


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def calibrate(fn: Callable[[], object], target_s: float, max_reps: int = 1 << 20) -> int:
    """Repetitions so that one sample lasts about `target_s` (fn already warmed up)."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
        if best > target_s:
            return 1
    reps = 1
    while True:  # cheap calls: time a batch, the clock's resolution is no longer an issue
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        dt = time.perf_counter() - t
        if dt > 1e-3 or reps >= max_reps:
            return max(1, min(max_reps, int(target_s * reps / max(dt, 1e-9))))
        reps *= 10


def sample(fn: Callable[[], object], reps: int) -> float:
    """Seconds per call over one batch of `reps` calls."""
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) / reps


SETTLE_S = 0.05  # untimed calls before each sample: the previous tool's threads quiet down


def lead_in(fn: Callable[[], object], seconds: float) -> None:
    """Call `fn` untimed for about `seconds` (at least once)."""
    end = time.perf_counter() + seconds
    fn()
    while time.perf_counter() < end:
        fn()



def interleaved(fns: dict[str, Callable[[], object]], rounds: int, target_s: float) -> dict[str, list[float]]:
    """Per-call seconds of each function, one sample per round, rotating the order each round,
    each sample after `SETTLE_S` of untimed calls."""
    reps = {name: calibrate(fn, target_s) for name, fn in fns.items()}
    names = list(fns)
    samples: dict[str, list[float]] = {name: [] for name in names}
    with _no_gc():
        for r in range(rounds):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                lead_in(fns[name], SETTLE_S)
                samples[name].append(sample(fns[name], reps[name]))
    return samples


def median_us(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1e6


# -- the triad ----------------------------------------------------------------------------------


@functools.cache
def _numba_triad() -> Callable:
    numba = _numba()

    @numba.njit(parallel=True)
    def triad(a, b, c, s):
        for i in numba.prange(a.size):
            a[i] = b[i] + s * c[i]

    return triad


def triad_impls(n: int, chosen: Sequence[str]) -> dict[str, Callable[[], object]]:
    """`a = b + s*c` on n float32 elements: numpy (two passes, one thread) and multi-threaded peers."""
    b = np.full(n, 1.5, np.float32)
    c = np.full(n, 0.25, np.float32)
    a = np.zeros(n, np.float32)
    s = np.float32(3.0)
    t = np.empty(n, np.float32)
    t.fill(0)

    def numpy_triad() -> None:
        np.multiply(c, s, out=t)
        np.add(b, t, out=a)

    impls: dict[str, Callable[[], object]] = {"triad numpy": numpy_triad}
    if "numba-prange" in chosen:
        with contextlib.suppress(Skip):
            triad = _numba_triad()
            triad(a, b, c, s)
            impls["triad numba-prange"] = lambda: triad(a, b, c, s)
    if "torch" in chosen:
        with contextlib.suppress(Skip):
            torch = _torch()
            ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c)
            impls["triad torch"] = lambda: torch.add(tb, tc, alpha=3.0, out=ta)
    for fn in impls.values():
        fn()
    return impls


# -- one row ------------------------------------------------------------------------------------


@dataclass
class Row:
    op: str
    dtype: str
    size: int
    nbytes: int
    us: dict[str, float] = field(default_factory=dict)
    samples_us: dict[str, list[float]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    mismatch: dict[str, str] = field(default_factory=dict)
    triad_gbps: float | None = None
    triad_tool: str | None = None
    error: str | None = None

    def gbps(self, tool: str) -> float | None:
        us = self.us.get(tool)
        return None if not us else self.nbytes / (us * 1e3)

    def best_peer(self) -> tuple[str, float] | None:
        peers = [(us, t) for t, us in self.us.items() if t != "aclgen" and t not in self.mismatch]
        if not peers:
            return None
        us, t = min(peers)
        return t, us

    def ratio(self, peer: str | None = None) -> float | None:
        """Peer time / aclgen time (> 1: aclgen is faster); the best peer unless one is named."""
        if "aclgen" not in self.us:
            return None
        if peer is None:
            best = self.best_peer()
            return None if best is None else best[1] / self.us["aclgen"]
        return self.us[peer] / self.us["aclgen"] if peer in self.us else None

    def ratio_of_minima(self) -> float | None:
        """The ratio from each tool's fastest sample: what a quiet machine would show, roughly
        (load slows the multi-threaded tools' medians most)."""
        mins = {t: min(v) for t, v in self.samples_us.items() if v and t not in self.mismatch}
        peers = [us for t, us in mins.items() if t != "aclgen"]
        return min(peers) / mins["aclgen"] if peers and "aclgen" in mins else None

    def as_dict(self) -> dict:
        best = self.best_peer()
        return {
            "op": self.op,
            "dtype": self.dtype,
            "size": self.size,
            "size_label": size_label(self.size),
            "bytes": self.nbytes,
            "us": self.us,
            "min_us": {t: min(v) for t, v in self.samples_us.items()},
            "samples_us": self.samples_us,
            "gbps": {t: self.gbps(t) for t in self.us},
            "triad_gbps": self.triad_gbps,
            "triad_tool": self.triad_tool,
            "triad_fraction": {t: (self.gbps(t) / self.triad_gbps if self.triad_gbps else None) for t in self.us},
            "best_peer": best[0] if best else None,
            "best_peer_us": best[1] if best else None,
            "ratio": self.ratio(),
            "ratio_of_minima": self.ratio_of_minima(),
            "ratio_vs_torch": self.ratio("torch"),
            "skipped": self.skipped,
            "mismatch": self.mismatch,
            "error": self.error,
        }


def _tolerance(dtype_name: str, op_name: str) -> tuple[float, float]:
    """(rtol, atol) for peers that round differently (x/3 vs x·f32(1/3), another exp): loose enough
    for that, tight enough to catch a peer that computes another formula."""
    if dtype_name == "float32":
        return 2e-5, 1e-6
    return 1e-2, 1e-3  # about one half-type ulp


def known_differences(p: Problem) -> np.ndarray | None:
    """Elements where SPEC.md deliberately differs from the peers: HardswishBackward's slope covers
    both ends, x = ±3 (torch: 0 at -3, g at 3). Random fp16/bf16 data hits ±3 exactly."""
    if p.op.python_name != "hardswish_backward":
        return None
    return np.abs(p.inputs[1].astype(np.float32)) == 3


def term_sizes(p: Problem) -> np.ndarray | None:
    """SwiGluGrad's error scale S of SPEC.md §4.4 per output element (S_A = |g·B|·σ·(1+|A|),
    S_B = |g·σ·A|): out_A cancels where σ + σ(1-σ)·A ≈ 0, so a relative tolerance cannot work there."""
    if p.op.python_name != "swi_glu_grad":
        return None
    g, x = (a.astype(np.float64) for a in p.inputs)
    a, b = x[: p.n], x[p.n :]
    with np.errstate(over="ignore"):
        s = 1 / (1 + np.exp(-a))
    return np.concatenate([np.abs(g * b) * s * (1 + np.abs(a)), np.abs(g * s * a)])


def _agree(ours: np.ndarray, theirs: np.ndarray, dtype_name: str, op_name: str,
           ignore: np.ndarray | None = None, sizes: np.ndarray | None = None) -> str | None:
    """None when two tools computed the same result, else a short description. `ignore` masks
    elements where SPEC.md differs from the peers on purpose; `sizes` (SwiGluGrad's S) widens the
    tolerance by 64·2⁻²⁴·S: SPEC allows 8·2⁻²⁴·S to aclgen, and a peer's exp may be less exact."""
    a, b = np.asarray(ours, np.float32).ravel(), np.asarray(theirs).astype(np.float32).ravel()
    if a.shape != b.shape:
        return f"shape {b.shape} instead of {a.shape}"
    rtol, atol = _tolerance(dtype_name, op_name)
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    if sizes is not None:
        with np.errstate(invalid="ignore"):
            close |= np.abs(a.astype(np.float64) - b) <= 64 * 2.0**-24 * sizes.ravel()
    if ignore is not None:
        close |= ignore.ravel()
    bad = int((~close).sum())
    if bad == 0:
        return None
    i = int(np.argmax(~close))
    return f"{bad} of {a.size} elements differ from aclgen's (e.g. [{i}]: {b[i]!r} vs {a[i]!r})"


def run_row(op, dtype, n: int, chosen: Sequence[str], rounds: int, target_s: float, triad_cache: dict) -> Row:
    p = make_problem(op, dtype, n)
    row = Row(op.python_name, dtype.name, n, p.nbytes)
    fns: dict[str, Callable[[], object]] = {}
    outs: dict[str, np.ndarray] = {}
    for tool in chosen:
        out = p.empty_out()
        try:
            fn = IMPLS[tool](p, out)
            fn()  # warm up: compile, first touch
            fetch = getattr(fn, "fetch", None)
            outs[tool] = fetch() if fetch is not None else out
            fns[tool] = fn
        except Skip as exc:
            row.skipped[tool] = str(exc)
        except Exception as exc:
            if tool == "aclgen":
                row.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
                return row
            row.skipped[tool] = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    for tool, result in outs.items():
        if tool != "aclgen":
            why = _agree(outs["aclgen"], result, dtype.name, op.python_name, known_differences(p), term_sizes(p))
            if why is not None:
                row.mismatch[tool] = why
    n_triad = max(2, p.nbytes // 12)
    if n_triad not in triad_cache:
        triad_cache[n_triad] = triad_impls(n_triad, chosen)
    triads = triad_cache[n_triad]
    try:
        samples = interleaved({**fns, **triads}, rounds, target_s)
    except Exception as exc:  # a tool that ran at warm-up and fails later: keep the other rows
        row.error = f"while timing: {_one_line(exc)}"
        return row
    for tool in fns:
        row.samples_us[tool] = [s * 1e6 for s in samples[tool]]
        row.us[tool] = median_us(samples[tool])
    triad_gbps = {name: 12 * n_triad / (median_us(samples[name]) * 1e3) for name in triads}
    row.triad_tool, row.triad_gbps = max(triad_gbps.items(), key=lambda kv: kv[1])
    return row


# -- small calls --------------------------------------------------------------------------------


def small_calls(chosen: Sequence[str], rounds: int, target_s: float, n: int = 1024) -> dict:
    """The Python-side cost of one call at n float32 elements, aclgen's three ways and the peers'."""
    import aclgen.acl as acl
    import aclgen.aclnn as aclnn
    import aclgen.ops as ops

    rng = np.random.default_rng(0)
    g = (rng.standard_normal(n, dtype=np.float32) * 4).astype(np.float32)
    x = (rng.standard_normal(n, dtype=np.float32) * 4).astype(np.float32)
    out = np.zeros_like(g)
    tg, tx, tout = acl.from_numpy(g), acl.from_numpy(x), acl.from_numpy(out)

    def two_phase() -> None:
        ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(tg, tx, tout)
        aclnn.aclnnHardswishBackward(None, ws, ex, None)

    ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(tg, tx, tout)
    if ret != 0 or aclnn.aclSetAclOpExecutorRepeatable(ex) != 0:
        raise RuntimeError(f"aclnn setup failed: {acl.get_recent_err_msg()}")
    fns: dict[str, Callable[[], object]] = {
        "aclgen.ops call": lambda: ops.hardswish_backward(g, x, out=out),
        "aclnn executor re-run (repeatable)": lambda: aclnn.aclnnHardswishBackward(None, ws, ex, None),
        "aclnn two-phase call": two_phase,
    }
    targets = {
        "aclgen.ops call": TARGETS["ops_call_us"],
        "aclnn executor re-run (repeatable)": TARGETS["executor_rerun_us"],
        "aclnn two-phase call": TARGETS["two_phase_us"],
    }
    from aclgen import dtypes as dt

    p = Problem(ops.OPERATORS["hardswish_backward"], dt.float32, n, [g, x], [], (n,))
    skipped = {}
    for tool in chosen[1:]:
        if tool == "torch.compile":
            continue  # the same kernel as in the table's 1K rows, where it is timed
        try:
            fns[f"{tool} (peer)"] = IMPLS[tool](p, np.zeros_like(g))
        except Skip as exc:
            skipped[tool] = str(exc)
    for fn in fns.values():
        fn()
    samples = interleaved(fns, rounds, target_s)
    aclnn.aclDestroyAclOpExecutor(ex)
    rows = [
        {"name": name, "us": median_us(samples[name]), "samples_us": [s * 1e6 for s in samples[name]],
         "target_us": targets.get(name)}
        for name in fns
    ]
    return {"op": "hardswish_backward", "dtype": "float32", "size": n, "rows": rows, "skipped": skipped}


# -- compile times ------------------------------------------------------------------------------

_WARM_START = r"""
import json, sys, time
import numpy as np
t0 = time.perf_counter()
import aclgen.ops as ops
g = np.ones(1024, np.float32); o = np.empty_like(g)
ops.hardswish_backward(g, g, out=o)
t1 = time.perf_counter()
print(json.dumps({"ms": (t1 - t0) * 1e3, "xdsl_imported": any(m == "xdsl" or m.startswith("xdsl.") for m in sys.modules)}))
"""


def aclgen_compile_ms(ops_: Sequence, reps: int) -> list[dict]:
    """A new variant (float32, rank 1, contiguous) compiled cold: no in-memory or on-disk cache."""
    from aclgen import dtypes as dt
    from aclgen.compiler import Options, compile_variant

    rows = []
    with tempfile.TemporaryDirectory(prefix="aclgen-bench-cache-") as cache_dir:
        with overridden(ACLGEN_ALWAYS_COMPILE="1", ACLGEN_CACHE_DIR=cache_dir):
            for op in ops_:
                variant = op.variant((dt.float32,))
                times, stages = [], {}
                for _ in range(reps):
                    t = time.perf_counter()
                    kernel = compile_variant(op.formula, op.python_name, variant, op.params, op.kernel_arg_names,
                                             Options.from_knobs())
                    times.append((time.perf_counter() - t) * 1e3)
                    stages = {k: v * 1e3 for k, v in getattr(kernel, "seconds", {}).items()}
                rows.append({"tool": "aclgen", "op": op.python_name, "ms": statistics.median(times), "samples_ms": times,
                             "stages_ms": stages})
    return rows


def numba_compile_ms(reps: int) -> list[dict]:
    """numba: a fresh dispatcher of the hardswish loop, compiled by its first call (1K float32)."""
    numba = _numba()
    g = np.ones(1024, np.float32)
    out = np.empty_like(g)
    third, half, three, zero = np.float32(1 / 3), np.float32(0.5), np.float32(3), np.float32(0)
    rows = []
    for parallel, name in ((False, "numba"), (True, "numba-prange")):
        loop = numba.prange if parallel else range

        def hardswish(g, x, out):
            for i in loop(x.size):
                xi = x[i]
                out[i] = zero if xi < -three else (g[i] * (xi * third + half) if xi <= three else g[i])

        numba.njit(parallel=parallel)(hardswish)(g, g, out)  # the first compile loads numba's own parts
        times = []
        for _ in range(reps):
            fn = numba.njit(parallel=parallel)(hardswish)
            t = time.perf_counter()
            fn(g, g, out)
            times.append((time.perf_counter() - t) * 1e3)
        rows.append({"tool": name, "op": "hardswish_backward", "ms": statistics.median(times), "samples_ms": times})
    return rows


def torch_compile_ms(reps: int) -> list[dict]:
    """torch.compile: dynamo reset, FX graph cache off, first call at 1K float32. Each compile gets
    its own constant (a scale just above 1, fused into the kernel), so inductor's in-memory and
    on-disk code caches cannot serve it: every sample generates and compiles C++ anew."""
    torch = _torch()
    g = torch.ones(1024)
    hardswish_backward = torch.ops.aten.hardswish_backward
    salt = int(time.time()) % 100_000  # different kernel sources from one run to the next too
    times = []
    with torch._inductor.config.patch(fx_graph_cache=False):
        for i in range(reps + 1):
            torch._dynamo.reset()
            scope = {"hardswish_backward": hardswish_backward}  # the constant as a literal in the source
            exec(f"def fn(a, b):\n    return hardswish_backward(a, b) * {1.0 + (salt * 16 + i) * 2.0**-40!r}", scope)
            fn = scope["fn"]
            compiled = torch.compile(fn, dynamic=False)
            t = time.perf_counter()
            compiled(g, g)
            if i:  # the first also loads inductor itself
                times.append((time.perf_counter() - t) * 1e3)
        torch._dynamo.reset()
    return [{"tool": "torch.compile", "op": "hardswish_backward", "ms": statistics.median(times), "samples_ms": times}]


WARM_RUNS = 5  # fresh processes with the kernels on disk; the median is reported


def warm_start() -> dict:
    """A fresh process: `import aclgen` to the end of its first call, once with a cold disk cache,
    then WARM_RUNS times with a warm one (median ms; every run's ms in `samples_ms`)."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="aclgen-bench-cache-") as cache_dir:
        # Python's own bytecode cache as an installed package has it (written by the first process,
        # into the temporary directory), even where PYTHONDONTWRITEBYTECODE is set: without it every
        # process compiles aclgen's modules from source again (~40 ms here)
        env = {**os.environ, "ACLGEN_CACHE_DIR": cache_dir, "PYTHONPYCACHEPREFIX": os.path.join(cache_dir, "pyc")}
        env.pop("ACLGEN_ALWAYS_COMPILE", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for _ in range(1 + WARM_RUNS):
            r = subprocess.run([sys.executable, "-c", _WARM_START], capture_output=True, text=True, env=env, timeout=600)
            if r.returncode != 0:
                return {"error": (r.stderr.strip().splitlines() or ["failed"])[-1]}
            runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    warm = runs[1:]
    return {
        "cold_cache": runs[0],
        "warm_cache": {
            "ms": statistics.median(w["ms"] for w in warm),
            "samples_ms": [w["ms"] for w in warm],
            "xdsl_imported": any(w["xdsl_imported"] for w in warm),
        },
    }


def compile_times(ops_: Sequence, chosen: Sequence[str], reps: int) -> dict:
    result: dict = {"aclgen": aclgen_compile_ms(ops_, reps), "peers": [], "skipped": {}}
    if "numba" in chosen or "numba-prange" in chosen:
        try:
            result["peers"] += numba_compile_ms(reps)
        except Skip as exc:
            result["skipped"]["numba"] = str(exc)
    if "torch.compile" in chosen:
        try:
            result["peers"] += torch_compile_ms(reps)
        except Skip as exc:
            result["skipped"]["torch.compile"] = str(exc)
    result["warm_start"] = warm_start()
    return result


# -- targets and report -------------------------------------------------------------------------


def targets(result: dict) -> list[dict]:
    """Issue 4's targets that this run measured, each with its number and whether it is met."""
    out: list[dict] = []

    def add(what: str, value: float | None, goal: float, higher_is_better: bool, unit: str) -> None:
        if value is None:
            return
        met = value >= goal if higher_is_better else value <= goal
        out.append({"target": what, "value": value, "goal": goal, "unit": unit, "met": met,
                    "higher_is_better": higher_is_better})

    for r in result.get("rows", []):
        ratio = r["ratio"]
        peer = f"{r['best_peer']} {r['best_peer_us']:.1f} us" if r["best_peer"] else ""
        if r.get("ratio_of_minima") is not None:
            peer += f"; of minima {r['ratio_of_minima']:.2f}x"
        where = f"{r['op']} {r['dtype']} {r['size_label']}"
        if r["dtype"] == "float32" and r["size"] == 1 << 24:
            goal = TARGETS["ratio_16M_swi_glu_grad"] if r["op"] == "swi_glu_grad" else TARGETS["ratio_16M_simple"]
            add(f"{where}: x vs best peer ({peer})", ratio, goal, True, "x")
        elif r["dtype"] == "float32" and r["size"] in (1 << 16, 1 << 20):
            add(f"{where}: x vs best peer ({peer})", ratio, TARGETS["ratio_64K_1M"], True, "x")
        elif r["dtype"] in ("float16", "bfloat16") and r["size"] == 1 << 20:
            add(f"{where}: x vs torch eager", r["ratio_vs_torch"], TARGETS["ratio_half_vs_torch"], True, "x")
    calls = result.get("calls") or {}
    for c in calls.get("rows", []):
        if c.get("target_us") is not None:
            add(f"{c['name']} at 1K float32", c["us"], c["target_us"], False, "us")
    comp = result.get("compile") or {}
    for c in comp.get("aclgen", []):
        add(f"compile a new variant cold ({c['op']} float32)", c["ms"], TARGETS["compile_ms"], False, "ms")
    warm = (comp.get("warm_start") or {}).get("warm_cache")
    if warm:
        add("fresh process, disk cache warm: import aclgen to first call", warm["ms"], TARGETS["warm_start_ms"], False, "ms")
        out.append({"target": "fresh process, disk cache warm: xDSL stays unimported",
                    "value": "xDSL imported" if warm["xdsl_imported"] else "xDSL not imported",
                    "goal": False, "unit": "", "met": not warm["xdsl_imported"], "higher_is_better": False})
    return out


def _fmt_us(us: float | None) -> str:
    if us is None:
        return "-"
    return f"{us:,.0f}" if us >= 1000 else f"{us:.1f}" if us >= 10 else f"{us:.2f}"


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def report(result: dict, every_tool: bool = True) -> str:
    """The markdown tables; `every_tool=False` leaves out the table of every tool's time."""
    lines: list[str] = []
    m = result["machine"]
    v = result["versions"]
    peers = ", ".join(f"{k} {v[k]}" for k in ("numpy", "torch", "numba") if v.get(k))
    load = result.get("load_average")
    load_text = f"; load average {load['start']:.1f} at the start, {load['end']:.1f} at the end" if load and "end" in load else ""
    lines.append(f"aclgen bench, {result['date']}: {m['cpu']}, {m['cores']} cores ({', '.join(m['features'])}); "
                 f"{peers}; {result['rounds']} interleaved round{'s' if result['rounds'] != 1 else ''}, median per tool{load_text}")
    rows = result.get("rows", [])
    if rows:
        lines += ["", "| op | dtype | size | aclgen µs | best peer | peer µs | × | × of minima | aclgen GB/s | of triad | best peer of triad |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            if r["error"]:
                lines.append(f"| {r['op']} | {r['dtype']} | {r['size_label']} | error: {r['error']} |")
                continue
            frac = r["triad_fraction"]
            best = r["best_peer"]
            lines.append(
                f"| {r['op']} | {r['dtype']} | {r['size_label']} | {_fmt_us(r['us'].get('aclgen'))} | {best or '-'} | "
                f"{_fmt_us(r['best_peer_us'])} | {_fmt(r['ratio'], '.2f')} | {_fmt(r.get('ratio_of_minima'), '.2f')} | "
                f"{_fmt(r['gbps'].get('aclgen'), '.1f')} | "
                f"{_fmt(frac.get('aclgen'), '.2f')} | {_fmt(frac.get(best) if best else None, '.2f')} |"
            )
        lines += ["", "× = best peer's median µs / aclgen's (> 1: aclgen is faster); × of minima = the same from each "
                  "tool's fastest round (less hurt by other load); GB/s = (inputs + output bytes) / median time; "
                  "of triad = GB/s / the triad's GB/s at the same bytes, measured in the same rounds."]
        used = [t for t in TOOLS if any(t in r["us"] for r in rows)] if every_tool else []
        lines += [] if not used else ["", "Median µs per call, every tool (triad: GB/s of the best triad at the row's bytes):", "",
                  "| op | dtype | size | " + " | ".join(used) + " | triad GB/s |",
                  "|---|---|---|" + "---|" * (len(used) + 1)]
        for r in rows if used else []:
            cells = [_fmt_us(r["us"].get(t)) + (" ≠" if t in r["mismatch"] else "") for t in used]
            lines.append(f"| {r['op']} | {r['dtype']} | {r['size_label']} | " + " | ".join(cells)
                         + f" | {_fmt(r['triad_gbps'], '.1f')} ({(r['triad_tool'] or '-').removeprefix('triad ')}) |")
        notes = sorted({f"{t}: {why}" for r in rows for t, why in r["skipped"].items()})
        bad = [f"{r['op']} {r['dtype']} {r['size_label']} {t}: {why}" for r in rows for t, why in r["mismatch"].items()]
        if notes:
            lines += ["", "Skipped: " + "; ".join(notes)]
        if bad:
            lines += ["", "Results that differ from aclgen's (marked ≠, not counted as best peer):"] + [f"  {b}" for b in bad]
    calls = result.get("calls")
    if calls:
        lines += ["", f"Small calls ({calls['op']}, {calls['size']} {calls['dtype']}):", "",
                  "| call | median µs | target µs |", "|---|---|---|"]
        for c in calls["rows"]:
            lines.append(f"| {c['name']} | {c['us']:.2f} | {_fmt(c['target_us'], '.1f')} |")
    comp = result.get("compile")
    if comp:
        lines += ["", "Compile times (a new variant, cold; peers: a fresh function, hardswish_backward float32):", "",
                  "| tool | op | median ms |", "|---|---|---|"]
        for c in comp["aclgen"] + comp["peers"]:
            lines.append(f"| {c['tool']} | {c['op']} | {c['ms']:.0f} |")
        ws = comp.get("warm_start") or {}
        if "error" in ws:
            lines.append(f"\nFresh process: failed: {ws['error']}")
        elif ws:
            c, w = ws["cold_cache"], ws["warm_cache"]
            lines.append(f"\nFresh process, `import aclgen` to the end of its first call: {c['ms']:.0f} ms with an empty "
                         f"disk cache, {w['ms']:.0f} ms with the kernels on disk (median of {len(w.get('samples_ms', [0]))} "
                         f"processes; xDSL imported: {w['xdsl_imported']}).")
    for part, why in (result.get("errors") or {}).items():
        lines += ["", f"The {part} part failed: {why}"]
    tg = result.get("targets") or []
    if tg:
        lines += ["", "Issue 4 targets:", ""]
        for t in tg:
            if t["unit"]:
                op = "≥" if t["higher_is_better"] else "≤"
                lines.append(f"- [{'x' if t['met'] else ' '}] {t['target']}: {t['value']:.2f}{t['unit']} (goal {op} {t['goal']:g}{t['unit']})")
            else:
                lines.append(f"- [{'x' if t['met'] else ' '}] {t['target']}: {t['value']}")
        met = sum(t["met"] for t in tg)
        lines.append(f"\n{met} of {len(tg)} measured targets met.")
    return "\n".join(lines) + "\n"


def plot(result: dict, path: str) -> None:
    """GB/s against bytes per call, one panel per operator: a colour per tool, a marker per dtype
    (float32 sizes joined by a line), the triad as the dashed memory limit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    rows = [r for r in result["rows"] if not r["error"]]
    ops_ = list(dict.fromkeys(r["op"] for r in rows))
    if not ops_:
        raise _user_error("--plot: no rows to plot")
    colors = dict(zip(TOOLS, ("tab:blue", "tab:gray", "tab:orange", "tab:red", "tab:green", "tab:purple")))
    markers = {"float32": "o", "float16": "s", "bfloat16": "^"}
    cols = min(3, len(ops_))
    nrows = (len(ops_) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.8 * nrows + 0.8), squeeze=False)
    for ax, op in zip(axes.ravel(), ops_):
        mine = [r for r in rows if r["op"] == op]
        for tool in TOOLS:
            for dtype, marker in markers.items():
                pts = sorted((r["bytes"], r["gbps"][tool]) for r in mine if r["dtype"] == dtype and r["gbps"].get(tool))
                if pts:
                    xs, ys = zip(*pts)
                    ax.plot(xs, ys, marker=marker, color=colors[tool], linestyle="-" if dtype == "float32" else "none",
                            linewidth=2.4 if tool == "aclgen" else 1.0, markersize=6 if tool == "aclgen" else 4)
        tri = sorted({(r["bytes"], r["triad_gbps"]) for r in mine if r["triad_gbps"] and r["dtype"] == "float32"})
        if tri:
            xs, ys = zip(*tri)
            ax.plot(xs, ys, "k--", linewidth=1.5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(op, fontsize=10)
        ax.set_xlabel("bytes moved per call (inputs + output)")
        ax.set_ylabel("GB/s")
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes.ravel()[len(ops_):]:
        ax.set_visible(False)
    used = [t for t in TOOLS if any(r["gbps"].get(t) for r in rows)]
    handles = [Line2D([], [], color=colors[t], linewidth=2.4 if t == "aclgen" else 1.2, label=t) for t in used]
    handles += [Line2D([], [], color="k", linestyle="--", label="triad a = b + s·c (float32)")]
    handles += [Line2D([], [], color="k", marker=m, linestyle="none", label=d) for d, m in markers.items()
                if any(r["dtype"] == d for r in rows)]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    m = result["machine"]
    fig.suptitle(f"aclgen bench {result['date'][:16]}: {m['cpu']}, {m['cores']} cores, median of "
                 f"{result['rounds']} interleaved rounds", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- driver -------------------------------------------------------------------------------------


@dataclass
class Config:
    ops: list = field(default_factory=list)
    matrix: list[tuple[str, int]] = field(default_factory=lambda: list(ISSUE_MATRIX))
    tools: list[str] = field(default_factory=lambda: list(TOOLS))
    parts: list[str] = field(default_factory=lambda: list(PARTS))
    rounds: int = 7
    target_s: float = 0.02
    compile_reps: int = 3
    progress: Callable[[str], None] | None = None


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"


def _load() -> dict | None:
    """The 1-minute load average: other work on the machine (the timings are worth less above ~0.5)."""
    try:
        return {"start": os.getloadavg()[0]}
    except OSError:
        return None


def run(cfg: Config) -> dict:
    """Run the benchmark; returns the result that --json writes (see the module docstring)."""
    from aclgen import dtypes as dt

    say = cfg.progress or (lambda s: None)
    ops_ = cfg.ops or operators([])
    result: dict = {
        "version": 1,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": "aclgen bench " + " ".join(sys.argv[2:]) if sys.argv[1:2] == ["bench"] else None,
        "machine": machine(),
        "load_average": _load(),
        "versions": versions(),
        "rounds": cfg.rounds,
        "target_ms": cfg.target_s * 1e3,
        "tools": cfg.tools,
        "parts": cfg.parts,
        "rows": [],
    }
    if "torch" in cfg.tools or "torch.compile" in cfg.tools:
        with contextlib.suppress(Skip):
            result["torch_threads"] = _torch().get_num_threads()
    if "table" in cfg.parts:
        triad_cache: dict = {}
        for op in ops_:
            for dtype_name, n in cfg.matrix:
                dtype = dt.dtype(dtype_name)
                if dtype not in op.all_dtypes():
                    continue
                t = time.perf_counter()
                row = run_row(op, dtype, n, cfg.tools, cfg.rounds, cfg.target_s, triad_cache)
                result["rows"].append(row.as_dict())
                best = row.best_peer()
                say(f"{op.python_name} {dtype_name} {size_label(n)}: aclgen {_fmt_us(row.us.get('aclgen'))} us, "
                    + (f"best peer {best[0]} {_fmt_us(best[1])} us" if best else "no peer")
                    + (f", error: {row.error}" if row.error else "") + f" ({time.perf_counter() - t:.1f} s)")
            triad_cache.clear()
    if "calls" in cfg.parts:
        try:
            result["calls"] = small_calls(cfg.tools, cfg.rounds, cfg.target_s)
            say("small calls: " + ", ".join(f"{c['name']} {c['us']:.2f} us" for c in result["calls"]["rows"]))
        except Exception as exc:  # one part failing must not lose the others' numbers
            result["errors"] = {**result.get("errors", {}), "calls": _one_line(exc)}
            say(f"small calls failed: {_one_line(exc)}")
    if "compile" in cfg.parts:
        try:
            result["compile"] = compile_times(ops_, cfg.tools, cfg.compile_reps)
            say("compile: " + ", ".join(f"{c['tool']} {c['op']} {c['ms']:.0f} ms"
                                        for c in result["compile"]["aclgen"] + result["compile"]["peers"]))
        except Exception as exc:
            result["errors"] = {**result.get("errors", {}), "compile": _one_line(exc)}
            say(f"compile times failed: {_one_line(exc)}")
    if result["load_average"]:
        result["load_average"]["end"] = _load()["start"]
    result["targets"] = targets(result)
    return result


def add_subcommand(sub) -> None:
    """Register `aclgen bench` on the CLI's subparsers."""
    s = sub.add_parser(
        "bench",
        help="time the operators against numpy, torch, torch.compile and numba, with a triad bandwidth",
        description="Time aclgen against its CPU peers (numpy; torch eager, torch.compile and numba when installed) "
        "in the same process, in interleaved rounds (median per tool), next to a triad bandwidth "
        "measurement, and print the ratio to the best peer and the fraction of the triad per row, then "
        "the small-call costs, the compile times and issue 4's targets. Without --sizes and --dtypes the "
        "matrix is float32 at 1K,64K,1M,16M plus float16 and bfloat16 at 1M; sizes are output elements "
        "(SwiGluGrad: yGrad's, x has 2N).",
    )
    s.add_argument("ops", nargs="*", metavar="OP", help="operators (default: all five)")
    s.add_argument("--sizes", help=f"comma list of sizes in elements, e.g. {DEFAULT_SIZES} (K = 1024)")
    s.add_argument("--dtypes", help=f"comma list of dtypes (default with --sizes: {DEFAULT_DTYPES})")
    s.add_argument("--tools", help=f"comma list of tools to run (default: all installed of {','.join(TOOLS)}; aclgen always runs)")
    s.add_argument("--parts", help=f"comma list of parts (default: {','.join(PARTS)})")
    s.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7); each tool's time is the median")
    s.add_argument("--target-ms", type=float, default=20.0, help="length of one sample (default 20 ms)")
    s.add_argument("--compile-reps", type=int, default=3, help="compiles per tool in the compile part (median; default 3)")
    s.add_argument("--json", metavar="FILE", help="write every number (samples included) as JSON")
    s.add_argument("--plot", metavar="FILE.png", help="draw GB/s against size per tool (needs matplotlib)")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    s.set_defaults(func=cmd_bench)


def cmd_bench(args) -> int:
    if args.rounds < 1:
        raise _user_error("--rounds must be >= 1")
    if args.target_ms <= 0 or args.compile_reps < 1:
        raise _user_error("--target-ms must be > 0 and --compile-reps >= 1")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise _user_error("--plot needs matplotlib: pip install matplotlib (or pip install -e '.[bench]')") from None
    cfg = Config(
        ops=operators(args.ops),
        matrix=matrix(args.sizes, args.dtypes),
        tools=tools(args.tools),
        parts=parts(args.parts),
        rounds=args.rounds,
        target_s=args.target_ms / 1e3,
        compile_reps=args.compile_reps,
        progress=None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True)),
    )
    result = run(cfg)
    sys.stdout.write(report(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.plot:
        plot(result, args.plot)
    return 1 if any(r["error"] for r in result["rows"]) or result.get("errors") else 0
