"""activation/glu: aclnnGlu(self, dim, out).

self splits along `dim` into halves a | b (a first); out = a * sigmoid(b) (the doc page's 计算公式).

Checks, in op_api's order (aclnn_glu.cpp): self, out nullptr (161001); self's and out's dtypes in
the SoC's list, and out's castable from self's (every listed float is: float16 self into a
float32 out is allowed, computed in f32 and rounded once into out's dtype) (161002); self and out
at most 8 dims; self not 0-d; dim in [-rank, rank-1]; self's size at dim even; out of self's
shape with dim halved (161002 each). An empty self returns at once.
An attribute of another kind (possible from Python only) is 161002 where the check reads it.

dtypes: FLOAT, FLOAT16, BFLOAT16 on Atlas A2/A3 and Ascend950; FLOAT, FLOAT16 on the Atlas
training and inference series (Ascend910, Ascend310P). CANN also takes DOUBLE, which aclgen's
kernels do not (no float64 element type): a DOUBLE tensor is refused with 161002.

Accuracy: `times_sigmoid` computes a * sigmoid(b) as a / (1 + exp(-b)), and so that the result
keeps f32 accuracy where sigmoid(b) itself would be subnormal (b < -87) but a is large enough for
the product to be a normal float (a = 3e38, b = -100 gives 1.1e-5; a * sigmoid(b) through an f32
sigmoid is 1.7 % off, and 0 below b = -104). Within 3 ulp of the float64 formula (the reference
below), over edge values in every dtype (tests/ops/test_family.py).
"""

import numpy as np

import aclgen
from aclgen import Attr, Split
from aclgen.ops.activation.sigmoid import times_sigmoid
from aclgen.runtime import constants as C

A2 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": A2[:2], "Ascend310P": A2[:2]}


def check(call):
    """op_api's order (see the module docstring)."""
    call.present("self", "out")  # the tensors; dim where it is used (in C it cannot be missing)
    call.dtype_in("self", "out")
    call.max_rank("self", "out")
    call.min_rank("self")
    half = call.split_shape()
    call.halves(half, "out")
    call.shape = half


def halved(x, dim: int) -> tuple[tuple[int, ...], int]:
    """(dims, dtype code) of an output of `x`'s shape with `dim` halved (x's dims where dim is
    out of range: the API reports it)."""
    if x is None:
        return (), C.ACL_FLOAT
    dims = list(x.view_dims)
    if -len(dims) <= dim < len(dims):
        dims[dim] //= 2
    return tuple(dims), x.dtype


def result(ins, attrs):
    """out: self's shape with dim halved, self's dtype."""
    return [halved(ins[0], attrs.get("dim", -1))]


def input_shapes(shape):
    """self of `shape` with its last dim doubled (out spans `shape`)."""
    return [(*shape[:-1], 2 * shape[-1])]


def grad_result(ins, attrs):
    """The output of a split operator's gradient: the split input's (the second's) shape and dtype."""
    x = ins[1]
    return [(x.view_dims, x.dtype) if x is not None else ((), C.ACL_FLOAT)]


def grad_input_shapes(api: str, split: str, pattern: str):
    """`input_shapes` of a split operator's gradient: for outputs of `shape`, an input per letter
    of `pattern`, h the halves' shape (`shape`'s last dim halved), w `shape` itself (the input
    `split`, which an odd last dim cannot split: ValueError)."""

    def input_shapes(shape):
        if not shape or shape[-1] % 2:
            raise ValueError(f"{api} splits the last dim of {split} in halves: it must be even, got "
                             f"{'x'.join(map(str, shape)) or f'a 0-d {split}'}")
        half = (*shape[:-1], shape[-1] // 2)
        return [half if p == "h" else tuple(shape) for p in pattern]

    return input_shapes


def sigmoid64(x):
    """float64 sigmoid (0 below -709.78, where exp(-x) overflows)."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def glu_reference(x, dim):
    a, b = np.split(x, 2, axis=dim)
    return a * sigmoid64(b)


@aclgen.operator(
    "Glu",
    inputs=("self",),
    attrs=(Attr("dim", "int64", default=-1),),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    split=Split("self", dim="dim", into=("a", "b")),
    result=result,
    input_shapes=input_shapes,
    reference=glu_reference,
    tolerance=3,
    backward="GluBackward",
)
def glu(a, b):
    """The gated linear unit: the first half of `self` along `dim` times sigmoid of the second."""
    return times_sigmoid(a, b)
