"""The `aclgen` command: parsing, dispatch and the error policy.

    aclgen ops [FILE.py ...]                           operators, signatures, dtypes per SoC
    aclgen compile OP --dtype D [--emit STAGE]         print one stage of a compiled variant
    aclgen opt FILE.mlir -p 'pass,pass{k=v}'           xdsl-opt with our dialects and passes
    aclgen run OP --shape 1024x1024 --dtype D          check against a reference and time it
    aclgen demo                                        every operator's examples and dtypes
    aclgen cache info|clear                            the on-disk compile cache
    aclgen bench [OP...] [--sizes 1K,1M] [--json F]    time against numpy/torch/numba and the triad
    aclgen tune [OP...] [--sizes 64K,1M] [--show]      time schedules per variant, keep the fastest
    aclgen sdk --prefix DIR [--ops FILE.py ...]        CANN's headers and libraries for C/C++ programs
    aclgen docs [--out DIR] [--check]                  the operator reference (docs/operators/)

OP is a built-in's name (hardswish_backward or HardswishBackward) or FILE.py:NAME, an operator
a user's module declares with `@aclgen.operator`. The work itself lives in aclgen/tools/.
Errors a user can act on print one line (`aclgen: error: ...`) and exit 1; set ACLGEN_DEBUG=1
to get the Python traceback instead.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import sys
import time
from collections.abc import Sequence

import numpy as np

from aclgen.dialects.enums import Layout
from aclgen.knobs import debug, overridden
from aclgen.tools import UsageError, count

EXIT_OK, EXIT_ERROR = 0, 1
_PASS_STAGES_EXCLUDED = ("dsl", "ew", "llvm-dialect", "llvm-ir", "llvm", "asm")
UserError = UsageError  # the name this module's callers know


class Diagnostic(UserError):
    """An error in an input file, already formatted as `file:line:col: error: message`."""


# -- helpers shared by the subcommands ---------------------------------------------------------


def _operator(spec: str):
    from aclgen.tools.operators import find

    return find(spec)


def _dtypes(op, spec: str) -> tuple:
    """`--dtype float16` (every input) or `float16,float32` (one per kernel input)."""
    from aclgen import dtypes as dt

    names = [s.strip() for s in spec.split(",")]
    try:
        ds = [dt.dtype(n) for n in names]
    except ValueError as exc:
        raise UserError(str(exc)) from None
    n_in = len(op.kernel_inputs)
    if len(ds) == 1:
        ds = ds * n_in
    if len(ds) != n_in:
        raise UserError(f"{op.python_name} has {n_in} kernel inputs ({', '.join(op.kernel_inputs)}); got {len(ds)} dtypes")
    allowed = op.all_dtypes()
    for d in ds:
        if d not in allowed:
            raise UserError(f"{op.python_name} does not support {d.name} "
                            f"(supported: {', '.join(a.name for a in allowed)})")
    return tuple(ds)


def _shape(spec: str) -> tuple[int, ...]:
    """`1024x1024`, `7`, or `scalar` / `` for a 0-d tensor."""
    if spec in ("", "scalar", "()"):
        return ()
    try:
        shape = tuple(int(s) for s in spec.lower().split("x"))
    except ValueError:
        raise UserError(f"bad shape {spec!r}: write dims separated by 'x', e.g. 1024x1024") from None
    if any(n < 0 for n in shape):
        raise UserError(f"bad shape {spec!r}: dims must be >= 0")
    return shape


def _write(text: str, path: str | None) -> None:
    if not text.endswith("\n"):
        text += "\n"
    if path is None or path == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


def _header(title: str) -> str:
    return f"// -----// {title} //----- //\n"


def _soc(name: str | None):
    """The settings with --soc NAME's profile (checked here: the error is the option's, not
    ACLGEN_SOC_VERSION's, which the user did not set)."""
    from aclgen.declaration import SOCS

    if name is None:
        return contextlib.nullcontext()
    if name not in SOCS:
        raise UserError(f"--soc {name!r} is not one of {', '.join(SOCS)}")
    return overridden(ACLGEN_SOC_VERSION=name)


# -- aclgen ops ---------------------------------------------------------------------------------


