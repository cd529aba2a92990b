"""norm/layer_norm_grad_v3: aclnnLayerNormBackward(gradOut, input, normalizedShape, mean, rstd,
weightOptional, biasOptional, outputMask, gradInputOut, gradWeightOut, gradBiasOut).

The backward of LayerNorm over the trailing dims normalizedShape names (N elements), as the doc
writes it, with xhat = (input - mean) * rstd and dyw = gradOut * weight:
gradInputOut = (dyw - mean(dyw) - xhat * mean(dyw * xhat)) * rstd over the normalized dims;
gradWeightOut = the sum of gradOut * xhat over the other dims; gradBiasOut = the sum of gradOut
over them. The first reduces the rows, the other two across them: two kernels of one executor.
A missing weight is ones; bias does not enter the math (the doc: nothing is done with it).
outputMask (three bools) picks the outputs: true with a NULL output is 161001, false leaves it
unwritten (the Python call returns None there). mean and rstd hold one value per row: any shape
with as many elements ([A1..Ai] or [A1..Ai, 1..1]).

dtypes (gradOut, input, mean, rstd, weight, bias, gradInputOut, gradWeightOut, gradBiasOut):
gradOut and input one float dtype; mean and rstd each other's, at least as wide (float32 or
input's); weight and bias each other's, input's or float32; gradInputOut input's, gradWeightOut
and gradBiasOut weight's. Atlas training and inference: no bfloat16. Checks in the doc's order:
gradOut, input, normalizedShape, mean, rstd, outputMask present and each output outputMask asks
for (161001); then 161002: the dtypes, gradOut's shape not input's, an empty normalizedShape,
mean or rstd not one value per row, weight or bias not normalizedShape, input of fewer dims than
normalizedShape or not ending with it, outputMask not three long, a tensor of 0 or more than 8
dims, an empty tensor (the doc: not supported); the outputs' shapes (input's; normalizedShape).
Bound (tests): 4 ulp of the output dtype at the size of the terms.
"""

import math

import numpy as np

import aclgen
from aclgen import Attr, Tensor
from aclgen.runtime import constants as C
from aclgen.runtime.tensor import fmt_dims

INVALID = C.ACLNN_ERR_PARAM_INVALID


def _rows(floats):
    for d in floats:
        stats = (d,) if d == "float32" else (d, "float32")
        for m in stats:
            for w in stats:
                yield (d, d, m, m, w, w, d, w, w)


A2 = tuple(_rows(("float32", "float16", "bfloat16")))
OLD = tuple(_rows(("float32", "float16")))
DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": OLD, "Ascend310P": OLD}
TENSORS = ("gradOut", "input", "mean", "rstd", "weightOptional", "biasOptional", "gradInputOut", "gradWeightOut",
           "gradBiasOut")


def check(call):
    call.present()
    call.dtype_combination()
    x = call.tensor("input").view_dims
    if call.tensor("gradOut").view_dims != x:
        raise call.error(INVALID, f"gradOut shape {fmt_dims(call.tensor('gradOut').view_dims)} must equal input "
                                  f"shape {fmt_dims(x)}")
    shape = tuple(call.attr("normalizedShape"))
    if not shape:
        raise call.error(INVALID, "normalizedShape must name at least one dim")
    rows = x[:max(len(x) - len(shape), 0)]
    for name in ("mean", "rstd"):
        if call.tensor(name).numel != math.prod(rows):
            raise call.error(INVALID, f"{name} shape {fmt_dims(call.tensor(name).view_dims)} must hold one value per "
                                      f"row of input: {math.prod(rows)} ({fmt_dims(rows)})")
    for name in call.given(("weightOptional", "biasOptional")):
        if call.tensor(name).view_dims != shape:
            raise call.error(INVALID, f"{name} shape {fmt_dims(call.tensor(name).view_dims)} must equal "
                                      f"normalizedShape {fmt_dims(shape)}")
    if len(x) < len(shape) or x[len(x) - len(shape):] != shape:
        raise call.error(INVALID, f"input shape {fmt_dims(x)} must end with normalizedShape {fmt_dims(shape)}")
    if len(call.attr("outputMask")) != 3:
        raise call.error(INVALID, f"outputMask must hold 3 bools, got {len(call.attr('outputMask'))}")
    for name, t in call.tensors(call.given(TENSORS)):
        if not 1 <= len(t.view_dims) <= 8:
            raise call.error(INVALID, f"{name} has {len(t.view_dims)} dims: 1 to 8 are supported")
        if not t.numel:
            raise call.error(INVALID, f"{name} is empty, which LayerNormBackward does not support")
    kept = tuple(1 if k >= len(rows) else n for k, n in enumerate(x))
    call.view_as("mean", kept)
    call.view_as("rstd", kept)
    call.out_shape(x)


