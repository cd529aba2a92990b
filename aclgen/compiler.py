"""One straight-line compile(): formula -> ew -> passes -> llvm dialect -> LLVM IR -> native.

Every stage's text is kept on the `Kernel` (`kernel.ir[stage]`, `kernel.asm`):

    dsl            the traced formula, one line per DSL operation, with the user's source line
    ew             the `ew.kernel` as traced (storage types, mixed-type arithmetic allowed)
    <pass name>    the module after each pass of the pipeline (legalize-dtypes, tile-elementwise,
                   vectorize-elementwise, expand-math, ..., lower-to-llvm, dce)
    llvm-dialect   the final xDSL `llvm` dialect module (= after the last pass)
    llvm-ir        LLVM IR as translated, before LLVM's optimizer
    llvm           LLVM IR after O3 for the host CPU
    asm            host assembly
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp, f32, i64
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from aclgen import dtypes as dt
from aclgen.abi import MetaLayout
from aclgen.codegen import jit as jitmod
from aclgen.codegen.llvm_ir import convert_module
from aclgen.codegen.target import host
from aclgen.dialects import ew
from aclgen.frontend.tracer import trace
from aclgen.knobs import knobs
from aclgen.passes import pipeline


class CompileError(Exception):
    """A pass or the LLVM backend failed: a one-line message naming the stage; the IR or the
    backend's full report, when there is one, is in `details`."""

    def __init__(self, message: str, details: str = ""):
        first, _, rest = message.partition("\n")
        super().__init__(first)
        self.details = (rest + "\n" + details).strip()


@dataclass(frozen=True)
class Options:
    """Schedule knobs: they change the generated code, never the formula's result bits."""

    tile_size: int = 8192
    width: int = 0  # 0 = host native
    fma: str = "auto"
    noalias: bool = False
    opt_level: int = 3
    threads: int = 1
    nontemporal: bool = False  # streaming stores (for outputs larger than the caches)

    @staticmethod
    def from_knobs(**overrides) -> "Options":
        k = knobs()
        base = dict(tile_size=k.tile_size, width=k.vector_width, fma=k.fma, opt_level=k.opt_level)
        base.update(overrides)
        return Options(**base)


@dataclass(frozen=True)
class Param:
    """A scalar parameter. `kind` "f32": read as f32. "like-input": f32 for float inputs; for
    integer inputs an i64 holding trunc(value) clamped to just outside the input's range, so
    integer compares stay exact (ThresholdBackward)."""

    name: str
    kind: str = "f32"

    def ir_type(self, first_input: dt.DType) -> Attribute:
        if self.kind == "like-input" and not first_input.is_float:
            return i64
        return f32


@dataclass(frozen=True)
class Variant:
    """What one compiled kernel is specialized for (shapes and strides stay runtime values)."""

    inputs: tuple[dt.DType, ...]
    outputs: tuple[dt.DType, ...]
    rank: int
    layouts: tuple[str, ...]  # per operand: inputs then outputs

    def __post_init__(self):
        if len(self.layouts) != len(self.inputs) + len(self.outputs):
            raise ValueError("one layout per operand (inputs then outputs)")

    @property
    def tag(self) -> str:
        ts = "_".join(d.short for d in (*self.inputs, *self.outputs))
        ls = "".join(x[0] for x in self.layouts)
        return f"{ts}_r{self.rank}_{ls}"


@dataclass
class Kernel:
    """A compiled kernel variant: owns its JIT engine and keeps the text of every stage."""

    name: str
    variant: Variant
    params: tuple[Param, ...]
    param_types: tuple[Attribute, ...]
    ir: dict[str, str]
    native: jitmod.NativeCode
    options: Options
    seconds: dict[str, float] = field(default_factory=dict)

    def __post_init__(self):
        self.address = self.native.address(self.name)
        n_ptrs = len(self.variant.inputs) + len(self.variant.outputs)
        self.cfunc = jitmod.kernel_cfunc(n_ptrs)(self.address)
        self.meta_layout = MetaLayout(self.variant.rank, n_ptrs, len(self.params))

    @property
    def asm(self) -> str:
        return self.ir["asm"]

    @property
    def stages(self) -> list[str]:
        return list(self.ir)

    def __call__(self, pointers: Sequence[int], meta: int, begin: int, end: int) -> None:
        """Run elements [begin, end) on raw pointers; callers (the launcher) check every bound."""
        self.cfunc(*pointers, meta, begin, end)