def _describe(op) -> None:
    from aclgen.runtime.function import function_of

    print(f"{op.python_name}{inspect.signature(function_of(op))}")
    print(f"    {op.doc or op.signature}")
    print(f"    {op.signature}")
    kernel = [*op.kernel_inputs, *(p.name for p in op.params)]
    print(f"    kernel: ({', '.join(kernel)}) -> ({', '.join(op.kernel_outputs)})")
    groups: dict[tuple[str, ...], list[str]] = {}
    for soc, names in op.dtypes.items():
        groups.setdefault(tuple(names), []).append(soc)
    for names, socs in groups.items():
        print(f"    {', '.join(socs)}: {', '.join(names) if names else '(none)'}")


def cmd_ops(args: argparse.Namespace) -> int:
    from aclgen.tools.operators import builtins, load

    for op in builtins():
        _describe(op)
    for path in args.files:
        ops = load(path)
        print(f"\n{path}: {count(len(ops), 'operator')}")
        for op in ops:
            _describe(op)
    return EXIT_OK


# -- aclgen compile -----------------------------------------------------------------------------


NUMPY_MAX_DIMS = 64  # numpy 2's limit on an array's dims (and so on any call's)


def _variant(op, dtypes: tuple, rank: int, layout: str):
    n_in, n_out = len(op.kernel_inputs), len(op.kernel_outputs)
    layouts = [s.strip() for s in layout.split(",")]
    if len(layouts) == 1:
        # One layout names the inputs'; outputs are contiguous unless everything is strided.
        lay = layouts[0]
        layouts = [lay] * n_in + [Layout.STRIDED if lay == Layout.STRIDED else Layout.CONTIGUOUS] * n_out
    if len(layouts) != n_in + n_out:
        raise UserError(f"--layout: give one layout or {n_in + n_out} (inputs then outputs), got {len(layouts)}")
    for lay in layouts:
        if lay not in tuple(Layout):
            raise UserError(f"--layout: {lay!r} is not one of {', '.join(Layout)}")
    if Layout.BROADCAST in layouts[n_in:]:
        raise UserError(f"--layout: an output cannot be {Layout.BROADCAST} (a kernel writes every element of "
                        f"its outputs): give {Layout.CONTIGUOUS} or {Layout.STRIDED} for the last {n_out}")
    if rank < 1:
        raise UserError("--rank must be >= 1 (the launcher merges a 0-d tensor into rank 1)")
    # Merging dims never raises the rank: a variant above the tensors' limit never runs.
    limit = op.max_rank if op.max_rank is not None else NUMPY_MAX_DIMS
    if rank > limit:
        raise UserError(f"--rank {rank}: {op.api} takes tensors of at most {limit} dims, so no call runs a "
                        f"rank-{rank} variant")
    return op.variant(dtypes, rank, layouts)


def cmd_compile(args: argparse.Namespace) -> int:
    from aclgen import schedules
    from aclgen.cache import formula_digest
    from aclgen.compiler import Options, compile_variant
    from aclgen.knobs import TILE_RULE, WIDTH_RULE, tile_ok, width_ok

    op = _operator(args.op)
    variant = _variant(op, _dtypes(op, args.dtype), args.rank, args.layout)
    overrides = {}
    for flag, key, ok, rule in (("--width", "width", width_ok, WIDTH_RULE),
                                ("--tile-size", "tile_size", tile_ok, TILE_RULE)):
        value = getattr(args, key)
        if value is not None:
            if not ok(value):
                raise UserError(f"{flag} {value}: must be {rule}")
            overrides[key] = value
    if args.noalias:
        overrides["noalias"] = True
    options = op.kernel_options(variant, Options.from_knobs(**overrides))
    options = schedules.choose(op.python_name, formula_digest(op.formula), variant, options)  # what a call runs
    kernel = compile_variant(op.formula, op.python_name, variant, op.params, op.kernel_arg_names, options)
    if args.timing:
        for stage, s in kernel.seconds.items():
            print(f"{stage:24s} {s * 1e3:8.2f} ms", file=sys.stderr)
        print(f"{'total':24s} {sum(kernel.seconds.values()) * 1e3:8.2f} ms", file=sys.stderr)
    if not args.print_ir_after_all:
        _write(kernel.ir[args.emit], args.output)
        return EXIT_OK
    parts = [_header("DSL trace (dsl)") + kernel.ir["dsl"], _header("Traced IR (ew)") + kernel.ir["ew"]]
    for stage, text in kernel.ir.items():
        if stage not in _PASS_STAGES_EXCLUDED:
            parts.append(_header(f"IR Dump After {stage}") + text)
    parts.append(_header(f"Emitted stage ({args.emit})") + kernel.ir[args.emit])
    _write("\n".join(p.rstrip("\n") + "\n" for p in parts), args.output)
    return EXIT_OK


