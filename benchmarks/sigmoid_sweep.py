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

import numpy as np
from sweep import inputs, report

import aclgen.ops as ops
from aclgen.ops.activation.glu import sigmoid64
from aclgen.ops.activation.swish_grad import swish_gradient_reference, swish_gradient_scale

RANGES = ((-210.0, -80.0), (-80.0, -5.0), (-5.0, 0.0), (0.0, 5.0), (5.0, 210.0))
LARGE = 1e30


def main() -> None:
    x = inputs(__doc__, 210.0)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        s64 = sigmoid64(x64)
        want = x64 * s64
        report("Silu", x, ops.silu(x), want, np.abs(want), RANGES)
        for factor in (1.0, LARGE):
            p = np.full_like(x, factor)
            p64 = p.astype(np.float64)
            want = swish_gradient_reference(p64, x64)
            report(f"SiluBackward (g = {factor:g})", x, ops.silu_backward(p, x), want,
                   swish_gradient_scale(p64, x64), RANGES)
            want = p64 * sigmoid64(-x64)
            report(f"LogSigmoidBackward (g = {factor:g})", x, ops.log_sigmoid_backward(p, x, np.zeros_like(x)),
                   want, np.abs(want), RANGES)
            want = p64 * s64
            got = np.asarray(ops.glu(np.stack([p, x], axis=-1), dim=-1))[:, 0]
            report(f"Glu (a = {factor:g})", x, got, want, np.abs(want), RANGES)


if __name__ == "__main__":
    main()
