"""The pass pipeline: every pass by its pipeline name, and the compiler's pipeline made from
aclgen.kernel.PIPELINE (the one statement of the order, light so that cache hits can name the
stages) with each pass's options:

    legalize-dtypes -> tile-elementwise -> tile-rows -> vectorize-elementwise -> expand-math
      -> version-unlikely -> cse -> convert-scf-to-cf -> lower-to-llvm

Options that describe the target (vectorize-elementwise's `lanes`, expand-math's `fma`,
`rounding`, `avx512` and `permute`, lower-to-llvm's `x86`) come from the target here, so the passes
themselves never look at the machine: `aclgen opt` gives the same output everywhere. xDSL's cse
and convert-scf-to-cf are reused as they are. xDSL's canonicalize and dce are registered (for
`aclgen opt`) but not in the default pipeline: on all five operators canonicalize changed no byte
of the final assembly (LLVM's O3 does the same folding) and cost 6-21 ms of a 75-160 ms compile;
dce, the pipeline's last pass until 2026-11-27, changed no byte of it on 36 variants (18
operators of both families, every dtype, contiguous and strided; LLVM's O3 removes dead code)
and cost 13-57 ms, 4-5% of each compile.
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

from aclgen.codegen.target import Host
from aclgen.dialects.ew import EW
from aclgen.dialects.llvmx import LLVMX
from aclgen.dialects.tile import TILE
from aclgen.kernel import MODEL_TILE, PIPELINE, Options
from aclgen.passes.expand_math import ExpandMathPass
from aclgen.passes.legalize_dtypes import LegalizeDtypesPass
from aclgen.passes.lower_to_llvm import LowerToLLVMPass
from aclgen.passes.tile_elementwise import TileElementwisePass
from aclgen.passes.tile_rows import TileRowsPass
from aclgen.passes.vectorize_elementwise import VectorizeElementwisePass
from aclgen.passes.version_unlikely import VersionUnlikelyPass

PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    p.name: (lambda p=p: p)
    for p in (
        LegalizeDtypesPass,
        TileElementwisePass,
        TileRowsPass,
        VectorizeElementwisePass,
        ExpandMathPass,
        VersionUnlikelyPass,
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


def passes(options: Options, target: Host) -> list[ModulePass]:
    """The compiler's pipeline for `options` (schedule knobs) on `target`."""
    settings: dict[str, dict] = {
        "tile-elementwise": {"tile_size": options.tile_size or MODEL_TILE},
        "vectorize-elementwise": {"width": options.width, "lanes": target.f32_lanes,
                                  "nontemporal": options.nontemporal},
        "expand-math": {"fma": target.has("fma") if options.fma == "auto" else options.fma == "on",
                        "rounding": target.has("sse4.1") or not target.is_x86,
                        "avx512": target.is_x86 and target.has("avx512f") and target.has("avx512vl"),
                        "permute": target.is_x86 and target.has("avx2"), "half": options.half},
        "lower-to-llvm": {"noalias": options.noalias, "x86": target.is_x86,
                          "halves_masked": target.is_x86 and target.has("avx512bw")},
    }
    return [PASSES[name]()(**settings.get(name, {})) for name in PIPELINE]


def spec(passes: list[ModulePass]) -> str:
    """The pipeline as `aclgen opt -p` takes it."""
    return ",".join(str(p.pipeline_pass_spec()) for p in passes)


def ours() -> list[str]:
    """The pipeline's passes that aclgen defines (the others are xDSL's)."""
    return [name for name in PIPELINE if PASSES[name]().__module__.startswith("aclgen.")]


def parse(text: str, callback=None) -> PassPipeline:
    return PassPipeline.parse_spec(PASSES, text, callback)
