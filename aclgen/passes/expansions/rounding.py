"""Rounding to integers: floor, ceil, trunc and round (half to even).

Each is one instruction where the target has SSE4.1's `roundps` (every AVX target) or another
ISA's rounding instructions: expand-math keeps the op for `lower-to-llvm`'s intrinsic. On a
target without (x86-64's SSE2 baseline, `ACLGEN_CPU_NAME=generic`) LLVM would call `floorf` &c.
lane by lane, so expand-math writes them out instead, from one round-to-nearest-even:

    roundeven(x) = (x + c) - c with c = copysign(2^23, x), for |x| < 2^23 (larger floats, NaN
                   and infinities are integral already and stay x); the sign is copied back so
                   that -0.3 gives -0
    floor(x) = r - 1 where r > x, else r        (r = roundeven(x))
    ceil(x)  = copysign(r + 1 where r < x, else r; x)
    trunc(x) = copysign(r - copysign(1, x) where |r| > |x|, else r; x)

All exact: the adds are exact for |x| < 2^23 and the corrections subtract or add one.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from aclgen.dialects.enums import Predicate
from aclgen.passes.builder import Builder
from aclgen.passes.expansions.registry import expands, intrinsic

TWO23 = 8388608.0

for _name, _llvm in (("floor", "llvm.floor"), ("ceil", "llvm.ceil"), ("trunc", "llvm.trunc"),
                     ("round", "llvm.roundeven")):
    intrinsic(_name, _llvm, where="rounding")


@expands("round")
def round_(b: Builder, x: SSAValue) -> SSAValue:
    c = b.call("copysign", b.f32(TWO23), x)
    r = b.call("copysign", b.sub(b.add(x, c), c), x)
    return b.select(b.cmp(Predicate.OLT, b.call("absolute", x), b.f32(TWO23)), r, x)


@expands("floor")
def floor(b: Builder, x: SSAValue) -> SSAValue:
    r = b.call("round", x)
    return b.select(b.cmp(Predicate.OGT, r, x), b.sub(r, b.f32(1.0)), r)


@expands("ceil")
def ceil(b: Builder, x: SSAValue) -> SSAValue:
    """The sign copied back: ceil(-0.7) is -1 + 1, which is +0, and must be -0."""
    r = b.call("round", x)
    return b.call("copysign", b.select(b.cmp(Predicate.OLT, r, x), b.add(r, b.f32(1.0)), r), x)


@expands("trunc")
def trunc(b: Builder, x: SSAValue) -> SSAValue:
    r = b.call("round", x)
    over = b.cmp(Predicate.OGT, b.call("absolute", r), b.call("absolute", x))
    toward = b.select(over, b.sub(r, b.call("copysign", b.f32(1.0), x)), r)
    return b.call("copysign", toward, x)
