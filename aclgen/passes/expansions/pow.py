"""pow(x, y) as vectorizable code: C99 Annex F's special cases (as torch.pow and powf), and
within 1 ulp elsewhere on dense grids of (x, y), with fused and unfused multiply-adds
(tests/compiler/test_math_pow.py, docs/math.md).

    |x|^y = 2^t,  t = y log2|x|

t's integer part becomes the result's exponent and its fraction the significand, so t must be
good to about 2^-30 wherever the result is a finite nonzero float (|t| < 150): about 2^-38
relative when |y| is large and x near 1. f32 holds 24 bits, so t is computed in f64 (53 bits),
each f64 operation two vectors of registers where f32 takes one, and no operation needs a
split or a correction term:

1. log2|x| = k + log2(1/inv) + log2(1 + r): x = 2^k m with m in [sqrt(1/2), sqrt 2) as in log
   (`reduce`: subnormals scaled, AVX-512F's vgetexpps and vgetmantps where the target has
   them), then inv in {1.25, 1, 0.875, 0.75} by three compares of m, and r = m inv - 1, exact in
   f64 (m has 24 bits, inv 3), |r| <= 0.117; log2(1 + r) = r P(r) with P of degree 8 (relative
   error 2^-39.4) and log2(1/inv) = C rounded to f64.
2. t = y log2|x|, clamped to [-160, 130]: beyond it the result is 0 or inf in f32 all the same.
3. 2^t = 2^n 2^u: adding 1.5 * 2^52 rounds t to the integer n, held in the sum's low bits (its
   pattern shifted left by 52 is n in the exponent field), u = t - n is exact and |u| <= 1/2;
   2^u = 1 + u E(u), E of degree 6 (2^u's relative error below 2^-33, and none at u = 0: a
   result near 1 is as good as t). The product 2^u 2^n is exact in f64.
4. The f64 result rounds once to f32: gradual underflow and overflow to +-inf are that rounding's.
   Its relative error before that rounding is about 2^-32 at most, so the result is within
   0.5 + 2^-8 ulp (0.501 measured on the grids): nearly always the correctly rounded float.
5. Annex F's zeros and infinities come out of the same arithmetic: log2|x| is -inf for x = +-0
   (vgetexpps gives it; other targets select it) and +inf for +-inf, so t = y log2|x| is +-inf
   or NaN and 2^t is 0 or inf, y = +-inf likewise. Three selects remain, later ones winning: a
   negative x (-0 included) with an odd integer y negates; a negative finite x with a
   non-integer y gives NaN; y = +-0, x = 1 and x = -1 with y = +-inf give 1 (even for NaN).
   All of these, the subnormal scaling and log2's specials lie where x is not a positive normal
   float or y is not finite (`Care`), which pow promises rare (`ew.unlikely`): a vector step
   with no such lane runs a version without them (for such a lane |x|^y is the answer, y = 0
   and x = 1 included), the same bits in each lane. AVX2, x in (0.01, 10), y in (-8, 8), 1M
   float32: 2236 -> 1599 us.

(Until this form, t was a pair of f32s, each product split in 12-bit halves and summed with
Fast2Sum, and the special cases were ten selects: 210 operations within 0.79 ulp, where this
takes 93 (83 with AVX-512F), 37 of them in f64: float32 1M at 1053 -> 786 us with AVX-512,
1480 -> 1200 with AVX2, 3540 -> 2880 on SSE2.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from aclgen.dialects.enums import Predicate
from aclgen.passes.builder import Builder
from aclgen.passes.expansions import exp
from aclgen.passes.expansions.exp import horner, shifter, times_pow2, times_q
from aclgen.passes.expansions.log import FLT_MAX, fast2sum, log2_fused, promise, reduce
from aclgen.passes.expansions.registry import expands

h = float.fromhex
# m below each threshold (8/9, 16/15, 16/13, rounded up to f32) takes inv[i], else 0.75; compared
# as f = m - 1 (exact)
INV_AT = (h("0x1.c71c72p-1"), h("0x1.111112p+0"), h("0x1.3b13b2p+0"))  # 0x3f638e39 0x3f888889 0x3f9d89d9
INV = (1.25, 1.0, 0.875, 0.75)
C = tuple(float(-np.log2(v)) for v in INV)  # log2(1/inv), rounded to f64
# log2(1 + r) = r P(r) on r in [-0.1162, 0.1112]: least squares on Chebyshev nodes, relative
# error 2^-39.4 (mpmath)
P = tuple(h(v) for v in (
    "0x1.71547652b894cp+0", "-0x1.71547651792a0p-1", "0x1.ec709dae30929p-2", "-0x1.715480540ddaep-2",
    "0x1.2776f113def88p-2", "-0x1.ec5aea5c62137p-3", "0x1.a5dc15c326b86p-3", "-0x1.7a09b5ff7f834p-3",
    "0x1.5712c7a904cb4p-3"))
# 2^u = 1 + u E(u) on [-1/2, 1/2]: E's relative error 2^-32.0, so 2^u's is below 2^-33 and 0 at u = 0
E = tuple(h(v) for v in (
    "0x1.62e42fefd9e2fp-1", "0x1.ebfbe045016ffp-3", "0x1.c6b08c92e7564p-5", "0x1.3b2a1c65275ecp-7",
    "0x1.5d88e68eec9fap-10", "0x1.443f3c8b70988p-13", "0x1.ff95388969a9dp-17"))
# For a half-type result (`Builder.half`), t to 2^-18 is enough: P of degree 5 (log2(1 + r)'s
# relative error 2^-26.6, the same fit), and 2^u in f32 (exp.EXP2_HALF)
P_HALF = tuple(h(v) for v in (
    "0x1.7154768f87ff6p+0", "-0x1.71547afc6835ep-1", "0x1.ec6b77cfa9d53p-2", "-0x1.7142fb337cb67p-2",
    "0x1.2b98adb642755p-2", "-0x1.fb43be9980210p-3"))
T_MAX, T_MIN = 130.0, -160.0  # 2^128 overflows and 2^-151 underflows to 0 in f32
SH = 1.5 * 2.0**52  # adding it rounds an f64 to an integer held in the low mantissa bits
ONE_BITS = 1023 << 52  # 1.0's pattern: plus n << 52, 2^n's


@dataclass(frozen=True)
class Care:
    """pow's promise (`log.promise`): `small`, |x| below the smallest normal float or NaN;
    `rare`, |x| not a positive normal float, x's sign bit set or y not finite: the lanes where a
    special case or x's sign decides, |x|^y elsewhere."""

    small: SSAValue
    rare: SSAValue


