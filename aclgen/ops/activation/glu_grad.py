"""activation/glu_grad: aclnnGluBackward(gradOut, self, dim, out).

self splits along `dim` into halves a | b; with g = gradOut (of a half's shape), out = [a_grad |
b_grad] along dim, of self's shape (the doc page's 数学计算表达式):

    a_grad = g * sigmoid(b),   b_grad = a_grad * (a - a * sigmoid(b))

b_grad is computed as g * a * sigmoid(b) * sigmoid(-b), the same number: in f32, a - a * sigmoid(b)
cancels to 0 for b > 17 (sigmoid(b) rounds to 1) where the exact value a * sigmoid(-b) is not 0,
and the doc's formula is the math, not its f32 evaluation order (torch's f32 glu_backward and
CANN's A2 path, Sub(a, Mul(a, sigmoid(b))), lose those bits). One exp serves both outputs: with
u = |b| and e = exp(u), sigmoid(u) = e / (1 + e) and sigmoid(-u) = 1 / (1 + e); for u > 80,
sigmoid(u) is 1 and sigmoid(-u) is carried as exp(104 - u) * SCALE^2 (glu.py's scaled tail), so
that a large g or a times a subnormal sigmoid(-u) keeps f32 accuracy. g * a is formed first
unless it overflows from finite g and a; then (g * SCALE) * (a * SCALE), times sigmoid(u) *
sigmoid(-u) and 1 / SCALE twice, or in the tail exp(52 - u / 2) twice, which reaches u = 280,
the last u where g * a * e^-u can be a float. Each output is one product chain whose factors are
selects, all 1 for ordinary data: scaled products that go subnormal there would cost the x86
FPU's microcode assists (GluBackward ran 1.7x as long when it formed them for every element).

Checks, in op_api's order (aclnn_glu_backward.cpp): gradOut, self, out nullptr (161001); self's
dtype in the SoC's list, gradOut's and out's equal to it; self, out, gradOut at most 8 dims; self
not 0-d; dim in [-rank, rank-1]; self's size at dim even; gradOut of self's shape with dim
halved; out of self's shape (161002 each). An empty self returns at once.
An attribute of another kind (possible from Python only) is 161002 where the check reads it.

dtypes: FLOAT, FLOAT16, BFLOAT16 on Atlas A2/A3 and Ascend950; FLOAT, FLOAT16 on Ascend910 and
Ascend310P (CANN's DOUBLE has no aclgen kernel: 161002).

Accuracy: within 6 ulp of the float64 formula (the reference below) on edge values in every
dtype; torch.nn.functional.glu's float64 autograd is the second oracle
(tests/ops/activation/test_group_c.py).
"""

import numpy as np

import aclgen
from aclgen import Attr, Split, exp, f32, logical_and, logical_not, logical_or, maximum, select, unlikely
from aclgen.ops.activation.glu import DTYPES, grad_input_shapes, grad_result, sigmoid64
from aclgen.ops.activation.sigmoid import SCALE, SHIFT, TINY

INF = float("inf")
CUT = 80.0  # |b| beyond which sigmoid(-|b|) takes the scaled tail (e^-80 is normal, e^-88 not)
UNSCALE = f32(np.exp(52.0))  # 1 / SCALE to 2^-24
F64_SIGMOID_ONE = f32(709.78271484375)  # float64's sigmoid(-u) is 0 above this (glu.py)


def check(call):
    """op_api's order (see the module docstring)."""
    call.present("gradOut", "self", "out")  # the tensors; dim where it is used
    call.dtype_in("self")
    call.same_dtype("gradOut", "out", ref="self")
    call.max_rank("self", "out", "gradOut")
    call.min_rank("self")
    half = call.split_shape()
    call.halves(half, "gradOut")
    call.same_shape("out", ref="self")
    call.shape = half


def glu_backward_reference(g, x, dim):
    a, b = np.split(x, 2, axis=dim)
    s, t = sigmoid64(b), sigmoid64(-b)
    return np.concatenate([g * s, g * a * s * t], axis=dim)


@aclgen.operator(
    "GluBackward",
    inputs=("gradOut", "self"),
    attrs=(Attr("dim", "int64", default=-1),),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    split=Split("self", dim="dim", into=("a", "b"), whole=("out",), whole_into=("outA", "outB")),
    result=grad_result,
    input_shapes=grad_input_shapes("GluBackward", "self", "hw"),
    reference=glu_backward_reference,
    tolerance=6,
)
def glu_backward(g, a, b):
    """The gradient of GLU(self) = a * sigmoid(b) along `dim`, applied to `gradOut`."""
    u = abs(b)
    ga = g * a
    # g * a first, unless it overflowed from finite g and a; an infinite g or a keeps g * a (inf
    # times the positive rest is inf, as in float64, where the other order could give inf * 0).
    # Both the tail and an overflow are rare: one promise (a step with neither runs without them)
    tail, overflow = unlikely(u > CUT, logical_not(logical_or(abs(ga) < INF, maximum(abs(g), abs(a)) == INF)))
    first = logical_not(overflow)
    # head: e = e^u. tail: e = sigmoid(-u) / SCALE^2; where g * a overflowed, e = its square root,
    # as (g * SCALE) * (a * SCALE) * e * e reaches u = 280, where g * a * e^-u still is a float
    e = exp(select(tail, select(first, SHIFT - u, 0.5 * SHIFT - 0.5 * u), u))
    floor = select(u < F64_SIGMOID_ONE, TINY, 0.0)
    e = select(tail, select(e < floor, floor, e), e)  # the head's e >= 1
    w = 1.0 / (1.0 + e)  # head: sigmoid(-u)
    s = e * w  # head: sigmoid(u)
    pos = b >= 0.0
    # one product chain per output, factors selected (see the module docstring). In the tail
    # sigmoid(-u) is SCALE * e * SCALE, or SCALE * e * e * SCALE where g * a overflowed (e
    # multiplies twice: e * e alone may be subnormal)
    neg_tail = logical_and(tail, logical_not(pos))
    k = select(neg_tail, SCALE, 1.0)
    again = select(logical_and(neg_tail, logical_not(first)), e, 1.0)
    a_grad = g * k * select(tail, select(pos, 1.0, e), select(pos, s, w)) * again * k
    # b_grad = (g * k1) * (a * k1) * f1 * f2 * f3:
    #   g * a finite:     head g * a * (s * w);              tail g * a * SCALE * e * SCALE
    #   g * a overflowed: head (g SCALE)(a SCALE)(s w / SCALE)(1 / SCALE); tail (g SCALE)(a SCALE) e e
    k1 = select(first, 1.0, SCALE)
    f1 = select(tail, select(first, SCALE, e), select(first, s * w, s * w * UNSCALE))
    f2 = select(tail, e, select(first, 1.0, UNSCALE))
    f3 = select(logical_and(tail, first), SCALE, 1.0)
    return a_grad, g * k1 * (a * k1) * f1 * f2 * f3
