"""aclgen's math functions against torch eager, torch.compile and numba: one row per function and
dtype, a one-function operator on 1M elements, in one process, with `aclgen bench`'s timing
(aclgen/tools/bench/timing.py: interleaved rounds in a rotating order, each sample after 50 ms of
the same tool's untimed calls, medians and minima); then a formula using erf and tanh compiled
cold.

    python benchmarks/bench_math.py                         # every function, float32, float16, bfloat16
    python benchmarks/bench_math.py tanh erf --dtypes float32 --rounds 9
    python benchmarks/bench_math.py --isa avx2              # every tool held to AVX2 (a child process)
    python benchmarks/bench_math.py --json out.json

Inputs lie in each function's domain (log's are positive, erfinv's in (-1, 1)), spread over the
range where it is neither flat nor special. The peers are what their users write: torch's own
function (functional: torch allocates the result, as eager code does; half types as half
tensors), the same through torch.compile(dynamic=False), and a numba loop over the elements with
the `math` module's function (serial `@njit` and `parallel=True` with prange; float32 only, and
numba has no erfinv). Every peer's output is compared with aclgen's first (a relative 1e-5 in
float32, a half-type ulp otherwise); one that differs is reported and not ranked.

The table's ratios are peer time / aclgen time (> 1: aclgen is faster): against torch eager, and
against the best of torch.compile and the numba loops ("best compiled"). Issue 17 asks for >= 2x
torch eager on every row and >= 1x the best compiled peer on float32.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import aclgen
from aclgen import dtypes as dt
from aclgen.tools.bench import config, report, timing
from aclgen.tools.bench.peers import Call, Skip, need

N = 1 << 20


@dataclass(frozen=True)
class Case:
    """A function's row: its inputs' range and its peers' spellings."""

    lo: float
    hi: float
    torch: str  # torch.<name>
    numba: Callable | None  # the scalar function a numba loop calls (None: numba has none)
    arity: int = 1


def _sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def _rsqrt(v: float) -> float:
    return 1.0 / math.sqrt(v)


CASES: dict[str, Case] = {
    "exp": Case(-80.0, 80.0, "exp", lambda v: math.exp(v)),
    "exp2": Case(-120.0, 120.0, "exp2", lambda v: 2.0**v),
    "expm1": Case(-10.0, 10.0, "expm1", lambda v: math.expm1(v)),
    "sigmoid": Case(-20.0, 20.0, "sigmoid", _sigmoid),
    "log": Case(1e-3, 1e3, "log", lambda v: math.log(v)),
    "log2": Case(1e-3, 1e3, "log2", lambda v: math.log2(v)),
    "log1p": Case(-0.9, 100.0, "log1p", lambda v: math.log1p(v)),
    "tanh": Case(-10.0, 10.0, "tanh", lambda v: math.tanh(v)),
    "erf": Case(-5.0, 5.0, "erf", lambda v: math.erf(v)),
    "erfc": Case(-5.0, 11.0, "erfc", lambda v: math.erfc(v)),
    "erfinv": Case(-0.999, 0.999, "erfinv", None),
    "rsqrt": Case(1e-3, 1e3, "rsqrt", _rsqrt),
    "pow": Case(0.01, 10.0, "pow", lambda v, w: math.pow(v, w), arity=2),
}


def inputs(name: str, dtype: dt.DType) -> list[np.ndarray]:
    c = CASES[name]
    rng = np.random.default_rng(0)
    xs = [rng.uniform(c.lo, c.hi, N).astype(np.float32)]
    if c.arity == 2:
        xs.append(rng.uniform(-8.0, 8.0, N).astype(np.float32))
    return [x.astype(dtype.np_dtype) for x in xs]


def _formula(name: str) -> Callable:
    fn = getattr(aclgen, name)
    return (lambda x, y: fn(x, y)) if CASES[name].arity == 2 else (lambda x: fn(x))


def _numba_loop(name: str, parallel: bool) -> Callable:
    numba = need("numba")
    f = CASES[name].numba
    if f is None:
        raise Skip(f"numba has no {name}")
    scalar = numba.njit(f)
    loop = numba.prange if parallel else range
    if CASES[name].arity == 2:
        def kernel2(x, y, out):
            for i in loop(x.size):
                out[i] = scalar(x[i], y[i])
        return numba.njit(parallel=parallel)(kernel2)

    def kernel(x, out):
        for i in loop(x.size):
            out[i] = scalar(x[i])
    return numba.njit(parallel=parallel)(kernel)


