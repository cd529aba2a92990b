"""exp, exp2, expm1 and sigmoid as vectorizable f32 code (LLVM would call scalar `expf` once per
lane). exp, exp2 and expm1 are within 1 ulp of the exact value over all 2^32 floats, with fused
and with unfused multiply-adds (benchmarks/math_sweep.py; the table is in docs/math.md); sigmoid
within 2 (see `sigmoid`).

exp2 has its own reduction (x - roundeven(x) is exact; see `exp2`). exp, the scheme expm1, tanh and
erf share:

    xc = min(max(x, -104), 89)          (NaN passes both compares and propagates)
    n  = roundeven(xc * log2 e)         (in the low mantissa bits of z = xc * log2 e + 1.5 * 2^23)
    r  = xc - n * C1 - n * C2           (Cody-Waite: C1 + C2 = ln 2, n * C1 exact, |r| <= ln2 / 2)
    e^r = (1 + r) + r^2 * P(r)          (degree-4 minimax P, Estrin's scheme)
    e^x = (t * s1 + hi * s1) * s2       (hi + lo = 1 + r exactly (Fast2Sum), t = r^2 P + lo;
                                         s1 * s2 = 2^n, two normal powers of two; with
                                         AVX-512F, vscalefps(hi + t, n): the same bits)

1 + r is split exactly and only the small rest `t` carries the polynomial's rounding: rounding
r + r^2 P before adding 1 (the Cephes scheme) reaches 2 ulp. hi * s1 is exact, so e^x rounds
once before the last multiply, which rounds only into subnormals (gradual underflow) or to
+inf. exp(+inf) = +inf (89 gives n = 128), exp(-inf) = +0 (e^-104 < 2^-150), exp(NaN) = NaN,
with no select: the integer path only makes the scale a NaN multiplies.

The shifter trick takes n out of z's bits with an integer subtract (no fptosi, whose NaN and
out-of-range results are poison in LLVM). The coefficients are exact f32 values, written in
hex; exp's come from the numerics prototypes (minimax fits with greedy f32 rounding), exp2's
from a least-squares fit weighted by |r| (its comment); the exhaustive sweeps validated the
order of every operation.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from aclgen.dialects.enums import Predicate
from aclgen.dialects.llvmx import AVX512Function
from aclgen.passes.builder import Builder
from aclgen.passes.expansions.registry import expands
from aclgen.passes.value_range import within

h = float.fromhex
L2E = h("0x1.715476p+0")  # log2(e) rounded to f32 (0x3fb8aa3b)
SH = h("0x1.8p23")  # 1.5 * 2^23: adding it rounds to an integer held in the low mantissa bits
SH_BITS = 0x4B400000  # SH's bit pattern
# exp of an argument in [NORMAL_LO, NORMAL_HI] has n = roundeven(x log2 e) in [-126, 127]
NORMAL_LO, NORMAL_HI = -87.0, 88.0
C1 = h("0x1.62e4p-1")  # ln 2's high 16 bits (0x3f317200): n * C1 is exact for |n| < 256
C2 = h("0x1.7f7d1cp-20")  # ln 2 - C1 (0x35bfbe8e), together ln 2 to 2^-44
# P(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 + 3e-5, degree 4; e^r's relative error 2^-28.3
EXP_P = (
    h("0x1.fffffcp-2"),  # 0x3efffffe
    h("0x1.555492p-3"),  # 0x3e2aaa49
    h("0x1.5558aap-5"),  # 0x3d2aac55
    h("0x1.12396cp-7"),  # 0x3c091cb6
    h("0x1.6a5234p-10"),  # 0x3ab5291a
)
# 2^r = 1 + r (c1 + c2 r + ... + c6 r^5) on |r| <= 1/2: a minimax fit of (2^r - 1) / r weighted by
# r / 2^r (the relative error of 2^r, 2^-28.3), the coefficients rounded to f32 one by one
EXP2_P = (1.0, *(h(v) for v in ("0x1.62e430p-1", "0x1.ebfbdcp-3", "0x1.c6af7cp-5", "0x1.3b2de0p-7",
                                 "0x1.5f082ep-10", "0x1.416b5ep-13")))
# without FMA (exp2_table): 2^(j/8) = POW2_8_HI[j] + POW2_8_LO[j], each rounded to f32 (the pair to 2^-49)
POW2_8_HI = tuple(h(v) for v in (
    "0x1p+0", "0x1.172b84p+0", "0x1.306fe0p+0", "0x1.4bfdaep+0", "0x1.6a09e6p+0", "0x1.8ace54p+0",
    "0x1.ae89fap+0", "0x1.d5818ep+0"))
POW2_8_LO = tuple(h(v) for v in (
    "0x0p+0", "-0x1.c15742p-27", "0x1.4636e2p-25", "-0x1.593abcp-25", "0x1.9fcef4p-26", "0x1.15506ep-27",
    "-0x1.a94b14p-26", "-0x1.822dbcp-27"))
# (2^r - 1) / r on |r| <= 1/16, degree 3: least squares on Chebyshev nodes weighted by |r|, so that
# |r Q(r) - (2^r - 1)| <= 2^-30.4 with the f32 coefficients
EXP2_Q = (h("0x1.62e430p-1"), h("0x1.ebfbe0p-3"), h("0x1.c6c06ep-5"), h("0x1.3b31c8p-7"))
SH8 = h("0x1.8p20")  # 1.5 * 2^20: adding it rounds to a multiple of 1/8
SH8_BITS = 0x49C00000  # its bit pattern

# expm1's (e^r - 1 - r - r^2/2) / r^3 on r in [-0.3466, 0.4506], degree 4 (its r^2 term, 1/2, is
# exact and added apart); e^r's relative error 2^-31.8
EXPM1_P = (
    h("0x1.55555cp-3"),  # 0x3e2aaaae
    h("0x1.5554c0p-5"),  # 0x3d2aaa60
    h("0x1.1104e2p-7"),  # 0x3c088271
    h("0x1.6d74c0p-10"),  # 0x3ab6ba60
    h("0x1.b31ae8p-13"),  # 0x39598d74
)
# sigmoid's exp (Cephes' expf scheme, kept from before exp's 1-ulp reconstruction; see sigmoid):
# ln 2 = SIG_C1 + SIG_C2 with SIG_C1 exact in 9 bits, and a degree-4 minimax for
# (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2] (relative error 2^-28), highest degree first
SIG_C1 = 0.693359375
SIG_C2 = -2.12194440e-4
SIG_POLY = (1.3814538e-3, 8.3687454e-3, 4.1668389e-2, 1.6666521e-1, 4.9999994e-1)
SIGMOID_SHIFT = 25  # sigmoid works with e * 2^25, a normal float for every e = exp(x <= 0) it needs
# Where only a half type stores the result (`Builder.half`, 2^-16 is enough): ln 2 as one f32
# (n LN2's error, |n| <= 150, stays below 2^-21.7 of r), and e^r = 1 + r + r^2 (c2 + c3 r + c4 r^2)
# on |r| <= ln2/2 + 1e-4, relative error 2^-17.5 (a minimax fit, the coefficients rounded to f32)
LN2 = h("0x1.62e430p-1")  # 0x3f317218
EXP_HALF = (1.0, 1.0, h("0x1.0006b6p-1"), h("0x1.571cecp-3"), h("0x1.52258ep-5"))
# exp2's: 2^r = 1 + c1 r + ... + c4 r^4 on |r| <= 1/2 + 1e-4, relative error 2^-18.4 (the same fit)
EXP2_HALF = (1.0, h("0x1.62e12cp-1"), h("0x1.ec0378p-3"), h("0x1.c9fc9cp-5"), h("0x1.3a02ecp-7"))


def clamp(b: Builder, x: SSAValue, lo: float, hi: float) -> SSAValue:
    """`x > hi ? hi : x`, then `< lo ? lo`: ordered compares, so NaN passes (one maxps/minps each);
    in x's width (pow's f64 exponent too)."""
    x = clamp_above(b, x, hi)
    c_lo = b.constant(lo, x)
    return b.select(b.cmp(Predicate.OLT, x, c_lo), c_lo, x)


def clamp_above(b: Builder, x: SSAValue, hi: float) -> SSAValue:
    """`x > hi ? hi : x` (NaN passes): for a branch whose lanes below some bound take the other
    branch's value, which need no lower clamp."""
    c_hi = b.constant(hi, x)
    return b.select(b.cmp(Predicate.OGT, x, c_hi), c_hi, x)


