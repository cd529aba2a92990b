"""One straight-line compile(): formula -> ew -> passes -> llvm dialect -> LLVM IR -> native.

Every stage's text is available on the `Kernel` (`kernel.ir[stage]`, `kernel.asm`):

    dsl            the traced formula, one line per DSL operation, with the user's source line
    ew             the `ew.kernel` as traced (storage types, mixed-type arithmetic allowed)
    <pass name>    the module after each pass of the pipeline (legalize-dtypes, tile-elementwise,
                   vectorize-elementwise, expand-math, ..., lower-to-llvm)
    llvm-dialect   the final xDSL `llvm` dialect module (= after the last pass)
    llvm-ir        LLVM IR as translated, before LLVM's optimizer
    llvm           LLVM IR after O3 for the host CPU
    asm            host assembly

Printing every stage and verifying after every pass cost as much as the compile itself, and a
launch needs neither, so `compile_variant` keeps only the texts it makes anyway (dsl, llvm-ir),
leaves checking the final module to LLVM's parser and verifier (xDSL's verify of the same llvm
dialect module took 7-14 ms of a 50-125 ms compile), and leaves the other texts to
`stage_texts`, which re-runs the same deterministic pipeline with a verify and a print after
every pass on the first access of a missing stage. When the fast run fails anywhere, the strict
run is repeated to name the pass that broke the IR.

The kernel handle types (`Kernel`, `Variant`, `Options`, `Param`) live in aclgen/kernel.py,
importable without xDSL for cache hits (aclgen/cache.py).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass, PassPipeline

from aclgen.codegen import jit as jitmod
from aclgen.codegen.llvm_ir import convert_module
from aclgen.codegen.target import Host, host
from aclgen.dialects import ew
from aclgen.frontend import emit
from aclgen.frontend.tracer import Graph, Signature, trace
from aclgen.kernel import STAGES, CompileError, Kernel, Options, Param, StageTexts, Variant
from aclgen.passes import pipeline


def trace_variant(formula: Callable, variant: Variant, params: Sequence[Param], names: Sequence[str]) -> Graph:
    """The formula traced with the element types of `variant` (and its parameters'); with
    `variant.results`, only those of its results (a kernel of an operator made of several)."""
    types = [d.name for d in variant.inputs] + [p.graph_type(variant.inputs[0]) for p in params]
    kinds = ["input"] * len(variant.inputs) + ["param"] * len(params)
    count = None if variant.results else len(variant.outputs)
    graph = trace(formula, Signature(names[: len(types)], types, count, kinds, variant.attrs))
    if variant.results:
        graph = dataclasses.replace(graph, results=[graph.results[k] for k in variant.results])
    return graph


def build_module(
    formula: Callable, name: str, variant: Variant, params: Sequence[Param], names: Sequence[str]
) -> tuple[ModuleOp, str, tuple[Attribute, ...]]:
    views_in = [ew.ViewType(variant.rank, d.ir_type, lay) for d, lay in zip(variant.inputs, variant.layouts)]
    views_out = [
        ew.ViewType(variant.rank, d.ir_type, lay)
        for d, lay in zip(variant.outputs, variant.layouts[len(variant.inputs) :])
    ]
    ptypes = tuple(p.ir_type(variant.inputs[0]) for p in params)
    graph = trace_variant(formula, variant, params, names)
    if variant.results:  # the argument names of this kernel's outputs only
        head = len(variant.inputs) + len(params)
        names = [*names[:head], *(names[head + k] for k in variant.results)]
    for k in variant.partials:
        node = graph.results[k]
        if node.op != "reduce" or node.attr[0] != "sum":  # type: ignore[index]
            raise CompileError(f"{name}: result {k} adds up across rows only as aclgen.sum, not {node.text or node.op}")
    kernel = emit.kernel(graph, name, views_in, ptypes, views_out, names, variant.reduced, variant.columns,
                         variant.partials, variant.blocks)
    return ModuleOp([kernel]), graph.listing, ptypes


def run_pipeline(
    module: ModuleOp,
    passes: Sequence[ModulePass],
    record: dict[str, str] | None = None,
    seconds: dict | None = None,
    verify_each: bool = True,
) -> None:
    """Apply `passes`, verifying after each pass (unless `verify_each` is false) and
    recording its output text into `record` when given."""
    ctx = pipeline.context()
    last = [time.perf_counter()]

    def after(prev: ModulePass | None, mod: ModuleOp, nxt: ModulePass | None) -> None:
        if prev is None:
            return
        now = time.perf_counter()
        if seconds is not None:
            seconds[prev.name] = now - last[0]
        if verify_each:
            try:
                mod.verify()
            except Exception as exc:
                raise CompileError(f"in pass {prev.name}: the output does not verify: {exc}") from exc
        if record is not None:
            record[prev.name] = str(mod)
        last[0] = time.perf_counter()

    try:
        PassPipeline(tuple(passes), after).apply(ctx, module)
    except CompileError:
        raise
    except Exception as exc:
        raise CompileError(f"pass pipeline failed: {type(exc).__name__}: {exc}") from exc


def _arg_names(formula: Callable, variant: Variant, params: Sequence[Param], names: Sequence[str] | None) -> list[str]:
    n_in, n_out = len(variant.inputs), len(variant.outputs)
    if names is None:
        code = formula.__code__
        names = list(code.co_varnames[: code.co_argcount])
        names += [f"out{i}" for i in range(n_out)]
    if variant.results:  # names for every output of the formula; the kernel computes some
        n_out = len(names) - n_in - len(params)
    if len(names) != n_in + len(params) + n_out:
        raise ValueError(f"expected {n_in + len(params) + n_out} argument names, got {list(names)}")
    return list(names)


def _translate(module: ModuleOp, target: Host | None = None) -> str:
    try:
        return str(convert_module(module, (target or host()).triple))
    except Exception as exc:
        raise CompileError(f"translating the llvm dialect to LLVM IR failed: {exc}") from exc


def _passes(options: Options, target: Host | None = None) -> list[ModulePass]:
    return pipeline.passes(options, target or host())


def stage_texts(
    formula: Callable,
    name: str,
    variant: Variant,
    params: Sequence[Param] = (),
    names: Sequence[str] | None = None,
    options: Options | None = None,
    target: Host | None = None,
) -> dict[str, str]:
    """The text of every stage of `compile_variant`'s pipeline (same inputs, same code), with a
    verify after every pass; raises the CompileError of the first pass whose output is bad.
    `target`: the CPU to generate for (default: `host()` now; a kernel's texts pass its own, so
    that they show its code whatever ACLGEN_CPU_NAME says when they are first read)."""
    options = options or Options.from_knobs()
    target = target or host()
    names = _arg_names(formula, variant, params, names)
    kname = f"{name}_{variant.tag}"
    module, listing, _ = build_module(formula, kname, variant, params, names)
    ir = {"dsl": listing, "ew": str(module)}
    run_pipeline(module, _passes(options, target), ir)
    ir["llvm-dialect"] = str(module)
    ir["llvm-ir"] = llvm_ir = _translate(module, target)
    try:
        mod, tm = jitmod.optimized_module(llvm_ir, options.opt_level, target)
        ir["llvm"] = str(mod)
        ir["asm"] = jitmod.assembly(mod, tm)
    except Exception as exc:
        raise CompileError(f"LLVM failed on {kname}: {exc}") from exc
    return ir


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
    try:
        names = _arg_names(formula, variant, params, names)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None
    kname = f"{name}_{variant.tag}"
    seconds: dict[str, float] = {}
    t = time.perf_counter()
    module, listing, _ = build_module(formula, kname, variant, params, names)
    seconds["trace"] = time.perf_counter() - t
    try:
        run_pipeline(module, _passes(options), None, seconds, verify_each=False)
        t = time.perf_counter()
        llvm_ir = _translate(module)
        seconds["translate"] = time.perf_counter() - t
        native = jitmod.jit(llvm_ir, options.opt_level)
    except Exception as exc:
        # The fast run verifies nothing itself: LLVM's parser and verifier check the translated
        # module. On any failure the strict run (a verify after every pass) names the pass
        # that broke the IR; if every pass verifies, the failure is LLVM's or the translation's.
        stage_texts(formula, name, variant, params, names, options)
        if isinstance(exc, CompileError):
            raise
        raise CompileError(f"LLVM failed on {kname}: {exc}") from exc
    seconds.update(native.seconds)
    ptypes = tuple(p.type_name(variant.inputs[0]) for p in params)

    target = native.target

    def fill() -> dict[str, str]:
        return stage_texts(formula, name, variant, params, names, options, target)

    texts = StageTexts({"dsl": listing, "llvm-ir": llvm_ir}, fill)
    return Kernel(kname, variant, tuple(params), ptypes, texts, native, options, seconds)


__all__ = ["STAGES", "CompileError", "Kernel", "Options", "Param", "Variant", "compile_variant", "stage_texts"]
