"""activation/swi_glu: aclnnSwiGlu(x, dim, out).

x splits along `dim` into halves A | B (A first); out = Swish(A) * B = A * sigmoid(A) * B (the
doc page's 计算公式; Swish with beta 1, as the kernel's silu).

Checks: the folder has no op_api source (the API is generated from the op definition), so the
order is SwiGluGrad's, its sibling through the same generated door (swi_glu_grad.py): x, out
nullptr (161001); x's and out's dtypes in the SoC's list and equal; formats in {ND, NCHW, NHWC,
NCDHW, NCL} (all read as ND); x not 0-d ("维度必须大于0"); dim in [-rank, rank-1] and x's size
there even; out of x's shape with dim halved (161002 each). The doc's 返回值 table gives 161002 for
a dim out of range, so it is 161002 here, where SwiGluGrad's SPEC contract has the tiling code
561002 for the same condition. Any rank >= 1 (the doc gives none); an empty x returns at once.
An attribute of another kind (possible from Python only) is 161002 where the check reads it.

dtypes: BFLOAT16, FLOAT16, FLOAT on Atlas A2/A3 and Ascend950; FLOAT16, FLOAT on Ascend310P
(whose note also asks for 64-byte aligned shapes, a kernel limit aclgen does not have); not on
Ascend910 (不支持).

Accuracy: A * sigmoid(A) * B is glu.py's `times_sigmoid2`, one product that keeps f32 accuracy
where an f32 sigmoid(A) is subnormal (A < -87) and where A * B overflows but the result does not. Within 3 ulp of the float64 formula (the reference below); torch's
silu(A) * B in float64 is the second oracle (tests/ops/activation/test_group_c.py).
"""

import numpy as np

import aclgen
from aclgen import Attr, Split
from aclgen.ops.activation.glu import halved, input_shapes, sigmoid64
from aclgen.ops.activation.sigmoid import times_sigmoid2
from aclgen.ops.activation.swi_glu_grad import FORMATS

A2 = ("bfloat16", "float16", "float32")


def check(call):
    """The generated door's order (see the module docstring)."""
    call.present("x", "out")  # the tensors; dim where it is used
    call.dtype_in("x", "out")
    call.same_dtype("out", ref="x")
    call.format_in(FORMATS)
    call.min_rank("x")
    half = call.split_shape()
    call.halves(half, "out")
    call.shape = half


def result(ins, attrs):
    """out: x's shape with dim halved, x's dtype."""
    return [halved(ins[0], attrs.get("dim", -1))]


def swi_glu_reference(x, dim):
    a, b = np.split(x, 2, axis=dim)
    return a * b * sigmoid64(a)


@aclgen.operator(
    "SwiGlu",
    inputs=("x",),
    attrs=(Attr("dim", "int64", default=-1),),
    outputs=("out",),
    dtypes={"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend310P": A2[1:], "Ascend910": ()},
    broadcast=False,
    max_rank=None,
    check=check,
    split=Split("x", dim="dim", into=("a", "b")),
    result=result,
    input_shapes=input_shapes,
    reference=swi_glu_reference,
    tolerance=3,
    backward="SwiGluGrad",
)
def swi_glu(a, b):
    """SwiGLU: silu of the first half of `x` along `dim` times the second half."""
    return times_sigmoid2(a, b, a)
