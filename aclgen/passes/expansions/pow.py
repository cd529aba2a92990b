"""pow(x, y) as vectorizable f32 code: C99 Annex F's special cases (as torch.pow and powf), and
within 1 ulp elsewhere on dense grids of (x, y), with fused and unfused multiply-adds
(tests/compiler/test_math_pow.py, docs/math.md).

    |x|^y = 2^(y log2|x|)

y log2|x| needs about 2^-40 relative accuracy (its integer part becomes the exponent), so
everything is kept as pairs, no division, no table in memory:

1. log2|x| = k + log2(1/inv) + log2(1 + r): k and m in [sqrt(1/2), sqrt 2) as in log (subnormals
   scaled), then a four-way select of inv in {1.25, 1, 0.875, 0.75} with log2(1/inv) = Ch + Cl,
   so r + rl = m inv - 1 exactly (12-bit splits: m's high part times inv is exact) and
   |r| <= 0.117. log2(1 + r) = L2E (r - r^2/2) + r^3 Q(r) + rl L2E / (1 + r), Q degree 6. For
   |y| up to ~1000 log2|x| must be good to ~2^-33 relative, so every term above ~2^-11 of the
   result is exact (12-bit splits of r, r^2, r^3 and of Q's constant term, as in log2) and summed
   by Fast2Sum/TwoSum into Lh + Ll, renormalized so that y Ll stays below ulp(y Lh). (r^3 Q in
   plain f32 reached 1.55 ulp at pow(0x1.d57936p-1, 1000); without the renormalization u left
   [-1/2, 1/2]: 27 ulp.)
2. T = y (Lh + Ll) = Th + Tl: Th = y Lh, its error exact by Dekker's product (12-bit splits).
3. 2^(Th + Tl) by exp2's scheme with the two-part argument: Th clamped to [-152, 129] (Tl
   dropped there), n = roundeven(Th), u = (Th - n) + Tl, u ln 2 = v + vl with v exact, then
   1 + v split exactly and the 2^n scale in two factors (gradual underflow, overflow to inf).
4. The sign and Annex F's cases as selects, in this order (later ones win): a negative x (-0
   included) with an odd integer y negates; y = +-inf gives 1, +0 or +inf by |x| against 1;
   x = +-0 or +-inf gives +0 or +inf (signed for odd y); a negative finite x with a non-integer
   y gives NaN; a NaN x or y NaN; y = +-0 or x = 1 give 1 (even for NaN).

Overflow and underflow of the general case (negative x with odd y included) come out of the
scaling as +-inf and +-0 with the right sign. The coefficients and the order of every
operation are the numerics prototype's (swept on grids in both FMA modes).
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from aclgen.dialects.enums import Predicate
from aclgen.passes.builder import Builder
from aclgen.passes.expansions.exp import EXP2_P, SH, estrin4, scaled, shifter
from aclgen.passes.expansions.log import A1, A2, L2E, TINY, exponent_split, fast2sum, split12
from aclgen.passes.expansions.registry import expands

h = float.fromhex
# inv for m below each threshold (8/9, 16/15, 16/13), else 0.75; log2(1/inv) = Ch + Cl
INV_AT = (h("0x1.c71c72p-1"), h("0x1.111112p+0"), h("0x1.3b13b2p+0"))  # 0x3f638e39 0x3f888889 0x3f9d89d9
INV = (1.25, 1.0, 0.875, 0.75)
CH = (h("-0x1.49a784p-2"), 0.0, h("0x1.8a8980p-3"), h("0x1.a8ff98p-2"))  # 0xbea4d3c2 0 0x3e4544c0 0x3ed47fcc
CL = (h("-0x1.79a372p-27"), 0.0, h("0x1.57f7a6p-28"), h("-0x1.cfdeb4p-27"))  # 0xb23cd1b9 0 0x31abfbd3 0xb267ef5a
# log2(1 + r) = L2E (r - r^2/2) + r^3 Q(r) on |r| <= 0.1175, Q = Q0H + Q0L + Q1 r + ... + Q6 r^6
# (Q's absolute error 2^-29.9); Q0H has 12 bits, so Q0H times the 12-bit part of r^3 is exact
Q0H = h("0x1.ec6p-2")  # 0x3ef63000
Q0L = h("0x1.09dc24p-14")  # 0x3884ee12
Q = (
    h("-0x1.71547ap-2"),  # Q1 0xbeb8aa3d
    h("0x1.2776cep-2"),  # Q2 0x3e93bb67
    h("-0x1.ec615cp-3"),  # Q3 0xbe7630ae
    h("0x1.a602dep-3"),  # Q4 0x3e53016f
    h("-0x1.79390ep-3"),  # Q5 0xbe3c9c87
    h("0x1.506e56p-3"),  # Q6 0x3e28372b
)
LN1 = h("0x1.62ep-1")  # ln 2's high 12 bits (0x3f317000): u's 12-bit part times it is exact
LN2 = h("0x1.0bfbe8p-15")  # ln 2 - LN1 (0x3805fdf4)
LN2_F32 = h("0x1.62e430p-1")  # ln 2 rounded (0x3f317218), for the tiny ul term
T_MAX, T_MIN = 129.0, -152.0  # 2^129 overflows and 2^-152 underflows from any mantissa


def log2_pair(b: Builder, ax: SSAValue) -> tuple[SSAValue, SSAValue]:
    """log2 ax = Lh + Ll (about 2^-40 relative) for positive finite ax (subnormals included)."""
    sub = b.cmp(Predicate.OLT, ax, b.f32(TINY))
    m, k = exponent_split(b, b.select(sub, b.mul(ax, b.f32(2.0**23)), ax))
    kf = b.to_f32(b.isub(k, b.select(sub, b.i32(23), b.i32(0))))
    j = [b.cmp(Predicate.OLT, m, b.f32(t)) for t in INV_AT]

    def table(v: tuple[float, ...]) -> SSAValue:
        return b.select(j[0], b.f32(v[0]), b.select(j[1], b.f32(v[1]), b.select(j[2], b.f32(v[2]), b.f32(v[3]))))

    inv, ch, cl = table(INV), table(CH), table(CL)
    mh = split12(b, m)
    ml = b.sub(m, mh)
    rh0 = b.muladd(mh, inv, b.f32(-1.0))  # exact
    mli = b.mul(ml, inv)  # exact
    r, rl = fast2sum(b, rh0, mli)  # r + rl = m inv - 1
    ra = split12(b, r)
    rb = b.sub(r, ra)
    ra2 = b.mul(ra, ra)  # exact
    g1 = split12(b, ra2)
    g2 = b.sub(ra2, g1)
    c3 = b.mul(g1, ra)  # exact
    c3h = split12(b, c3)
    a = b.mul(b.f32(A1), ra)  # exact
    c = b.mul(b.f32(-A1 / 2), g1)  # exact
    d3 = b.mul(b.f32(Q0H), c3h)  # exact
    r2 = b.mul(r, r)
    rem3 = b.add(b.sub(c3, c3h), b.muladd(g2, ra, b.mul(rb, b.add(r2, b.muladd(r, ra, ra2)))))  # r^3 - c3h
    q = [b.f32(v) for v in Q]
    qq = b.muladd(b.muladd(q[5], r, q[4]), r2, b.muladd(q[3], r, q[2]))
    qq = b.muladd(b.muladd(qq, r2, b.muladd(q[1], r, q[0])), r, b.f32(Q0L))  # Q(r) - Q0H, small
    sm = b.muladd(b.mul(r2, r), qq, cl)  # r^3 (Q - Q0H) + Cl
    sm = b.muladd(b.f32(Q0H), rem3, sm)  # Q0H (r^3 - c3h)
    sm = b.muladd(b.mul(b.f32(-L2E / 2), rb), b.add(r, ra), sm)  # -L2E/2 (r^2 - rA^2)
    sm = b.muladd(b.f32(-A2 / 2), ra2, b.muladd(b.f32(-A1 / 2), g2, sm))
    sm = b.muladd(b.f32(A2), r, b.muladd(b.f32(A1), rb, sm))  # L2E r - A1 rA
    sm = b.muladd(b.mul(b.f32(L2E), rl), b.sub(b.f32(1.0), r), sm)  # rl / ((1 + r) ln 2)
    s0, e0 = fast2sum(b, a, c)
    s1, e1 = fast2sum(b, s0, d3)
    s2 = b.add(ch, s1)  # TwoSum: |Ch| < |S1| happens
    bb = b.sub(s2, ch)
    e2 = b.add(b.sub(ch, b.sub(s2, bb)), b.sub(s1, bb))
    lh0, e3 = fast2sum(b, kf, s2)
    ll0 = b.add(b.add(e3, e2), b.add(b.add(e1, e0), sm))
    return fast2sum(b, lh0, ll0)  # renormalized: |Ll| <= ulp(Lh) / 2, so y Ll stays tiny


def exp2_pair(b: Builder, th: SSAValue, tl: SSAValue) -> SSAValue:
    """2^(th + tl), tl tiny against th."""
    big = b.cmp(Predicate.OGT, th, b.f32(T_MAX))
    small = b.cmp(Predicate.OLT, th, b.f32(T_MIN))
    tc = b.select(big, b.f32(T_MAX), b.select(small, b.f32(T_MIN), th))
    tl = b.select(b.or_(big, small), b.f32(0.0), tl)
    n, ni = shifter(b, b.add(tc, b.f32(SH)))
    u0 = b.sub(tc, n)  # exact, |u0| <= 1/2
    u, ul = fast2sum(b, u0, tl)
    ua = split12(b, u)
    ub = b.sub(u, ua)
    ln1 = b.f32(LN1)
    v = b.mul(ua, ln1)  # exact: u ln 2 = v + vl
    vl = b.muladd(ub, ln1, b.muladd(u, b.f32(LN2), b.mul(ul, b.f32(LN2_F32))))
    hi, lo = fast2sum(b, b.f32(1.0), v)
    u2 = b.mul(u, u)
    p = estrin4(b, EXP2_P, u, u2)
    return scaled(b, b.muladd(p, u2, b.add(vl, lo)), hi, n, ni)


@expands("pow")
def pow_(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    zero, one, inf = b.f32(0.0), b.f32(1.0), b.f32(float("inf"))
    ax, ay = b.call("absolute", x), b.call("absolute", y)
    yint = b.cmp(Predicate.OEQ, b.call("round", y), y)  # false for NaN, true for +-inf
    hy = b.mul(b.f32(0.5), y)
    yodd = b.and_(yint, b.cmp(Predicate.UNE, b.call("round", hy), hy))
    # |x|^y
    lh, ll = log2_pair(b, ax)
    th = b.mul(y, lh)
    ya = split12(b, y)
    yb = b.sub(y, ya)
    la = split12(b, lh)
    lb = b.sub(lh, la)
    tl = b.muladd(yb, lb, b.muladd(yb, la, b.muladd(ya, lb, b.muladd(ya, la, b.neg(th)))))  # exact (Dekker)
    tl = b.muladd(y, ll, tl)
    r = exp2_pair(b, th, tl)
    # the sign and Annex F's special cases, later ones winning
    neg = b.and_(b.cmp(Predicate.OLT, b.bits(x), b.i32(0)), yodd)  # x's sign bit: -0 counts
    r = b.select(neg, b.neg(r), r)
    below, up = b.cmp(Predicate.OLT, ax, one), b.cmp(Predicate.OGT, y, zero)
    m2 = b.select(b.cmp(Predicate.OEQ, ax, one), one, b.select(below, b.select(up, zero, inf), b.select(up, inf, zero)))
    r = b.select(b.cmp(Predicate.OEQ, ay, inf), m2, r)
    nought, yneg = b.cmp(Predicate.OEQ, ax, zero), b.cmp(Predicate.OLT, y, zero)
    m1 = b.select(nought, b.select(yneg, inf, zero), b.select(yneg, zero, inf))
    m1 = b.select(neg, b.neg(m1), m1)
    r = b.select(b.or_(nought, b.cmp(Predicate.OEQ, ax, inf)), m1, r)
    finite_neg = b.and_(b.cmp(Predicate.OLT, x, zero), b.cmp(Predicate.OGT, x, b.neg(inf)))
    nan = b.f32(float("nan"))
    r = b.select(b.and_(finite_neg, b.not_(yint)), nan, r)
    r = b.select(b.or_(b.call("isnan", x), b.call("isnan", y)), nan, r)
    return b.select(b.or_(b.cmp(Predicate.OEQ, y, zero), b.cmp(Predicate.OEQ, x, one)), one, r)
