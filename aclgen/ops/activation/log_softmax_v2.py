"""activation/log_softmax_v2: aclnnLogSoftmax(self, dim, out).

out = x - max(x) - log(sum(exp(x - max(x)))) along `dim` (the doc's log(exp(x) / sum(exp(x))),
written so that nothing overflows and small probabilities keep their accuracy).

Checks in op_api's order: self and out present (161001); dim inside [-rank, rank-1] (161002); the
dtypes of self and of out each in the SoC's list (161002; out may differ: a cast); at most 8 dims,
out of self's shape (161002). An empty self returns after the checks. DOUBLE is refused (see
softmax_v2). Bound (tests): 4 ulp of the output dtype against float64, away from outputs near 0
(where the subtraction cancels: there the absolute error is held to 4 ulp of |x - max|).
"""

import numpy as np

import aclgen
from aclgen.ops.activation.softmax_v2 import along_dim


def check(call):
    call.present()
    call.dim("dim", "self")
    call.dtype_in("self")
    call.dtype_in("out")
    call.max_rank()
    call.out_shape(call.same_shape("out", ref="self"))


def reference(x, dim):
    m = x.max(dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(dim, keepdims=True))


def _scale(x, dim):
    """The terms' size |x - max| + log(sum), and the sum's relative error (n / 32 + 5 roundings,
    an absolute error in its log)."""
    m = x.max(dim, keepdims=True)
    log_s = np.log(np.exp(x - m).sum(dim, keepdims=True))
    return np.abs(x - m) + np.abs(log_s) + (x.shape[dim] / 32 + 5) / 4


reference.scale = _scale  # type: ignore[attr-defined]


@along_dim("LogSoftmax", ("self",), check, reference)
def log_softmax(x, dim):
    """log(softmax(x)) along `dim`."""
    shifted = x - aclgen.amax(x, dim)
    return shifted - aclgen.log(aclgen.sum(aclgen.exp(shifted), dim))
