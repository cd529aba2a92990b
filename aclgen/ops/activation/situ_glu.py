"""activation/situ_glu: aclnnSituGlu(x, dim, beta, linearBeta, activateLeft, out).

x splits along `dim` into halves; gate is the first half and up the second when activateLeft,
else the other way round (the doc's 合轴 to [pre, cut] and its halves along cut are the halves
along dim). Then (the doc page's 计算公式):

    situ_a = beta * tanh(gate / beta) * sigmoid(gate)
    up'    = linearBeta * tanh(up / linearBeta) if linearBeta > 0, else up
    y      = situ_a * up'

beta and linearBeta are doubles in the API, but CANN's attributes and kernel hold them as floats:
both are rounded to f32 first, and linearBeta > 0 is decided on that f32 value (a linearBeta
below 2^-150 is 0). The doc writes gate / beta; the kernel multiplies by f32(1 / beta), which
differs in the last bit: the doc's division is followed. beta = 0 ("建议为非零值", not refused)
gives 0 * tanh(+-inf) = 0 (NaN where gate is 0: 0 / 0), as the formula does.

Checks: no op_api source (the API is generated from the op definition; the checks are the
tiling's, which the doc's 返回值 table lists with 161002): x, out nullptr (161001); x's and out's
dtypes in the list; x and out of 1 to 8 dims; dim in [-rank, rank-1] and x's size there even;
out of x's shape with dim halved (CANN compares out's rank and its size at dim only; aclgen needs
every dim, 161002); out's dtype equal to x's (161002 each). An empty x returns at once.
An attribute of another kind (possible from Python only) is 161002 where the check reads it.

dtypes: FLOAT, FLOAT16, BFLOAT16 on Atlas A2/A3 and Ascend950; not on the Atlas training and
inference series.

Accuracy: the product with sigmoid(gate) is glu.py's `times_sigmoid`, which keeps f32 accuracy
where sigmoid(gate) is subnormal; c * tanh(v / c) is v where |v / c| < 2^-12 (the f32 quotient
of a subnormal v loses its bits; the product does not need it); with |beta| > 1 the sigmoid
multiplies up' before beta * tanh(gate / beta) does, which could overflow first. Within 5 ulp of the float64 formula (the reference below).
"""

import numpy as np

import aclgen
from aclgen import Attr, Split, f32, select, tanh
from aclgen.ops.activation.glu import halved, input_shapes, sigmoid64
from aclgen.ops.activation.sigmoid import times_sigmoid

A2 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": (), "Ascend310P": ()}
SMALL = 2.0**-12  # below it tanh(y) is y to a relative y^2 / 3 < 2^-25
ATTRS = (Attr("dim", "int64", default=-1), Attr("beta", "double", default=1.0),
         Attr("linearBeta", "double", default=0.0), Attr("activateLeft", "bool", default=True))


def check(call):
    """The doc's 返回值 order (see the module docstring)."""
    call.present("x", "out")  # the tensors; dim where it is used, the others last
    call.dtype_in("x", "out")
    call.max_rank("x", "out")
    call.min_rank("x", "out")
    half = call.split_shape()
    call.halves(half, "out")
    call.same_dtype("out", ref="x")
    call.present("beta", "linearBeta", "activateLeft")
    call.shape = half


def result(ins, attrs):
    """out: x's shape with dim halved, x's dtype."""
    return [halved(ins[0], attrs.get("dim", -1))]


def halves(a, b, activate_left: bool):
    """(gate, up): the first half is the gate when activateLeft."""
    return (a, b) if activate_left else (b, a)


def scaled_tanh(v, c: float):
    """c * tanh(v / c), which is v itself to f32 accuracy where |v / c| < 2^-12 (there the f32
    quotient may have lost v's bits: a subnormal v divided by 2)."""
    y = v / c
    return select(abs(y) < SMALL, v, c * tanh(y))


def linear(up, linear_beta: float):
    """up' = linearBeta * tanh(up / linearBeta) where f32(linearBeta) > 0, else up."""
    lb = f32(linear_beta).value
    return scaled_tanh(up, lb) if lb > 0 else up


def situ_glu_reference(x, dim, beta, linear_beta, activate_left):
    first, second = np.split(x, 2, axis=dim)
    gate, up = halves(first, second, activate_left)
    beta, lb = float(np.float32(beta)), float(np.float32(linear_beta))
    up = lb * np.tanh(up / lb) if lb > 0 else up
    return beta * np.tanh(gate / beta) * up * sigmoid64(gate)


@aclgen.operator(
    "SituGlu",
    inputs=("x",),
    attrs=ATTRS,
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    split=Split("x", dim="dim", into=("a", "b")),
    result=result,
    input_shapes=input_shapes,
    reference=situ_glu_reference,
    tolerance=5,
    backward="SituGluGrad",
)
def situ_glu(a, b, beta, linear_beta, activate_left):
    """SiTU GLU: beta * tanh(gate / beta) * sigmoid(gate) times up (or linearBeta * tanh(up / linearBeta))."""
    gate, up = halves(a, b, activate_left)
    beta = f32(beta).value
    bt = scaled_tanh(gate, beta)  # |bt| <= |beta|
    if abs(beta) <= 1.0:
        return times_sigmoid(bt * linear(up, linear_beta), gate)
    return times_sigmoid(linear(up, linear_beta), gate) * bt  # bt * up' could overflow first
