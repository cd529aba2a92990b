"""Functions that are an instruction, a compare or a few selects: absolute, sqrt, copysign,
muladd, minimum, maximum, sign, isnan, isinf, isfinite, and rsqrt (an estimate polished, or a division
and a square root)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from aclgen.dialects.enums import Predicate
from aclgen.dialects.llvmx import AVX512Function
from aclgen.passes.builder import Builder
from aclgen.passes.expansions.registry import expands, intrinsic

intrinsic("absolute", "llvm.fabs")
intrinsic("sqrt", "llvm.sqrt")
intrinsic("copysign", "llvm.copysign")

INF = float("inf")


@expands("muladd")
def muladd(b: Builder, x: SSAValue, y: SSAValue, z: SSAValue) -> SSAValue:
    """One FMA where the target has it (expand-math's `fma` option), else a multiply and an add."""
    return b.muladd(x, y, z)


@expands("isnan")
def isnan(b: Builder, x: SSAValue) -> SSAValue:
    """x != x: the one unordered compare."""
    return b.cmp(Predicate.UNE, x, x)


@expands("isinf")
def isinf(b: Builder, x: SSAValue) -> SSAValue:
    return b.cmp(Predicate.OEQ, b.call("absolute", x), b.f32(INF))


@expands("isfinite")
def isfinite(b: Builder, x: SSAValue) -> SSAValue:
    """|x| < inf: false for infinities and (an ordered compare) NaN."""
    return b.cmp(Predicate.OLT, b.call("absolute", x), b.f32(INF))


@expands("minimum")
def minimum(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """y < x ? y : x keeps x where they are equal and where x is NaN (x86's `minps y, x`); a NaN y
    is the one case left."""
    return b.select(b.call("isnan", y), y, b.select(b.cmp(Predicate.OLT, y, x), y, x))


@expands("maximum")
def maximum(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """As `minimum`, the other way."""
    return b.select(b.call("isnan", y), y, b.select(b.cmp(Predicate.OGT, y, x), y, x))


@expands("sign")
def sign(b: Builder, x: SSAValue) -> SSAValue:
    """copysign(1, x) where |x| > 0 (an ordered compare: false for +-0 and NaN, which stay x)."""
    nonzero = b.cmp(Predicate.OGT, b.call("absolute", x), b.f32(0.0))
    return b.select(nonzero, b.call("copysign", b.f32(1.0), x), x)


@expands("rsqrt")
def rsqrt(b: Builder, x: SSAValue) -> SSAValue:
    """With AVX-512F and FMA, `rsqrt_estimate` polished (`rsqrt_half` for a half-type result);
    elsewhere `rsqrt_divided`."""
    if b.avx512 and b.fma:
        return rsqrt_half(b, x) if b.half else rsqrt_estimate(b, x)
    return rsqrt_divided(b, x)


def rsqrt_half(b: Builder, x: SSAValue) -> SSAValue:
    """vrsqrt14ps's y, then Newton's y (3/2 + (-x y / 2) y) (x y first: y^2 overflows for
    subnormal x): relative error (3/2) e^2 and four roundings, 2^-22 at most. 7 operations
    instead of 9; the special values are the estimate's, as in `rsqrt_estimate` (the step gives
    NaN there)."""
    y = b.x86(AVX512Function.RSQRT14, x)
    t = b.muladd(b.mul(x, b.mul(y, b.f32(-0.5))), y, b.f32(1.5))
    return b.select(b.call("isnan", t), y, b.mul(y, t))


def rsqrt_estimate(b: Builder, x: SSAValue) -> SSAValue:
    """vrsqrt14ps's estimate y (relative error < 2^-14), then one Newton step: 1 / sqrt(x) =
    y (1 - e)^(-1/2) = y (1 + e/2 + 3e^2/8 + ...) with e = 1 - x y^2, |e| < 2^-13. The step keeps
    y + y e/2; the term it drops, 3e^2/8, is below 2^-27.4 of the result (0.1 ulp at most). e/2
    is exact to 2^-46: with h = -y/2, x h is split into s + s_lo by an FMA, and e/2 =
    (1/2 + s y) + s_lo y. So the last FMA's rounding is nearly all: within 0.577 ulp over all 2^32
    inputs (benchmarks/math_sweep.py). Without the split (s y alone), s's rounding reaches e:
    1.04 ulp. 10 operations, none a division: about twice the speed of `rsqrt_divided`, whose
    bits it does not share (docs/math.md counts the inputs).

    The estimate is already exact for the special values (+-0 -> +-inf, +inf -> +0, x < 0 and
    NaN -> NaN, subnormals included), where e is NaN; there the estimate stands."""
    y = b.x86(AVX512Function.RSQRT14, x)
    h = b.mul(y, b.f32(-0.5))
    s = b.mul(x, h)  # -x y / 2
    s_lo = b.muladd(x, h, b.neg(s))  # exact
    r = b.muladd(s_lo, y, b.muladd(s, y, b.f32(0.5)))  # e / 2
    return b.select(b.call("isnan", r), y, b.muladd(y, r, y))


def rsqrt_divided(b: Builder, x: SSAValue) -> SSAValue:
    """sqrt(1 / x'), x' = x scaled by 2^64 (x < 2^-126) or 2^-64 (x > 2^126) so that 1 / x' is
    normal, the result scaled back by 2^32 or 2^-32 (exact). Two correctly rounded operations:
    the quotient's relative error (<= 2^-24) is halved by the square root, which rounds once
    more, so the result is within 0.5 + 0.25 ulp. 1 / sqrt(x) (torch's vectorized rsqrt) carries
    sqrt's full rounding into the quotient instead: 1.5 ulp.

    x < 0 gives NaN, -inf included (1 / -inf = -0, whose square root is -0); +-0 give +-inf;
    +inf gives +0 and NaN NaN, through the arithmetic."""
    one = b.f32(1.0)
    tiny = b.cmp(Predicate.OLT, x, b.f32(2.0**-126))  # negative x too: the NaN select below replaces them
    huge = b.cmp(Predicate.OGT, x, b.f32(2.0**126))
    pre = b.select(tiny, b.f32(2.0**64), b.select(huge, b.f32(2.0**-64), one))
    post = b.select(tiny, b.f32(2.0**32), b.select(huge, b.f32(2.0**-32), one))
    y = b.mul(b.call("sqrt", b.div(one, b.mul(x, pre))), post)
    zero = b.f32(0.0)
    y = b.select(b.cmp(Predicate.OLT, x, zero), b.f32(float("nan")), y)
    return b.select(b.cmp(Predicate.OEQ, x, zero), b.call("copysign", b.f32(INF), x), y)