# -- aclgen opt ---------------------------------------------------------------------------------


def cmd_opt(argv: Sequence[str]) -> int:
    """`aclgen opt ARGS...`: xdsl-opt with our dialects and passes (aclgen/tools/opt.py), which
    parses ARGS itself; its errors go through main()'s one-line policy."""
    from aclgen.tools import opt

    try:
        return opt.main(argv)
    except opt.OptDiagnostic as exc:
        raise Diagnostic(str(exc)) from exc
    except opt.OptError as exc:
        raise UserError(str(exc)) from exc


# -- aclgen run ---------------------------------------------------------------------------------


def _params(op, items: Sequence[str]) -> dict[str, float]:
    names = [s.name for s in op.scalars]
    params = {}
    for item in items:
        name, _, value = item.partition("=")
        if name not in names:
            raise UserError(f"{op.python_name} has no parameter {name!r} (parameters: {', '.join(names) or 'none'})")
        try:
            params[name] = float(value)
        except ValueError:
            raise UserError(f"--param {item!r}: {value!r} is not a number") from None
    return params


def cmd_run(args: argparse.Namespace) -> int:
    from aclgen import cache
    from aclgen.tools.demo import show_shape
    from aclgen.tools.run import compare_all, make_case, reference, time_calls

    op = _operator(args.op)
    dtype = _dtypes(op, args.dtype)[0]
    shape = _shape(args.shape)
    params = _params(op, args.param or [])
    with _soc(args.soc):
        try:
            case = make_case(op, shape, dtype, np.random.default_rng(args.seed), params)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        before = dict(cache.stats)
        t = time.perf_counter()
        case.call()
        first = time.perf_counter() - t
        how = ("includes compiling the variant" if cache.stats["compiles"] > before["compiles"] else
               "includes loading the variant from the disk cache" if cache.stats["disk_hits"] > before["disk_hits"]
               else "the variant was in memory")
        err, bad = compare_all(case.outs, reference(case))
        median = time_calls(case.call, budget_s=args.seconds)
    gbs = case.nbytes / median / 1e9 if median > 0 else float("inf")
    size = sum(o.size for o in case.outs)
    print(f"{op.python_name} {dtype.name} {show_shape(shape)}")
    print(f"  max error   {err:g}  ({bad} of {size} elements differ from the scalar -O0 build)")
    print(f"  first call  {first * 1e3:.1f} ms ({how})")
    print(f"  median      {median * 1e6:.1f} us  ({gbs:.2f} GB/s moved)")
    return EXIT_OK if bad == 0 else EXIT_ERROR


# -- aclgen demo --------------------------------------------------------------------------------


