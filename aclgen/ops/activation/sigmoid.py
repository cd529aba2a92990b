"""activation/sigmoid: aclnnSigmoid(self, out) and aclnnInplaceSigmoid(selfRef).

Formula (doc page's 计算公式): out = 1 / (1 + e^(-self)), aclgen's `sigmoid` (computed in f32,
rounded once on store; sigmoid(-inf) = 0, sigmoid(+inf) = 1, NaN stays NaN, as the kernel's
exp/add/div sequence gives). Bound: 2 ulp of the output dtype against float64.

dtypes: the doc lists FLOAT, FLOAT16, BFLOAT16 for self and out; op_api refuses BFLOAT16 outside
the Atlas A2/A3 and 950 chips, and the in-place API's note gives FLOAT and FLOAT16 for the Atlas
training and inference series (DOUBLE and the complex types have no aclgen kernel). op_api also
takes integer inputs and casts across dtypes; the doc lists none, and aclgen's out has self's
dtype (161002 otherwise).

`sigmoid_quotient` and `times_sigmoid` are the pieces the sigmoid-based operators of this family
share (Silu, Swish, FastGelu, GeLU's tanh form, the GLU family, SiluBackward, SwishBackward,
FastGeluBackward, LogSigmoidBackward, SoftplusBackward): sigmoid and its complement from one exp,
scaled so that a large value times a sigmoid below FLT_MIN keeps its bits (CANN's kernels and
torch lose them: FLT_MAX * e^-100 has 3 bits). `times_small` takes a value that Mish and its
gradient carry scaled by e^-64 (BIG) the same way.

Checks (op_api's order): self, out present (161001); self's dtype, then out's, in the SoC's list;
out's dtype equal to self's; out's shape equal to self's; at most 8 dims (161002). The in-place
API checks selfRef's presence and dtype first, then the same sequence.
"""

import math

import numpy as np

import aclgen
from aclgen import clamp, exp, f32, logical_not, logical_or, maximum, minimum, select, unlikely
from aclgen import sigmoid as _sigmoid

FLOATS = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOATS, "Ascend910_93": FLOATS, "Ascend950": FLOATS,
          "Ascend910": FLOATS[:2], "Ascend310P": FLOATS[:2]}

INF = float("inf")
BIG = 64.0  # beyond it e^-|z| is carried as e^(BIG - |z|) times E_MINUS_BIG
E_MINUS_BIG = f32(math.exp(-BIG))

# The scaled tail of glu_grad.py and situ_glu_grad.py: sigmoid(-u) carried as
# exp(SHIFT - u) * SCALE^2, SCALE = f32(e^-52) normal (SCALE^2 = e^-104 would not be).
SHIFT = 104.0
SCALE = f32(math.exp(-52.0))
TINY = f32(2.0**-149)
# sigmoid_quotient's constants. Below TAIL, 1 + e^-x is e^-x to a relative 2e-35, and
# e^x = TAIL_SCALE / exp(-x - TAIL_SHIFT) * TAIL_SCALE: exp(-x - TAIL_SHIFT) >= e^-32 is a normal
# float down to x = -200, below which p * e^x * (1 + |x|) rounds to 0 for every f32 p (CAP keeps
# it finite there, so that an infinite p stays infinite; CAP = 88 < 88.37, where n = 128); -x - TAIL_SHIFT is exact, and
# TAIL_SCALE = f32(e^-56) is normal. At or above TAIL, sigmoid(x) = 1 / (1 + exp(-x)) with
# exp(-x) <= e^80 finite and its reciprocal normal.
TAIL = -80.0
TAIL_SHIFT = 112.0
TAIL_SCALE = f32(math.exp(-56.0))
CAP = 88.0
# exp's argument raised to FLOOR keeps d: 1 + e^FLOOR rounds to 1, as 1 + e^-x does for every -x
# below it; with the argument in [FLOOR, CAP], exp's n lies in [-126, 127] (sigmoid_quotient).
FLOOR = -87.0
# float64's sigmoid is 0 at and below -709.78 (exp(-x) overflows there): above it an infinite p
# times sigmoid(x) is infinite in the float64 formula; at and below it, p * 0 (NaN for an
# infinite p).
F64_SIGMOID_ZERO = f32(-709.78271484375)


