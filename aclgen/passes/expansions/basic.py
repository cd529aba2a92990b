"""Functions that are one instruction or a compare: absolute, isnan."""

from __future__ import annotations

from xdsl.ir import SSAValue

from aclgen.passes.builder import Builder
from aclgen.passes.expansions.registry import expands, intrinsic

intrinsic("absolute", "llvm.fabs")


@expands("isnan")
def isnan(b: Builder, x: SSAValue) -> SSAValue:
    """x != x: the one unordered compare."""
    return b.cmp("une", x, x)
