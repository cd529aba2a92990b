"""activation/gelu_v2: aclnnGeluV2(x, approximate, y).

Formula (doc page's 计算公式): y = x * Φ(x), with `approximate` (int64) choosing how: 1 is the tanh
approximation, x * σ(z) with z = 2√(2/π)(x + 0.044715 x³) (aclnnGelu's formula, gelu.tanh_z);
any other value is the exact x * Φ(x) (gelu.normal_cdf: φ(x) times the Mills ratio). The doc gives 0
(none) and 1 (tanh) and lists no error for other values; op_api maps 1 to "tanh" and every other
value to "none", as here. CANN's kernel computes 0.5x(1 + erf(x/√2)), which cancels for x < 0;
φ(x) M(|x|) does not. x = -inf gives NaN in both modes (-inf * 0, as in the float64 formula and the
kernel), +inf gives +inf, NaN propagates.

Bound: 256 ulp of the output dtype against the float64 formula (the tails' rounded arguments, as
aclnnGelu's docstring says; φ(x)'s rounded x² adds about x² * 2^-25 relative: 65 ulp near x = -13
on a dense f32 sweep). Nothing in it cancels (Φ(x) = 1 - φ M above 0, where φ M <= 1/2), so its
terms are the result itself (`scale`) and its float16 and bfloat16 kernels compute exp in its
half-type form (`half_forms`: 2^-17 of the value against a half-type ulp of 2^-8 or 2^-11), where
the analysis of uses alone kept the float32 form for the exact mode's 1 - φ M (bfloat16 at 1M:
850-1000 -> 710-850 µs).

dtypes: FLOAT32, FLOAT16, BFLOAT16; FLOAT32 and FLOAT16 on the Atlas training and inference series
(the doc's note). y has x's dtype and shape; no dims limit in op_api.

Checks (op_api's order), 161001 for a NULL x or y, else 161002: y's dtype equal to x's; x's dtype
in the SoC's list; y's shape equal to x's.
"""

import numpy as np

import aclgen
from aclgen import Attr
from aclgen.ops.activation.gelu import (
    DTYPES,
    normal_cdf,
    normal_cdf_reference,
    sigmoid_reference,
    tanh_z,
    tanh_z_reference,
)
from aclgen.ops.activation.sigmoid import times_sigmoid

TANH = 1  # op_api's Approximate::TANH; every other value is "none"


def check(call):
    """CANN's order: presence, one dtype, the dtype list, the shape."""
    call.present()
    call.same_dtype("y", ref="x")
    call.dtype_in("x")
    call.out_shape(call.same_shape("y", ref="x"))


def gelu_v2_reference(x, approximate=0):
    with np.errstate(all="ignore"):
        if approximate == TANH:
            return x * sigmoid_reference(tanh_z_reference(x))
        return x * normal_cdf_reference(x)


def gelu_v2_scale(x, approximate=0):
    """The size of its terms: the result (x times Φ(x) or σ(z), no cancellation)."""
    return np.abs(gelu_v2_reference(x, approximate))


gelu_v2_reference.scale = gelu_v2_scale  # type: ignore[attr-defined]


@aclgen.operator(
    "GeluV2",
    inputs=("x",),
    attrs=(Attr("approximate", "int64", default=0),),
    outputs=("y",),
    dtypes=DTYPES,
    broadcast=False,
    max_rank=None,
    check=check,
    reference=gelu_v2_reference,
    tolerance=256,
    half_forms="terms",
)
def gelu_v2(x, approximate):
    """GELU x * Φ(x): exact (erf) for approximate != 1, the tanh approximation for approximate = 1."""
    if approximate == TANH:
        return times_sigmoid(x, tanh_z(x))
    return x * normal_cdf(x)
