"""activation/ge_glu_grad_v2: aclnnGeGluBackward(gradOutput, self, gelu, dim, approximate,
gradInput) and aclnnGeGluV3Backward(gradOutput, self, gelu, dim, approximate, activateLeft,
gradInput).

The gradient of GeGlu / GeGluV3 (ge_glu_v2.py): self splits along `dim` into halves; the linear
half L and the Gelu'd half G as there (G is the second half, or with activateLeft the first).
With g = gradOutput and `gelu` the forward's outGelu (both of a half's shape):

    grad_L = g * gelu,    grad_G = (g * L) * Gelu'(G)

and gradInput = grad_L and grad_G in L's and G's places, of self's shape. The doc page's formula
names only gradOutput times y_gelu; the kernel (op_kernel/ge_glu_grad_v2_*_base.h) decides: the
linear half's gradient takes the `gelu` input as given (it is not recomputed), the other is the
derivative of the approximate's Gelu at G, times g * L. Gelu'(x) is Φ(x) + x φ(x) for approximate
0 (none) and σ(z) + x σ(z) σ(-z) z'(x), z = 2√(2/π)(x + 0.044715 x³), for 1 (tanh) (gelu.py's
and GeluBackwardV2's forms; CANN's erf kernel uses a polynomial Φ clamped at |x/√2| = 3.92, the
exact Φ is followed). x = ±inf gives NaN in both (inf * 0, as the kernel's formulas), NaN
propagates.

Checks, in op_api's order (aclnn_geglu_backward.cpp): gradOutput, self, gelu, gradInput nullptr
(161001); gradOutput's dtype in the SoC's list, self's, gelu's and gradInput's equal to it; gelu
of gradOutput's shape; gradInput of self's shape; dim in [-rank, rank-1] (for a 0-d self, [-1,
0]); gradOutput of self's shape with dim halved (a 0-d self or an odd size cannot be); approximate
0 or 1 (161002 each). No dims limit (op_api checks none). An empty gradOutput returns at once.
An attribute of another kind (possible from Python only) is 161002 where the check reads it.

dtypes: FLOAT, FLOAT16, BFLOAT16 on Atlas A2/A3 and Ascend950; FLOAT, FLOAT16 on Ascend310P
(whose doc note allows only approximate 1, which op_api does not check); not on Ascend910.

Bound: 256 ulp of the output dtype (gelu.py's: rounded arguments amplified in the left tail),
at the reference's scale: Gelu'(G) crosses 0 near G = -0.75 and cancels there (the scale is the
size of its two terms times |g * L|); below G = -13 it is subnormal in f32 and keeps only its
bits, a few 2^-149 * |g * L|. Down to float64's zero of Gelu' (G = -38.58 none, -21.16 tanh) an
f32 Gelu' that underflowed is kept at -2^-149, so that an infinite g * L times it is -inf as in
the float64 formula.
"""

import numpy as np

import aclgen
from aclgen import Attr, Split, f32, logical_and, logical_or, maximum, select
from aclgen.ops.activation.ge_glu_v2 import APPROXIMATE, DIM, TANH, approximate_value, split_dim
from aclgen.ops.activation.gelu import (
    SQRT_8_OVER_PI,
    gelu_slope,
    normal_cdf_reference,
    normal_pdf_reference,
    tanh_slope_terms,
    tanh_z_reference,
)
from aclgen.ops.activation.glu import grad_input_shapes, grad_result, sigmoid64

INF = float("inf")
A2 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend310P": A2[:2], "Ascend910": ()}
# the last x where float64's Gelu'(x) is not 0, per approximate (below it, 0)
LAST = {0: f32(-38.575496673583984), TANH: f32(-21.159788131713867)}
TAIL = -5.0  # below it Gelu'(x) < 0
NEG_TINY = -(2.0**-149)


def check(call):
    """op_api's order (see the module docstring)."""
    call.present("gradOutput", "self", "gelu", "gradInput")  # the tensors; dim and approximate where used
    call.dtype_in("gradOutput")
    call.same_dtype("self", "gelu", "gradInput", ref="gradOutput")
    call.same_shape("gelu", ref="gradOutput")
    call.same_shape("gradInput", ref="self")
    half = split_dim(call, "self")
    call.halves(half, "gradOutput")
    approximate_value(call)
    call.present(*(a.name for a in call.op.attrs))  # activateLeft (GeGluV3Backward)
    call.shape = half


