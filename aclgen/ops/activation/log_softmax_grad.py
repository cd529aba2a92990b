"""activation/log_softmax_grad: aclnnLogSoftmaxBackward(gradOutput, output, dim, out).

out = gradOutput - exp(output) * sum(gradOutput) along `dim` (the doc's formula, `output` being
log_softmax's result).

Checks in op_api's order: output, gradOutput and out present (161001); an empty gradOutput or
output returns at once; dtypes in the SoC's list and equal (161002); at most 8 dims, output and
out of gradOutput's shape (161002); then dim inside [-rank, rank-1] (161002). Bound (tests): 4 ulp
of the output dtype against float64 where the difference does not cancel.
"""

import numpy as np

import aclgen
from aclgen.ops.activation.softmax_v2 import along_dim


def check(call):
    call.present("output", "gradOutput", "out")
    if call.empty("gradOutput", "output"):
        return
    call.dtype_in("output", "gradOutput")
    call.same_dtype("output", ref="gradOutput")
    call.max_rank()
    call.same_shape("output", "out", ref="gradOutput")
    call.dim("dim", "gradOutput")
    call.out_shape(call.tensor("gradOutput").view_dims)


def reference(g, y, dim):
    return g - np.exp(y) * g.sum(dim, keepdims=True)


def _scale(g, y, dim):
    """The terms' size: the difference cancels, and the sum rounds in n / 32 lanes."""
    return (np.abs(g) + np.exp(y) * np.abs(g).sum(dim, keepdims=True)) * (1 + g.shape[dim] / 128)


reference.scale = _scale  # type: ignore[attr-defined]


@along_dim("LogSoftmaxBackward", ("gradOutput", "output"), check, reference)
def log_softmax_backward(g, y, dim):
    """The gradient of log_softmax along `dim` (gradOutput - exp(output) * sum(gradOutput))."""
    return g - aclgen.exp(y) * aclgen.sum(g, dim)
