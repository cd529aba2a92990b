"""norm/rms_norm_grad: aclnnRmsNormGrad(dy, x, rstd, gamma, dxOut, dgammaOut).

The doc's backward of RmsNorm over the trailing dims gamma spans (N of them, n elements):
dxOut = (dy * gamma - rstd * x * mean(dy * gamma * x * rstd)) * rstd, and
dgammaOut = the sum over the other dims of rstd * x * dy, gamma's shape. The two reduce different
dims, so they are two kernels of one executor: dx a row at a time, dgamma over the rows.

dtypes: the doc's table of (dy, x, rstd, gamma, dxOut, dgammaOut): dy, x and dxOut of one dtype,
rstd and dgammaOut float32, gamma float32 or dy's dtype (Ascend910/310P: float16 or float32,
gamma dy's). Checks: the tensors present (161001); the combination, at most 8 dims (161002); the shapes (561002:
CANN finds them while tiling): x and dxOut dy's shape, gamma the end of it, rstd dy's shape with
gamma's dims 1, dgammaOut gamma's. Bound (tests): 4 ulp of the output dtype at the size of the terms.
"""

import numpy as np

import aclgen
from aclgen import Tensor
from aclgen.ops.norm.rms_norm import trailing
from aclgen.runtime import constants as C
from aclgen.runtime.tensor import fmt_dims

# (dy, x, rstd, gamma, dxOut, dgammaOut), the doc's table
A2 = tuple((d, d, "float32", g, d, "float32") for d, g in
           (("float32", "float32"), ("float16", "float32"), ("bfloat16", "float32"), ("float16", "float16"),
            ("bfloat16", "bfloat16")))
OLD = (("float32",) * 6, ("float16", "float16", "float32", "float16", "float16", "float32"))
DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": OLD, "Ascend310P": OLD}


def check(call):
    call.present()
    call.dtype_combination()
    call.max_rank()
    reduced = trailing(call, "gamma", "dy")
    dy = call.tensor("dy").view_dims
    for name, want in (("x", dy), ("dxOut", dy), ("rstd", reduced), ("dgammaOut", call.tensor("gamma").view_dims)):
        if call.tensor(name).view_dims != want:
            raise call.error(C.ACLNN_ERR_INNER_TILING_ERROR,
                             f"{name} shape {fmt_dims(call.tensor(name).view_dims)} must be {fmt_dims(want)}")
    call.out_shape(dy)


def reference(dy, x, rstd, gamma):
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    dyg = dy * gamma
    dx = (dyg - rstd * x * (dyg * x * rstd).mean(axes, keepdims=True)) * rstd
    return dx, (rstd * x * dy).sum(tuple(range(x.ndim - gamma.ndim)))


def _scale(dy, x, rstd, gamma):
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    n, rows = int(np.prod(gamma.shape)), x.size // max(gamma.size, 1)
    dyg = np.abs(dy * gamma)
    dx = (dyg + np.abs(rstd * x) * (dyg * np.abs(x * rstd)).mean(axes, keepdims=True)) * np.abs(rstd)
    return dx * (1 + n / 128), np.abs(rstd * x * dy).sum(tuple(range(x.ndim - gamma.ndim))) * (1 + rows / 128)


reference.scale = _scale  # type: ignore[attr-defined]


@aclgen.operator(
    "RmsNormGrad",
    inputs=("dy", "x", "rstd", "gamma"),
    outputs=("dxOut", Tensor("dgammaOut", dtype="float32", keepdims=False)),
    dtypes=DTYPES,
    broadcast=True,
    check=check,
    reference=reference,
    tolerance=4,
    input_shapes=lambda shape: [tuple(shape), tuple(shape), (*shape[:-1], 1), tuple(shape[-1:])],
)
def rms_norm_grad(dy, x, rstd, gamma):
    """The gradients of RmsNorm: dx a row at a time, dgamma summed over the rows."""
    dyg = dy * gamma
    dx = (dyg - rstd * x * aclgen.mean(dyg * x * rstd, gamma)) * rstd
    return dx, aclgen.sum(rstd * x * dy, keep=gamma)
