"""The exact GELU's accuracy over a dense float32 sweep: GeluV2 (approximate none, x * Φ(x)) and
GeluBackward (Φ(x) + x φ(x), gradOutput = 1) against their float64 references, by range of x.

Φ is φ(x) times the Mills ratio (aclgen/ops/activation/gelu.py), not a language function, so
it has no exhaustive table in docs/math.md; this sweep is its measurement. Every `--step`th
float32 bit pattern of [0, 18] and its negative goes through, so both tails (where φ(x) is
subnormal beyond |x| = 13.2) and the cancellation of GeluBackward's terms near x = -0.7518 are
covered. Errors are in ulp of float32 at the larger of the reference and the size of its terms
(the references' `scale`), as the family test measures them.

    python benchmarks/gelu_sweep.py              # every 211th bit pattern: ~10 M inputs
    python benchmarks/gelu_sweep.py --step 7     # denser (~300 M inputs, minutes, GiBs)
"""

from __future__ import annotations

import argparse

import numpy as np

from aclgen.ops.activation.gelu import normal_cdf_reference
from aclgen.ops.activation.gelu_grad import gelu_backward, gelu_backward_reference, gelu_backward_scale
from aclgen.ops.activation.gelu_v2 import gelu_v2

RANGES = ((-20.0, -13.0), (-13.0, -5.0), (-5.0, -1.0), (-1.0, 0.0), (0.0, 5.0), (5.0, 20.0))
TOP = 0x41900000  # 18.0's bit pattern


def ulp_at(scale: np.ndarray) -> np.ndarray:
    """float32's ulp at each |value| (the smallest subnormal's below FLT_MIN)."""
    return np.spacing(np.maximum(scale, 2.0**-126).astype(np.float32)).astype(np.float64)


def report(name: str, x: np.ndarray, got: np.ndarray, want: np.ndarray, scale: np.ndarray) -> None:
    ok = np.isfinite(want)
    err = np.where(ok, np.abs(got.astype(np.float64) - want) / ulp_at(np.maximum(np.abs(want), scale)), 0.0)
    worst = int(np.argmax(err))
    print(f"{name}: max {err.max():.2f} ulp at x = {float(x[worst])!r}")
    for lo, hi in RANGES:
        inside = ok & (x >= lo) & (x < hi)
        if inside.any():
            print(f"  [{lo:g}, {hi:g}): {err[inside].max():.2f}")
    nan_where_finite = int(np.count_nonzero(~np.isfinite(got) & ok))
    print(f"  results not finite where the reference is: {nan_where_finite}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--step", type=int, default=211, help="take every STEP-th bit pattern (default 211)")
    args = parser.parse_args()
    bits = np.arange(0, TOP, args.step, dtype=np.uint32)
    x = np.concatenate([bits.view(np.float32), -bits.view(np.float32)])
    x64 = x.astype(np.float64)
    print(f"{x.size} inputs, every {args.step}th float32 in [-18, 18]")
    with np.errstate(all="ignore"):
        want = x64 * normal_cdf_reference(x64)
        report("GeluV2 (none)", x, np.asarray(gelu_v2(x, approximate=0)), want, np.abs(want))
        ones = np.ones_like(x)
        want = gelu_backward_reference(ones.astype(np.float64), x64)
        scale = gelu_backward_scale(ones.astype(np.float64), x64)
        report("GeluBackward", x, np.asarray(gelu_backward(ones, x)), want, scale)


if __name__ == "__main__":
    main()