def reduce_all(b: Builder, ax: SSAValue, care: Care) -> tuple[SSAValue, SSAValue]:
    """log.reduce's (f, kf) for a positive f32 ax, with kf -inf for +0, +inf for +inf and NaN for
    NaN on every target (`reduce` gives them with vgetexpps only: its docstring)."""
    f, kf = reduce(b, ax, care.small)
    if not b.avx512:
        k = b.select(b.cmp(Predicate.OLT, ax, b.f32(float("inf"))), kf, ax)  # +inf and NaN
        kf = b.select(care.rare, b.select(b.cmp(Predicate.OEQ, ax, b.f32(0.0)), b.f32(float("-inf")), k), kf)
    return f, kf


def log2_wide(b: Builder, ax: SSAValue, care: Care) -> SSAValue:
    """log2 ax in f64 (relative error about 2^-39, 2^-26 with P_HALF) for positive f32 ax,
    subnormals included; -inf for +0, +inf for +inf, NaN for NaN. log2 1 = 0 exactly."""
    f, kf = reduce_all(b, ax, care)
    j = [b.cmp(Predicate.OLT, f, b.f32(t - 1.0)) for t in INV_AT]

    def table(v: tuple[float, ...], const) -> SSAValue:
        return b.select(j[0], const(v[0]), b.select(j[1], const(v[1]), b.select(j[2], const(v[2]), const(v[3]))))

    r = b.muladd(b.widen(b.add(f, b.f32(1.0))), b.widen(table(INV, b.f32)), b.f64(-1.0))  # exact
    return b.add(b.add(b.widen(kf), table(C, b.f64)), times_q(b, P_HALF if b.half else P, r))


