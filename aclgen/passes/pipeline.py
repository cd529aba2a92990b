"""The pass pipeline: every pass by its pipeline name, and the default order.

    legalize-dtypes -> tile-elementwise -> vectorize-elementwise -> expand-math
      -> cse -> convert-scf-to-cf -> lower-to-llvm -> dce

xDSL's cse, dce and convert-scf-to-cf are reused as they are. xDSL's canonicalize is registered
(for `aclgen opt`) but not in the default pipeline: on all five operators it changed no byte of
the final assembly (LLVM's O3 does the same folding) and cost 6-21 ms of a 75-160 ms compile.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects import arith, builtin, cf, func, llvm, math, scf
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from aclgen.dialects.ew import EW
from aclgen.dialects.llvmx import LLVMX
from aclgen.dialects.tile import TILE
from aclgen.passes.expand_math import ExpandMathPass
from aclgen.passes.legalize_dtypes import LegalizeDtypesPass
from aclgen.passes.lower_to_llvm import LowerToLLVMPass
from aclgen.passes.tile_elementwise import TileElementwisePass
from aclgen.passes.vectorize_elementwise import VectorizeElementwisePass

PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    p.name: (lambda p=p: p)
    for p in (
        LegalizeDtypesPass,
        TileElementwisePass,
        VectorizeElementwisePass,
        ExpandMathPass,
        LowerToLLVMPass,
        CanonicalizePass,
        CommonSubexpressionElimination,
        DeadCodeElimination,
        ConvertScfToCf,
    )
}


def context() -> Context:
    """An xDSL context with our dialects and the upstream ones our IR uses."""
    ctx = Context()
    for d in (builtin.Builtin, func.Func, arith.Arith, scf.Scf, cf.Cf, math.Math, llvm.LLVM, EW, TILE, LLVMX):
        ctx.load_dialect(d)
    return ctx


def default_spec(tile_size: int, width: int, fma: str, noalias: bool, nontemporal: bool = False) -> str:
    return ",".join(
        [
            "legalize-dtypes",
            f"tile-elementwise{{tile_size={tile_size}}}",
            f"vectorize-elementwise{{width={width} nontemporal={'true' if nontemporal else 'false'}}}",
            f"expand-math{{fma={fma}}}",
            "cse",
            "convert-scf-to-cf",
            f"lower-to-llvm{{noalias={'true' if noalias else 'false'}}}",
            "dce",
        ]
    )


def parse(spec: str, callback=None) -> PassPipeline:
    return PassPipeline.parse_spec(PASSES, spec, callback)
