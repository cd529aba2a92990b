"""Functions that are an instruction, a compare or a few selects: absolute, sqrt, copysign,
minimum, maximum, sign, isnan, isinf, isfinite."""

from __future__ import annotations

from xdsl.ir import SSAValue

from aclgen.passes.builder import Builder
from aclgen.passes.expansions.registry import expands, intrinsic

intrinsic("absolute", "llvm.fabs")
intrinsic("sqrt", "llvm.sqrt")
intrinsic("copysign", "llvm.copysign")

INF = float("inf")


@expands("isnan")
def isnan(b: Builder, x: SSAValue) -> SSAValue:
    """x != x: the one unordered compare."""
    return b.cmp("une", x, x)


@expands("isinf")
def isinf(b: Builder, x: SSAValue) -> SSAValue:
    return b.cmp("oeq", b.call("absolute", x), b.f32(INF))


@expands("isfinite")
def isfinite(b: Builder, x: SSAValue) -> SSAValue:
    """|x| < inf: false for infinities and (an ordered compare) NaN."""
    return b.cmp("olt", b.call("absolute", x), b.f32(INF))


@expands("minimum")
def minimum(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """y < x ? y : x keeps x where they are equal and where x is NaN (x86's `minps y, x`); a NaN y
    is the one case left."""
    return b.select(b.call("isnan", y), y, b.select(b.cmp("olt", y, x), y, x))


@expands("maximum")
def maximum(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """As `minimum`, the other way."""
    return b.select(b.call("isnan", y), y, b.select(b.cmp("ogt", y, x), y, x))


@expands("sign")
def sign(b: Builder, x: SSAValue) -> SSAValue:
    """copysign(1, x) where |x| > 0 (an ordered compare: false for +-0 and NaN, which stay x)."""
    nonzero = b.cmp("ogt", b.call("absolute", x), b.f32(0.0))
    return b.select(nonzero, b.call("copysign", b.f32(1.0), x), x)
