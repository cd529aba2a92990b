"""`aclgen tune [OP...]`: time candidate schedules per kernel variant on this machine and remember
the fastest for the target (aclgen/schedules.py), so that later compiles use it.

For each operator (the built-ins unless named), float dtype of the SoC profile (or --dtypes) and
size (--sizes, default 64K,1M: the in-cache regime; 16M tunes the streaming-store variant big
calls use), the tuner builds the benchmark's data (`aclgen bench`'s rows), asks which variant
those calls run (`Function.kernel_for`: rank, layouts, streaming stores) and times, for each
variant, in interleaved rounds (a warm-up before every sample, the median of --rounds):

  1. widths of 1, 2, 4 and 8 registers of the target's f32 lanes (up to 64), at the model's tile;
  2. tile sizes TILES at the fastest width.

Every candidate's outputs must equal the model's bit for bit (NaN = NaN, as `aclgen run`
compares), on the timing data and on random data with edge values (NaN, ±inf, ±0, subnormals)
of a size no width divides: a schedule that changed a bit is a compiler bug, reported as an
error, never remembered. A candidate replaces the model only when it is faster by MARGIN (per
size the median of per-round ratios, then the geometric mean); else the model is recorded, so
the variant counts as tuned.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from aclgen import dtypes as dt
from aclgen import schedules
from aclgen.declaration import Operator
from aclgen.kernel import MODEL_TILE, Variant
from aclgen.knobs import knobs, overridden
from aclgen.tools import UsageError, count

DEFAULT_SIZES = "64K,1M"
TILES = (4096, 16384, 32768)  # tried besides MODEL_TILE
MARGIN = 0.03  # a tuned schedule must beat the model by 3%
WARM_S = 0.005  # untimed calls before each sample (our own kernels: no OpenMP threads to settle)
MAX_LANES = 64


@dataclass
class Group:
    """The calls of one operator and dtype that run one variant: what a schedule entry is for."""

    op: Operator
    dtype: dt.DType
    key: str  # schedules.entry_key
    variant: Variant
    nontemporal: bool
    sizes: list[int] = field(default_factory=list)


@dataclass
class Result:
    group: Group
    width: int  # 0: the model's
    tile: int  # 0: the model's
    us: dict[str, float]  # size label -> median µs of the chosen schedule
    model_us: dict[str, float]
    ratio: float  # the chosen schedule's time relative to the model's (see tune_group's score)

    @property
    def speedup(self) -> float:
        return 1 / self.ratio


def _geomean(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 1.0


def _env(width: int, tile: int) -> dict[str, str]:
    return {"ACLGEN_VECTOR_WIDTH": str(width), "ACLGEN_TILE_SIZE": str(tile)}


def _calls(fn, problem) -> tuple[Callable[[], object], list[np.ndarray]]:
    outs = problem.empty_outs()
    args = [*problem.inputs, *problem.scalars]
    out = tuple(outs) if len(outs) > 1 else outs[0]
    return (lambda: fn(*args, out=out)), outs


def _same(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    """Bit for bit, as `aclgen run` compares (NaN equals NaN: LLVM leaves a NaN result's sign and
    payload unspecified, and SwiGluGrad's products pick the operand NaN by register order; the
    four exact operators pass NaNs through selects, so theirs are compared by the test suite)."""
    from aclgen.tools.run import compare_all

    return all(x.shape == y.shape for x, y in zip(a, b)) and compare_all(list(a), list(b))[1] == 0


def _time(calls: dict[tuple[int, int], Callable[[], object]], env_of, rounds: int, target_s: float) -> dict:
    """Seconds per call of each candidate, one sample per round, interleaved: the order rotated
    every round, WARM_S of untimed calls before every sample."""
    from aclgen.tools.bench.timing import calibrate, lead_in, sample

    names = list(calls)
    reps = {}
    for name in names:
        with overridden(**env_of(name)):
            lead_in(calls[name], WARM_S)
            reps[name] = calibrate(calls[name], target_s)
    samples: dict = {name: [] for name in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            with overridden(**env_of(name)):
                lead_in(calls[name], WARM_S)
                samples[name].append(sample(calls[name], reps[name]))
    return samples


def groups(ops: Sequence, dtypes: Sequence[str] | None, sizes: Sequence[int]) -> list[Group]:
    """The variants the benchmark's calls of `ops` x dtypes x `sizes` run, sizes grouped by variant."""
    from aclgen.runtime.function import function_of
    from aclgen.tools.bench.peers import make_problem

    soc = knobs().soc_version
    out: dict[str, Group] = {}
    for op in ops:
        names = [n for n in op.dtypes.get(soc, ()) if dt.dtype(n).is_float] if dtypes is None else list(dtypes)
        for name in names:
            d = dt.dtype(name)
            if name not in op.dtypes.get(soc, ()):
                continue
            for n in sizes:
                problem = make_problem(op, d, n)
                with overridden(**_env(0, 0)):
                    kernel = function_of(op).kernel_for(*problem.inputs, *problem.scalars)
                if kernel is None:
                    continue
                key = schedules.entry_key(op.python_name, kernel.variant, kernel.options.nontemporal)
                g = out.setdefault(key, Group(op, d, key, kernel.variant, kernel.options.nontemporal))
                g.sizes.append(n)
    return list(out.values())