def _to_torch(torch, a: np.ndarray):
    return torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16) if a.dtype.name == "bfloat16" else torch.from_numpy(a)


def _from_torch(torch, t) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(dt.bfloat16.np_dtype)
    return t.numpy()


def tools(name: str, dtype: dt.DType, xs: list[np.ndarray]) -> tuple[dict[str, Call], dict[str, Callable], dict]:
    """Each tool's call (already run once: compiled, memory touched), a way to fetch its result,
    and why the others were skipped."""
    calls: dict[str, Call] = {}
    fetch: dict[str, Callable[[], np.ndarray]] = {}
    skipped: dict[str, str] = {}
    out = np.zeros(N, dtype.np_dtype)
    f = aclgen.compile(_formula(name), dtypes=dtype.name, name=f"bench_{name}")
    calls["aclgen"] = lambda: f(*xs, out=out)
    fetch["aclgen"] = lambda: out
    try:
        torch = need("torch")
        targs = [_to_torch(torch, x) for x in xs]
        fn = getattr(torch, CASES[name].torch)
        for tool, g in (("torch", fn), ("torch.compile", None)):
            if g is None:
                torch._dynamo.reset()
                g = torch.compile(lambda *a, fn=fn: fn(*a), dynamic=False)
            box: dict = {}

            def call(g=g, box=box) -> None:
                box["r"] = g(*targs)

            calls[tool] = call
            fetch[tool] = lambda box=box: _from_torch(torch, box["r"])
    except Skip as exc:
        skipped["torch"] = skipped["torch.compile"] = str(exc)
    for tool, parallel in (("numba", False), ("numba-prange", True)):
        try:
            if dtype.name != "float32":
                raise Skip("float32 only")
            kernel = _numba_loop(name, parallel)
            nout = np.zeros(N, np.float32)
            calls[tool] = lambda kernel=kernel, nout=nout: kernel(*xs, nout)
            fetch[tool] = lambda nout=nout: nout
        except Skip as exc:
            skipped[tool] = str(exc)
    for tool in list(calls):
        try:
            calls[tool]()
        except Exception as exc:  # a peer that cannot run this row
            skipped[tool] = f"failed: {type(exc).__name__}"
            del calls[tool], fetch[tool]
    return calls, fetch, skipped


def agree(dtype: dt.DType, ours: np.ndarray, theirs: np.ndarray) -> bool:
    """Within a relative 1e-5 (float32) or 1e-2 (about a half-type ulp), or a half type's
    subnormal step apart (torch's float16 erf(4.17e-7) is 4.2e-7, not 4.77e-7)."""
    rtol, atol = (1e-5, 1e-37) if dtype.name == "float32" else (1e-2, 2.0**-20)
    return bool(np.isclose(ours.astype(np.float32), theirs.astype(np.float32), rtol=rtol, atol=atol,
                           equal_nan=True).all())


def row(name: str, dtype: dt.DType, rounds: int, target_s: float) -> dict:
    xs = inputs(name, dtype)
    calls, fetch, skipped = tools(name, dtype, xs)
    ours = fetch["aclgen"]()
    mismatch = [t for t in calls if t != "aclgen" and not agree(dtype, ours, fetch[t]())]
    samples = timing.interleaved(calls, rounds, target_s)
    us = {t: timing.median_us(s) for t, s in samples.items()}
    mins = {t: min(s) * 1e6 for t, s in samples.items()}
    compiled = [t for t in ("torch.compile", "numba", "numba-prange") if t in us and t not in mismatch]
    best = min(compiled, key=lambda t: us[t]) if compiled else None
    return {"function": name, "dtype": dtype.name, "us": us, "min_us": mins, "skipped": skipped, "mismatch": mismatch,
            "vs_torch": us["torch"] / us["aclgen"] if "torch" in us and "torch" not in mismatch else None,
            "best_compiled": best, "vs_compiled": us[best] / us["aclgen"] if best else None,
            "vs_compiled_minima": mins[best] / mins["aclgen"] if best else None}


