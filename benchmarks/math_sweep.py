"""The exhaustive accuracy sweep of aclgen's math functions: every one of the 2^32 float32 inputs,
through the kernels aclgen generates (fused and unfused multiply-adds), against float64.

    python benchmarks/math_sweep.py                       # every function, the table of docs/math.md
    python benchmarks/math_sweep.py tanh erf --stride 97  # a sample: every 97th bit pattern
    ACLGEN_CPU_NAME=haswell python benchmarks/math_sweep.py exp   # another ISA

The inputs go through in chunks of 2^24 (`--chunk`), one float64 reference per chunk for both
FMA modes. The error of a result is |got - ref| / ulp(ref) with ulp(ref) = 2^(e - 23) for ref in
[2^e, 2^(e+1)), 2^-149 below 2^-126 and 2^104 at or above 2^128, where +inf and references
beyond 2^128 count as 2^128: an overflow to inf where the exact value rounds to inf costs nothing. Besides the largest error, each
row counts what must be exact: NaN where the reference is NaN and nowhere else, the infinite
results (log(0), exp(inf), ...) and the sign of zero results ("exactness faults"; 0 everywhere),
and the noFMA row how many inputs give other bits than with FMA.

`--half` sweeps the functions' half-type forms instead (the code a function gets where only a
float16 or bfloat16 output stores its result: exp, exp2, sigmoid, log, log2, log1p, erf, pow,
and rsqrt with AVX-512F and FMA; docs/math.md),
compiled with `half="all"`; their contract is a relative error of 2^-16, which is 128 f32 ulps
at most (an ulp is 2^-23 of the value at most), over every f32 input, with the same exactness.

    python benchmarks/math_sweep.py exp exp2 sigmoid log log2 log1p erf pow rsqrt --half

pow takes two arguments: `pow` sweeps three grids of (x, y) instead (see `pow_grids`), against
float64 with C99 Annex F's special cases; tests/compiler/test_math_pow.py checks the special cases bit for
bit.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
import scipy.special as sp

import aclgen
from aclgen.codegen import target


def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _erfinv(x: np.ndarray, start: np.ndarray) -> np.ndarray:
    """erfinv by Newton's method in float64 from `start` (the f32 result under test: two steps
    take its ~2^-23 to double precision), the residual through erfc where |x| > 1/2 (1 - |x| is
    exact there); scipy's erfinv (exact to double, but 1.4 us a value, and 4 us for |x| > 1)
    only where that does not converge. NaN for |x| > 1 and NaN, +-inf at +-1."""
    a = np.abs(x)
    y = np.abs(start.astype(np.float64))
    tail = a > 0.5
    for _ in range(2):
        res = np.where(tail, (1 - a) - sp.erfc(y), sp.erf(y) - a)
        y = y + res * (np.sqrt(np.pi) / 2) * np.exp(y * y)
    res = np.where(tail, (1 - a) - sp.erfc(y), sp.erf(y) - a) / np.where(tail, 1 - a, a)
    slow = (a < 1) & ~(np.abs(res) < 1e-14) & ~(a == 0)
    y = np.copysign(y, x)
    y[slow] = sp.erfinv(x[slow])
    y[~(a < 1)] = np.nan
    y[a == 1] = np.copysign(np.inf, x[a == 1])
    return y


#: float64 references of the one-argument functions: f(x64) or, for "erfinv", f(x64, f32 result).
REFERENCES: dict[str, Callable[..., np.ndarray]] = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "sigmoid": _sigmoid, "log": np.log, "log2": np.log2,
    "log1p": np.log1p, "tanh": np.tanh, "erf": sp.erf, "erfc": sp.erfc, "erfinv": _erfinv,
    "rsqrt": lambda x: 1 / np.sqrt(x),
}
NEEDS_RESULT = {"erfinv"}


@numba.njit(cache=True)
def _stats(got: np.ndarray, ref: np.ndarray, out: np.ndarray) -> None:
    """One pass over a chunk: out = [worst error, its index, results over 1 ulp, exactness
    faults, the first fault's index] (errors as in the module docstring)."""
    worst, at, over, faults, first = -1.0, -1, 0, 0, -1
    for i in range(got.size):
        g, r = np.float64(got[i]), ref[i]
        bad = np.isnan(g) != np.isnan(r)
        if np.isinf(r):
            bad |= g != r
        if r == 0 and g == 0:
            bad |= np.signbit(g) != np.signbit(r)
        if bad:
            faults += 1
            if first < 0:
                first = i
            continue
        if np.isnan(r):
            continue
        if np.isinf(g):
            g = np.copysign(2.0**128, g)
        r = min(max(r, -(2.0**128)), 2.0**128)
        e = math.frexp(r)[1] - 1
        e = min(max(e, -126), 127)
        err = abs(g - r) / math.ldexp(1.0, e - 23)
        if err > 1:
            over += 1
        if err > worst:
            worst, at = err, i
    out[0], out[1], out[2], out[3], out[4] = worst, at, over, faults, first


@numba.njit(cache=True)
def _differ(a: np.ndarray, b: np.ndarray) -> int:
    """How many results differ in their bits (NaNs of any payload are alike)."""
    n = 0
    ai, bi = a.view(np.uint32), b.view(np.uint32)
    for i in range(a.size):
        if ai[i] != bi[i] and not (np.isnan(a[i]) and np.isnan(b[i])):
            n += 1
    return n


@dataclass
class Row:
    function: str
    fma: str
    worst: float = -1.0
    where: str = ""
    faults: int = 0
    first_fault: str | None = None
    over_1: int = 0
    count: int = 0
    seconds: float = 0.0
    fma_differs: int = 0  # on the noFMA row: inputs whose results differ from the FMA row's

    def add(self, got: np.ndarray, ref: np.ndarray, where: Callable[[int], str]) -> None:
        """Count a chunk in; `where(i)` names its i-th input."""
        st = np.zeros(5)
        _stats(got, ref, st)
        worst, at, over, faults, first = st
        self.count += got.size
        self.over_1 += int(over)
        if faults:
            self.faults += int(faults)
            if self.first_fault is None:
                self.first_fault = where(int(first))
        if worst > self.worst:
            self.worst, self.where = float(worst), where(int(at))


def hex32(v: float) -> str:
    """An f32 in C's hex notation, as short as it goes (-0x1.776972p+2)."""
    m, _, e = float.hex(v).partition("p")
    return f"{m.rstrip('0').rstrip('.')}p{e}" if e else m


def compiled(name: str, fma: str, half: str = "off") -> Callable:
    fn = getattr(aclgen, name)
    formula = (lambda x, y: fn(x, y)) if name == "pow" else (lambda x: fn(x))
    return aclgen.compile(formula, fma=fma, half=half, name=f"sweep_{name}_{fma}_{half}")


def sweep(name: str, chunk: int, stride: int, fmas: tuple[str, ...], half: str = "off") -> list[Row]:
    ref_fn = REFERENCES[name]
    fns = {fma: compiled(name, fma, half) for fma in fmas}
    rows = {fma: Row(name, fma) for fma in fmas}
    span = chunk * stride
    outs = {fma: np.empty(chunk, np.float32) for fma in fmas}
    for start in range(0, 2**32, span):
        bits = np.arange(start, min(start + span, 2**32), stride, dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        got = {}
        for fma, fn in fns.items():
            t = time.perf_counter()
            got[fma] = fn(x, out=outs[fma][: x.size])
            rows[fma].seconds += time.perf_counter() - t
        with np.errstate(all="ignore"):
            x64 = x.astype(np.float64)
            ref = ref_fn(x64, got[fmas[0]]) if name in NEEDS_RESULT else ref_fn(x64)
        for fma in fmas:
            rows[fma].add(got[fma], ref, lambda i, x=x: hex32(float(x[i])))
        if len(fmas) == 2:
            rows[fmas[1]].fma_differs += _differ(got[fmas[0]], got[fmas[1]])
    return list(rows.values())


def pow_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x ** y in float64 with C99 Annex F's special cases (numpy's power takes a square root for
    y = 0.5: -0 and -inf give -0 and NaN there, not +0 and +inf)."""
    r = np.power(x, y)
    ax = np.abs(x)
    yint = np.rint(y) == y
    neg = np.signbit(x) & yint & (np.rint(y / 2) != y / 2)
    r = np.where(np.isinf(y), np.where(ax == 1, 1.0, np.where((ax < 1) == (y > 0), 0.0, np.inf)), r)
    m1 = np.where((ax == 0) != (y < 0), 0.0, np.inf)
    r = np.where((ax == 0) | np.isinf(x), np.where(neg, -m1, m1), r)
    r = np.where((x < 0) & np.isfinite(x) & ~yint, np.nan, r)
    r = np.where(np.isnan(x) | np.isnan(y), np.nan, r)
    return np.where((y == 0) | (x == 1), 1.0, r)


def pow_grids() -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    """pow's (x, y) chunks: (1) every 1024th f32 bit pattern times 257 y (integers -40..40,
    half-integers, +-{1e-7 ... 3.7e7} and 64 random +-e^U(-9, 9)); (2) every x with |x| in
    [0.5, 2) times 15 y; (3) 2^22 random x in [0.5, 2) (half of them with 9-bit mantissas) with
    y chosen so that |y log2 x| is in [60, 149]: results near overflow and underflow, where
    log2 x's own error is multiplied most."""
    rng = np.random.default_rng(17)
    special = [1e-7, 1e-3, 0.1, 0.2, 1 / 3, 1.7, 3.3, 11.1, 37.5, 100.1, 127.9, 149.3, 1234.5, 65537, 1e6, 3.7e7]
    ys = np.concatenate([np.arange(-40, 41), np.arange(-39.5, 40), special, np.negative(special),
                         rng.choice([-1, 1], 64) * np.exp(rng.uniform(-9, 9, 64))]).astype(np.float32)
    x1 = np.arange(0, 2**32, 1024, dtype=np.uint64).astype(np.uint32).view(np.float32)
    lo, hi = np.float32(0.5).view(np.uint32), np.float32(2.0).view(np.uint32)
    half = np.arange(lo, hi, dtype=np.uint32).view(np.float32)
    x2 = np.concatenate([half, -half])
    y2 = np.array([2, 3, -1, 0.5, 1.5, -2.5, 7.3, 30, -31, 100.37, 1000, -1000, 12345.678, -3.3e4, 1 / 3], np.float32)
    n = 1 << 21
    x3 = np.concatenate([rng.uniform(0.5, 2, n), np.round(rng.uniform(0.5, 2, n) * 512) / 512]).astype(np.float32)
    t = rng.uniform(60, 149, 2 * n) * rng.choice([-1, 1], 2 * n)
    with np.errstate(divide="ignore"):
        y3 = (t / np.log2(x3.astype(np.float64))).astype(np.float32)
    keep = np.isfinite(y3)
    return {
        "grid 1": [(x1, np.full_like(x1, y)) for y in ys],
        "grid 2": [(x2, np.full_like(x2, y)) for y in y2],
        "grid 3": [(x3[keep], y3[keep])],
    }


