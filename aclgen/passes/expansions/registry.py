"""The registry of formula functions' code (see the package's docstring)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import SSAValue

from aclgen.frontend.dsl import FUNCTIONS

Expansion = Callable[..., SSAValue]  # (builder, *f32 operands) -> the result

EXPANSIONS: dict[str, Expansion] = {}
INTRINSICS: dict[str, str] = {}  # function name -> LLVM intrinsic (mangled per type when lowered)


def _known(name: str) -> None:
    if name not in FUNCTIONS:
        raise ValueError(f"{name!r} is not a formula function (aclgen/frontend/dsl.py)")
    if name in EXPANSIONS or name in INTRINSICS:
        raise ValueError(f"formula function {name!r} has two definitions")


def expands(name: str) -> Callable[[Expansion], Expansion]:
    """Register the decorated function as formula function `name`'s expansion."""

    def register(fn: Expansion) -> Expansion:
        _known(name)
        EXPANSIONS[name] = fn
        return fn

    return register


def intrinsic(name: str, llvm_name: str) -> None:
    """Formula function `name` is LLVM intrinsic `llvm_name` (an instruction on every target)."""
    _known(name)
    INTRINSICS[name] = llvm_name
