"""aclnnSwiGluGrad(yGrad, x, dim, out) (SPEC.md §4.4).

x splits along `dim` into halves A | B; with s = sigmoid(A):
out_A = g * B * (s + s * (1 - s) * A), out_B = g * s * A. The kernel has three inputs
(yGrad, A, B) and two outputs (out_A, out_B), all strided views of x and out.
"""

from aclgen.frontend import select, sigmoid
from aclgen.ops.entry import OperatorError, check_dtypes, make_out
from aclgen.ops.operator import Operator, launch

A2 = ("float16", "float32", "bfloat16")
INF = float("inf")


def formula(y_grad, a, b):
    s = sigmoid(a)
    d = s + s * (1.0 - s) * a
    # g * B * d: any fixed order of three factors can overflow before the result does (g = FLT_MAX,
    # |d| < 1), and one of the three orders cannot; so take the first order whose result is
    # finite, or the plain one when none is. (g * s) * A needs no care: |g * s| <= |g|.
    p1 = y_grad * b * d
    p = select(abs(p1) < INF, p1, y_grad * (b * d))
    p = select(abs(p) < INF, p, y_grad * d * b)
    p = select(abs(p) < INF, p, p1)
    return p, y_grad * s * a


OP = Operator(
    name="swi_glu_grad",
    aclnn="SwiGluGrad",
    formula=formula,
    inputs=("yGrad", "a", "b"),
    outputs=("outA", "outB"),
    dtypes={
        "Ascend910B": A2,
        "Ascend910_93": A2,
        "Ascend950": A2,
        "Ascend310P": ("float16", "float32"),
        "Ascend910": (),
    },
)


def halves(a, dim: int):
    """The two halves of `a` along `dim` (views)."""
    h = a.shape[dim] // 2
    lo = [slice(None)] * a.ndim
    hi = [slice(None)] * a.ndim
    lo[dim], hi[dim] = slice(0, h), slice(h, None)
    return a[tuple(lo)], a[tuple(hi)]


def swi_glu_grad(y_grad, x, dim=-1, out=None):
    """The gradient of SwiGLU(x) = silu(A) * B along `dim`, applied to `y_grad`."""
    g, x = check_dtypes(OP, y_grad, x)
    rank = x.ndim
    if not -rank <= dim < rank:
        raise OperatorError(f"{OP.name}: dim {dim} is outside [{-rank}, {rank - 1}]", 561002)
    dim %= rank
    if x.shape[dim] % 2:
        raise OperatorError(f"{OP.name}: x.shape[{dim}] = {x.shape[dim]} is odd", 561002)
    half = tuple(n // 2 if k == dim else n for k, n in enumerate(x.shape))
    if g.shape != half:
        raise OperatorError(f"{OP.name}: yGrad shape {g.shape} must be {half}", 561002)
    out = make_out(OP, out, x.shape, x.dtype)
    a, b = halves(x, dim)
    out_a, out_b = halves(out, dim)
    launch(OP, [g, a, b], [out_a, out_b])
    return out
