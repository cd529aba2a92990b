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
results (log(0), exp(inf), ...) and the sign of zero results ("bad" column; 0 everywhere).

pow takes two arguments: its dense grid and special cases are tests/test_math_pow.py's, not this.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.special as sp

import aclgen
from aclgen.codegen import target


def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _erfinv(x: np.ndarray) -> np.ndarray:
    """scipy's erfinv, polished by one Newton step on erfc (exact 1 - |x| for |x| >= 1/2) where
    |x| > 0.9, where erfinv's slope makes its own error largest."""
    y = sp.erfinv(x)
    a, ya = np.abs(x), np.abs(y)
    tail = np.isfinite(y) & (a > 0.9)
    res = sp.erfc(ya[tail]) - (1 - a[tail])
    ya[tail] += res / (2 / np.sqrt(np.pi) * np.exp(-ya[tail] ** 2))
    return np.copysign(ya, x)


#: float64 references of the one-argument functions.
REFERENCES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "sigmoid": _sigmoid, "log": np.log, "log2": np.log2,
    "log1p": np.log1p, "tanh": np.tanh, "erf": sp.erf, "erfc": sp.erfc, "erfinv": _erfinv,
    "rsqrt": lambda x: 1 / np.sqrt(x),
}


def ulp_error(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| / ulp(ref) in float64 (see the module docstring); NaN where ref is NaN."""
    g = got.astype(np.float64)
    g = np.where(np.isinf(g), np.copysign(2.0**128, g), g)
    r = np.clip(ref, -(2.0**128), 2.0**128)
    _, e = np.frexp(r)
    ulp = np.ldexp(1.0, np.clip(e - 1, -126, 127) - 23)
    return np.abs(g - r) / ulp


def exactness_faults(x: np.ndarray, got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Where a result that must be exact is not: NaN in one but not the other, an infinite
    reference not met exactly, a zero result of the wrong sign."""
    nan_g, nan_r = np.isnan(got), np.isnan(ref)
    bad = nan_g != nan_r
    inf = np.isinf(ref)
    bad |= inf & (got.astype(np.float64) != ref)
    zero = (ref == 0) & (got == 0)
    bad |= zero & (np.signbit(got) != np.signbit(ref))
    return bad


@dataclass
class Row:
    function: str
    fma: str
    worst: float = -1.0
    where: float = 0.0
    faults: int = 0
    first_fault: float | None = None
    over_1: int = 0
    count: int = 0
    seconds: float = 0.0
    hist: dict[float, int] = field(default_factory=dict)

    def add(self, x: np.ndarray, got: np.ndarray, ref: np.ndarray) -> None:
        bad = exactness_faults(x, got, ref)
        if bad.any():
            if self.first_fault is None:
                self.first_fault = float(x[np.argmax(bad)])
            self.faults += int(bad.sum())
        ok = ~bad & ~np.isnan(ref)
        err = ulp_error(got[ok], ref[ok])
        self.count += x.size
        if err.size:
            k = int(np.argmax(err))
            if err[k] > self.worst:
                self.worst, self.where = float(err[k]), float(x[ok][k])
            self.over_1 += int((err > 1).sum())


def hex32(v: float) -> str:
    """An f32 in C's hex notation, as short as it goes (-0x1.776972p+2)."""
    m, _, e = float.hex(v).partition("p")
    return f"{m.rstrip('0').rstrip('.')}p{e}" if e else m


def compiled(name: str, fma: str) -> Callable:
    return aclgen.compile(lambda x: getattr(aclgen, name)(x), fma=fma, name=f"sweep_{name}_{fma}")


def sweep(name: str, chunk: int, stride: int, fmas: tuple[str, ...]) -> list[Row]:
    ref_fn = REFERENCES[name]
    fns = {fma: compiled(name, fma) for fma in fmas}
    rows = {fma: Row(name, fma) for fma in fmas}
    span = chunk * stride
    out = np.empty(chunk, np.float32)
    for start in range(0, 2**32, span):
        bits = np.arange(start, min(start + span, 2**32), stride, dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        with np.errstate(all="ignore"):
            ref = ref_fn(x.astype(np.float64))
        for fma, fn in fns.items():
            t = time.perf_counter()
            got = fn(x, out=out[: x.size])
            rows[fma].seconds += time.perf_counter() - t
            with np.errstate(all="ignore"):
                rows[fma].add(x, got, ref)
    return list(rows.values())


def isa() -> str:
    """The LLVM CPU the kernels are generated for (ACLGEN_CPU_NAME's, or this machine's)."""
    return target.host().cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("functions", nargs="*", default=list(REFERENCES), help="default: all")
    ap.add_argument("--chunk", type=int, default=2**24, help="inputs per kernel call")
    ap.add_argument("--stride", type=int, default=1, help="every STRIDE-th bit pattern (1: all 2^32)")
    ap.add_argument("--fma", choices=("both", "on", "off"), default="both")
    args = ap.parse_args(argv)
    unknown = [f for f in args.functions if f not in REFERENCES]
    if unknown:
        ap.error(f"unknown functions {unknown}; known: {', '.join(REFERENCES)}")
    fmas = ("on", "off") if args.fma == "both" else (args.fma,)
    cpu = isa()
    n = math.ceil(2**32 / args.stride)
    print(f"# aclgen math sweep: {n:,} inputs per function (stride {args.stride}), {platform.processor() or platform.machine()}, "
          f"aclgen CPU {cpu}", flush=True)
    print("| function | max ulp | where | FMA | ISA | > 1 ulp | exactness faults |")
    print("|---|---|---|---|---|---|---|", flush=True)
    failed = False
    for name in args.functions:
        for row in sweep(name, args.chunk, args.stride, fmas):
            fault = f"{row.faults} (first at x = {row.first_fault!r})" if row.faults else "0"
            print(f"| {row.function} | {row.worst:.3f} | {hex32(row.where)} | "
                  f"{'FMA' if row.fma == 'on' else 'noFMA'} | {cpu} | {row.over_1} | {fault} |", flush=True)
            failed |= row.faults > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
