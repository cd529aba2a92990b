"""activation/softmax_grad: aclnnSoftmaxBackward(gradOutput, output, dim, out).

out = output * (gradOutput - sum(gradOutput * output)) along `dim` (the doc's formula: the
derivative of softmax applied to the incoming gradient, with `output` the forward result).

Checks in op_api's order: the three tensors present (161001); an empty gradOutput or output
returns at once; gradOutput's and output's dtypes in the SoC's list and equal (161002); dim inside
[-rank, rank-1] (161002); at most 8 dims, output and out of gradOutput's shape (161002). out's dtype
is the result's. Bound (tests): 4 ulp of the output dtype against float64 where the sum does not
cancel (the tests hold the absolute error to 4 ulp of the largest term otherwise).
"""

import numpy as np

import aclgen
from aclgen.ops.activation.softmax_v2 import along_dim


def check(call):
    call.present()
    if call.empty("gradOutput", "output"):
        return
    call.dtype_in("gradOutput", "output")
    call.same_dtype("output", ref="gradOutput")
    call.dim("dim", "gradOutput")
    call.max_rank()
    call.same_shape("output", "out", ref="gradOutput")
    call.out_shape(call.tensor("gradOutput").view_dims)


def reference(g, y, dim):
    return y * (g - (g * y).sum(dim, keepdims=True))


def _scale(g, y, dim):
    """The terms' size: the difference cancels, and the sum rounds in n / 32 lanes."""
    terms = np.abs(y) * (np.abs(g) + np.abs(g * y).sum(dim, keepdims=True))
    return terms * (1 + g.shape[dim] / 128)


reference.scale = _scale  # type: ignore[attr-defined]


@along_dim("SoftmaxBackward", ("gradOutput", "output"), check, reference)
def softmax_backward(g, y, dim):
    """The gradient of softmax along `dim` (output * (gradOutput - sum(gradOutput * output)))."""
    return y * (g - aclgen.sum(g * y, dim))
