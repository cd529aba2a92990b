"""The registry of formula functions' code (see the package's docstring)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import SSAValue

from aclgen.frontend.dsl import FUNCTIONS

Expansion = Callable[..., SSAValue]  # (builder, *f32 operands) -> the result

EXPANSIONS: dict[str, Expansion] = {}
INTRINSICS: dict[str, str] = {}  # function name -> LLVM intrinsic (mangled per type when lowered)
#: For an intrinsic that is an instruction only on some targets: the target fact (an option of
#: expand-math, filled in by the compiler) that says so. Without it, its expansion runs instead.
WHERE: dict[str, str] = {}

TARGET_FACTS = ("rounding",)


def _known(name: str, table: dict) -> None:
    if name not in FUNCTIONS:
        raise ValueError(f"{name!r} is not a formula function (aclgen/frontend/dsl.py)")
    if name in table:
        raise ValueError(f"formula function {name!r} has two definitions")


def expands(name: str) -> Callable[[Expansion], Expansion]:
    """Register the decorated function as formula function `name`'s expansion."""

    def register(fn: Expansion) -> Expansion:
        _known(name, EXPANSIONS)
        if name in INTRINSICS and name not in WHERE:
            raise ValueError(f"formula function {name!r} is an intrinsic everywhere: it has no expansion")
        EXPANSIONS[name] = fn
        return fn

    return register


def intrinsic(name: str, llvm_name: str, where: str = "") -> None:
    """Formula function `name` is LLVM intrinsic `llvm_name`: an instruction on every target, or
    only where target fact `where` holds (its `@expands` expansion serves the others)."""
    _known(name, INTRINSICS)
    if where and where not in TARGET_FACTS:
        raise ValueError(f"{name!r}: unknown target fact {where!r}; known: {TARGET_FACTS}")
    INTRINSICS[name] = llvm_name
    if where:
        WHERE[name] = where
