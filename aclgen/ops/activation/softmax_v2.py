"""activation/softmax_v2: aclnnSoftmax(self, dim, out).

out = exp(x - max(x)) / sum(exp(x - max(x))) along `dim` (the doc's formula, with the row's
maximum taken out first: the same value in exact arithmetic, and no overflow of exp). A row with a
NaN gives NaN throughout; an infinite x makes x - max NaN or -inf as IEEE says (as torch.softmax).

Checks in op_api's order: self and out present (161001); an empty self returns at once; the
dtypes of self and of out each in the SoC's list (out may differ: it is a cast of the result);
dim inside [-rank, rank-1] (161002); at most 8 dims and out of self's shape (161002). DOUBLE, which
CANN lists, is refused: aclgen computes in f32, and a double operator computed in f32 would be
wrong, not merely slower.

The two reductions and the division run in one kernel a row at a time (aclgen/passes/tile_rows.py):
every sum in an order fixed by the shape, so results are the same for any thread count.
Bound (tests): 4 ulp of the output dtype against float64.
"""

import numpy as np

import aclgen
from aclgen import Attr

FLOATS = ("float16", "float32", "bfloat16")
DTYPES = {"Ascend910B": FLOATS, "Ascend910_93": FLOATS, "Ascend950": FLOATS,
          "Ascend910": FLOATS[:2], "Ascend310P": FLOATS[:2]}


def check(call):
    call.present()
    if call.empty("self"):
        return
    call.dtype_in("self")
    call.dtype_in("out")
    call.dim("dim", "self")
    call.max_rank()
    call.out_shape(call.tensor("self").view_dims)


def reference(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def _scale(x, dim):
    """f32's own error: x - max rounds (|d| ulps of exp), the sum's n / 32 lanes' roundings."""
    d = np.abs(x - x.max(dim, keepdims=True))
    return np.abs(reference(x, dim)) * (1 + (np.nan_to_num(d) + x.shape[dim] / 32) / 4)


reference.scale = _scale  # type: ignore[attr-defined]


def along_dim(name: str, inputs: tuple[str, ...], check, reference):
    """The declaration the softmax family shares: tensors of one shape, an int64 `dim` (the
    Python call's default: the last dim), one output `out`, the dtypes above, 4 ulp at the
    reference's scale, so that float16 and bfloat16 kernels take every function's half-type
    form (LogSoftmax's exp and log: `half_forms`)."""
    return aclgen.operator(name, inputs=inputs, attrs=(Attr("dim", "int64", default=-1),), outputs=("out",),
                           dtypes=DTYPES, broadcast=False, check=check, reference=reference, tolerance=4,
                           half_forms="terms")


@along_dim("Softmax", ("self",), check, reference)
def softmax(x, dim):
    """exp(x) / sum(exp(x)) along `dim`."""
    e = aclgen.exp(x - aclgen.amax(x, dim))
    return e / aclgen.sum(e, dim)
