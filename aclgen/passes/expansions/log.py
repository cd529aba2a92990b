"""log, log2 and log1p as vectorizable f32 code, within 1 ulp over all 2^32 floats with fused and
unfused multiply-adds (docs/math.md).

The reduction, shared by the three:

    x = 2^k m, m in [sqrt(1/2), sqrt 2)   (k from x's bits minus sqrt(1/2)'s, an arithmetic shift;
                                           subnormals are scaled by 2^23 first)
    f = m - 1                             (exact: Sterbenz)
    log1p(f) = f - f^2/2 + f^3 Q(f)       (Q degree 8, minimax, relative error 2^-30.3)
    log x = k ln 2 + log1p(f)

No float-to-int conversion and no table: k is exponent arithmetic, m a bit pattern. The error
budget is spent where the result is small: k C1 + f is split exactly (Fast2Sum: |k C1| >= |f|
when k != 0), and the tail t = log1p(f) - f = -f^2/2 + f^2 (f Q(f)) carries only f^2's rounding
in its large term; everything small is summed first and added to the big part once.

Special values come last (`specials`: one vfixupimmps with AVX-512F, three selects elsewhere):
+inf and NaN give x (the payload kept), x < 0 gives the default NaN (-inf included), +-0 gives
-inf. log(1) = +0 exactly. Without AVX-512F, log and log2 promise (`promise`) that x is rarely
anything but a positive normal float: a vector step where every lane is one runs a version
without the subnormal scaling and the specials' selects (`version-unlikely`), the same bits in
each lane. AVX2, 1M float32, one process: log 872 -> 710 us, log2 508 -> 445 (the bits of all
2^32 inputs compared, with and without FMA and in the half-type forms).
The coefficients and the order of every operation are the numerics prototypes' (exhaustively
swept in both FMA modes), but for log2 with FMA (`log2_fused`: 0.878 ulp over all 2^32 floats
against the splits' 0.701, with 47 operations instead of 61; 316 -> 269 us at 1M, two threads)
and Q, now by Horner instead of Estrin's pairs: one operation and four live temporaries fewer,
which four zmm registers per value (the width model's for such bodies) no longer spill (log1p
1M float32: 230 -> 208 us, log 177 -> 172, log2 222 -> 215; max ulp with FMA: log 0.812 ->
0.823, log2 0.878 -> 0.806, log1p 0.828 both).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from aclgen.dialects import ew
from aclgen.dialects.enums import Predicate
from aclgen.dialects.llvmx import AVX512Function, Fixup, fixup_table
from aclgen.passes.builder import Builder
from aclgen.passes.expansions.exp import C1, C2, L2E, LN2, estrin, horner, times_q
from aclgen.passes.expansions.registry import expands

h = float.fromhex
SQRT_HALF_BITS = 0x3F3504F3  # sqrt(1/2)'s bit pattern: k = (bits(x) - it) >> 23 puts m in [sqrt(1/2), sqrt 2)
SQRT2_UP = 2 * float(np.uint32(SQRT_HALF_BITS).view(np.float32))  # twice that: m's upper end, exclusive
FLT_MAX = h("0x1.fffffep127")
TINY = 2.0**-126  # the smallest normal float
# Q: log1p(f) = f - f^2/2 + f^3 Q(f) on [sqrt(1/2) - 1, sqrt 2 - 1] (+-1e-5), Q3..Q11; f Q(f) is
# `times_q` (Horner)
Q = (
    h("0x1.555548p-2"),  # 0x3eaaaaa4
    h("-0x1.000006p-2"),  # 0xbe800003
    h("0x1.99a476p-3"),  # 0x3e4cd23b
    h("-0x1.555c44p-3"),  # 0xbe2aae22
    h("0x1.233ba2p-3"),  # 0x3e119dd1
    h("-0x1.fc28cep-4"),  # 0xbdfe1467
    h("0x1.e6c016p-4"),  # 0x3df3600b
    h("-0x1.de01bap-4"),  # 0xbdef00dd
    h("0x1.1472dcp-4"),  # 0x3d8a396e
)
# Where only a half type stores the result (`Builder.half`): Q of degree 4 instead of 8, relative
# error 2^-19.3 on the same interval (the same fit), and ln 2 as one f32 (exp.LN2)
Q_HALF = (
    h("0x1.5534a2p-2"),
    h("-0x1.fed97ap-3"),
    h("0x1.a2a81cp-3"),
    h("-0x1.78fb68p-3"),
    h("0x1.e296b8p-4"),
)
# log2: L2E = A1 + A2 with A1 of 12 bits (products with 12-bit numbers are exact)
A1 = h("0x1.716p+0")  # 0x3fb8b000
A2 = h("-0x1.7135a8p-13")  # 0xb9389ad4
L2E_LO = h("0x1.4ae0cp-26")  # log2(e) - L2E (0x32a57060): with L2E, log2(e) to 2^-50


def split12(b: Builder, v: SSAValue) -> SSAValue:
    """v with its mantissa cut to 11 fraction bits (the low 12 bits of its pattern cleared): the
    product of two such numbers is exact in f32 and v - split12(v) is exact. (The shifts are one
    `and` once LLVM has seen them.)"""
    return b.float(b.shl(b.ashr(b.bits(v), 12), 12))


def fast2sum(b: Builder, a: SSAValue, c: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(s, e) with s + e = a + c exactly, for |a| >= |c| or a = 0."""
    s = b.add(a, c)
    return s, b.add(b.sub(a, s), c)


