"""activation/ge_glu_v2: aclnnGeGlu(self, dim, approximate, out, outGelu) and
aclnnGeGluV3(self, dim, approximate, activateLeft, out, outGelu).

self splits along `dim` into halves A | B. GeGlu: out = A * Gelu(B), outGelu = Gelu(B); GeGluV3
with activateLeft: out = Gelu(A) * B, outGelu = Gelu(A) (else as GeGlu) (the doc pages'
计算公式). `approximate` picks Gelu: 0 the exact x * Φ(x) ("none"), 1 the tanh approximation
0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))) ("tanh"); the doc pages give only these two and
op_api refuses the others (161002).

The Gelu forms are gelu.py's: x * sigmoid(z) with z = 2√(2/π)(x + 0.044715 x³) (0.5 (1 + tanh(z/2))
without its cancellation for x < 0, CANN's own form), and x * Φ(x) with Φ(x) = φ(x) M(|x|) below 0
(gelu.normal_cdf; CANN's kernel computes 1 + erf, which cancels for x < 0; this does not). out multiplies the
other half in: the tanh form as glu.py's `times_sigmoid2` (A * B * sigmoid(z), kept where
sigmoid(z) is subnormal or A * B overflows), the exact form as (A * B) * Φ(B), or A * (B * Φ(B))
where A * B overflows. x = -inf gives NaN (-inf * 0, as the formula and the kernel).

Checks, in op_api's order (aclnn_geglu.cpp): self, out, outGelu nullptr (161001); self's, out's,
outGelu's dtypes in the SoC's list; out's and outGelu's equal to self's (not checked for an empty
self); at most 8 dims each; dim in [-rank, rank-1] (for a 0-d self, [-1, 0]); a 0-d self cannot
be split (CANN's size checks fail for it); self's size at dim even; out and outGelu of self's
shape with dim halved; approximate 0 or 1 (161002 each). An empty self returns at once.
An attribute of another kind (possible from Python only) is 161002 where the check reads it.

dtypes: FLOAT, FLOAT16, BFLOAT16 on Atlas A2/A3 and Ascend950; FLOAT, FLOAT16 on Ascend310P
(the doc's note); not on Ascend910 (不支持). Python defaults: dim -1, approximate 1 (tanh) and
activateLeft false, CANN's graph defaults (ge_glu_v2_proto.h).

Bound: 256 ulp of the output dtype, gelu.py's: the f32 z and x² carry rounding that e^z and e^(-x²/2)
amplify in the left tail (up to about x² * 2^-24 relative); in the exact form, where Φ(B) is
subnormal (B < -13.2) out keeps only its bits, a few 2^-149 * |A * B| (the reference's scale).
"""

import numpy as np

import aclgen
from aclgen import Attr, Split, f32, logical_or, maximum, select
from aclgen.ops.activation.gelu import normal_cdf, normal_cdf_reference, tanh_z, tanh_z_reference
from aclgen.ops.activation.glu import halved, input_shapes, sigmoid64
from aclgen.ops.activation.sigmoid import TINY, times_sigmoid, times_sigmoid2
from aclgen.runtime import constants as C
from aclgen.runtime.tensor import fmt_dims

INF = float("inf")
A2 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend310P": A2[:2], "Ascend910": ()}
PHI64_LAST = f32(-38.475364685058594)  # the last x where float64's Φ(x) = erfc(-x/√2) / 2 is not 0
TANH = 1  # approximate: 0 "none", 1 "tanh"
DIM = Attr("dim", "int64", default=-1)
APPROXIMATE = Attr("approximate", "int64", default=TANH)
ACTIVATE_LEFT = Attr("activateLeft", "bool", default=False)


def split_dim(call, name: str) -> tuple[int, ...]:
    """dim within [-rank, rank-1] (for a 0-d tensor [-1, 0]: CANN counts it as 1 dim), then the
    split; a 0-d tensor passes the dim check and fails as it cannot be halved (161002)."""
    rank = len(call.tensor(name).view_dims)
    dim = call.attr("dim")
    n = max(rank, 1)
    if not -n <= dim < n:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID,
                         f"dim {dim} is outside [{-n}, {n - 1}] for {name} of {rank} dims")
    if rank == 0:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID,
                         f"{name} shape {fmt_dims(())} has no dim to split in halves")
    return call.split_shape()


