"""The `ew` and `tile` dialects' enumerated attributes: operand layouts and compare predicates.

`Layout` is the `layout` of `!ew.view`, `tile.load` and `tile.store` (and of a `Variant`'s
operands); `Predicate` is the predicate of `ew.cmp` (and of a traced compare). Both are
`StrEnum`s: a member is the string the IR prints and parses (`StringAttr(Layout.CONTIGUOUS)`
prints `"contiguous"`), and equals that string.

This module imports neither xDSL nor the rest of the compiler: the tracer
(aclgen/frontend/tracer.py), the declarations and the runtime's planner name layouts and
predicates in processes whose kernels come from the disk cache and never load xDSL.
"""

from __future__ import annotations

import enum


class Layout(enum.StrEnum):
    """The class of an operand's innermost stride (the dim a kernel vectorizes) that a kernel
    variant is specialized for; outer dims are always read through runtime strides."""

    CONTIGUOUS = "contiguous"  # stride 1
    STRIDED = "strided"  # any stride
    BROADCAST = "broadcast"  # stride 0: every column reads the same element

    @classmethod
    def of_stride(cls, stride: int) -> Layout:
        """The layout a view with this innermost stride (in elements) runs in."""
        return cls.CONTIGUOUS if stride == 1 else cls.BROADCAST if stride == 0 else cls.STRIDED

    def stored(self) -> Layout:
        """The layout an output of this layout is stored in: a stride-0 output (its innermost dim
        has length 1, where no stride is taken) as a strided one, since a store writes each of
        its columns where a broadcast load reads one element for all."""
        return Layout.STRIDED if self == Layout.BROADCAST else self


class Predicate(enum.StrEnum):
    """A compare's predicate. Float compares are ordered (NaN compares false) except `une`
    (NaN compares true: `!=`); integer operands compare exactly, with their type's signedness."""

    OLT = "olt"
    OLE = "ole"
    OGT = "ogt"
    OGE = "oge"
    OEQ = "oeq"
    UNE = "une"

    @property
    def relation(self) -> str:
        """The relation without the NaN flavour: "lt", "le", "gt", "ge", "eq" or "ne" (LLVM's
        icmp spells the integer compares so, with an `s` or `u` before the four orderings)."""
        return self.value[1:]

    @property
    def symbol(self) -> str:
        """The Python operator the predicate stands for (`x < y` traces to `olt`)."""
        return RELATION_SYMBOLS[self.relation]


#: The Python (and llvmlite) operator of each relation a predicate names after its NaN flavour
#: (`Predicate.relation`, and LLVM's fcmp predicates in aclgen/dialects/llvmx.py).
RELATION_SYMBOLS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