def exponent_split(b: Builder, x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(m, k) with x = 2^k m, m in [sqrt(1/2), sqrt 2), k an i32, for a positive normal x; m - 1
    is exact (Sterbenz)."""
    k = b.ashr(b.isub(b.bits(x), b.i32(SQRT_HALF_BITS)), 23)
    return b.float(b.isub(b.bits(x), b.shl(k, 23))), k


def reduce(b: Builder, x: SSAValue, small: SSAValue | None = None) -> tuple[SSAValue, SSAValue]:
    """(f, kf) with x = 2^kf (1 + f), 1 + f in [sqrt(1/2), sqrt 2), for positive finite x
    (subnormals scaled by 2^23 first; other x give some values the specials' selects replace).
    With AVX-512F, x's exponent and significand in [1, 2) come from vgetexpps and vgetmantps
    (subnormals included), and a significand from SQRT2_UP on is halved: the same f and kf in
    6 operations instead of 11. There kf is also -inf for +0, +inf for +inf and NaN for NaN
    (vgetexpps's values), which pow's log2 uses; other targets give some finite kf for them."""
    if b.avx512:
        e, m = b.x86(AVX512Function.GETEXP, x), b.x86(AVX512Function.GETMANT, x)
        high = b.cmp(Predicate.OGE, m, b.f32(SQRT2_UP))
        m = b.select(high, b.mul(m, b.f32(0.5)), m)
        return b.sub(m, b.f32(1.0)), b.select(high, b.add(e, b.f32(1.0)), e)
    sub = b.cmp(Predicate.OLT, x, b.f32(TINY)) if small is None else small
    m, k = exponent_split(b, b.select(sub, b.mul(x, b.f32(2.0**23)), x))
    return b.sub(m, b.f32(1.0)), b.to_f32(b.isub(k, b.select(sub, b.i32(23), b.i32(0))))


def tail(b: Builder, f: SSAValue) -> SSAValue:
    """log1p(f) - f = -f^2/2 + f^2 (f Q(f)), rounded once: the -f^2/2 term is exact but for
    f^2's rounding, the rest is ~1/7 of it."""
    f2 = b.mul(f, f)
    return b.muladd(f2, times_q(b, Q, f), b.mul(b.f32(-0.5), f2))


def ln(b: Builder, f: SSAValue, kf: SSAValue, *small: SSAValue) -> SSAValue:
    """kf ln 2 + f + the small terms: kf C1 + f = hi + lo exactly (kf C1 is exact), and
    lo + small... + kf C2 summed first, in that order, then added to hi once."""
    hi, lo = fast2sum(b, b.mul(kf, b.f32(C1)), f)
    for s in small:
        lo = b.add(lo, s)
    return b.add(hi, b.muladd(kf, b.f32(C2), lo))


# log's special values by x's class, for vfixupimmps: x itself for NaN and +inf, -inf for +-0, the
# default NaN below 0 (-inf included), y elsewhere (+1 included: y is +0 there)
LOG_SPECIALS = fixup_table(qnan=Fixup.SOURCE, snan=Fixup.SOURCE, zero=Fixup.NEG_INF, neg_inf=Fixup.NAN,
                           pos_inf=Fixup.SOURCE, negative=Fixup.NAN)
DEFAULT_NAN = -float("nan")  # x86's, 0xffc00000: what invalid operations and vfixupimmps give


def specials(b: Builder, x: SSAValue, y: SSAValue, rare: SSAValue | None = None) -> SSAValue:
    """y, except: x itself for +inf and NaN, NaN below 0, -inf at +-0. With AVX-512F one
    vfixupimmps (LOG_SPECIALS); elsewhere three selects, the last winning, to the same bits."""
    if b.avx512:
        return b.x86(AVX512Function.FIXUPIMM, y, x, table=LOG_SPECIALS)
    s = b.select(b.cmp(Predicate.OLE, x, b.f32(FLT_MAX)), y, x)
    zero = b.f32(0.0)
    s = b.select(b.cmp(Predicate.OLT, x, zero), b.f32(DEFAULT_NAN), s)
    s = b.select(b.cmp(Predicate.OEQ, x, zero), b.f32(-float("inf")), s)
    return s if rare is None else b.select(rare, s, y)


def promise(b: Builder, x: SSAValue, *also: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(small, rare): the lanes where x is below the smallest normal float or NaN, and the lanes
    where x is not a positive normal float (or one of the masks `also` holds), promised rare
    (`ew.unlikely`): `version-unlikely` makes the vector step a version where no lane is, and
    there `small` and every select on `rare` fold away (`reduce`'s subnormal scaling,
    `specials`). The other version computes every lane as before: the bits are the same."""
    small = b.not_(b.cmp(Predicate.OGE, x, b.f32(TINY)))
    rare = b.or_(small, b.not_(b.cmp(Predicate.OLE, x, b.f32(FLT_MAX))))
    for m in also:
        rare = b.or_(rare, m)
    return small, b(ew.UnlikelyOp(rare))


def log1p_half(b: Builder, f: SSAValue) -> SSAValue:
    """log1p(f) to 2^-19 for f in [sqrt(1/2) - 1, sqrt 2 - 1]: f + f^2 (f Q_HALF(f) - 1/2), Horner."""
    return b.muladd(b.mul(f, f), b.muladd(f, horner(b, Q_HALF, f), b.f32(-0.5)), f)


def ln_half(b: Builder, f: SSAValue, kf: SSAValue) -> SSAValue:
    """kf ln 2 + log1p(f) for a half-type result (log and log1p)."""
    return b.muladd(kf, b.f32(LN2), log1p_half(b, f))


def log_normal(b: Builder, v: SSAValue) -> SSAValue:
    """log v for a positive normal v: log without its subnormal scaling and special values, and
    with Q by Estrin's pairs (`exp.estrin`), which shorten the long chain of dependent operations
    it is part of: erfinv's form without FMA (`erf.erfinv_sets`; swept with it). (Where erfinv
    used it with FMA, Estrin's pairs made erfinv 6-8% faster on AVX2 than Horner's steps.)"""
    m, k = exponent_split(b, v)
    f = b.sub(m, b.f32(1.0))
    f2 = b.mul(f, f)
    return ln(b, f, b.to_f32(k), b.muladd(f2, b.mul(estrin(b, [b.f32(v) for v in Q], f, f2), f), b.mul(b.f32(-0.5), f2)))


@expands("log")
def log(b: Builder, x: SSAValue) -> SSAValue:
    """For a half-type result, `ln_half`."""
    small, rare = (None, None) if b.avx512 else promise(b, x)
    f, kf = reduce(b, x, small)
    if b.half:
        return specials(b, x, ln_half(b, f, kf), rare)
    return specials(b, x, ln(b, f, kf, tail(b, f)), rare)


@expands("log2")
def log2(b: Builder, x: SSAValue) -> SSAValue:
    """log2 x = k + L2E f - (L2E/2) f^2 + L2E f^3 Q(f), with every term that is not small made
    exact by 12-bit splits: f = fh + fl, fh^2 = g1 + g2 (fh^2 is exact, 24 bits), L2E = A1 + A2;
    fh A1 and g1 (-A1/2) are exact, summed with k by two Fast2Sums, and the small terms (A1 fl,
    A2 f, the rest of -(L2E/2) f^2, L2E f^3 Q) are added once at the end. Rounding L2E t as a
    whole instead (it is 20% of the result near sqrt 2) reached 1.01 ulp without FMA.

    With fused multiply-adds the splits are not needed (`log2_fused`); for a half-type result,
    kf + L2E `log1p_half` (f)."""
    small, rare = (None, None) if b.avx512 else promise(b, x)
    f, kf = reduce(b, x, small)
    if b.half:
        return specials(b, x, b.muladd(log1p_half(b, f), b.f32(L2E), kf), rare)
    if b.fma:
        return specials(b, x, b.add(*log2_fused(b, f, kf)), rare)
    fh = split12(b, f)
    fl = b.sub(f, fh)
    f2 = b.mul(f, f)
    t3 = b.mul(f2, times_q(b, Q, f))  # f^3 Q(f)
    fh2 = b.mul(fh, fh)  # exact
    g1 = split12(b, fh2)
    g2 = b.sub(fh2, g1)
    a = b.mul(fh, b.f32(A1))  # exact
    c = b.mul(g1, b.f32(-A1 / 2))  # exact
    s, es = fast2sum(b, a, c)
    hi, lo = fast2sum(b, kf, s)
    sm = b.muladd(b.f32(A1), fl, b.add(lo, es))
    sm = b.muladd(b.f32(A2), f, sm)
    sm = b.muladd(b.mul(b.f32(-L2E / 2), fl), b.add(f, fh), sm)
    sm = b.muladd(b.f32(-A2 / 2), fh2, sm)
    sm = b.muladd(b.f32(-A1 / 2), g2, sm)
    return specials(b, x, b.add(hi, b.muladd(b.f32(L2E), t3, sm)), rare)


def log2_fused(b: Builder, f: SSAValue, kf: SSAValue) -> tuple[SSAValue, SSAValue]:
    """log2 (2^kf (1 + f)) = kf + L2E f - (L2E/2) f^2 + L2E f^3 Q(f), where a multiply-add gives
    each product's rounding error exactly: p = f L2E rounded and pe = f L2E - p, f2 = f^2 rounded
    and f2e = f^2 - f2; kf + p = hi + lo exactly (Fast2Sum: |kf| >= 1 > |p| when kf != 0). The
    small terms (lo, pe, f (log2 e - L2E), -(L2E/2) f2e, L2E f^3 Q) are summed first, then
    -(L2E/2) f2 (20% of the result near sqrt 2) with its product exact inside the last
    multiply-add, and the sum is added to hi once. About a fifth fewer operations than the
    splits. Returns (hi, rest): log2 is hi + rest rounded, which pow's half-type form keeps
    apart (their sum is good to 2^-26)."""
    f2 = b.mul(f, f)
    f2e = b.muladd(f, f, b.neg(f2))
    ln2e = b.f32(L2E)
    p = b.mul(f, ln2e)
    pe = b.muladd(f, ln2e, b.neg(p))
    hi, lo = fast2sum(b, kf, p)
    small = b.muladd(f, b.f32(L2E_LO), b.add(lo, pe))
    small = b.muladd(b.f32(-L2E / 2), f2e, small)
    small = b.muladd(ln2e, b.mul(f2, times_q(b, Q, f)), small)
    return hi, b.muladd(b.mul(b.f32(-0.5), f2), ln2e, small)


@expands("log1p")
def log1p(b: Builder, x: SSAValue) -> SSAValue:
    """k comes from u = 1 + x (rounded), but f from x itself, exactly: f = x 2^-k + (2^-k - 1)
    (x 2^-k by exponent arithmetic: x is never subnormal where k != 0; 2^-k - 1 exact for
    k <= 24), with f's own rounding error fe (nonzero only for k = 1, x in [0.414, 0.5), where
    leaving it out reached 1.41 ulp) added as fe (1 - f) ~ fe / (1 + f). No division.
    Specials: +-0 give x (f = x + 0 would make -0 +0); the others are log's of u (`specials`:
    +inf and NaN give u, which is x quieted, x < -1 NaN, -1 -inf).
    For a half-type result, `ln_half`, fe left out (2^-23.5)."""
    one = b.f32(1.0)
    u = b.add(one, x)
    k = b.ashr(b.isub(b.bits(u), b.i32(SQRT_HALF_BITS)), 23)
    k23 = b.shl(k, 23)
    xk = b.float(b.isub(b.bits(x), k23))  # x 2^-k
    s4 = b.float(b.isub(b.i32(0x40800000), k23))  # 4 2^-k, normal for k in [-24, 128]
    c = b.muladd(b.f32(0.25), s4, b.f32(-1.0))  # 2^-k - 1
    f = b.add(xk, c)
    kf = b.to_f32(k)
    if b.half:
        y = ln_half(b, f, kf)
    else:
        fe = b.sub(xk, b.sub(f, c))
        y = ln(b, f, kf, b.muladd(b.neg(fe), f, fe), tail(b, f))
    y = b.select(b.cmp(Predicate.OEQ, x, b.f32(0.0)), x, y)
    return specials(b, u, y)