def reference(dy, x, mean, rstd, weight, bias, shape, mask=(True, True, True)):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    kept = x.shape[:x.ndim - len(shape)] + (1,) * len(shape)
    mean, rstd = mean.reshape(kept), rstd.reshape(kept)
    xhat = (x - mean) * rstd
    dyw = dy * (1 if weight is None else weight)
    dx = (dyw - dyw.mean(axes, keepdims=True) - xhat * (dyw * xhat).mean(axes, keepdims=True)) * rstd
    lead = tuple(range(x.ndim - len(shape)))
    return dx, (dy * xhat).sum(lead), dy.sum(lead)


def _scale(dy, x, mean, rstd, weight, bias, shape, mask=(True, True, True)):
    """The size of the terms: each product rounds at its own size, the sums at n / 32 lanes."""
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    lead = tuple(range(x.ndim - len(shape)))
    kept = x.shape[:x.ndim - len(shape)] + (1,) * len(shape)
    mean, rstd = np.abs(mean.reshape(kept)), np.abs(rstd.reshape(kept))
    xhat = (np.abs(x) + mean) * rstd
    dyw = np.abs(dy) * (1 if weight is None else np.abs(weight))
    n, rows = math.prod(shape), x.size // max(math.prod(shape), 1)
    dx = (dyw + dyw.mean(axes, keepdims=True) + xhat * (dyw * xhat).mean(axes, keepdims=True)) * rstd
    grow_rows = 1 + rows / 128
    return dx * (1 + n / 128), (np.abs(dy) * xhat).sum(lead) * grow_rows, np.abs(dy).sum(lead) * grow_rows


reference.scale = _scale  # type: ignore[attr-defined]


@aclgen.operator(
    "LayerNormBackward",
    inputs=("gradOut", "input", "mean", "rstd", Tensor("weightOptional", optional=True, default=1.0),
            Tensor("biasOptional", optional=True, default=0.0)),
    attrs=(Attr("normalizedShape", "int64[]", kernel=len, example=lambda shape: shape[-1:]),
           Attr("outputMask", "bool[]", default=(True, True, True))),
    outputs=(Tensor("gradInputOut", optional=True, mask=("outputMask", 0)),
             Tensor("gradWeightOut", optional=True, mask=("outputMask", 1), keepdims=False),
             Tensor("gradBiasOut", optional=True, mask=("outputMask", 2), keepdims=False)),
    order=("gradOut", "input", "normalizedShape", "mean", "rstd", "weightOptional", "biasOptional", "outputMask",
           "gradInputOut", "gradWeightOut", "gradBiasOut"),
    dtypes=DTYPES,
    check=check,
    reference=reference,
    tolerance=4,
    input_shapes=lambda shape: [tuple(shape), tuple(shape), (*shape[:-1], 1), (*shape[:-1], 1), tuple(shape[-1:]),
                                tuple(shape[-1:])],
)
def layer_norm_backward(dy, x, mean, rstd, weight, bias, dims):
    """LayerNorm's gradients: the input's a row at a time, weight's and bias's across the rows."""
    axes = tuple(range(-max(dims, 1), 0))
    xhat = (x - mean) * rstd
    dyw = dy * weight
    dx = (dyw - aclgen.mean(dyw, axes) - xhat * aclgen.mean(dyw * xhat, axes)) * rstd
    return dx, aclgen.sum(dy * xhat, keep=dims), aclgen.sum(dy, keep=dims)