def _edge_check(op, d: dt.DType, candidates: Sequence[tuple[int, int]]) -> None:
    """Each candidate's outputs equal the model's on edge-value data of an odd size."""
    from aclgen.runtime.function import function_of
    from aclgen.tools.run import make_case

    case = make_case(op, (4098,), d, np.random.default_rng(1))  # no multiple of any width; SwiGluGrad: halves of 2049
    fn = function_of(op)
    want = None
    for width, tile in [(0, 0), *candidates]:
        with overridden(**_env(width, tile)):
            got = fn(*case.args)
        got = list(got) if isinstance(got, tuple) else [got]
        if want is None:
            want = got
        elif not _same(got, want):
            raise RuntimeError(f"{op.python_name} {d.name}: width {width}, tile {tile} changed result bits "
                               "against the model's schedule (a compiler bug; nothing was saved)")


def tune_group(g: Group, rounds: int, target_s: float) -> Result:
    from aclgen.codegen.target import host
    from aclgen.runtime.function import function_of
    from aclgen.tools.bench.config import size_label
    from aclgen.tools.bench.peers import make_problem

    fn = function_of(g.op)
    lanes = host().f32_lanes
    widths = [lanes << k for k in range(4) if lanes << k <= MAX_LANES]
    problems = {n: make_problem(g.op, g.dtype, n) for n in g.sizes}

    sample = problems[g.sizes[0]]
    codes: dict[str, tuple[int, int]] = {}

    def distinct(candidates: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Candidates whose code differs (the model's width among the widths compiles to the same
        LLVM IR as the model: timing both would only measure noise)."""
        out = []
        for c in candidates:
            with overridden(**_env(*c)):
                kernel = fn.kernel_for(*sample.inputs, *sample.scalars)
            code = kernel.ir["llvm-ir"] if kernel is not None else ""
            if codes.setdefault(code, c) == c:
                out.append(c)
        return out

    def measure(candidates: list[tuple[int, int]]) -> dict[tuple[int, int], dict[int, list[float]]]:
        """Per-round samples of each distinct candidate at each size (the model first)."""
        candidates = distinct(candidates)
        times: dict[tuple[int, int], dict[int, list[float]]] = {c: {} for c in candidates}
        for n, problem in problems.items():
            calls, outs = {}, {}
            for c in candidates:
                calls[c], outs[c] = _calls(fn, problem)
                with overridden(**_env(*c)):
                    calls[c]()  # compiles the candidate
            base = outs[candidates[0]]
            for c in candidates[1:]:
                if not _same(outs[c], base):
                    raise RuntimeError(f"{g.op.python_name} {g.dtype.name}: width {c[0]}, tile {c[1]} changed "
                                       "result bits against the model's schedule (a compiler bug; nothing was saved)")
            for c, s in _time(calls, lambda c: _env(*c), rounds, target_s).items():
                times[c][n] = s
        return times

    def score(t: dict[int, list[float]], model: dict[int, list[float]]) -> float:
        """Time relative to the model's: per size the median of the per-round ratios (a round's
        two samples share the machine's state: paired ratios cancel load that comes and goes),
        then the geometric mean over the sizes."""
        return _geomean([statistics.median(a / b for a, b in zip(t[n], model[n])) for n in t])

    model = (0, 0)
    first = measure([model, *((w, 0) for w in widths)])
    best = min(first, key=lambda c: score(first[c], first[model]))
    # the tiles at that width, against the model and that width again (measured in the same rounds)
    times = measure([model, best, *((best[0], t) for t in TILES)])
    best = min(times, key=lambda c: score(times[c], times[model]))
    if score(times[best], times[model]) > 1 - MARGIN:
        best = model
    _edge_check(g.op, g.dtype, [best] if best != model else [])
    us = {size_label(n): statistics.median(times[best][n]) * 1e6 for n in g.sizes}
    model_us = {size_label(n): statistics.median(times[model][n]) * 1e6 for n in g.sizes}
    return Result(g, best[0], best[1], us, model_us, score(times[best], times[model]))


def run(args) -> int:
    from aclgen.cache import formula_digest
    from aclgen.tools.bench.config import operators, parse_size

    if args.forget:
        gone = schedules.forget()
        print(f"{'removed' if gone else 'no'} tuned schedules {'from ' if gone else 'in '}{schedules.path()}")
        return 0
    if args.show:
        return show()
    if args.rounds < 1:
        raise UsageError("--rounds must be >= 1")
    sizes = [parse_size(s) for s in (args.sizes or DEFAULT_SIZES).split(",") if s.strip()]
    dtypes = None
    if args.dtypes:
        dtypes = []
        for name in args.dtypes.split(","):
            try:
                dtypes.append(dt.dtype(name.strip()).name)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
    ops = operators(args.ops)
    start = time.perf_counter()
    todo = groups(ops, dtypes, sizes)
    if not todo:
        raise UsageError("nothing to tune: no operator supports the chosen dtypes in this SoC profile")
    target = _target_line()
    print(f"aclgen tune: {count(len(todo), 'variant')} on {target}; {count(args.rounds, 'round')} of "
          f"~{args.target_ms:g} ms per candidate")
    saved = {}
    for i, g in enumerate(todo, 1):
        what = f"[{i}/{len(todo)}] {g.op.python_name} {g.dtype.name} ({g.variant.tag}{', streaming' if g.nontemporal else ''})"
        if sys.stdout.isatty():
            print(f"{what} ...", end="", flush=True)
        r = tune_group(g, args.rounds, args.target_ms / 1e3)
        saved[g.key] = {"width": r.width, "tile_size": r.tile, "formula": formula_digest(g.op.formula),
                        "us": r.us, "model_us": r.model_us, "when": time.strftime("%Y-%m-%d %H:%M:%S")}
        print(f"\r{what}: {_describe(r)}" if sys.stdout.isatty() else f"{what}: {_describe(r)}", flush=True)
        schedules.save({g.key: saved[g.key]})  # each as it is found: an interrupted run keeps them
    print(f"\n{count(len(saved), 'schedule')} saved to {schedules.path()} in {time.perf_counter() - start:.1f} s")
    return 0


def _describe(r: Result) -> str:
    chosen = "the model's schedule" if (r.width, r.tile) == (0, 0) else \
        f"width {r.width or 'model'}, tile {r.tile or MODEL_TILE}"
    times = ", ".join(f"{s} {r.us[s]:.1f} us (model {r.model_us[s]:.1f})" for s in r.us)
    return f"{chosen}: {times}; {r.speedup:.2f}x"


def _target_line() -> str:
    from aclgen.codegen.target import host

    h = host()
    return f"{h.cpu} ({h.f32_lanes} f32 lanes{', ' + h.override if h.override else ''})"


def show() -> int:
    found = schedules.entries()
    print(f"tuned schedules for {_target_line()}: {schedules.path()}")
    if not found:
        print("  (none: every variant compiles with the model's schedule; run `aclgen tune`)")
        return 0
    for key, e in sorted(found.items()):
        chosen = "model" if (e.get("width"), e.get("tile_size")) == (0, 0) else \
            f"width {e.get('width') or 'model'} tile {e.get('tile_size') or MODEL_TILE}"
        us = e.get("us", {})
        model = e.get("model_us", {})
        times = ", ".join(f"{s} {us[s]:.1f} us (model {model.get(s, float('nan')):.1f})" for s in us)
        print(f"  {key}: {chosen}; {times}")
    return 0


def add_subcommand(sub) -> None:
    s = sub.add_parser(
        "tune",
        help="time candidate schedules per kernel variant and remember the fastest for this machine",
        description="For each operator (default: the built-ins), float dtype and size, time kernels of "
        "several vector widths and tile sizes in interleaved rounds and save the fastest (when it beats "
        "the model by 3%) in the cache directory, per target CPU (ACLGEN_CPU_NAME/FEATURES included). "
        "Later compiles of those variants use it; variants never tuned use the model. Every candidate's "
        "results are checked bit for bit against the model's schedule.",
    )
    s.add_argument("ops", nargs="*", metavar="OP", help="operators: built-in or aclnn names, or FILE.py:NAME")
    s.add_argument("--dtypes", help="comma list (default: the float dtypes of the SoC profile)")
    s.add_argument("--sizes", help=f"comma list of sizes in elements (default {DEFAULT_SIZES}; 16M tunes "
                   "the streaming-store variant)")
    s.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5); the median counts")
    s.add_argument("--target-ms", type=float, default=10.0, help="length of one sample (default 10 ms)")
    s.add_argument("--show", action="store_true", help="print the tuned schedules of this target and exit")
    s.add_argument("--forget", action="store_true", help="delete the tuned schedules of this target")
    s.set_defaults(func=run)
