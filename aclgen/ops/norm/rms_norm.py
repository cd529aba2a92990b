"""norm/rms_norm: aclnnRmsNorm(x, gamma, epsilon, yOut, rstdOut).

rstd = 1 / sqrt(mean(x^2) + epsilon) over the trailing dims gamma spans (gamma's shape is the end
of x's), yOut = x * rstd * gamma, rstdOut = rstd with those dims 1 (the doc's formula; the kernel
multiplies by the reciprocal, as the doc's rstdOut implies). `epsilon` is a C double attribute
(default 1e-6), a constant of the kernel.

dtypes: the doc's table of combinations of (x, gamma): float16 or bfloat16 x with float32 gamma,
or x and gamma of one dtype; yOut has x's dtype and rstdOut is float32 (Ascend910 and Ascend310P:
float16 and float32 only). Checks in CANN's order: the tensors present (161001); the dtype
combination, yOut's and rstdOut's dtypes, at most 8 dims (161002); then the shapes (CANN finds them while tiling:
561002): gamma the end of x's shape and not empty, yOut x's shape, rstdOut x's with gamma's dims 1.
Bound (tests): 4 ulp of the output dtype against float64 (mean's sum rounds in n / 32 lanes).
"""

import numpy as np

import aclgen
from aclgen import Attr, Tensor
from aclgen.runtime import constants as C
from aclgen.runtime.tensor import fmt_dims

# (x, gamma, yOut, rstdOut), the doc's table
A2 = tuple((x, g, x, "float32") for x, g in (("float32", "float32"), ("float16", "float32"),
                                            ("bfloat16", "float32"), ("float16", "float16"), ("bfloat16", "bfloat16")))
OLD = (("float32",) * 4, ("float16", "float16", "float16", "float32"))
DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": OLD, "Ascend310P": OLD}


def trailing(call, name: str, of: str, status: int = C.ACLNN_ERR_INNER_TILING_ERROR) -> tuple[int, ...]:
    """`name`'s shape is the end of `of`'s and not empty (gamma_shape = x_shape[n:]): the shape
    `of` has with those dims 1."""
    t, x = call.tensor(name).view_dims, call.tensor(of).view_dims
    if not t or len(t) > len(x) or x[len(x) - len(t):] != t or not call.tensor(name).numel:
        raise call.error(status, f"{name} shape {fmt_dims(t)} must be the last dims of {of} shape {fmt_dims(x)}")
    return tuple(1 if k >= len(x) - len(t) else n for k, n in enumerate(x))


def check(call):
    call.present()
    call.dtype_combination()
    call.max_rank()
    reduced = trailing(call, "gamma", "x")
    tiling = C.ACLNN_ERR_INNER_TILING_ERROR
    for name, want in (("yOut", call.tensor("x").view_dims), ("rstdOut", reduced)):
        if call.tensor(name).view_dims != want:
            raise call.error(tiling, f"{name} shape {fmt_dims(call.tensor(name).view_dims)} must be {fmt_dims(want)}")
    call.out_shape(call.tensor("x").view_dims)


def reference(x, gamma, epsilon):
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    rstd = 1 / np.sqrt((x * x).mean(axes, keepdims=True) + np.float32(epsilon))
    return x * rstd * gamma, rstd


def _scale(x, gamma, epsilon):
    y, rstd = reference(x, gamma, epsilon)
    n = int(np.prod(gamma.shape))
    return np.abs(y) * (1 + n / 128), np.abs(rstd) * (1 + n / 128)


reference.scale = _scale  # type: ignore[attr-defined]


@aclgen.operator(
    "RmsNorm",
    inputs=("x", "gamma"),
    attrs=(Attr("epsilon", "double", default=1e-6),),
    outputs=("yOut", Tensor("rstdOut", dtype="float32")),
    dtypes=DTYPES,
    broadcast=True,
    check=check,
    reference=reference,
    tolerance=4,
    input_shapes=lambda shape: [tuple(shape), tuple(shape[-1:])],
)
def rms_norm(x, gamma, epsilon):
    """x / sqrt(mean(x^2) + epsilon) * gamma over gamma's dims, and that reciprocal (rstd)."""
    rstd = aclgen.rsqrt(aclgen.mean(x * x, gamma) + epsilon)
    return x * rstd * gamma, rstd
