"""The code of every formula function (aclgen/frontend/dsl.py's FUNCTIONS): an expansion into
simpler ops, written once here, or an LLVM intrinsic that becomes one instruction.

    @expands("tanh")
    def tanh(b: Builder, x: SSAValue) -> SSAValue:   # f32 operands, the result's value
        ...

    intrinsic("absolute", "llvm.fabs")
    intrinsic("floor", "llvm.floor", where="rounding")   # an instruction where the target rounds

`@expands` also gives the code of an intrinsic on targets where it is no instruction.

`expand-math` applies `EXPANSIONS` (their code may call other functions, which it expands in
turn); `lower-to-llvm` lowers the functions of `INTRINSICS` and refuses any other that survived.
Expansions are written with a `Builder` (aclgen/passes/builder.py) in `ew` and `arith` ops, so
one expansion serves scalars and every vector width: the vectorizer has already run. Every
module of this package is imported here; each registers its functions.
"""

from __future__ import annotations

import importlib
import pkgutil

from aclgen.passes.expansions.registry import EXPANSIONS, INTRINSICS, WHERE, Expansion, expands, intrinsic

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["EXPANSIONS", "INTRINSICS", "WHERE", "Expansion", "expands", "intrinsic"]
