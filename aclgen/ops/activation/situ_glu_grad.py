"""activation/situ_glu_grad: aclnnSituGluGrad(gradY, x, dim, beta, linearBeta, activateLeft, out).

The gradient of SituGlu (situ_glu.py): x splits along `dim` into gate and up as there; with
t = tanh(gate / beta), s = sigmoid(gate) and up' as in SituGlu (the doc page's 计算公式):

    grad_gate = gradY * up' * s * ((1 - t^2) + beta * t * (1 - s))
    grad_up   = gradY * beta * t * s * (1 - tanh^2(up / linearBeta) if linearBeta > 0, else 1)

and out = grad_gate and grad_up in gate's and up's places, of x's shape. beta and linearBeta are
rounded to f32 and linearBeta > 0 is decided on that value, as in SituGlu.

The same numbers, in forms that keep f32 accuracy: 1 - tanh^2(y) is sech^2(y) = 4E / (1 + E)^2
with E = exp(-2|y|) (1 - t^2 cancels to 0 in f32 for |y| > 9, where sech^2 is 6e-8, not 0), and
s * (1 - s) is sigmoid(gate) * sigmoid(-gate) from one exp, as in GluBackward. Every small factor
that is subnormal in f32 (sigmoid, sech^2 beyond |y| = 40) is carried scaled by e^104 (glu.py's
SCALE^2), so that a large gradient times it keeps its bits. grad_gate is a sum of two terms of
opposite signs for gate < 0 that cancel where the derivative crosses 0 (gate near -0.9 for
beta = 1): there the bound holds at the size of the terms (the reference's `scale`).

Checks (the doc's 返回值 table; no op_api source: the API is generated and these are its
tiling's): gradY, x, out nullptr (161001); gradY's, x's and out's dtypes in the list; each of 1
to 8 dims; dim in [-rank, rank-1] and x's size there even; gradY of x's shape with dim halved
(CANN compares gradY's rank and its size at dim; aclgen needs every dim); gradY's dtype equal to
x's; out of x's shape and dtype (161002 each). An empty x returns at once.
An attribute of another kind (possible from Python only) is 161002 where the check reads it.

dtypes: FLOAT, FLOAT16, BFLOAT16 on Atlas A2/A3 and Ascend950; not on the Atlas training and
inference series. Within 6 ulp of the float64 formula (the reference below, at its scale);
torch autograd of situ_glu_reference's float64 formula is the second oracle.
"""

import numpy as np

import aclgen
from aclgen import Split, exp, f32, logical_and, logical_not, logical_or, maximum, select, unlikely
from aclgen.ops.activation.glu import grad_input_shapes, grad_result, sigmoid64
from aclgen.ops.activation.sigmoid import SCALE, SHIFT, TINY
from aclgen.ops.activation.situ_glu import ATTRS, DTYPES, halves, linear, scaled_tanh

INF = float("inf")
CUT = 80.0  # beyond it sigmoid(-|x|) is carried scaled (e^-80 is a normal float, e^-88 is not)
SECH_CUT = 40.0  # beyond it sech^2(y) ~ 4 e^-2|y| is carried scaled
F64_SIGMOID_ONE = f32(709.78271484375)  # float64's sigmoid(-u) is 0 from here on (glu.py)
F64_SECH2_LAST = f32(372.56658935546875)  # the last |y| where float64's e^-2|y| is not 0


def sigmoid_sides(x):
    """(tail, pos, e, w) of one exp of u = |x|: where not `tail` (u <= 80), e = e^u and w =
    1 / (1 + e) (sigmoid(u) = e * w, sigmoid(-u) = w); where `tail`, e = exp(104 - u) =
    sigmoid(-u) / SCALE^2 (kept from 0 down to float64's sigmoid zero, so that inf times it
    stays inf). The products below are one chain each whose scales are selects, 1 for ordinary
    data: a scaled product formed there and thrown away would go subnormal and cost the x86
    FPU's microcode assists."""
    u = abs(x)
    tail = unlikely(u > CUT)
    e = exp(select(tail, SHIFT - u, u))
    floor = select(u < F64_SIGMOID_ONE, TINY, 0.0)
    e = select(tail, select(e < floor, floor, e), e)  # the head's e >= 1
    return tail, x >= 0.0, e, 1.0 / (1.0 + e)


def times_sigmoid_of(p, sides):
    """p * sigmoid(x) for `sides` = sigmoid_sides(x)."""
    tail, pos, e, w = sides
    k = select(logical_and(tail, logical_not(pos)), SCALE, 1.0)
    return p * k * select(tail, select(pos, 1.0, e), select(pos, e * w, w)) * k


def times_sigmoid_both(q, sides):
    """q * sigmoid(x) * sigmoid(-x) for `sides` = sigmoid_sides(x)."""
    tail, _, e, w = sides
    k = select(tail, SCALE, 1.0)
    return q * k * select(tail, e, e * w * w) * k


def times_sech2(p, y):
    """p * sech^2(y) = p * 4E / (1 + E)^2, E = exp(-2|y|); beyond |y| = 40, E is carried as
    exp(104 - 2|y|) * SCALE^2 (kept from 0 down to float64's zero of E)."""
    v = 2.0 * abs(y)
    tail = unlikely(v > 2.0 * SECH_CUT)
    e = exp(select(tail, SHIFT - v, -v))
    floor = select(abs(y) <= F64_SECH2_LAST, TINY, 0.0)
    e = select(tail, select(e < floor, floor, e), e)  # the head's e >= e^-80
    r = 1.0 + e
    k = select(tail, SCALE, 1.0)
    return p * k * select(tail, 4.0 * e, 4.0 * e / (r * r)) * k


