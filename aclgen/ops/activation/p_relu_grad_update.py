"""activation/p_relu_grad_update: aclnnPreluBackward(gradOutput, self, weight, gradInput, gradWeight).

The backward of aclnnPrelu (the doc page's 计算公式), w the weight of x's channel (dim 1; one
weight for every element where weight holds one value):
gradInput = gradOutput where self > 0, else gradOutput * w; gradWeight = the sum over every dim
but the channel's (over every dim where weight holds one value) of self * gradOutput where
self <= 0 (0 where self > 0). The doc is silent on NaN: the kernel (op_kernel/arch35/
prelu_grad_update_dag.h) selects on self > 0, so a NaN self takes the second branch in both
(gradInput g * w, and its NaN product in the sum), as here.

Checks, in op_api's order (aclnn_prelu_backward.cpp): the five tensors present (161001); self's
dtype in the SoC's list, gradOutput's, weight's, gradInput's and gradWeight's equal to it; at most
8 dims each; gradInput of self's shape; a weight of more than one element holds one per channel
(self's dim 1; a self of one dim has one channel, of none is refused) and gradWeight is [channels],
else gradWeight has weight's shape; gradOutput broadcasts to self's shape (161002 each). Then an
empty gradOutput, self or weight returns at once. CANN also takes a weight of more dims holding
one value per channel (it reshapes it); aclgen takes weights of 0 or 1 dims, as its Prelu does
(161002 otherwise).

dtypes: FLOAT, FLOAT16, BFLOAT16 on Atlas A2/A3 and Ascend950; FLOAT, FLOAT16 on the Atlas training
and inference series. Half types are computed in f32 and rounded once: gradWeight accumulates in
f32.

A call of many rows over the channels (a contiguous [N, C], 2^18 elements and 16 blocks of rows
or more) writes gradInput a row at a time and adds each block's rows into a row of f32 in the
workspace, then adds the blocks up (aclgen/runtime/planner.py, `_partials`, as RmsNormGrad's
dgamma): x and gradOutput are read once. Other calls take one kernel with a row per channel (the
channel's elements over the other dims), gradInput written as the row is read. Either way the
sums run in an order the shape fixes: the same bits for any thread count. A self whose other dims
do not merge as a contiguous one's do (column-major) sums in other runs, so its gradWeight may
differ in the last bits, within the bound. Bound (tests): gradInput correctly rounded (0.5 ulp);
gradWeight 4 ulp of the output dtype at the size of its terms. [4096, 4096] float32 on this
project's 2-core AVX2 host: 75 ms with the kernel a row per channel, 15-17 ms so.
"""

import math

import numpy as np

import aclgen
from aclgen import Tensor, select
from aclgen.runtime import constants as C
from aclgen.runtime.tensor import fmt_dims

A2 = ("float32", "float16", "bfloat16")
INVALID = C.ACLNN_ERR_PARAM_INVALID


def check(call):
    """op_api's order (see the module docstring)."""
    call.present()
    call.dtype_in("self")
    call.same_dtype("gradOutput", "weight", "gradInput", "gradWeight", ref="self")
    call.max_rank()
    x = call.same_shape("gradInput", ref="self")
    w = call.tensor("weight").view_dims
    dw = call.tensor("gradWeight").view_dims
    if math.prod(w) != 1:
        if not x:
            raise call.error(INVALID, "self has 0 dims: a weight of more than one element needs a channel dim")
        channels = x[1] if len(x) > 1 else 1
        if math.prod(w) != channels:
            raise call.error(INVALID, f"weight shape {fmt_dims(w)} must hold one element or one per channel "
                                      f"({channels}, self's dim 1)")
        if dw != (channels,):
            raise call.error(INVALID, f"gradWeight shape {fmt_dims(dw)} must be [{channels}] (one per channel)")
    elif dw != w:
        raise call.error(INVALID, f"gradWeight shape {fmt_dims(dw)} must equal weight shape {fmt_dims(w)}")
    if len(w) > 1:
        raise call.error(INVALID, f"weight shape {fmt_dims(w)}: aclgen takes a weight of 0 or 1 dims (one value, or "
                                  f"one per channel)")
    if call.broadcast("self", "gradOutput") != x:
        raise call.error(INVALID, f"gradOutput shape {fmt_dims(call.tensor('gradOutput').view_dims)} must broadcast "
                                  f"to self shape {fmt_dims(x)}")
    if call.empty("gradOutput", "self", "weight"):
        return
    shape = x if len(x) > 1 else (1, math.prod(x))
    call.reductions(shape)
    call.shape = shape


def result(ins, attrs):
    """gradInput: self's shape; gradWeight: [channels], or weight's shape where it holds one value;
    self's dtype."""
    _, x, w = ins
    if x is None or w is None:
        return [((), C.ACL_FLOAT), ((), C.ACL_FLOAT)]
    dims = w.view_dims if math.prod(w.view_dims) == 1 else (x.view_dims[1] if len(x.view_dims) > 1 else 1,)
    return [(x.view_dims, x.dtype), (dims, x.dtype)]


def _channel(x, w):
    """The weight as it lines up with x (one value, or one per channel along dim 1)."""
    return w.reshape([1, -1] + [1] * (x.ndim - 2)) if x.ndim > 1 and w.size > 1 else w.reshape(())


def _sum(x, w, terms):
    axes = tuple(k for k in range(x.ndim) if not (k == 1 and w.size > 1))
    total = terms.sum(axes)
    return total.reshape(w.shape) if w.size == 1 else total


def prelu_backward_reference(g, x, w):
    g = np.broadcast_to(g, x.shape)
    with np.errstate(all="ignore"):
        return np.where(x > 0, g, g * _channel(x, w)), _sum(x, w, np.where(x > 0, 0.0, x * g))


def _scale(g, x, w):
    """gradInput's value; gradWeight's terms summed by size, and their sum's roundings."""
    g = np.broadcast_to(g, x.shape)
    with np.errstate(all="ignore"):
        terms = np.abs(np.where(x > 0, 0.0, x * g))
        rows = x.size // max(_sum(x, w, np.ones(x.shape)).size, 1)
        return np.abs(np.where(x > 0, g, g * _channel(x, w))), _sum(x, w, terms) * (1 + rows / 128)


prelu_backward_reference.scale = _scale  # type: ignore[attr-defined]


@aclgen.operator(
    "PreluBackward",
    inputs=("gradOutput", "self", Tensor("weight", along=1)),
    outputs=("gradInput", Tensor("gradWeight", keepdims=False)),
    dtypes={"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": A2[:2], "Ascend310P": A2[:2]},
    check=check,
    result=result,
    reference=prelu_backward_reference,
    tolerance=4,
)
def prelu_backward(g, x, w):
    """The gradients of PReLU: gradOutput through the slope of x's side, and the weight's sum."""
    positive = x > 0.0
    return select(positive, g, w * g), aclgen.sum(select(positive, 0.0, x * g), keep=w)