def _format_row(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()


def cmd_demo(args: argparse.Namespace) -> int:
    from aclgen.codegen.target import host
    from aclgen.knobs import knobs
    from aclgen.tools import demo
    from aclgen.tools.operators import builtins, load

    shape = _shape(args.shape)
    users = [op for path in args.ops or () for op in load(path)]
    ops = builtins() + users
    if args.only:
        wanted = {n.strip() for n in args.only.split(",") if n.strip()}
        ops = [op for op in ops if wanted & {op.python_name, op.name, op.api}]
        users = [op for op in users if op in ops]
        if not ops:
            raise UsageError(f"--only {args.only}: no such operator (see `aclgen ops`)")
    start = time.perf_counter()
    with _soc(args.soc):
        soc = knobs().soc_version
        h = host()
        print(f"aclgen demo: host {h.cpu} ({h.f32_lanes} x f32 lanes), SoC profile {soc}, "
              f"random shape {demo.show_shape(shape)}")
        heads = ("operator", "dtype", "shape", "check", "compile ms", "run us")
        widths = (max(19, *(len(op.python_name) for op in ops)), 8, 9, 34, 10, 10)
        print(_format_row(heads, widths))
        print(_format_row(["-" * w for w in widths], widths))

        def show(r: demo.Row) -> None:
            run = f"{r.run_us:.1f}" if r.timed else "-"
            print(_format_row([r.op, r.dtype, r.shape, r.check, r.kernel, run], widths), flush=True)

        rows = demo.rows(ops, shape, args.seed, show, users)
    failed = [r for r in rows if not r.ok]
    print(
        f"\n{len(rows) - len(failed)} of {len(rows)} checks ok in {time.perf_counter() - start:.1f} s. "
        "'every digit': the operator's worked example reproduced to every digit it prints; '= scalar -O0 build': random data with "
        "edge values (NaN, ±inf, ±0, ±3, subnormals, the parameter) gives the same bits as the same formula "
        "compiled without vectorization or LLVM optimization (a formula's own mistakes pass it: 'reference' "
        "rows compare an --ops operator with its reference= on edge values, within its tolerance= in ulp). "
        "'compile ms': the time of the variant's compile "
        "stages (the compiler's own import, once per process, is not counted); 'disk': loaded from the compile "
        "cache in that many ms; 'cached': compiled or loaded for an earlier row."
    )
    return EXIT_OK if not failed else EXIT_ERROR


# -- aclgen cache -------------------------------------------------------------------------------


def cmd_cache(args: argparse.Namespace) -> int:
    """`aclgen cache info`: where the compile cache is, how many entries, their size;
    `aclgen cache clear`: delete the entries."""
    from aclgen import cache

    if args.action == "clear":
        n = cache.clear()
        print(f"removed {count(n, 'entry', 'entries')} from {cache.directory()}")
        return EXIT_OK
    info = cache.info()
    print(f"directory: {info['directory']}")
    print(f"entries:   {info['entries']}")
    print(f"size:      {info['bytes'] / 1024:.1f} KiB")
    counts = ("memory_hits", "disk_hits", "compiles", "rejected", "write_errors")
    if any(info[c] for c in counts):  # only a process that ran kernels has any
        print("this process: " + ", ".join(f"{c.replace('_', ' ')} {info[c]}" for c in counts))
    return EXIT_OK


# -- aclgen sdk ---------------------------------------------------------------------------------


def cmd_sdk(args: argparse.Namespace) -> int:
    from aclgen.capi.build import BuildError, sdk
    from aclgen.tools.operators import load

    start = time.perf_counter()
    for path in args.ops or ():
        load(path)  # a missing or broken module is the user's error, said before anything is written
    try:
        info = sdk(args.prefix, args.ops or ())
    except OSError as exc:
        raise UserError(f"cannot write the SDK under {args.prefix}: {exc.strerror or exc}"
                        + (f" ({exc.filename})" if exc.filename else "")) from None
    except BuildError as exc:
        raise UserError(str(exc)) from None
    root = info["root"]
    print(f"aclgen sdk: {count(len(info['operators']), 'operator')}, {count(len(info['headers']), 'header')} in {root}/include, "
          f"{os.path.relpath(info['library'], root)} behind CANN's library names "
          f"({time.perf_counter() - start:.1f} s)")
    print(f"  operators: {', '.join(info['operators'])}")
    print(f"  Python:    {info['python']}")
    print(f"\n  source {root}/set_env.sh")
    print(f"  g++ prog.cpp -I {root}/include -I {root}/include/aclnnop -I {root}/include/aclnn "
          f"-L {root}/lib64 -lopapi_nn -lopapi_math -lascendcl -lnnopbase -o prog && ./prog")
    return EXIT_OK


# -- aclgen docs --------------------------------------------------------------------------------


def cmd_docs(args: argparse.Namespace) -> int:
    """`aclgen docs`: write the operator reference (aclgen/tools/docs.py); --check: say whether
    the pages under DIR are current instead."""
    from aclgen.tools import docs

    out = args.out or docs.default_directory()
    if out is None:
        raise UserError("aclgen runs from an installed package, not a checkout: name the directory with --out DIR")
    generated = docs.pages()
    failed = docs.failed_examples(generated)
    if args.check:
        problems = docs.stale(out, generated)
        for line in problems:
            print(f"stale: {os.path.join(out, line)}")
        print(f"{count(len(generated), 'page')} in {out}: "
              + ("current" if not problems else f"{len(problems)} stale; run `aclgen docs` to rewrite them"))
        return EXIT_OK if not problems else EXIT_ERROR
    try:
        written, removed = docs.write(out, generated)
    except OSError as exc:
        raise UserError(f"cannot write the operator reference under {out}: {exc.strerror or exc}") from None
    print(f"aclgen docs: {count(len(written), 'page')} in {out}"
          + (f" (removed {', '.join(removed)})" if removed else ""))
    if failed:  # the pages are written (they say why); the operator needs a worked example
        print(f"aclgen docs: the example of {', '.join(n.removesuffix('.md') for n in failed)} failed: give "
              "the declaration a worked example (examples=) that runs", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


# -- the parser ---------------------------------------------------------------------------------

OP_HELP = "operator: a built-in's name (hardswish_backward, HardswishBackward) or FILE.py:NAME (see `aclgen ops`)"


def build_parser() -> argparse.ArgumentParser:
    from aclgen.kernel import STAGES

    p = argparse.ArgumentParser(
        prog="aclgen",
        description="Compile elementwise operator formulas to native kernels, inspect every stage, run them.",
        epilog="Set ACLGEN_DEBUG=1 to see Python tracebacks. Settings: ACLGEN_* variables (see docs/settings.md).",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    s = sub.add_parser("ops", help="list the operators, their signatures and dtypes per SoC profile",
                       description="List the built-in operators, then those each FILE.py declares.")
    s.add_argument("files", nargs="*", metavar="FILE.py", help="a Python module declaring operators with @aclgen.operator")
    s.set_defaults(func=cmd_ops)

    s = sub.add_parser(
        "compile",
        help="compile one variant of an operator and print a stage",
        description="Compile one kernel variant (dtypes, rank, per-operand layout) and print one stage.",
    )
    s.add_argument("op", help=OP_HELP)
    s.add_argument("--dtype", required=True, help="dtype of every input, or a comma list, one per kernel input (outputs follow the operator's result dtype)")
    s.add_argument("--emit", default="llvm", choices=STAGES, metavar="STAGE", help=f"stage to print (default llvm): {', '.join(STAGES)}")
    s.add_argument("--print-ir-after-all", action="store_true", help="print the trace, the ew IR and the IR after every pass, then the --emit stage")
    s.add_argument("--rank", type=int, default=1, help="iteration-space rank after dim merging (default 1)")
    s.add_argument("--layout", default=Layout.CONTIGUOUS, help=f"{', '.join(Layout)} for the inputs, or a comma list per operand (inputs then outputs; default {Layout.CONTIGUOUS})")
    s.add_argument("--width", type=int, help="vector width in lanes (default: ACLGEN_VECTOR_WIDTH, 0 = host native)")
    s.add_argument("--tile-size", type=int, help="elements per tile (default: ACLGEN_TILE_SIZE)")
    s.add_argument("--noalias", action="store_true", help="mark pointer arguments noalias")
    s.add_argument("--timing", action="store_true", help="print the time of each stage to stderr")
    s.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    s.set_defaults(func=cmd_compile)

    # `aclgen opt` is xdsl-opt: main() hands it everything after `opt` before this parser runs
    # (argparse cannot forward leading options such as `--help` or `-p`); listed here for `-h`.
    s = sub.add_parser("opt", add_help=False, help="run a pass pipeline on textual IR (xdsl-opt with our dialects and passes; see `aclgen opt --help`)")
    s.add_argument("argv", nargs=argparse.REMAINDER)
    s.set_defaults(func=lambda args: cmd_opt(args.argv))

    s = sub.add_parser(
        "run",
        help="run an operator on random data, check it and time it",
        description="Run an operator's Python function on random data (normal * 4 with NaN, ±inf, ±0, "
        "±3, subnormals and the parameter's value sprinkled in; integers span the type's range) and "
        "report: MAX ERROR = max |out - ref| over the elements, and how many elements differ, where ref "
        "is the same formula compiled as a scalar, unoptimized kernel (no vectorization, one tile, LLVM "
        "-O0). It checks tiling, vectorization, tails and LLVM's optimizer, not the formula itself; the "
        "formula is checked against the operators' worked examples by `aclgen demo` and against an independent "
        "reference by the test suite. Exits 1 if any element differs.",
    )
    s.add_argument("op", help=OP_HELP)
    s.add_argument("--shape", default="1024x1024", help="the output's shape, e.g. 1024x1024 (SwiGluGrad: x's; yGrad's last dim is halved)")
    s.add_argument("--dtype", default="float32", help="dtype of every tensor (default float32)")
    s.add_argument("--param", action="append", metavar="NAME=VALUE", help="scalar parameter (default 0.5 each)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--seconds", type=float, default=0.5, help="timing budget (median of the calls made in it)")
    s.add_argument("--soc", help="SoC profile whose dtype list applies (default: ACLGEN_SOC_VERSION)")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser(
        "demo",
        help="compile every operator, check its examples and every dtype, print a table",
        description="Compile every built-in operator (and those of --ops FILE.py), reproduce their worked "
        "examples, run every dtype of the SoC profile on random data against the scalar "
        "-O0 build (see `aclgen run -h`), and compare each --ops operator with its reference= on edge "
        "values (±0, ±inf, NaN, subnormals, the boundaries its formula compares with) within its "
        "tolerance=, print a table. Exits 1 on any mismatch.",
    )
    s.add_argument("--shape", default="1000x1002", help="random data shape (default 1000x1002: not a multiple of the vector width)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--soc", help="SoC profile (default: ACLGEN_SOC_VERSION or Ascend910B)")
    s.add_argument("--ops", action="append", metavar="FILE.py", help="also a module's own operators")
    s.add_argument("--only", metavar="NAMES", help="only these operators (comma list of Python or aclnn names)")
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser(
        "cache",
        help="show or clear the on-disk compile cache (ACLGEN_CACHE_DIR)",
        description="info: the cache directory, number of entries and their size. clear: delete every entry.",
    )
    s.add_argument("action", choices=("info", "clear"))
    s.set_defaults(func=cmd_cache)

    s = sub.add_parser(
        "sdk",
        help="write CANN's C headers and libraries over aclgen (C and C++ programs build against DIR)",
        description="Lay out CANN's install tree under DIR: include/ (acl/acl.h, aclnn/, aclnnop/aclnn_<op>.h "
        "per operator), lib64/ (libascendcl.so, libnnopbase.so, libopapi_nn.so, libopapi_math.so, ... over "
        "one library that runs aclgen's runtime in this Python) and set_env.sh. Programs written for CANN's "
        "aclnn API compile unchanged with CANN's g++ line or CMake route and run after `source DIR/set_env.sh`.",
    )
    s.add_argument("--prefix", required=True, metavar="DIR", help="the install root (created if missing)")
    s.add_argument("--ops", action="append", metavar="FILE.py", help="also the operators a module declares (repeatable)")
    s.set_defaults(func=cmd_sdk)

    s = sub.add_parser(
        "docs",
        help="write the operator reference: one Markdown page per built-in operator, and an index",
        description="Write the operator reference from the registry: per built-in operator its C declarations, "
        "parameters, dtypes per SoC profile, checks and status codes, formula, reference and bound, and an "
        "example run now; an index by family and CANN folder with every API of CANN's activation doc pages "
        "and its status. Pages of operators no longer declared are removed.",
    )
    s.add_argument("--out", metavar="DIR", help="where to write (default: the checkout's docs/operators)")
    s.add_argument("--check", action="store_true", help="write nothing: list the stale pages, exit 1 if any")
    s.set_defaults(func=cmd_docs)

    from aclgen.tools.bench import add_subcommand as add_bench  # `aclgen bench`: its options live there
    from aclgen.tools.tune import add_subcommand as add_tune

    add_bench(sub)
    add_tune(sub)
    return p


def _user_errors() -> tuple[type[BaseException], ...]:
    """Exceptions whose message is meant for the user (printed as one line)."""
    from aclgen.declaration import DeclarationError
    from aclgen.frontend import FormulaError
    from aclgen.kernel import CompileError
    from aclgen.knobs import KnobError
    from aclgen.runtime.errors import OperatorError

    return (UserError, CompileError, FormulaError, OperatorError, DeclarationError, KnobError)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        if argv[:1] == ["opt"]:  # xdsl-opt parses its own arguments (see build_parser)
            return cmd_opt(argv[1:])
        parser = build_parser()
        args = parser.parse_args(argv)
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `aclgen compile ... | head`: the reader left; not an error of ours.
        with contextlib.suppress(Exception):
            sys.stdout = open(os.devnull, "w")
        return EXIT_OK
    except Exception as exc:
        if debug():
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        try:
            known = isinstance(exc, _user_errors())
        except Exception:  # the package itself failed to import
            known = False
        if isinstance(exc, Diagnostic):
            print(first, file=sys.stderr)
        elif isinstance(exc, MemoryError):  # what was asked for (`bench --sizes`, a shape) does not fit
            print(f"aclgen: error: out of memory: {first}", file=sys.stderr)
        elif known:
            from aclgen.frontend import FormulaError

            # a formula's error quotes the user's line(s) under its first: print them all
            text = str(exc).strip() if isinstance(exc, FormulaError) else first
            print(f"aclgen: error: {text}", file=sys.stderr)
        else:
            print(f"aclgen: internal error: {type(exc).__name__}: {first} (ACLGEN_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