def sweep_pow(fmas: tuple[str, ...], half: str = "off") -> list[Row]:
    fns = {fma: compiled("pow", fma, half) for fma in fmas}
    rows = []
    for grid, chunks in pow_grids().items():
        grid_rows = {fma: Row(f"pow ({grid})", fma) for fma in fmas}
        for x, y in chunks:
            got = {fma: fn(x, y) for fma, fn in fns.items()}
            with np.errstate(all="ignore"):
                ref = pow_reference(x.astype(np.float64), y.astype(np.float64))
            for fma in fmas:
                grid_rows[fma].add(got[fma], ref, lambda i, x=x, y=y: f"{hex32(float(x[i]))}, {hex32(float(y[i]))}")
            if len(fmas) == 2:
                grid_rows[fmas[1]].fma_differs += _differ(got[fmas[0]], got[fmas[1]])
        rows += grid_rows.values()
    return rows


def isa() -> str:
    """The LLVM CPU the kernels are generated for (ACLGEN_CPU_NAME's, or this machine's)."""
    return target.host().cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("functions", nargs="*", default=[*REFERENCES, "pow"], help="default: all")
    ap.add_argument("--chunk", type=int, default=2**24, help="inputs per kernel call")
    ap.add_argument("--stride", type=int, default=1, help="every STRIDE-th bit pattern (1: all 2^32)")
    ap.add_argument("--fma", choices=("both", "on", "off"), default="both")
    ap.add_argument("--half", action="store_true", help="the half-type forms (bound: 128 ulp, 2^-16)")
    args = ap.parse_args(argv)
    unknown = [f for f in args.functions if f not in REFERENCES and f != "pow"]
    if unknown:
        ap.error(f"unknown functions {unknown}; known: {', '.join(REFERENCES)}, pow")
    fmas = ("on", "off") if args.fma == "both" else (args.fma,)
    cpu = isa()
    n = math.ceil(2**32 / args.stride)
    print(f"# aclgen math sweep: {n:,} inputs per one-argument function (stride {args.stride}), pow on its grids; "
          f"{platform.processor() or platform.machine()}, aclgen CPU {cpu}", flush=True)
    print("| function | max ulp | where | FMA | ISA | > 1 ulp | exactness faults | differs from FMA |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    failed = False
    for name in args.functions:
        half = "all" if args.half else "off"
        rows = sweep_pow(fmas, half) if name == "pow" else sweep(name, args.chunk, args.stride, fmas, half)
        for row in rows:
            if args.half:
                row.function += " (half form)"
            fault = f"{row.faults} (first at {row.first_fault})" if row.faults else "0"
            print(f"| {row.function} | {row.worst:.3f} | {row.where} | "
                  f"{'FMA' if row.fma == 'on' else 'noFMA'} | {cpu} | {row.over_1} | {fault} | "
                  f"{f'{row.fma_differs:,}' if row.fma == 'off' and len(fmas) == 2 else ''} |", flush=True)
            failed |= row.faults > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
