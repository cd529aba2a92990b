"""activation/softmax_cross_entropy_with_logits: aclnnSoftmaxCrossEntropyWithLogits(features, labels,
loss, backprop).

For logits x = features and labels y, both [N, C], per row n (the doc page's 计算公式):
loss[n] = -sum_c y[n, c] * log(softmax(x[n])[c]) and backprop = softmax(x) - y. Computed with the
row's maximum m taken out and s = sum(exp(x - m)): log(softmax(x)) = (x - m) - log(s), so
loss[n] = sum_c y[n, c] * (log(s) - (x[n, c] - m)) and backprop = exp(x - m) / s - y, the form of
the kernel's golden (TensorFlow's softmax_cross_entropy_with_logits): nothing overflows, and
backprop is not made to sum to 0 where the labels do not sum to 1. NaN anywhere in a row makes
its loss NaN; +inf in x gives NaN (inf - inf) as in the golden; a -inf logit is a class of
probability 0, whose loss term y * inf is +inf, or NaN for a label of 0 (as torch's and
TensorFlow's).

Checks in op_api's order (aclnn_softmax_cross_entropy_with_logits.cpp): features, labels, loss,
backprop present (161001); each dtype in the SoC's list, loss's and backprop's equal to features'
(161002); at most 8 dims, features and labels 2-D (161002). The doc page states labels of
features' shape and dtype and outputs loss [N] and backprop [N, C], which aclgen checks (161002);
CANN's own shape inference would also broadcast a labels or features of one row, which the doc
does not list. Empty features or labels return at once.

dtypes: FLOAT, FLOAT16, BFLOAT16 on Atlas A2/A3 and Ascend950; FLOAT, FLOAT16 on the Atlas training
and inference series. Half types are computed in f32 and rounded once.

One kernel a row at a time (aclgen/passes/tile_rows.py): the maximum, the sum of exp(x - m)
(kept for backprop), the loss's sum, then backprop; every sum in an order the shape fixes.
Bound (tests): 4 ulp of the output dtype at the size of the terms (the loss sums |y| (|x - m| +
log(s)), which may cancel).
"""

import numpy as np

import aclgen
from aclgen.runtime import constants as C

FLOATS = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOATS, "Ascend910_93": FLOATS, "Ascend950": FLOATS,
          "Ascend910": FLOATS[:2], "Ascend310P": FLOATS[:2]}
INVALID = C.ACLNN_ERR_PARAM_INVALID


def check(call):
    """op_api's order, then the doc's shapes (see the module docstring)."""
    call.present()
    call.dtype_in("features", "labels", "loss", "backprop")
    call.same_dtype("loss", "backprop", ref="features")
    call.max_rank()
    for name in ("features", "labels"):
        dims = call.tensor(name).view_dims
        if len(dims) != 2:
            raise call.error(INVALID, f"{name} has {len(dims)} dims, it must have 2 ([N, C])")
    call.same_dtype("labels", ref="features")
    shape = call.same_shape("labels", ref="features")
    if call.empty("features", "labels"):
        return
    call.out_shape(shape)


def result(ins, attrs):
    """loss [N], backprop [N, C]: features' dtype."""
    x = ins[0]
    if x is None:
        return [((), C.ACL_FLOAT), ((), C.ACL_FLOAT)]
    dims = x.view_dims
    return [(dims[:1], x.dtype), (dims, x.dtype)]


def reference(x, y):
    with np.errstate(all="ignore"):
        m = x.max(1, keepdims=True)
        d = x - m
        s = np.exp(d).sum(1, keepdims=True)
        return (y * (np.log(s) - d)).sum(1), np.exp(d) / s - y


def _scale(x, y):
    """The loss's terms |y| (|x - m| + log(s)) summed (they may cancel), its sum's roundings (n / 32
    lanes); backprop's two terms."""
    with np.errstate(all="ignore"):
        m = x.max(1, keepdims=True)
        d = x - m
        s = np.exp(d).sum(1, keepdims=True)
        n = x.shape[1]
        loss = (np.abs(y) * (np.abs(d) + np.abs(np.log(s)) + (n / 32 + 5) / 4)).sum(1)
        return loss * (1 + n / 128), np.exp(d) / s + np.abs(y)


reference.scale = _scale  # type: ignore[attr-defined]


CLASSES = 1024  # classes a row of the tools' data has where a size counts elements (`aclgen bench --sizes 1M`)


def input_shapes(shape):
    """features and labels for backprop of `shape`; a size of n elements gives n / CLASSES rows of
    CLASSES classes (one row of n where CLASSES does not divide it)."""
    if len(shape) == 1:
        (n,) = shape
        shape = (n // CLASSES, CLASSES) if n >= CLASSES and n % CLASSES == 0 else (1, n)
    return [tuple(shape), tuple(shape)]


@aclgen.operator(
    "SoftmaxCrossEntropyWithLogits",
    inputs=("features", "labels"),
    outputs=(aclgen.Tensor("loss", keepdims=False), "backprop"),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    result=result,
    reference=reference,
    tolerance=4,
    half_forms="terms",
    input_shapes=input_shapes,
)
def softmax_cross_entropy_with_logits(x, y):
    """The cross entropy of softmax(x) against the labels y per row, and its gradient in x."""
    shifted = x - aclgen.amax(x, 1)
    e = aclgen.exp(shifted)
    s = aclgen.sum(e, 1)
    return aclgen.sum(y * (aclgen.log(s) - shifted), 1), e / s - y