def sigmoid_quotient(x, small: str | None = "exp"):
    """(m, e, d) with sigmoid(x) = m / d * m and sigmoid(-x) = e / d, from one exp: m = 1,
    e = exp(-x) and d = 1 + e at or above TAIL; below it m = TAIL_SCALE (0 from float64's zero
    down) and e = d = exp(min(-x - TAIL_SHIFT, CAP)).

    exp's argument clamped to [FLOOR, CAP] makes it shorter (aclgen/passes/value_range.py: no
    clamp of its own, one power of two), and d is the same for every x above -FLOOR (1 + e^FLOOR
    rounds to 1); e is not. `small` says how e is made there: "exp", the general exp for every
    lane (gelu's tanh form, whose z grows as x^3 and passes 87 in ordinary data); "rare", a
    promise that such lanes are rare, which then take a second exp (swish's z = beta x: Silu's
    gradient f32, 1M: 543 -> 469 µs); None, e unused (the products below: Silu f32, 1M:
    424 -> 356 µs). The same bits every way.

    A product takes m, d, m in turn (p * m / d * m), one chain whose operands are selects, so
    that a large p times a sigmoid below FLT_MIN keeps its bits: two chains (one per side) and a
    select of their results ran 1.3x as long, and the quotient p / (1 + e) instead of
    p * (1 / (1 + e)) is one rounding and one multiply fewer (Glu f32, 1M: 262 -> 246 µs). The
    tail is `unlikely`: a vector step with no lane below TAIL runs a version without it (m = 1
    and d = 1 + e, the same bits)."""
    if small == "rare":
        tail, below = unlikely(x < TAIL, x > -FLOOR)
    else:
        tail = unlikely(x < TAIL)
    m = select(tail, select(x <= F64_SIGMOID_ZERO, 0.0, TAIL_SCALE), 1.0)
    z = select(tail, -x - TAIL_SHIFT, -x)
    if small == "exp":
        e = exp(minimum(z, CAP))
    else:
        e = exp(clamp(z, FLOOR, CAP))
        if small == "rare":
            e = select(below, exp(z), e)
    return m, e, select(tail, e, 1.0 + e)


def times_sigmoid(p, x):
    """p * sigmoid(x) for any f32 p and x, accurate where sigmoid(x) is subnormal: the tail's
    product is ((p * m) / d) * m, whose intermediates stay normal whenever the result is (p * m
    underflows only for |p| < 2^-45, where p * e^x < 2^-160 anyway)."""
    m, _, d = sigmoid_quotient(x, small=None)
    return p * m / d * m


def times_sigmoid2(p, q, x):
    """p * q * sigmoid(x), also where p * q overflows f32 but the result does not: then |p| and
    |q| are >= 1 and the product takes (p * m) * ((q * m) / d), whose factors stay normal. An
    infinite p or q keeps p * q first (inf times the positive rest is inf, as in float64).
    Where p * q overflows, x must be >= -200 (CAP caps the tail's exp there): below, the result
    is p * q * e^-200's size, not smaller. SwiGlu's and GeGlu's p or q is x's own size (|x| or
    the gate of z = x), so their products there are below 2^-150 and round to 0 either way."""
    m, _, d = sigmoid_quotient(x, small=None)
    pq = p * q
    overflow = unlikely(logical_not(logical_or(abs(pq) < INF, maximum(abs(p), abs(q)) == INF)))
    return select(overflow, p * m * (q * m / d), pq * m / d * m)


def times_small(g, w, k):
    """g * w * k for a scale 0 < k <= 1: (g * w) * k, so that g * w keeps its bits where the
    product ends below FLT_MIN; (g * k) * w where g * w overflows and the product need not."""
    p = g * w * k
    return select(unlikely(logical_not(abs(p) < INF)), g * k * w, p)


def check(call):
    """CANN's order: presence, dtypes, one dtype, the shape, then the rank."""
    call.present()
    call.dtype_in("self", "out")
    call.same_dtype("out")
    call.shape = call.same_shape("out")
    call.max_rank("self")
    call.out_shape(call.shape)


def sigmoid_reference(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


@aclgen.operator(
    "Sigmoid",
    inputs=("self",),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    inplace="self",
    check=check,
    reference=sigmoid_reference,
    tolerance=2,
)
def sigmoid(x):
    """The logistic sigmoid 1 / (1 + e^-x), element by element."""
    return _sigmoid(x)
