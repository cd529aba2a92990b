"""aclnnSwiGluGrad(yGrad, x, dim, out) (SPEC.md §4.4).

x splits along `dim` into halves A | B; with s = sigmoid(A):
out_A = g * B * (s + s * (1 - s) * A), out_B = g * s * A. The kernel has three inputs
(yGrad, A, B) and two outputs (out_A, out_B), all strided views of x and out (`split`).
"""

import numpy as np

import aclgen
from aclgen import Attr, Split, f32, select, sigmoid
from aclgen.ops.activation.glu import grad_input_shapes, grad_result
from aclgen.runtime import constants as C

A2 = ("float16", "float32", "bfloat16")
INF = float("inf")
TINY = f32(2.0**-149)
F64_SIGMOID_ZERO = f32(-709.78271484375)  # the f32 nearest -ln(DBL_MAX) with exp(-A) = inf in f64
FORMATS = (C.ACL_FORMAT_ND, C.ACL_FORMAT_NCHW, C.ACL_FORMAT_NHWC, C.ACL_FORMAT_NCDHW, C.ACL_FORMAT_NCL)


def check(call):
    """CANN's order: dtypes, formats, out's shape (161002), then dim and yGrad's shape, which
    CANN finds while tiling (561002: the split's status)."""
    call.present("yGrad", "x", "out")
    call.dtype_in()
    call.same_dtype()
    call.format_in(FORMATS)
    call.same_shape("out", ref="x")
    half = call.split_shape()
    call.halves(half, "yGrad")
    call.shape = half


# SPEC.md §4.4: yGrad [2, 16] = -2..29, x [2, 32] = -2..61, dim = -1, float32. exp is not exact
# on any hardware (§4.4 holds it to a bound), so the printed values must agree to 1e-5 relative.
EXAMPLE = aclgen.Example(
    (np.arange(-2, 30, dtype=np.float32).reshape(2, 16), np.arange(-2, 62, dtype=np.float32).reshape(2, 32), -1),
    tuple("2.541959 -1.0849423 0 15.770399 39.268234 62.021935 84.21317 107.78748 133.62709 161.87914 192.45053 "
          "225.22208 260.10623 297.0496 336.0227 377.01022 0.47681168 0.26894143 0 0.7310586 3.5231884 8.573167 "
          "15.71222 24.832678 35.910984 48.955357 63.97854 80.990005 99.99546 120.99798 143.99911 168.99962".split())
    + tuple(str(644 + 61 * k + k * (k - 1)) for k in range(16))  # row 1, A half: 644, 705, ..., 1769
    + tuple(str(420 + 45 * k + k * (k - 1)) for k in range(16)),  # row 1, B half: 420, 465, ..., 1305
    rtol=1e-5,
)


@aclgen.operator(
    "SwiGluGrad",
    inputs=("yGrad", "x"),
    attrs=(Attr("dim", "int64", default=-1),),
    outputs=("out",),
    dtypes={
        "Ascend910B": A2,
        "Ascend910_93": A2,
        "Ascend950": A2,
        "Ascend310P": ("float16", "float32"),
        "Ascend910": (),
    },
    broadcast=False,
    max_rank=None,
    check=check,
    split=Split("x", dim="dim", into=("a", "b"), whole=("out",), whole_into=("outA", "outB"),
                status=C.ACLNN_ERR_INNER_TILING_ERROR),
    result=grad_result,
    input_shapes=grad_input_shapes("SwiGluGrad", "x", "hw"),
    examples=(EXAMPLE,),
)
def swi_glu_grad(y_grad, a, b):
    """The gradient of SwiGLU(x) = silu(A) * B along `dim`, applied to `yGrad`."""
    s = sigmoid(a)
    # For A < -103.97, sigmoid(A) > 0 underflows f32 to 0, and inf * 0 would give NaN where the
    # float64 formula of SPEC §4.4 gives +-inf; the smallest subnormal keeps the sign and stays
    # within the bound's slack. Below F64_SIGMOID_ZERO float64's exp(-A) overflows too, its sigmoid
    # is 0 and the reference NaN, so there the exact 0 stays. s >= 0 (or NaN, which the select
    # keeps), so this is max(s, floor): a compare, an and and a max, none on the multiply pipes.
    floor = select(a > F64_SIGMOID_ZERO, TINY, 0.0)
    s = select(s < floor, floor, s)
    d = s + s * (1.0 - s) * a
    # g * B * d in an order that cannot overflow before the result does, with infinities that
    # stay infinite. |d| <= 1.1, so (g * d) * B overflows early only for |g| > FLT_MAX / 1.1 and
    # |B| < 1, where (g * B) * d cannot; and where B = +-inf while g * d underflowed to 0 (NaN; the
    # float64 formula gives +-inf), (g * B) * d is +-inf. So: the first unless it is not finite
    # (which needs all three finite). (g * s) * A needs no care: |g * s| <= |g|.
    p = y_grad * d * b
    p = select(abs(p) < INF, p, y_grad * b * d)
    return p, y_grad * s * a