def gelu_derivative(x, approximate: int):
    """Gelu'(x) for `approximate` (see the module docstring), kept at -2^-149 where it underflowed
    above float64's zero."""
    if approximate == TANH:
        sigma, second = tanh_slope_terms(x)
        # beyond |x| = 1e4 the second term is 0 to any precision, but x * z' overflows f32 and
        # meets sigmoid's 0 (inf * 0); +-inf keeps the formula's NaN
        big = logical_and(abs(x) > 1e4, abs(x) < INF)
        d = sigma + select(big, 0.0, second)
    else:
        d = gelu_slope(x)
    under = logical_and(logical_and(x < TAIL, x >= LAST[approximate]), d > NEG_TINY)
    return select(under, NEG_TINY, d)


def gradients(g, linear, x, gelu, approximate: int):
    """(grad of the linear half, grad of the Gelu'd half)."""
    d = gelu_derivative(x, approximate)
    gl = g * linear
    first = logical_or(abs(gl) < INF, maximum(abs(g), abs(linear)) == INF)
    return g * gelu, select(first, gl * d, g * (linear * d))


def _derivative_terms(x, approximate):
    """float64 (first term, second term) of Gelu'(x)."""
    if approximate == TANH:
        z = tanh_z_reference(x)
        s = sigmoid64(z)
        return s, x * s * sigmoid64(-z) * SQRT_8_OVER_PI * (1.0 + 3.0 * 0.044715 * x * x)
    return normal_cdf_reference(x), x * normal_pdf_reference(x)


def ge_glu_v3_backward_reference(g, x, gelu, dim, approximate, activate_left):
    a, b = np.split(x, 2, axis=dim)
    linear, xg = (b, a) if activate_left else (a, b)
    with np.errstate(all="ignore"):
        t1, t2 = _derivative_terms(xg, approximate)
        grad_g = g * linear * (t1 + t2)
    parts = (grad_g, g * gelu) if activate_left else (g * gelu, grad_g)
    return np.concatenate(parts, axis=dim)


def _scale(g, x, gelu, dim, approximate, activate_left):
    """grad_G: the size of Gelu''s two terms times |g * L|, and at least 2^-126 * |g * L|
    (grad_L is one product: its own size)."""
    a, b = np.split(x, 2, axis=dim)
    linear, xg = (b, a) if activate_left else (a, b)
    with np.errstate(all="ignore"):
        t1, t2 = _derivative_terms(xg, approximate)
        gl = np.abs(g * linear)
        s = np.nan_to_num(gl * (np.abs(t1) + np.abs(t2)) + float(np.finfo(np.float32).tiny) * gl, nan=0.0,
                          posinf=np.inf)
    zero = np.zeros_like(s)
    return np.concatenate((s, zero) if activate_left else (zero, s), axis=dim)


def ge_glu_backward_reference(g, x, gelu, dim, approximate):
    return ge_glu_v3_backward_reference(g, x, gelu, dim, approximate, False)


ge_glu_v3_backward_reference.scale = _scale  # type: ignore[attr-defined]
ge_glu_backward_reference.scale = (  # type: ignore[attr-defined]
    lambda g, x, gelu, dim, approximate: _scale(g, x, gelu, dim, approximate, False))

SPLIT = Split("self", dim="dim", into=("a", "b"), whole=("gradInput",), whole_into=("gradA", "gradB"))


@aclgen.operator(
    "GeGluBackward",
    inputs=("gradOutput", "self", "gelu"),
    attrs=(DIM, APPROXIMATE),
    outputs=("gradInput",),
    dtypes=DTYPES,
    broadcast=False,
    max_rank=None,
    check=check,
    split=SPLIT,
    result=grad_result,
    input_shapes=grad_input_shapes("GeGluBackward", "self", "hwh"),
    reference=ge_glu_backward_reference,
    tolerance=256,
    half_forms="terms",
)
def ge_glu_backward(g, a, b, gelu, approximate):
    """The gradient of GeGlu(self) along `dim`, applied to `gradOutput` (with the forward's `gelu`)."""
    return gradients(g, a, b, gelu, approximate)


@aclgen.operator(
    "GeGluV3Backward",
    inputs=("gradOutput", "self", "gelu"),
    attrs=(DIM, APPROXIMATE, Attr("activateLeft", "bool", default=False)),
    outputs=("gradInput",),
    dtypes=DTYPES,
    broadcast=False,
    max_rank=None,
    check=check,
    split=SPLIT,
    result=grad_result,
    input_shapes=grad_input_shapes("GeGluBackward", "self", "hwh"),
    reference=ge_glu_v3_backward_reference,
    tolerance=256,
    half_forms="terms",
)
def ge_glu_v3_backward(g, a, b, gelu, approximate, activate_left):
    """The gradient of GeGluV3(self) along `dim`, applied to `gradOutput` (with the forward's `gelu`)."""
    if activate_left:
        grad_b, grad_a = gradients(g, b, a, gelu, approximate)
        return grad_a, grad_b
    return gradients(g, a, b, gelu, approximate)