def compile_cold(reps: int) -> dict:
    """A formula using erf and tanh (GELU's two forms), compiled cold: no cache can serve it."""
    def gelus(x):
        return (0.5 * x * (1.0 + aclgen.erf(x * 0.7071067811865476)),
                0.5 * x * (1.0 + aclgen.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))))

    op = aclgen.compile(gelus, name="gelu_erf_tanh").op
    (r,) = timing.aclgen_compile_ms([op], reps)
    return r


def fmt(v: float | None, spec: str = ".2f") -> str:
    return "-" if v is None else format(v, spec)


def markdown(result: dict) -> str:
    lines = [f"bench_math, {N // 1024}K elements, {result['threads']} threads, {result['rounds']} interleaved rounds, "
             "median per tool "
             f"(load average {result['load'][0]:.1f} at the start, {result['load'][1]:.1f} at the end); "
             + report.isa_line(result["isa"]), "",
             "| function | dtype | aclgen µs | torch µs | torch.compile µs | numba µs | numba prange µs | "
             "× torch | × best compiled (median) | × (minima) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        us = r["us"]
        cells = [fmt(us.get(t), ".0f") + (" ≠" if t in r["mismatch"] else "")
                 for t in ("aclgen", "torch", "torch.compile", "numba", "numba-prange")]
        lines.append(f"| {r['function']} | {r['dtype']} | " + " | ".join(cells)
                     + f" | {fmt(r['vs_torch'])} | {fmt(r['vs_compiled'])} | {fmt(r['vs_compiled_minima'])} |")
    c = result.get("compile")
    if c:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in c["stages_ms"].items())
        lines += ["", f"Cold compile of a formula using erf and tanh (GELU's two forms): {c['ms']:.0f} ms "
                      f"(median of {len(c['samples_ms'])}; stages in ms: {stages})."]
    lines.append("≠: the peer's output differs from aclgen's (not ranked).")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("functions", nargs="*", default=list(CASES))
    ap.add_argument("--dtypes", default="float32,float16,bfloat16")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--target-ms", type=float, default=20.0)
    ap.add_argument("--compile-reps", type=int, default=5)
    ap.add_argument("--isa", default="native", choices=list(config.ISAS))
    ap.add_argument("--threads", type=int, default=0,
                    help="threads of aclgen, torch and numba prange (default: all cores, as aclgen bench)")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--isa-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    unknown = [f for f in args.functions if f not in CASES]
    if unknown:
        ap.error(f"unknown functions {unknown}; known: {', '.join(CASES)}")
    env = config.isa_environment(config.isa(args.isa))
    if env and not args.isa_child:
        from aclgen.tools.bench import in_child

        return in_child([__file__, *(argv if argv is not None else sys.argv[1:]), "--isa-child"], env)
    import os

    if args.threads:
        os.environ["ACLGEN_THREADS"] = str(args.threads)
        with contextlib.suppress(Skip):
            need("torch").set_num_threads(args.threads)
        with contextlib.suppress(Skip):
            need("numba").set_num_threads(args.threads)
    load = os.getloadavg()[0]
    rows = []
    for name in args.functions:
        for dtype_name in args.dtypes.split(","):
            r = row(name, dt.dtype(dtype_name), args.rounds, args.target_ms / 1e3)
            print(f"{name} {dtype_name}: aclgen {r['us']['aclgen']:.0f} us, x torch {fmt(r['vs_torch'])}, "
                  f"x best compiled {fmt(r['vs_compiled'])} ({r['best_compiled']})", file=sys.stderr, flush=True)
            rows.append(r)
    result = {"rows": rows, "rounds": args.rounds, "isa": report.isa(args.isa, config.TOOLS),
              "machine": report.machine(), "versions": report.versions(),
              "compile": compile_cold(args.compile_reps), "load": (load, os.getloadavg()[0]),
              "threads": args.threads or os.cpu_count()}
    sys.stdout.write(markdown(result))
    if args.json:
        import json

        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    bad = [r["function"] for r in rows if (r["vs_torch"] or 0) < 2 or (r["dtype"] == "float32" and (r["vs_compiled"] or 9) < 1)]
    print(f"below issue 17's targets: {', '.join(bad) or 'none'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
