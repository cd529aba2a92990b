"""What the dense float32 sweeps share (gelu_sweep.py, sigmoid_sweep.py): the inputs, every
`--step`th float32 bit pattern of [0, top] and their negatives, and the report of one operator's
errors in ulp of float32 at the larger of the reference and the size of its terms (the
references' `scale`, as the family test measures them), by range of x."""

from __future__ import annotations

import argparse

import numpy as np


def inputs(doc: str, top: float) -> np.ndarray:
    """The sweep's float32 inputs for the command line (`--step`, default 211)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--step", type=int, default=211, help="take every STEP-th bit pattern (default 211)")
    args = parser.parse_args()
    bits = np.arange(0, int(np.float32(top).view(np.uint32)) + 1, args.step, dtype=np.uint32)
    x = np.concatenate([bits.view(np.float32), -bits.view(np.float32)])
    print(f"{x.size} inputs, every {args.step}th float32 in [-{top:g}, {top:g}]")
    return x


def ulp_at(scale: np.ndarray) -> np.ndarray:
    """float32's ulp at each |value| (the smallest subnormal's below FLT_MIN)."""
    return np.spacing(np.maximum(scale, 2.0**-126).astype(np.float32)).astype(np.float64)


def report(name: str, x: np.ndarray, got: np.ndarray, want: np.ndarray, scale: np.ndarray,
           ranges: tuple[tuple[float, float], ...]) -> float:
    """Print the largest error (and where), per range of x, and how many results are not finite
    where the reference is or the other way round; return the largest."""
    got64 = np.asarray(got).astype(np.float64)
    ok = np.isfinite(want) & np.isfinite(got64)
    err = np.where(ok, np.abs(got64 - want) / ulp_at(np.maximum(np.abs(want), scale)), 0.0)
    worst = int(np.argmax(err))
    by_range = "  ".join(f"[{lo:g}, {hi:g}) {err[(x >= lo) & (x < hi)].max(initial=0.0):.2f}" for lo, hi in ranges)
    odd = int(np.count_nonzero(np.isfinite(want) != np.isfinite(got64)))
    print(f"{name}: max {err.max():.2f} ulp at x = {float(x[worst])!r}; {by_range}; not finite apart: {odd}")
    return float(err.max())
