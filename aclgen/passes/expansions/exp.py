"""exp and sigmoid as vectorizable f32 code (LLVM would call scalar `expf` once per lane).

exp follows Cephes' `expf` scheme, the polynomial refitted:

    x' = clamp(x, -104, 89)          (NaN is set aside and returned as is)
    n  = roundeven(x' * log2(e))     (by adding and subtracting 1.5 * 2^23)
    r  = x' - n * C1 - n * C2        (Cody-Waite: C1 + C2 = ln 2, C1 exact in 9 bits)
    s  = r + r^2 * P(r)              (degree-4 minimax P on [-ln2/2, ln2/2], Estrin's scheme)
    e^x = (2^n1 + s * 2^n1) * 2^n2   (n1 = n >> 1, n2 = n - n1)

The scale by 2^n is split in two normal powers of two, so results that overflow become +inf and
results in the subnormal range round once (gradual underflow), over the whole float range.
exp(+inf) = +inf, exp(-inf) = 0, exp(NaN) = NaN.

`sigmoid(x)` is 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0 with e = exp(-|x|), so it is
accurate down to subnormal results; `sigmoid` says how it is cut to SwiGluGrad's needs.

SwiGluGrad's loop is this code and a dozen products, bound by the latency of that chain (how many
iterations the out-of-order window overlaps) more than by the FP pipes: see the performance notes
in docs/. Measured on AMD EPYC (Zen 3, AVX2), one thread, 64K pairs, median ns per pair: 1.30
before `sigmoid`'s cuts and SwiGluGrad's two-order product, 0.82 with both, 1.14 with the cuts
alone and 1.38 with the product alone (each is a shorter chain only with the other); Estrin
against Horner 0.82 against 0.84.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from aclgen.passes.builder import Builder
from aclgen.passes.expansions.registry import expands

LOG2E = 1.44269504088896341
C1 = 0.693359375
C2 = -2.12194440e-4
MAGIC = 12582912.0  # 1.5 * 2^23
# (e^r - 1 - r) / r^2, degree-4 minimax in e^r's relative error on [-ln2/2, ln2/2]: 2^-28 with
# these f32 coefficients, far below the final rounding (a degree-5 fit gives 2^-30 for one more FMA).
POLY = (1.3814538e-3, 8.3687454e-3, 4.1668389e-2, 1.6666521e-1, 4.9999994e-1)
SCALE_SHIFT = 25  # sigmoid works with e * 2^25, a normal float for every e = exp(x <= 0) it needs


def reduce(b: Builder, xc: SSAValue, magic: float) -> tuple[SSAValue, SSAValue]:
    """(t, r) with n = roundeven(xc * log2 e) in the low mantissa bits of t = n + magic (the
    add rounds to an integer: |n| <= 150, so no fptosi/roundeven is needed) and
    r = xc - n * ln 2 (Cody-Waite: n * C1 is exact, so only the C2 step rounds)."""
    m = b.f32(magic)
    t = b.muladd(xc, b.f32(LOG2E), m)
    n = b.sub(t, m)
    r = b.muladd(n, b.f32(-C1), xc)
    return t, b.muladd(n, b.f32(-C2), r)


def expm1_poly(b: Builder, r: SSAValue) -> SSAValue:
    """s = r + r^2 * P(r) ~ e^r - 1, P by Estrin's scheme: (c0 r^2 + (c1 r + c2)) r^2 + (c3 r + c4),
    three multiply-adds deep instead of Horner's four (the loop is bound by this chain's latency)."""
    c = [b.f32(v) for v in POLY]
    r2 = b.mul(r, r)
    hi, lo = b.muladd(c[1], r, c[2]), b.muladd(c[3], r, c[4])
    p = b.muladd(b.muladd(c[0], r2, hi), r2, lo)
    return b.muladd(p, r2, r)


def pow2(b: Builder, bits: SSAValue) -> SSAValue:
    """The float whose exponent field is the low 9 bits of `bits` (2^(bits - 127) for bits in [1, 254])."""
    return b.float(b(arith.ShLIOp(bits, b.i32(23))))


@expands("exp")
def exp(b: Builder, x: SSAValue) -> SSAValue:
    nan = b.call("isnan", x)
    lo, hi = b.f32(-104.0), b.f32(89.0)
    xc = b.select(b.cmp("olt", x, lo), lo, x)
    xc = b.select(b.cmp("ogt", xc, hi), hi, xc)
    xc = b.select(nan, b.f32(0.0), xc)  # keep NaN out of the integer path
    t, r = reduce(b, xc, MAGIC)
    ni = b(arith.SubiOp(b.bits(t), b.bits(b.f32(MAGIC))))
    n1 = b(arith.ShRSIOp(ni, b.i32(1)))
    n2 = b(arith.SubiOp(ni, n1))
    bias = b.i32(127)
    # (1 + s) * 2^n1 rounds once and stays normal (|n1| <= 75); * 2^n2 rounds only into subnormals
    scale1 = pow2(b, b(arith.AddiOp(n1, bias)))
    y = b.mul(b.muladd(expm1_poly(b, r), scale1, scale1), pow2(b, b(arith.AddiOp(n2, bias))))
    return b.select(nan, x, y)


@expands("sigmoid")
def sigmoid(b: Builder, x: SSAValue) -> SSAValue:
    """sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, with e = exp(-|x|): e never
    overflows, and e / (1 + e) keeps sigmoid's tiny values (down to subnormals) that
    1 / (1 + exp(-x)) would flush to 0 once exp(-x) overflows.

    The exp is cut to what sigmoid needs. Its argument is <= 0 or NaN: no upper clamp, and no NaN
    select (a NaN runs through the arithmetic; the integer path only makes a scale that multiplies
    it). n is in [-150, 0], so E = e * 2^25 = 2^(n + 25) * (1 + s) is a normal float, one
    multiply-add that rounds once, and 2^(n + 25) is t's low 9 bits shifted into the exponent
    field (the shifter MAGIC + 152 leaves n + 152 there). Both quotients take the 2^25 top and
    bottom: 2^25 / (2^25 + E) and E / (2^25 + E), which rounds once even where it is subnormal.
    One division (LLVM folds a select of two into one anyway): the numerator is
    max(E, 2^25 if x >= 0 else 0), as E <= 2^25 — a compare, an and and a max instead of a blend
    on the multiply pipes, which the loop keeps busy. A reciprocal estimate instead (`fdiv arcp
    ninf` with "reciprocal-estimates"="vec-divf:1": rcpps and a Newton step) ran SwiGluGrad
    at 1.00 ns per pair against the division's 0.82, and the raw estimate at 0.77: the divider
    (a ymm per 3.5 cycles) is not what bounds the loop, the extra multiply-adds are."""
    xa = b.neg(b.call("absolute", x))
    lo = b.f32(-104.0)
    xc = b.select(b.cmp("olt", xa, lo), lo, xa)
    t, r = reduce(b, xc, MAGIC + 127 + SCALE_SHIFT)
    scale = pow2(b, b.bits(t))
    e = b.muladd(expm1_poly(b, r), scale, scale)
    unit, zero = b.f32(2.0**SCALE_SHIFT), b.f32(0.0)
    floor = b.select(b.cmp("oge", x, zero), unit, zero)
    num = b.select(b.cmp("olt", e, floor), floor, e)
    return b.div(num, b.add(unit, e))
