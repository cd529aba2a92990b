"""activation/mish: aclnnMish(self, out) and aclnnInplaceMish(selfRef).

Formula (doc page's 计算公式): out = x * tanh(softplus(x)), softplus(x) = ln(1 + e^x). With
n = e^x, tanh(ln(1 + n)) = n (n + 2) / (n (n + 2) + 2) exactly, which is how CANN's kernel computes
it (that form for x < 0 and, divided through by n², (1 + 2m) / (1 + 2m + 2m²) with m = e^-x for
x >= 0). Here one exp, m = e^-|x|, gives both sides (`mish_parts`); for x < -64 the factor m is
carried scaled by e^-64 (sigmoid.times_small), so a result below FLT_MIN is still rounded once.
x = +inf gives +inf, x = -inf gives NaN (-inf * tanh(0), as the float64 formula), NaN propagates.
Bound: 4 ulp of the output dtype against float64.

dtypes: FLOAT16, FLOAT, BFLOAT16; FLOAT16 and FLOAT on the Atlas training series; the Atlas
inference series is not supported (every call 161002). out has self's dtype and shape.

Checks (op_api's order = SPEC §6's default): self and out present (161001); self's, then out's
dtype in the SoC's list, out's equal to self's; at most 8 dims for self and out; out's shape equal
to self's (161002). (The doc's table also names a `dim` out of range: Mish has no dim.) The
in-place API runs the same checks with selfRef as both.
"""

import numpy as np

import aclgen
from aclgen import exp, select, unlikely
from aclgen.ops.activation.sigmoid import BIG, E_MINUS_BIG, times_small

HALF_FLOAT_BF16 = ("float16", "float32", "bfloat16")
DTYPES = {"Ascend910B": HALF_FLOAT_BF16, "Ascend910_93": HALF_FLOAT_BF16, "Ascend950": HALF_FLOAT_BF16,
          "Ascend910": HALF_FLOAT_BF16[:2], "Ascend310P": ()}


def mish_parts(x):
    """(t, one_minus_t2, s, k): tanh(softplus(x)) = t * k, 1 - tanh² = one_minus_t2 and
    σ(x) = s * k, from m = e^-|x|. k = 1, except for x < -64, where t and s (then about e^x)
    are carried as e^(64 + x)-sized values and k = f32(e^-64). 1 - tanh² is formed without
    cancellation: 2m² (1 + t) / (1 + 2m + 2m²) for x >= 0."""
    a = abs(x)
    big = unlikely(a > BIG)
    ms = exp(select(big, BIG - a, -a))  # m / k
    k = select(big, E_MINUS_BIG, 1.0)
    m = ms * k
    pos = x >= 0.0
    # x >= 0: tanh = (1 + 2m) / (1 + 2m + 2m²); x < 0: tanh = m (m + 2) / (m (m + 2) + 2)
    num = select(pos, 1.0 + 2.0 * m, m * (m + 2.0))
    den = select(pos, num + 2.0 * (m * m), num + 2.0)
    r = 1.0 / den
    t = num * r
    t_scaled = select(pos, t, (ms * (m + 2.0)) * r)
    one_minus_t2 = select(pos, 2.0 * (m * m) * r * (1.0 + t), 1.0 - t * t)
    q = 1.0 / (1.0 + m)
    s_scaled = select(pos, q, ms * q)
    return t_scaled, one_minus_t2, s_scaled, select(pos, 1.0, k)


def tanh_softplus_reference(x):
    with np.errstate(over="ignore"):
        return np.tanh(np.logaddexp(0.0, x))


def mish_reference(x):
    with np.errstate(invalid="ignore"):
        return x * tanh_softplus_reference(x)


@aclgen.operator(
    "Mish",
    inputs=("self",),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    inplace="self",
    reference=mish_reference,
    tolerance=4,
    backward="MishBackward",
)
def mish(x):
    """x * tanh(softplus(x)), element by element."""
    t, _, _, k = mish_parts(x)
    return times_small(x, t, k)