def approximate_value(call) -> None:
    """approximate 0 ("none") or 1 ("tanh"), else 161002."""
    v = call.attr("approximate")
    if v not in (0, 1):
        raise call.error(C.ACLNN_ERR_PARAM_INVALID,
                         f"approximate must be 0 (none) or 1 (tanh), got {v}")


def check(call):
    """op_api's order (see the module docstring)."""
    call.present("self", "out", "outGelu")  # the tensors; dim and approximate where they are used
    call.dtype_in("self", "out", "outGelu")
    if call.tensor("self").numel and call.tensor("self").view_dims:
        call.same_dtype("out", "outGelu", ref="self")
    call.max_rank("self", "out", "outGelu")
    half = split_dim(call, "self")
    call.halves(half, "out", "outGelu")
    approximate_value(call)
    call.present(*(a.name for a in call.op.attrs))  # activateLeft (GeGluV3)
    call.shape = half


def result(ins, attrs):
    """out and outGelu: self's shape with dim halved, self's dtype."""
    h = halved(ins[0], attrs.get("dim", -1))
    return [h, h]


def gelu_and_product(linear, g, approximate: int):
    """(linear * Gelu(g), Gelu(g))."""
    if approximate == TANH:
        z = tanh_z(g)
        return times_sigmoid2(linear, g, z), times_sigmoid(g, z)
    cdf = normal_cdf(g)
    lg = linear * g
    first = logical_or(abs(lg) < INF, maximum(abs(linear), abs(g)) == INF)
    gelu = g * cdf
    # an f32 Φ that underflowed stays the smallest subnormal down to float64's zero of Φ, so that
    # an infinite A * B times it is inf as in the float64 formula (not inf * 0 = NaN)
    floor = select(g > PHI64_LAST, TINY, 0.0)
    return select(first, lg * select(cdf < floor, floor, cdf), linear * gelu), gelu


def gelu_reference(x, approximate):
    with np.errstate(all="ignore"):
        if approximate == TANH:
            return x * sigmoid64(tanh_z_reference(x))
        return x * normal_cdf_reference(x)


def ge_glu_v3_reference(x, dim, approximate, activate_left):
    a, b = np.split(x, 2, axis=dim)
    linear, g = (b, a) if activate_left else (a, b)
    gelu = gelu_reference(g, approximate)
    return linear * gelu, gelu


def _scale(x, dim, approximate, activate_left):
    """out: its size, and at least 2^-126 * |A * B| (a subnormal Φ keeps only its bits)."""
    a, b = np.split(x, 2, axis=dim)
    out, _ = ge_glu_v3_reference(x, dim, approximate, activate_left)
    tiny = float(np.finfo(np.float32).tiny)
    return np.nan_to_num(np.abs(out) + tiny * np.abs(a * b), nan=0.0, posinf=np.inf), None


def ge_glu_reference(x, dim, approximate):
    return ge_glu_v3_reference(x, dim, approximate, False)


ge_glu_v3_reference.scale = _scale  # type: ignore[attr-defined]
ge_glu_reference.scale = lambda x, dim, approximate: _scale(x, dim, approximate, False)  # type: ignore[attr-defined]

COMMON = dict(
    outputs=("out", "outGelu"),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    split=Split("self", dim="dim", into=("a", "b")),
    result=result,
    input_shapes=input_shapes,
    tolerance=256,
    half_forms="terms",
)


@aclgen.operator("GeGlu", inputs=("self",), attrs=(DIM, APPROXIMATE), reference=ge_glu_reference, **COMMON)
def ge_glu(a, b, approximate):
    """GeGLU: the first half of `self` along `dim` times Gelu of the second (and that Gelu)."""
    return gelu_and_product(a, b, approximate)


@aclgen.operator("GeGluV3", inputs=("self",), attrs=(DIM, APPROXIMATE, ACTIVATE_LEFT),
                 reference=ge_glu_v3_reference, **COMMON)
def ge_glu_v3(a, b, approximate, activate_left):
    """GeGLU with the Gelu on the first half when `activateLeft` (and that Gelu), else on the second."""
    return gelu_and_product(b, a, approximate) if activate_left else gelu_and_product(a, b, approximate)

