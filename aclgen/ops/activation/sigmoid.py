"""activation/sigmoid: aclnnSigmoid(self, out) and aclnnInplaceSigmoid(selfRef).

Formula (doc page's 计算公式): out = 1 / (1 + e^(-self)), aclgen's `sigmoid` (computed in f32,
rounded once on store; sigmoid(-inf) = 0, sigmoid(+inf) = 1, NaN stays NaN, as the kernel's
exp/add/div sequence gives). Bound: 2 ulp of the output dtype against float64.

dtypes: the doc lists FLOAT, FLOAT16, BFLOAT16 for self and out; op_api refuses BFLOAT16 outside
the Atlas A2/A3 and 950 chips, and the in-place API's note gives FLOAT and FLOAT16 for the Atlas
training and inference series (DOUBLE and the complex types have no aclgen kernel). op_api also
takes integer inputs and casts across dtypes; the doc lists none, and aclgen's out has self's
dtype (161002 otherwise).

`sigmoid_pair` and `times_small` are the pieces the sigmoid-based gradients of this family share
(SiluBackward, SwishBackward, FastGeluBackward, LogSigmoidBackward, SoftplusBackward): sigmoid
and its complement from one exp, scaled so that a large gradient times a sigmoid below
FLT_MIN keeps its bits (CANN's kernels and torch lose them: FLT_MAX * e^-100 has 3 bits).

Checks (op_api's order): self, out present (161001); self's dtype, then out's, in the SoC's list;
out's dtype equal to self's; out's shape equal to self's; at most 8 dims (161002). The in-place
API checks selfRef's presence and dtype first, then the same sequence.
"""

import math

import numpy as np

import aclgen
from aclgen import exp, f32, select
from aclgen import sigmoid as _sigmoid

FLOATS = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOATS, "Ascend910_93": FLOATS, "Ascend950": FLOATS,
          "Ascend910": FLOATS[:2], "Ascend310P": FLOATS[:2]}

INF = float("inf")
BIG = 64.0  # beyond it e^-|z| is carried as e^(BIG - |z|) times E_MINUS_BIG
E_MINUS_BIG = f32(math.exp(-BIG))


def sigmoid_pair(z):
    """(σ(z), σ(-z)) from one exp, each as a pair (u, k) whose value is u * k: k = 1, except
    that the side below e^-64 is u = e^(64 - |z|) / (1 + e^-|z|) (normal down to |z| = 151)
    with k = f32(e^-64). 64 - |z| is exact for |z| > 64, so u carries e^-|z| to its last bit
    where e^-|z| itself is subnormal; a product takes u first and k last (`times_small`).
    z = NaN gives NaN on both sides."""
    a = abs(z)
    big = a > BIG
    t = exp(select(big, BIG - a, -a))
    k = select(big, E_MINUS_BIG, 1.0)
    r = 1.0 / (1.0 + t * k)  # σ(|z|)
    small = t * r  # σ(-|z|) / k
    pos = z >= 0.0
    return (select(pos, r, small), select(pos, 1.0, k)), (select(pos, small, r), select(pos, k, 1.0))


def times_small(g, w, k):
    """g * w * k for a scale 0 < k <= 1: (g * w) * k, so that g * w keeps its bits where the
    product ends below FLT_MIN; (g * k) * w where g * w overflows and the product need not."""
    p = g * w * k
    return select(abs(p) < INF, p, g * k * w)


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
