"""How `aclgen bench` times: interleaved rounds with a lead-in, the triad, the small calls, and
the compile and fresh-process measurements (the method is in the package's docstring)."""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from aclgen.knobs import overridden
from aclgen.tools.bench.peers import PEERS, Call, Skip, build, make_problem, need

SETTLE_S = 0.05  # untimed calls before each sample: the previous tool's threads quiet down
WARM_RUNS = 5  # fresh processes with the kernels on disk; the median is reported
CALLS_OP = "hardswish_backward"  # the operator of the small calls and the peers' compile times
SEVERAL_OP, SEVERAL_SHAPE = "rms_norm_grad", (4, 256)  # the small calls of an operator of two kernels


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def calibrate(fn: Call, target_s: float, max_reps: int = 1 << 20) -> int:
    """Repetitions so that one sample lasts about `target_s` (fn already warmed up; the best of
    three calls decides, so a one-time cost left in the first, such as binding a replay on a
    function's second call, does not make every sample a single call)."""
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


def sample(fn: Call, reps: int) -> float:
    """Seconds per call over one batch of `reps` calls."""
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) / reps


def lead_in(fn: Call, seconds: float) -> None:
    """Call `fn` untimed for about `seconds` (at least once)."""
    end = time.perf_counter() + seconds
    fn()
    while time.perf_counter() < end:
        fn()


def interleaved(fns: dict[str, Call], rounds: int, target_s: float) -> dict[str, list[float]]:
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


# -- the triad -----------------------------------------------------------------------------------


@functools.cache
def _numba_triad() -> Callable:
    numba = need("numba")

    @numba.njit(parallel=True)
    def triad(a, b, c, s):
        for i in numba.prange(a.size):
            a[i] = b[i] + s * c[i]

    return triad


def triad_impls(n: int, chosen: Sequence[str]) -> dict[str, Call]:
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

    impls: dict[str, Call] = {"triad numpy": numpy_triad}
    if "numba-prange" in chosen:
        with contextlib.suppress(Skip):
            triad = _numba_triad()
            triad(a, b, c, s)
            impls["triad numba-prange"] = lambda: triad(a, b, c, s)
    if "torch" in chosen:
        with contextlib.suppress(Skip):
            torch = need("torch")
            ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c)
            impls["triad torch"] = lambda: torch.add(tb, tc, alpha=3.0, out=ta)
    for fn in impls.values():
        fn()
    return impls


# -- small calls ---------------------------------------------------------------------------------


def small_calls(chosen: Sequence[str], rounds: int, target_s: float, n: int = 1024) -> dict:
    """The Python-side cost of one call at n float32 elements, aclgen's three ways and the peers'."""
    import aclgen.acl as acl
    import aclgen.aclnn as aclnn
    from aclgen import dtypes as dt
    from aclgen.ops import OPERATORS

    def aclnn_call(name: str, size):
        """A problem of operator `name`, its outputs, aclTensors over both and its two phases."""
        op = OPERATORS[name]
        p = make_problem(op, dt.float32, size)
        outs = p.empty_outs()
        tensors = [acl.from_numpy(a) for a in (*p.inputs, *outs)]
        return p, outs, tensors, getattr(aclnn, op.api + "GetWorkspaceSize"), getattr(aclnn, op.api)

    p, outs, tensors, get_workspace_size, execute = aclnn_call(CALLS_OP, n)

    def two_phase() -> None:
        ws, ex, _ = get_workspace_size(*tensors)
        execute(None, ws, ex, None)

    ws, ex, ret = get_workspace_size(*tensors)
    if ret != 0 or aclnn.aclSetAclOpExecutorRepeatable(ex) != 0:
        raise RuntimeError(f"aclnn setup failed: {acl.get_recent_err_msg()}")
    stream, _ = acl.rt.create_stream()

    def on_stream() -> None:  # the round trip: enqueue, then wait for it
        execute(None, ws, ex, stream)
        acl.rt.synchronize_stream(stream)

    def two_phase_on_stream() -> None:  # CANN's pattern: a fresh executor, launched, synchronized
        ws, ex, _ = get_workspace_size(*tensors)
        execute(None, ws, ex, stream)
        acl.rt.synchronize_stream(stream)

    q, q_outs, q_tensors, q_phase1, q_phase2 = aclnn_call(SEVERAL_OP, SEVERAL_SHAPE)

    def two_phase_two_kernels() -> None:
        ws, ex, _ = q_phase1(*q_tensors)
        q_phase2(None, ws, ex, None)

    shape = "x".join(map(str, SEVERAL_SHAPE))
    fns: dict[str, Call] = {
        "aclgen.ops call": build("aclgen", p, outs),
        f"aclgen.ops call, two kernels ({SEVERAL_OP} {shape})": build("aclgen", q, q_outs),
        f"aclnn two-phase call, two kernels ({SEVERAL_OP} {shape})": two_phase_two_kernels,
        "aclnn executor re-run (repeatable)": lambda: execute(None, ws, ex, None),
        "aclnn two-phase call": two_phase,
        "aclnn two-phase call on a stream + synchronize": two_phase_on_stream,
        "aclnn executor re-run on a stream + synchronize": on_stream,
    }
    skipped = {}
    for tool in chosen:
        if tool in ("aclgen", "torch.compile"):
            continue  # torch.compile: the same kernel as in the table's 1K rows, where it is timed
        try:
            fns[f"{tool} (peer)"] = build(tool, p, p.empty_outs())
        except Skip as exc:
            skipped[tool] = str(exc)
    for fn in fns.values():
        fn()
    samples = interleaved(fns, rounds, target_s)
    acl.rt.destroy_stream(stream)
    aclnn.aclDestroyAclOpExecutor(ex)
    rows = [{"name": name, "us": median_us(samples[name]), "samples_us": [s * 1e6 for s in samples[name]]}
            for name in fns]
    return {"op": CALLS_OP, "dtype": "float32", "size": n, "rows": rows, "skipped": skipped}


