"""aclnnSwiGluGrad(yGrad, x, dim, out) (SPEC.md §4.4).

x splits along `dim` into halves A | B; with s = sigmoid(A):
out_A = g * B * (s + s * (1 - s) * A), out_B = g * s * A. The kernel has three inputs
(yGrad, A, B) and two outputs (out_A, out_B), all strided views of x and out.
"""

import operator

from aclgen.frontend import f32, logical_and, select, sigmoid
from aclgen.ops import entry
from aclgen.ops.operator import Operator
from aclgen.runtime import checks, planner
from aclgen.runtime import constants as C
from aclgen.runtime.errors import AclError
from aclgen.runtime.tensor import fmt_dims

A2 = ("float16", "float32", "bfloat16")
INF = float("inf")
TINY = f32(2.0**-149)
F64_SIGMOID_ZERO = f32(-709.78271484375)  # the f32 nearest -ln(DBL_MAX) with exp(-A) = inf in f64


def formula(y_grad, a, b):
    s = sigmoid(a)
    # For A < -103.97, sigmoid(A) > 0 underflows f32 to 0, and inf * 0 would give NaN where the
    # float64 formula of SPEC §4.4 gives +-inf; the smallest subnormal keeps the sign and stays
    # within the bound's slack. Below F64_SIGMOID_ZERO float64's exp(-A) overflows too, its sigmoid
    # is 0 and the reference NaN, so there the exact 0 stays.
    s = select(logical_and(s == 0.0, a > F64_SIGMOID_ZERO), TINY, s)
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


# ==============================================================================================
# aclnn binding: aclnnSwiGluGradGetWorkspaceSize's checks, in SPEC.md §4.4's order
# ==============================================================================================

API = "aclnnSwiGluGrad"
NAMES = ("yGrad", "x", "out")
FORMATS = (C.ACL_FORMAT_ND, C.ACL_FORMAT_NCHW, C.ACL_FORMAT_NHWC, C.ACL_FORMAT_NCDHW, C.ACL_FORMAT_NCL)


def _tiling_error(message: str) -> AclError:
    return AclError(C.ACLNN_ERR_INNER_TILING_ERROR, f"{API}: {message}")


def get_workspace_size(y_grad, x, dim, out):
    """Check the arguments and plan the call; returns the executor (raises AclError)."""
    args = (y_grad, x, out)
    if type(dim) is int:
        executor = planner.reuse(API, args, dim)  # these very objects passed every check before
        if executor is not None:
            return executor
    g = checks.tensor(API, "yGrad", y_grad)
    xt = checks.tensor(API, "x", x)
    o = checks.tensor(API, "out", out)
    codes, names, _ = checks.allowed(OP, checks.soc())
    checks.dtype_in(API, "yGrad", g, codes, names)
    checks.dtype_in(API, "x", xt, codes, names)
    checks.dtype_in(API, "out", o, codes, names)
    checks.same_dtype(API, "x", xt, "yGrad", g)
    checks.same_dtype(API, "out", o, "yGrad", g)
    checks.format_in(API, "yGrad", g, FORMATS)
    checks.format_in(API, "x", xt, FORMATS)
    checks.format_in(API, "out", o, FORMATS)
    checks.same_shape(API, "out", o, "x", xt)
    if isinstance(dim, bool) or not isinstance(dim, int):
        try:
            dim = operator.index(dim)
        except TypeError:
            raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"{API}: dim must be an int, got {dim!r}") from None
    rank = len(xt.view_dims)
    if not -rank <= dim < rank:
        raise _tiling_error(f"dim {dim} is outside [{-rank}, {rank - 1}] for x of {rank} dims")
    d = dim % rank
    if xt.view_dims[d] % 2:
        raise _tiling_error(f"x dim {d} has odd size {xt.view_dims[d]}, it must split into two halves")
    half = tuple(n // 2 if k == d else n for k, n in enumerate(xt.view_dims))
    if g.view_dims != half:
        raise _tiling_error(f"yGrad shape {fmt_dims(g.view_dims)} must equal x shape with dim {d} halved "
                            f"{fmt_dims(half)}")
    memo = (args, dim) if type(dim) is int else None
    return planner.build(API, OP, NAMES, (g, xt, o), 2, xt.view_dims, (), _split, d, memo)


def _split(views_in, views_out, itemsize: int, d: int):
    """Kernel operands: yGrad, x's halves A and B; out's halves. All span yGrad's shape."""
    g, x = views_in
    (o,) = views_out
    return g[2], [g, *_halves(x, d, itemsize)], list(_halves(o, d, itemsize))


def _halves(view, d: int, itemsize: int):
    src, delta, dims, strides = view
    h = dims[d] // 2
    dims_h = tuple(h if k == d else n for k, n in enumerate(dims))
    return (src, delta, dims_h, strides), (src, delta + h * strides[d] * itemsize, dims_h, strides)


# ==============================================================================================
# numpy entry point
# ==============================================================================================


def swi_glu_grad(y_grad, x, dim=-1, out=None):
    """The gradient of SwiGLU(x) = silu(A) * B along `dim`, applied to `y_grad`."""
    done = entry.replay(API, (y_grad, x), (dim,), out)
    if done is not None:
        return done
    g, xa = entry.array(y_grad), entry.array(x)
    shape, dtype = (entry.shape_of(xa), xa.dtype) if xa is not None else ((), None)
    out = entry.output(API, "out", out, shape, dtype)
    args = [entry.tensor(API, "yGrad", g), entry.tensor(API, "x", xa), dim]
    return entry.run(get_workspace_size, API, args, out, "out", (g, xa), (dim,))