def build_module(
    formula: Callable, name: str, variant: Variant, params: Sequence[Param], names: Sequence[str]
) -> tuple[ModuleOp, str, tuple[Attribute, ...]]:
    views_in = [ew.ViewType(variant.rank, d.ir_type, lay) for d, lay in zip(variant.inputs, variant.layouts)]
    views_out = [
        ew.ViewType(variant.rank, d.ir_type, lay)
        for d, lay in zip(variant.outputs, variant.layouts[len(variant.inputs) :])
    ]
    ptypes = tuple(p.ir_type(variant.inputs[0]) for p in params)
    traced = trace(formula, name, views_in, ptypes, views_out, names)
    return ModuleOp([traced.kernel]), traced.listing, ptypes


def run_pipeline(module: ModuleOp, spec: str, record: dict[str, str] | None = None, seconds: dict | None = None) -> None:
    """Apply a pass pipeline, verifying after each pass and recording its output text."""
    ctx = pipeline.context()
    last = [time.perf_counter()]

    def after(prev: ModulePass | None, mod: ModuleOp, nxt: ModulePass | None) -> None:
        if prev is None:
            return
        now = time.perf_counter()
        if seconds is not None:
            seconds[prev.name] = now - last[0]
        try:
            mod.verify()
        except Exception as exc:
            raise CompileError(f"in pass {prev.name}: the output does not verify: {exc}") from exc
        if record is not None:
            record[prev.name] = str(mod)
        last[0] = time.perf_counter()

    try:
        pipeline.parse(spec, after).apply(ctx, module)
    except CompileError:
        raise
    except Exception as exc:
        raise CompileError(f"pass pipeline failed: {type(exc).__name__}: {exc}") from exc


def compile_variant(
    formula: Callable,
    name: str,
    variant: Variant,
    params: Sequence[Param] = (),
    names: Sequence[str] | None = None,
    options: Options | None = None,
) -> Kernel:
    """Trace `formula` for `variant` and compile it to a native kernel."""
    options = options or Options.from_knobs()
    n_in, n_out = len(variant.inputs), len(variant.outputs)
    if names is None:
        code = formula.__code__
        names = list(code.co_varnames[: code.co_argcount])
        names += [f"out{i}" for i in range(n_out)]
    if len(names) != n_in + len(params) + n_out:
        raise ValueError(f"{name}: expected {n_in + len(params) + n_out} argument names, got {list(names)}")
    kname = f"{name}_{variant.tag}"
    seconds: dict[str, float] = {}
    t = time.perf_counter()
    module, listing, ptypes = build_module(formula, kname, variant, params, names)
    seconds["trace"] = time.perf_counter() - t
    ir = {"dsl": listing, "ew": str(module)}
    spec = pipeline.default_spec(
        options.tile_size, options.width, options.fma, options.noalias, options.threads, options.nontemporal
    )
    run_pipeline(module, spec, ir, seconds)
    ir["llvm-dialect"] = str(module)
    t = time.perf_counter()
    try:
        llvm_ir = str(convert_module(module, host().triple))
    except Exception as exc:
        raise CompileError(f"translating the llvm dialect to LLVM IR failed: {exc}") from exc
    ir["llvm-ir"] = llvm_ir
    seconds["translate"] = time.perf_counter() - t
    try:
        native = jitmod.jit(llvm_ir, options.opt_level)
    except Exception as exc:
        raise CompileError(f"LLVM failed on {kname}: {exc}") from exc
    seconds.update(native.seconds)
    ir["llvm"] = native.optimized_ir
    ir["asm"] = native.asm
    return Kernel(kname, variant, tuple(params), ptypes, ir, native, options, seconds)


STAGES = (
    "dsl",
    "ew",
    "legalize-dtypes",
    "tile-elementwise",
    "vectorize-elementwise",
    "expand-math",
    "canonicalize",
    "cse",
    "convert-scf-to-cf",
    "lower-to-llvm",
    "dce",
    "llvm-dialect",
    "llvm-ir",
    "llvm",
    "asm",
)

__all__ = ["CompileError", "Kernel", "Options", "Param", "STAGES", "Variant", "compile_variant"]