def check(call):
    """The doc's 返回值 order (see the module docstring)."""
    call.present("gradY", "x", "out")  # the tensors; dim where it is used, the others last
    call.dtype_in("gradY", "x", "out")
    call.max_rank("gradY", "x", "out")
    call.min_rank("gradY", "x", "out")
    half = call.split_shape()
    call.halves(half, "gradY")
    call.same_dtype("gradY", "out", ref="x")
    call.same_shape("out", ref="x")
    call.present("beta", "linearBeta", "activateLeft")
    call.shape = half


def _sech2_reference(y):
    e = np.exp(-2.0 * np.abs(y))
    return 4.0 * e / (1.0 + e) ** 2


def _terms(gy, x, dim, beta, linear_beta, activate_left):
    """float64 (term1, term2, grad_up, gate first?) of the doc's formulas."""
    first, second = np.split(x, 2, axis=dim)
    gate, up = halves(first, second, activate_left)
    beta, lb = float(np.float32(beta)), float(np.float32(linear_beta))
    t, s, sm = np.tanh(gate / beta), sigmoid64(gate), sigmoid64(-gate)
    up_ = lb * np.tanh(up / lb) if lb > 0 else up
    term1 = gy * up_ * s * _sech2_reference(gate / beta)
    term2 = gy * up_ * beta * t * s * sm
    grad_up = gy * beta * t * s * (_sech2_reference(up / lb) if lb > 0 else 1.0)
    return term1, term2, grad_up


def situ_glu_grad_reference(gy, x, dim, beta, linear_beta, activate_left):
    term1, term2, grad_up = _terms(gy, x, dim, beta, linear_beta, activate_left)
    return np.concatenate(halves(term1 + term2, grad_up, activate_left), axis=dim)


def _scale(gy, x, dim, beta, linear_beta, activate_left):
    """The size of grad_gate's terms, and of what the f32 formula cannot know better: sech^2(y)
    of a y rounded by its division (gate / beta, up / linearBeta) carries 2|y| times that
    rounding; where gradY * up' overflows f32, the bracket multiplies first and its underflow
    in the tails costs a few 2^-149 of |gradY * up'|. grad_up: its own size, likewise."""
    term1, term2, grad_up = _terms(gy, x, dim, beta, linear_beta, activate_left)
    first, second = np.split(x, 2, axis=dim)
    gate, up = halves(first, second, activate_left)
    beta, lb = float(np.float32(beta)), float(np.float32(linear_beta))
    up_ = lb * np.tanh(up / lb) if lb > 0 else up
    tiny = float(np.finfo(np.float32).tiny)
    amp_gate = 1.0 if beta == 1.0 else np.maximum(1.0, 2.0 * np.abs(gate / beta))
    amp_up = np.maximum(1.0, 2.0 * np.abs(up / lb)) if lb > 0 else 1.0
    gate_scale = np.abs(term1) * amp_gate + np.abs(term2) + tiny * np.abs(gy * up_)
    up_scale = np.abs(grad_up) * amp_up + tiny * np.abs(gy * beta)
    scale = np.concatenate(halves(gate_scale, up_scale, activate_left), axis=dim)
    return np.nan_to_num(scale, nan=0.0, posinf=np.inf)  # NaN terms (inf * 0): the value's own size


situ_glu_grad_reference.scale = _scale  # type: ignore[attr-defined]


@aclgen.operator(
    "SituGluGrad",
    inputs=("gradY", "x"),
    attrs=ATTRS,
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    split=Split("x", dim="dim", into=("a", "b"), whole=("out",), whole_into=("outA", "outB")),
    result=grad_result,
    input_shapes=grad_input_shapes("SituGluGrad", "x", "hw"),
    reference=situ_glu_grad_reference,
    tolerance=6,
    half_forms="terms",
)
def situ_glu_grad(gy, a, b, beta, linear_beta, activate_left):
    """The gradient of SituGlu(x) along `dim`, applied to `gradY`."""
    gate, up = halves(a, b, activate_left)
    beta, lb = f32(beta).value, f32(linear_beta).value
    x = gate / beta
    bt = scaled_tanh(gate, beta)  # beta * t, |bt| <= |beta|
    sides = sigmoid_sides(gate)
    up_ = linear(up, linear_beta)
    p = gy * up_
    small = abs(beta) <= 1.0  # else beta * t multiplies last: it could overflow a product first
    term2 = times_sigmoid_both(p * bt, sides) if small else times_sigmoid_both(p, sides) * bt
    grad_gate = times_sech2(times_sigmoid_of(p, sides), x) + term2
    # where gradY * up' overflows from finite factors (both >= 1 then), (gradY * F) * up' with the
    # bracket F in plain f32: its underflow in the tails is what the reference's scale allows
    first = logical_or(abs(p) < INF, maximum(abs(gy), abs(up_)) == INF)
    f = times_sech2(times_sigmoid_of(1.0, sides), x) + times_sigmoid_both(bt, sides)
    grad_gate = select(first, grad_gate, gy * f * up_)
    grad_up = times_sigmoid_of(gy * bt if small else gy, sides)
    if lb > 0:
        grad_up = times_sech2(grad_up, up / lb)
    if not small:
        grad_up = grad_up * bt
    return halves(grad_gate, grad_up, activate_left)
