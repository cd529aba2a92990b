"""activation/gelu: aclnnGelu(self, out).

Formula (doc page's 计算公式): out = 0.5 * x * (1 + tanh(√(2/π) * (x + 0.044715 x³))), the tanh
approximation of x * Φ(x). 0.5 * (1 + tanh(k)) is σ(2k), which is how CANN's kernel computes it
(x / (1 + e^(-2k))); so here out = x * σ(z) with z = 2k = x * (√(8/π) + √(8/π) * 0.044715 * x²),
without the cancellation 1 + tanh(k) has for x < 0. x = -inf gives NaN (-inf * 0, as the
kernel's -inf / inf), +inf gives +inf, NaN propagates.

Bound: 256 ulp of the output dtype against the float64 formula; 4 ulp for |x| < 2. The f32 z
carries about 2 ulp of relative error, which e^z turns into |z| * 2 ulp relative in σ(z) for
z < 0: up to ~180 ulp near z = -87 (x ≈ -10), below which the result is subnormal.

The helpers the GELU family shares (GeluBackward, GeluV2, GeluBackwardV2) live here too:
`tanh_z` (z = 2k above), `normal_cdf` (Φ(x) = erfc(-x/√2) / 2, accurate in the left tail where
(1 + erf(x/√2)) / 2 cancels) and `normal_pdf` (φ(x) = e^(-x²/2) / √(2π)).

dtypes: FLOAT, FLOAT16, BFLOAT16; FLOAT and FLOAT16 on the Atlas training and inference series
(the doc's note). out has self's dtype and shape.

Checks (op_api's order), 161001 for a NULL self or out, else 161002: self's dtype in the SoC's
list; out's dtype equal to self's; neither in a private format (NC1HWC0, FRACTAL_Z, FRACTAL_NZ,
...: only ND, NCHW, NHWC, HWCN, NDHWC, NCDHW, NC, NCL); at most 8 dims for self; out's shape
equal to self's.
"""

import math

import numpy as np

import aclgen
from aclgen import erfc, exp, f32
from aclgen.ops.activation.swish import swish_value
from aclgen.runtime import constants as C

FLOATS = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOATS, "Ascend910_93": FLOATS, "Ascend950": FLOATS,
          "Ascend910": FLOATS[:2], "Ascend310P": FLOATS[:2]}
PUBLIC_FORMATS = (C.ACL_FORMAT_ND, C.ACL_FORMAT_NCHW, C.ACL_FORMAT_NHWC, C.ACL_FORMAT_HWCN, C.ACL_FORMAT_NDHWC,
                  C.ACL_FORMAT_NCDHW, C.ACL_FORMAT_NC, C.ACL_FORMAT_NCL)

SQRT_8_OVER_PI = math.sqrt(8.0 / math.pi)  # z = 2k = √(8/π) (x + 0.044715 x³)
TANH_B = f32(SQRT_8_OVER_PI)
TANH_A = f32(SQRT_8_OVER_PI * 0.044715)
INV_SQRT2 = f32(1.0 / math.sqrt(2.0))
INV_SQRT_2PI = f32(1.0 / math.sqrt(2.0 * math.pi))


def tanh_z(x):
    """z = 2 * √(2/π) * (x + 0.044715 x³), so that 0.5 * (1 + tanh(z / 2)) = σ(z)."""
    return x * (TANH_B + TANH_A * (x * x))


def tanh_z_reference(x):
    return SQRT_8_OVER_PI * (x + 0.044715 * x**3)


def normal_cdf(x):
    """Φ(x) = erfc(-x / √2) / 2."""
    return 0.5 * erfc(x * -INV_SQRT2.value)


def normal_pdf(x):
    """φ(x) = e^(-x² / 2) / √(2π)."""
    return exp(-0.5 * (x * x)) * INV_SQRT_2PI


_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def normal_cdf_reference(x):
    return 0.5 * _erfc(-x / math.sqrt(2.0))


def normal_pdf_reference(x):
    return np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def sigmoid_reference(z):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-z))


def check(call):
    """CANN's order: presence, the dtype list, one dtype, formats, the rank, the shape."""
    call.present()
    call.dtype_in("self")
    call.same_dtype("out")
    call.format_in(PUBLIC_FORMATS, "self", "out")
    call.max_rank("self")
    call.out_shape(call.same_shape("out"))


def gelu_reference(x):
    with np.errstate(all="ignore"):
        return x * sigmoid_reference(tanh_z_reference(x))


@aclgen.operator(
    "Gelu",
    inputs=("self",),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    reference=gelu_reference,
    tolerance=256,
)
def gelu(x):
    """GELU by its tanh approximation, 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))), element by element."""
    return swish_value(x, tanh_z(x))