def split_wide(b: Builder, t: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(z, n, u) for f64 t clamped to [T_MIN, T_MAX] (NaN stays): z = t + 1.5 * 2^52 holds
    n = roundeven(t) in its low bits, u = t - n is exact, |u| <= 1/2."""
    t = exp.clamp(b, t, T_MIN, T_MAX)
    z = b.add(t, b.f64(SH))
    n = b.sub(z, b.f64(SH))
    return z, n, b.sub(t, n)


def exp2_wide(b: Builder, t: SSAValue) -> SSAValue:
    """2^t for f64 t, rounded once to f32."""
    z, _, u = split_wide(b, t)
    scale = b.float(b.iadd(b.shl(b.bits(z), 52), b.i64(ONE_BITS)))  # 2^n
    return b.narrow(b.mul(b.muladd(u, horner(b, E, u), b.f64(1.0)), scale))


def exp2_half_of_wide(b: Builder, t: SSAValue) -> SSAValue:
    """2^t for f64 t to 2^-18, in f32 after `split_wide`: n and u are exact in f32 (|n| <= 160,
    |u| <= 1/2 rounds to 2^-25), 2^u by exp.EXP2_HALF, the scale as `times_pow2` (its i32 from
    the f32 shifter)."""
    _, n, u = split_wide(b, t)
    nf, ni = shifter(b, b.add(b.narrow(n), b.f32(exp.SH)))
    return times_pow2(b, horner(b, exp.EXP2_HALF, b.narrow(u)), nf, ni)


def pow_half_fused(b: Builder, ax: SSAValue, y: SSAValue, care: Care) -> SSAValue:
    """ax^y to 2^-17 in f32 alone, with fused multiply-adds (a half-type result): log2 ax as an
    exact pair L1 + L2 (log.log2_fused's hi and rest, Fast2Sum'd: good to 2^-26 of log2 ax),
    t = y L1 + y L2 as th + tl (the FMA's residual of y L1, plus y L2), n = roundeven(th) from the
    shifter, u = (th - n) + tl, 2^u by exp.EXP2_HALF and the scale as `times_pow2`. th is clamped
    to [-160, 130] as in `exp2_wide`, where tl is dropped (it is NaN for th = +-inf); log2 0 and
    log2 inf are kf's -inf and +inf. t's error is 2^-18 at |t| = 160; no f64."""
    hi, rest = log2_fused(b, *reduce_all(b, ax, care))
    l1, l2 = fast2sum(b, hi, rest)  # |hi| >= |rest|
    l1 = b.select(b.call("isnan", l1), hi, l1)  # ax = 0 and +inf: hi = kf = -+inf, rest NaN
    th = b.mul(y, l1)
    tl = b.muladd(y, l2, b.muladd(y, l1, b.neg(th)))
    tc = exp.clamp(b, th, T_MIN, T_MAX)
    n, ni = shifter(b, b.add(tc, b.f32(exp.SH)))
    u = b.add(b.sub(tc, n), b.select(b.cmp(Predicate.OEQ, tc, th), tl, b.f32(0.0)))
    return times_pow2(b, horner(b, exp.EXP2_HALF, u), n, ni)


def pow_magnitude(b: Builder, ax: SSAValue, y: SSAValue, care: Care) -> SSAValue:
    """ax^y for positive ax (Annex F's zeros and infinities included): t in f64, or for a
    half-type result `pow_half_fused` (with FMA) or t in f64 with the shorter polynomials."""
    if b.half and b.fma:
        return pow_half_fused(b, ax, y, care)
    t = b.mul(b.widen(y), log2_wide(b, ax, care))
    return exp2_half_of_wide(b, t) if b.half else exp2_wide(b, t)


@expands("pow")
def pow_(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    one, inf = b.f32(1.0), b.f32(float("inf"))
    ax = b.call("absolute", x)
    sign = b.cmp(Predicate.OLT, b.bits(x), b.i32(0))  # x's sign bit: -0 counts
    care = Care(*promise(b, ax, sign, b.not_(b.cmp(Predicate.OLE, b.call("absolute", y), b.f32(FLT_MAX)))))
    magnitude = pow_magnitude(b, ax, y, care)  # |x|^y, Annex F's 0s and infs
    yint = b.cmp(Predicate.OEQ, b.call("round", y), y)  # false for NaN, true for +-inf
    hy = b.mul(b.f32(0.5), y)
    yodd = b.and_(yint, b.cmp(Predicate.UNE, b.call("round", hy), hy))
    neg = b.and_(sign, yodd)
    r = b.select(neg, b.neg(magnitude), magnitude)
    finite_neg = b.and_(b.cmp(Predicate.OLT, x, b.f32(0.0)), b.cmp(Predicate.OGT, x, b.neg(inf)))
    r = b.select(b.and_(finite_neg, b.not_(yint)), b.f32(float("nan")), r)
    ones = b.or_(b.cmp(Predicate.OEQ, y, b.f32(0.0)), b.cmp(Predicate.OEQ, x, one))
    ones = b.or_(ones, b.and_(b.cmp(Predicate.OEQ, x, b.f32(-1.0)), b.cmp(Predicate.OEQ, b.call("absolute", y), inf)))
    return b.select(care.rare, b.select(ones, one, r), magnitude)