# -- compile times -------------------------------------------------------------------------------


def aclgen_compile_ms(ops: Sequence, reps: int) -> list[dict]:
    """A new variant (float32 where supported, rank 1, contiguous) compiled cold: no in-memory or
    on-disk cache."""
    from aclgen import dtypes as dt
    from aclgen.compiler import Options, compile_variant

    rows = []
    with (
        tempfile.TemporaryDirectory(prefix="aclgen-bench-cache-") as cache_dir,
        overridden(ACLGEN_ALWAYS_COMPILE="1", ACLGEN_CACHE_DIR=cache_dir),
    ):
        for op in ops:
            dtype = dt.float32 if dt.float32 in op.all_dtypes() else op.all_dtypes()[0]
            variant = op.variant((dtype,))
            times, stages = [], {}
            for _ in range(reps):
                t = time.perf_counter()
                kernel = compile_variant(op.formula, op.python_name, variant, op.params, op.kernel_arg_names,
                                         op.kernel_options(variant, Options.from_knobs()))
                times.append((time.perf_counter() - t) * 1e3)
                stages = {k: v * 1e3 for k, v in getattr(kernel, "seconds", {}).items()}
            rows.append({"tool": "aclgen", "op": op.python_name, "dtype": dtype.name, "ms": statistics.median(times),
                         "samples_ms": times, "stages_ms": stages})
    return rows


def numba_compile_ms(reps: int) -> list[dict]:
    """numba: a fresh dispatcher of the hardswish loop, compiled by its first call (1K float32)."""
    from aclgen.ops import OPERATORS

    numba = need("numba")
    g = np.ones(1024, np.float32)
    out = np.empty_like(g)
    loop = PEERS[OPERATORS[CALLS_OP].name].numba
    assert loop is not None  # HardswishBackward has its numba loop
    rows = []
    for parallel, name in ((False, "numba"), (True, "numba-prange")):
        source = loop(numba.prange if parallel else range)
        numba.njit(parallel=parallel)(source)(g, g, out)  # the first compile loads numba's own parts
        times = []
        for _ in range(reps):
            fn = numba.njit(parallel=parallel)(source)
            t = time.perf_counter()
            fn(g, g, out)
            times.append((time.perf_counter() - t) * 1e3)
        rows.append({"tool": name, "op": CALLS_OP, "ms": statistics.median(times), "samples_ms": times})
    return rows


def torch_compile_ms(reps: int) -> list[dict]:
    """torch.compile: dynamo reset, FX graph cache off, first call at 1K float32. Each compile gets
    its own constant (a scale just above 1, fused into the kernel), so inductor's in-memory and
    on-disk code caches cannot serve it: every sample generates and compiles C++ anew."""
    torch = need("torch")
    g = torch.ones(1024)
    hardswish_backward = torch.ops.aten.hardswish_backward
    salt = int(time.time()) % 100_000  # different kernel sources from one run to the next too
    times = []
    with torch._inductor.config.patch(fx_graph_cache=False):
        for i in range(reps + 1):
            torch._dynamo.reset()
            scope = {"hardswish_backward": hardswish_backward}  # the constant as a literal in the source
            exec(f"def fn(a, b):\n    return hardswish_backward(a, b) * {1.0 + (salt * 16 + i) * 2.0**-40!r}", scope)
            compiled = torch.compile(scope["fn"], dynamic=False)
            t = time.perf_counter()
            compiled(g, g)
            if i:  # the first also loads inductor itself
                times.append((time.perf_counter() - t) * 1e3)
        torch._dynamo.reset()
    return [{"tool": "torch.compile", "op": CALLS_OP, "ms": statistics.median(times), "samples_ms": times}]


_WARM_START = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
import aclgen.ops as ops
g = np.ones(1024, np.float32); o = np.empty_like(g)
ops.hardswish_backward(g, g, out=o)
t2 = time.perf_counter()
ops.hardswish_backward(g, g, out=o)
t3 = time.perf_counter()
print(json.dumps({"ms": (t2 - t1) * 1e3, "numpy_ms": (t1 - t0) * 1e3, "second_ms": (t3 - t2) * 1e3,
                  "xdsl_imported": any(m == "xdsl" or m.startswith("xdsl.") for m in sys.modules)}))
"""


def warm_start() -> dict:
    """Fresh processes: `import aclgen.ops` to the end of the first call (`ms`, numpy already
    imported; `numpy_ms`: numpy's own import in the same process; `ratio`: ms / numpy_ms) and the
    second call (`second_ms`), once with a cold disk cache, then WARM_RUNS times with a warm one
    (medians; every run's numbers in `runs`, its ms in `samples_ms`)."""
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
            run = json.loads(r.stdout.strip().splitlines()[-1])
            runs.append(run | {"ratio": run["ms"] / run["numpy_ms"]})
    warm = runs[1:]
    return {
        "cold_cache": runs[0],
        "warm_cache": {
            **{k: statistics.median(w[k] for w in warm) for k in ("ms", "numpy_ms", "ratio", "second_ms")},
            "samples_ms": [w["ms"] for w in warm],
            "runs": warm,
            "xdsl_imported": any(w["xdsl_imported"] for w in warm),
        },
    }


def compile_times(ops: Sequence, chosen: Sequence[str], reps: int) -> dict:
    """aclgen's cold compiles of `ops`, the peers' compiles, and a fresh process's first call."""
    result: dict = {"aclgen": aclgen_compile_ms(ops, reps), "peers": [], "skipped": {}}
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
