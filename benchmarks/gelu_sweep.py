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

import numpy as np
from sweep import inputs, report

from aclgen.ops.activation.gelu import normal_cdf_reference
from aclgen.ops.activation.gelu_grad import gelu_backward, gelu_backward_reference, gelu_backward_scale
from aclgen.ops.activation.gelu_v2 import gelu_v2

RANGES = ((-20.0, -13.0), (-13.0, -5.0), (-5.0, -1.0), (-1.0, 0.0), (0.0, 5.0), (5.0, 20.0))


def main() -> None:
    x = inputs(__doc__, 18.0)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        want = x64 * normal_cdf_reference(x64)
        report("GeluV2 (none)", x, gelu_v2(x, approximate=0), want, np.abs(want), RANGES)
        ones = np.ones_like(x)
        want = gelu_backward_reference(ones.astype(np.float64), x64)
        scale = gelu_backward_scale(ones.astype(np.float64), x64)
        report("GeluBackward", x, gelu_backward(ones, x), want, scale, RANGES)


if __name__ == "__main__":
    main()
