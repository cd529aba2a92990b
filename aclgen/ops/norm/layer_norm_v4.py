"""norm/layer_norm_v4: aclnnLayerNorm(input, normalizedShape, weightOptional, biasOptional, eps,
out, meanOutOptional, rstdOutOptional).

Over the trailing dims normalizedShape names (input is [A1..Ai, R1..Rj], normalizedShape
[R1..Rj]): mean = E[x], rstd = 1 / sqrt(Var[x] + eps), out = (x - mean) * rstd * weight + bias
(the doc's formula). The variance is the mean of (x - mean)^2, a second pass over the row (no
cancellation of E[x^2] - E[x]^2). A missing weight is ones, a missing bias zeros (the doc: the
operator builds them); meanOutOptional and rstdOutOptional have the reduced shape [A1..Ai, 1..1]
and may be left out (NULL). normalizedShape enters the kernel as its length only: one kernel per
rank of the norm, whatever the hidden size.

dtypes (input, weight, bias, out, mean, rstd): one float dtype throughout, or float16/bfloat16
input with float32 weight and bias (the doc: weight and bias are input's dtype or FLOAT, and each
other's); mean and rstd have input's dtype. Atlas training and 200I/500 A2: no bfloat16; Atlas
inference (Ascend310P) does not support it. Checks in the doc's order: input, normalizedShape
and out present (161001); then 161002: more than 8 dims (normalizedShape included), the dtypes,
an empty normalizedShape, weight's or bias's shape not normalizedShape, input of fewer dims than
normalizedShape or whose trailing dims differ from it, out not input's shape (mean and rstd
not the reduced shape). An empty input has nothing to compute.
Bound (tests): 4 ulp of the output dtype at the size of the terms.
"""

import numpy as np

import aclgen
from aclgen import Attr, Tensor
from aclgen.runtime import constants as C
from aclgen.runtime.tensor import fmt_dims

ONE = tuple((d,) * 6 for d in ("float32", "float16", "bfloat16"))
MIXED = tuple((d, "float32", "float32", d, d, d) for d in ("float16", "bfloat16"))
A2 = ONE + MIXED
NO_BF16 = tuple(row for row in A2 if "bfloat16" not in row)
DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": NO_BF16}


def check(call):
    call.present()
    shape = call.attr("normalizedShape")
    call.max_rank()
    if len(shape) > 8:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"normalizedShape has {len(shape)} dims, at most 8 are supported")
    call.dtype_combination()
    if not shape:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, "normalizedShape must name at least one dim")
    for name in call.given(("weightOptional", "biasOptional")):
        dims = call.tensor(name).view_dims
        if dims != tuple(shape):
            raise call.error(C.ACLNN_ERR_PARAM_INVALID,
                             f"{name} shape {fmt_dims(dims)} must equal normalizedShape {fmt_dims(shape)}")
    x = call.tensor("input").view_dims
    if len(x) < len(shape) or x[len(x) - len(shape):] != tuple(shape):
        raise call.error(C.ACLNN_ERR_PARAM_INVALID,
                         f"input shape {fmt_dims(x)} must end with normalizedShape {fmt_dims(shape)}")
    call.out_shape(x)


def _axes(x, shape):
    return tuple(range(x.ndim - len(shape), x.ndim))


def reference(x, weight, bias, shape, eps):
    axes = _axes(x, shape)
    mean = x.mean(axes, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axes, keepdims=True) + eps)
    y = (x - mean) * rstd
    return y * (1 if weight is None else weight) + (0 if bias is None else bias), mean, rstd


def _scale(x, weight, bias, shape, eps):
    """The size of the terms: |x - mean| rounds at |x|'s ulp, the sums at n / 32 lanes, and a
    mean below FLT_MIN at the subnormals' spacing, which rstd then scales."""
    axes = _axes(x, shape)
    _, mean, rstd = reference(x, weight, bias, shape, eps)
    n = int(np.prod(shape))
    grow = 1 + n / 128
    w = 1 if weight is None else np.abs(weight)
    tiny = float(np.finfo(np.float32).tiny)
    terms = (np.abs(x) + np.abs(mean) + tiny) * np.abs(rstd) * w + (0 if bias is None else np.abs(bias))
    big = np.abs(x).max(axes, keepdims=True) * np.abs(rstd)
    return terms * grow + big, (np.abs(mean) + np.abs(x).mean(axes, keepdims=True)) * grow, np.abs(rstd) * grow


reference.scale = _scale  # type: ignore[attr-defined]


@aclgen.operator(
    "LayerNorm",
    inputs=("input", Tensor("weightOptional", optional=True, default=1.0),
            Tensor("biasOptional", optional=True, default=0.0)),
    attrs=(Attr("normalizedShape", "int64[]", kernel=len, example=lambda shape: shape[-1:]),
           Attr("eps", "double", default=1e-5)),
    outputs=("out", Tensor("meanOutOptional", optional=True), Tensor("rstdOutOptional", optional=True)),
    order=("input", "normalizedShape", "weightOptional", "biasOptional", "eps", "out", "meanOutOptional",
           "rstdOutOptional"),
    dtypes=DTYPES,
    check=check,
    reference=reference,
    tolerance=4,
    input_shapes=lambda shape: [tuple(shape), tuple(shape[-1:]), tuple(shape[-1:])],
)
def layer_norm(x, weight, bias, dims, eps):
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing `dims` dims; mean and rstd."""
    axes = tuple(range(-max(dims, 1), 0))
    mean = aclgen.mean(x, axes)
    d = x - mean
    rstd = aclgen.rsqrt(aclgen.mean(d * d, axes) + eps)
    return d * rstd * weight + bias, mean, rstd
