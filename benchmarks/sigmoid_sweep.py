"""The sigmoid-based operators' accuracy over a dense float32 sweep, against their float64
references: Silu (x σ(x)), SiluBackward (g σ(x) (1 + x σ(-x))), LogSigmoidBackward (g σ(-x)) and
Glu (a σ(b)), each with a unit factor and with a large one (1e30), where a σ below FLT_MIN
must keep its bits (sigmoid.sigmoid_quotient's scaled tail, aclgen/ops/activation/sigmoid.py).

The products with σ are not language functions, so they have no exhaustive table in
docs/math.md; this sweep is their measurement. Every `--step`th float32 bit pattern of
[0, 210] and its negative goes through: the tail (x < -80), where the result underflows (below
-200 for the large factor) and SiluBackward's cancellation near x = -1.2785 are covered. Errors
are in ulp of float32 at the larger of the reference and the size of its terms (the references'
`scale`, as the family test measures them); a result that is not finite where the reference is,
or the other way round, is counted apart.

    python benchmarks/sigmoid_sweep.py              # every 211th bit pattern: ~10 M inputs
    python benchmarks/sigmoid_sweep.py --step 31    # denser (~70 M inputs)
"""

from __future__ import annotations

import argparse

import numpy as np

import aclgen.ops as ops
from aclgen.ops.activation.glu import sigmoid64
from aclgen.ops.activation.swish_grad import swish_gradient_reference, swish_gradient_scale

RANGES = ((-210.0, -80.0), (-80.0, -5.0), (-5.0, 0.0), (0.0, 5.0), (5.0, 210.0))
TOP = 0x43520000  # 210.0's bit pattern
LARGE = 1e30


def ulp_at(scale: np.ndarray) -> np.ndarray:
    """float32's ulp at each |value| (the smallest subnormal's below FLT_MIN)."""
    return np.spacing(np.maximum(scale, 2.0**-126).astype(np.float32)).astype(np.float64)


def report(name: str, x: np.ndarray, got: np.ndarray, want: np.ndarray, scale: np.ndarray) -> float:
    got64 = got.astype(np.float64)
    ok = np.isfinite(want) & np.isfinite(got64)
    err = np.where(ok, np.abs(got64 - want) / ulp_at(np.maximum(np.abs(want), scale)), 0.0)
    worst = int(np.argmax(err))
    ranges = "  ".join(f"[{lo:g}, {hi:g}) {err[(x >= lo) & (x < hi)].max():.2f}" for lo, hi in RANGES)
    odd = int(np.count_nonzero(np.isfinite(want) != np.isfinite(got64)))
    print(f"{name}: max {err.max():.2f} ulp at x = {float(x[worst])!r}; {ranges}; not finite apart: {odd}")
    return float(err.max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--step", type=int, default=211, help="take every STEP-th bit pattern (default 211)")
    args = parser.parse_args()
    bits = np.arange(0, TOP, args.step, dtype=np.uint32)
    x = np.concatenate([bits.view(np.float32), -bits.view(np.float32)])
    x64 = x.astype(np.float64)
    print(f"{x.size} inputs, every {args.step}th float32 in [-210, 210]")
    with np.errstate(all="ignore"):
        s64 = sigmoid64(x64)
        want = x64 * s64
        report("Silu", x, np.asarray(ops.silu(x)), want, np.abs(want))
        for factor in (1.0, LARGE):
            p = np.full_like(x, factor)
            p64 = p.astype(np.float64)
            want = swish_gradient_reference(p64, x64)
            report(f"SiluBackward (g = {factor:g})", x, np.asarray(ops.silu_backward(p, x)), want,
                   swish_gradient_scale(p64, x64))
            want = p64 * sigmoid64(-x64)
            report(f"LogSigmoidBackward (g = {factor:g})", x,
                   np.asarray(ops.log_sigmoid_backward(p, x, np.zeros_like(x))), want, np.abs(want))
            want = p64 * s64
            got = np.asarray(ops.glu(np.stack([p, x], axis=-1), dim=-1))[:, 0]
            report(f"Glu (a = {factor:g})", x, got, want, np.abs(want))


if __name__ == "__main__":
    main()