def shifter(b: Builder, z: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(n, ni): the integer in z = v + 1.5 * 2^23's low mantissa bits, as an f32 and an i32
    (both exact; any z, NaN included, gives some i32)."""
    return b.sub(z, b.f32(SH)), b.isub(b.bits(z), b.i32(SH_BITS))


def round_log2e(b: Builder, v: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(n, ni) with n = roundeven(v * log2 e)."""
    return shifter(b, b.muladd(v, b.f32(L2E), b.f32(SH)))


def reduce_ln2(b: Builder, n: SSAValue, v: SSAValue) -> SSAValue:
    """v - n ln 2, rounded once: v - n * C1 is exact (Sterbenz), the C2 step rounds."""
    return b.muladd(n, b.f32(-C2), b.muladd(n, b.f32(-C1), v))


def estrin4(b: Builder, c: tuple[float, ...], r: SSAValue, r2: SSAValue) -> SSAValue:
    """c0 + c1 r + c2 r^2 + c3 r^3 + c4 r^4 as (c4 r^2 + (c3 r + c2)) r^2 + (c1 r + c0):
    three multiply-adds deep instead of Horner's four."""
    k = [b.f32(v) for v in c]
    lo, hi = b.muladd(k[1], r, k[0]), b.muladd(k[3], r, k[2])
    return b.muladd(b.muladd(k[4], r2, hi), r2, lo)


def estrin(b: Builder, c: Sequence[SSAValue], r: SSAValue, r2: SSAValue) -> SSAValue:
    """c0 + c1 r + ... for 8 or 9 coefficients (values: constants or per-lane picks) by Estrin's
    pairs, r^4 formed here: (((c8 r^2) + (c7 r + c6)) r^2 + (c5 r + c4)) r^4 + ((c3 r + c2) r^2
    + (c1 r + c0)), c8's term absent for 8. Four multiply-adds deep after r^4, where Horner is
    eight: erfinv is one long chain (log_normal's Q, its polynomial in w, its tail's)."""
    assert len(c) in (8, 9), "estrin takes 8 or 9 coefficients"
    hi = b.muladd(c[7], r, c[6]) if len(c) == 8 else b.muladd(c[8], r2, b.muladd(c[7], r, c[6]))
    hi = b.muladd(hi, r2, b.muladd(c[5], r, c[4]))
    return b.muladd(hi, b.mul(r2, r2), b.muladd(b.muladd(c[3], r, c[2]), r2, b.muladd(c[1], r, c[0])))


def exp_poly(b: Builder, r: SSAValue, r2: SSAValue) -> SSAValue:
    """P(r) ~ (e^r - 1 - r) / r^2 for |r| <= ln2 / 2."""
    return estrin4(b, EXP_P, r, r2)


def one_plus(b: Builder, r: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(hi, lo) = 1 + r exactly (Fast2Sum: |r| < 1)."""
    one = b.f32(1.0)
    hi = b.add(one, r)
    return hi, b.add(b.sub(one, hi), r)


def pow2(b: Builder, biased: SSAValue) -> SSAValue:
    """2^(biased - 127) for an i32 `biased` in [1, 254]: the float with that exponent field."""
    return b.float(b.shl(biased, 23))


def split_scale(b: Builder, ni: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(s1, s2), two normal powers of two with s1 s2 = 2^ni, for |ni| <= 252: a value times s1
    stays exact (it keeps its 24 bits in range), times s2 it rounds once, into subnormals or to
    +inf where it must (gradual underflow and overflow)."""
    n1 = b.ashr(ni, 1)
    n2 = b.isub(ni, n1)
    bias = b.i32(127)
    return pow2(b, b.iadd(n1, bias)), pow2(b, b.iadd(n2, bias))


def times_pow2(b: Builder, v: SSAValue, n: SSAValue, ni: SSAValue, normal: bool = False) -> SSAValue:
    """v 2^n, rounded once, for a normal v and an integral n (`ni` as an i32), |n| <= 252: v s1 is
    exact and the multiply by s2 rounds (split_scale) — or, with AVX-512F, one vscalefps of v by
    n itself (the exact product rounded once: the same bits in one instruction instead of
    eight). `normal`: n is known to lie in [-126, 127], where 2^n itself is a normal float and
    one multiply by it rounds the same way."""
    if b.avx512:
        return b.x86(AVX512Function.SCALEF, v, n)
    if normal:
        return b.mul(v, pow2(b, b.iadd(ni, b.i32(127))))
    s1, s2 = split_scale(b, ni)
    return b.mul(b.mul(v, s1), s2)


def scaled(b: Builder, t: SSAValue, hi: SSAValue, n: SSAValue, ni: SSAValue, normal: bool = False) -> SSAValue:
    """(t + hi) 2^n, the sum rounded once, then the scale. Without vscalefps the sum is formed at
    scale s1 (one multiply-add: (t + hi) s1 is normal, so it rounds as t + hi does); for an n
    known to lie in [-126, 127] (`normal`), t + hi times 2^n: the same bits."""
    if b.avx512 or normal:
        return times_pow2(b, b.add(hi, t), n, ni, normal)
    s1, s2 = split_scale(b, ni)
    return b.mul(b.muladd(t, s1, b.mul(hi, s1)), s2)


def horner(b: Builder, c: tuple[float, ...], r: SSAValue) -> SSAValue:
    """c0 + c1 r + c2 r^2 + ..., by Horner, in r's width (f32, or f64 for a widened r: pow)."""
    p = b.constant(c[-1], r)
    for v in reversed(c[:-1]):
        p = b.muladd(p, r, b.constant(v, r))
    return p


def times_q(b: Builder, q: tuple[float, ...], r: SSAValue) -> SSAValue:
    """r (q0 + q1 r + q2 r^2 + ...)."""
    return b.mul(horner(b, q, r), r)


def exp_half(b: Builder, xc: SSAValue, normal: bool = False) -> SSAValue:
    """e^xc to 2^-17 for xc in [-104, 89] (or NaN): r = xc - n LN2 in one multiply-add (without
    FMA, n LN2's rounding would reach 2^-18 of r: Cody-Waite's two steps there), e^r by Horner, the
    scale as `times_pow2` (rounding once into subnormals or to +inf). With the clamp 11 operations
    instead of exp's 21 with AVX-512F."""
    n, ni = round_log2e(b, xc)
    r = b.muladd(n, b.f32(-LN2), xc) if b.fma else reduce_ln2(b, n, xc)
    return times_pow2(b, horner(b, EXP_HALF, r), n, ni, normal)


@expands("exp")
def exp(b: Builder, x: SSAValue) -> SSAValue:
    """The scheme of the module's docstring. Where the formula bounds the argument to
    [NORMAL_LO, NORMAL_HI] (`Builder.bounds`), n lies in [-126, 127]: no clamp, and one normal
    power of two scales (`times_pow2`): 5 operations fewer, the same bits."""
    normal = within(b.bounds, NORMAL_LO, NORMAL_HI)
    xc = x if normal else clamp(b, x, -104.0, 89.0)
    if b.half:
        return exp_half(b, xc, normal)
    n, ni = round_log2e(b, xc)
    r = reduce_ln2(b, n, xc)
    r2 = b.mul(r, r)
    p = exp_poly(b, r, r2)
    hi, lo = one_plus(b, r)
    return scaled(b, b.muladd(p, r2, lo), hi, n, ni, normal)


@expands("exp2")
def exp2(b: Builder, x: SSAValue) -> SSAValue:
    """2^x = 2^n 2^r with n = roundeven(x) and r = x - n exact, |r| <= 1/2; 2^r = 1 + r P(r) by
    Horner (EXP2_P, degree 6; EXP2_HALF's 4 for a half-type result), whose last multiply-add
    rounds once; the scale as `times_pow2`. Within 0.79 ulp where the result is normal, 0.88
    where the scale rounds it again into subnormals (the exhaustive sweep; the half form: 2^-18).

    10 operations with AVX-512F, which needs no clamp: vscalefps gives +inf and +0 for any n past
    the range, and the infinities, whose r is NaN, take r = 1/2 from `minimum`'s x86 rule (a NaN
    gives the second operand): the scale then decides (+inf, +0, and NaN for a NaN). Elsewhere x
    is clamped to [-151, 128] first (2^-151 rounds to +0, 2^128 is +inf; NaN passes) for the two
    powers of two of n: the same bits.

    Without FMA the Horner steps round twice each and reach 1.07 ulp, so such targets take
    `exp2_table`, whose only rounding the size of the result is its last addition."""
    poly = EXP2_HALF if b.half else EXP2_P
    if b.avx512 and b.fma:
        n = b.call("round", x)
        r = b.sub(x, n)
        half = b.f32(0.5)
        r = b.select(b.cmp(Predicate.OLT, r, half), r, half)  # vminps
        return b.x86(AVX512Function.SCALEF, horner(b, poly, r), n)
    xc = clamp(b, x, -151.0, 128.0)
    if not (b.fma or b.half):
        return exp2_table(b, xc)
    n, ni = shifter(b, b.add(xc, b.f32(SH)))
    return times_pow2(b, horner(b, poly, b.sub(xc, n)), n, ni)


def exp2_table(b: Builder, xc: SSAValue) -> SSAValue:
    """exp2 of a clamped xc where multiply-adds are not fused. xc = k + r with k the multiple of
    1/8 nearest xc (the shifter to 1/8: z = xc + 1.5 * 2^20, k = z - 1.5 * 2^20) and r = xc - k
    exact, |r| <= 1/16; k's eighths j are z's low 3 bits. 2^xc = 2^n (T + T r Q(r)), n = floor(k),
    T = 2^(j/8) from an 8-entry table as a pair (POW2_8_HI + POW2_8_LO: `Builder.lookup`), Q of
    degree 3 by Horner: small = T_hi (r Q) + T_lo and the sum T_hi + small rounds once; the scale
    is the two normal powers of two of n. Within 0.56 ulp where the result is normal, 0.77 where
    it is subnormal (the scale rounds again)."""
    z = b.add(xc, b.f32(SH8))
    k = b.sub(z, b.f32(SH8))
    key = b.bits(z)
    hi = b.lookup(POW2_8_HI, key)
    y = b.add(hi, b.muladd(hi, times_q(b, EXP2_Q, b.sub(xc, k)), b.lookup(POW2_8_LO, key)))
    s1, s2 = split_scale(b, b.ashr(b.isub(key, b.i32(SH8_BITS)), 3))  # floor(k): ashr floors
    return b.mul(b.mul(y, s1), s2)


@expands("expm1")
def expm1(b: Builder, x: SSAValue) -> SSAValue:
    """e^x - 1 = 2 ((T - 1/2) + T r + T (r^2/2 + r^3 P(r) + rc (1 + r))) with T = 2^(n - 1), so
    that T is normal up to n = 128 and the factor 2 comes last.

    For n = 0 and +-1 the result is smaller than e^r and nothing may be lost: r + rc is x - n ln 2
    to 2^-48 (rc is the C2 step's rounding error), (T - 1/2) + T r is split exactly (Fast2Sum;
    T r is exact, T - 1/2 is exact for n <= 24 and e1 = -1/2 makes up for it beyond), and the
    r^2/2 term (20% of the result near n = 0) is T r^2 / 2, exact, never rounded through P
    (rounding r^2 P as a whole reached 1.15 ulp). Clamped to [-18, 89]: expm1(-18) rounds to -1.
    |x| < 2^-25 returns x: +-0 keep their sign, and subnormals their last bit (T r = x/2 would
    lose it)."""
    xc = clamp(b, x, -18.0, 89.0)
    n, ni = round_log2e(b, xc)
    r1 = b.muladd(n, b.f32(-C1), xc)  # exact
    rl = b.mul(n, b.f32(C2))
    r = b.sub(r1, rl)
    rc = b.sub(b.sub(r1, r), rl)
    r2 = b.mul(r, r)
    p = b.mul(estrin4(b, EXPM1_P, r, r2), r)
    t_ = pow2(b, b.iadd(ni, b.i32(126)))  # 2^(n - 1), n in [-26, 128]
    half = b.f32(0.5)
    tm = b.sub(t_, half)
    e1 = b.sub(b.sub(t_, tm), half)
    tr = b.mul(t_, r)  # exact
    hi = b.add(tm, tr)
    lo = b.add(b.sub(tm, hi), tr)
    c = b.muladd(b.muladd(r, rc, rc), t_, b.add(lo, e1))
    a = b.mul(t_, r2)  # exact
    t = b.muladd(a, p, b.muladd(a, half, c))
    y = b.mul(b.add(hi, t), b.f32(2.0))
    return b.select(b.cmp(Predicate.OLT, b.call("absolute", x), b.f32(2.0**-25)), x, y)


@expands("sigmoid")
def sigmoid(b: Builder, x: SSAValue) -> SSAValue:
    """sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, with e = exp(-|x|): e never
    overflows, and e / (1 + e) keeps sigmoid's tiny values (down to subnormals) that
    1 / (1 + exp(-x)) would flush to 0 once exp(-x) overflows.

    The exp is cut to what sigmoid needs. Its argument is <= 0 or NaN: no upper clamp, and no NaN
    select (a NaN runs through the arithmetic; the integer path only makes a scale that multiplies
    it). n is in [-150, 0], so E = e * 2^25 = 2^(n + 25) * (1 + s) is a normal float, one
    multiply-add that rounds once, and 2^(n + 25) is t's low 9 bits shifted into the exponent
    field (the shifter SH + 152 leaves n + 152 there). Both quotients take the 2^25 top and
    bottom: 2^25 / (2^25 + E) and E / (2^25 + E), which rounds once even where it is subnormal.
    One division (LLVM folds a select of two into one anyway), its numerator selected: 2^25 for
    x >= 0, else E — a compare and a blend (a masked move). (It was max(E, 2^25 if x >= 0 else
    0), a compare, an and and a max, for fear of blends on the multiply pipes; the select is 1.5%
    faster in float32, 3-4% in float16 and bfloat16, 1M elements, alternating processes; the
    same bits, as E <= 2^25.) A reciprocal estimate instead (`fdiv arcp ninf` with
    "reciprocal-estimates"="vec-divf:1": rcpps and a Newton step) ran SwiGluGrad at 1.00 ns per
    pair against the division's 0.82, and the raw estimate at 0.77: the divider (a ymm per 3.5
    cycles) is not what bounds the loop, the extra multiply-adds are.

    This sigmoid is within 2 ulp of the correctly rounded value (2.33 ulp of the exact one), not 1:
    every one-division form is limited by the rounding of 1 + e (up to 1 ulp of a result at the
    top of its binade) plus the division's and e's. The 1-ulp form (the numerics prototype's
    `my_sigmoid`: e and 2^25 + e as exact pairs, the quotient corrected by its exact residual;
    twice the ops) ran SwiGluGrad at 1.58x the time (1M pairs, 2 threads, interleaved medians
    1741 against 1104 us), which issue 17 does not allow, so it is not used."""
    xa = b.neg(b.call("absolute", x))
    lo = b.f32(-104.0)
    xc = b.select(b.cmp(Predicate.OLT, xa, lo), lo, xa)
    if b.half:
        return sigmoid_half(b, x, xc)
    m = b.f32(SH + 127 + SIGMOID_SHIFT)
    t = b.muladd(xc, b.f32(L2E), m)
    n = b.sub(t, m)
    r = b.muladd(n, b.f32(-SIG_C1), xc)
    r = b.muladd(n, b.f32(-SIG_C2), r)
    scale = b.float(b.shl(b.bits(t), 23))  # 2^(n + 25)
    c = [b.f32(v) for v in SIG_POLY]
    r2 = b.mul(r, r)
    hi, lo = b.muladd(c[1], r, c[2]), b.muladd(c[3], r, c[4])
    s = b.muladd(b.muladd(b.muladd(c[0], r2, hi), r2, lo), r2, r)  # e^r - 1
    return quotient(b, x, b.muladd(s, scale, scale), 2.0**SIGMOID_SHIFT)


def quotient(b: Builder, x: SSAValue, e: SSAValue, unit: float) -> SSAValue:
    """sigmoid from e = unit exp(-|x|): (unit if x >= 0 else e) / (unit + e)."""
    u = b.f32(unit)
    return b.div(b.select(b.cmp(Predicate.OGE, x, b.f32(0.0)), u, e), b.add(u, e))


def sigmoid_half(b: Builder, x: SSAValue, xc: SSAValue) -> SSAValue:
    """sigmoid for a half-type result: e = `exp_half` of xc = max(-|x|, -104), which rounds into
    subnormals itself, unscaled (unit 1) in `quotient` (x = +inf: e = +0, 1; NaN runs through).
    Relative error 2^-17."""
    return quotient(b, x, exp_half(b, xc), 1.0)
