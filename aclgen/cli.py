"""The `aclgen` command: list, compile, inspect, run and demo the operators.

    aclgen ops                                         operators, signatures, dtypes per SoC
    aclgen compile OP --dtype D [--emit STAGE]         print one stage of a compiled variant
    aclgen opt FILE.mlir -p 'pass,pass{k=v}'           run our passes on textual IR
    aclgen run OP --shape 1024x1024 --dtype D          check against a reference and time it
    aclgen demo                                        all five operators, every dtype, a table
    aclgen cache info|clear                            the on-disk compile cache
    aclgen bench [OP...] [--sizes 1K,1M] [--json F]    time against numpy/torch/numba, triad, targets

Errors a user can act on print one line (`aclgen: error: ...`) and exit 1; set ACLGEN_DEBUG=1
to get the Python traceback instead.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from aclgen.knobs import overridden

EXIT_OK, EXIT_ERROR = 0, 1
_PASS_STAGES_EXCLUDED = ("dsl", "ew", "llvm-dialect", "llvm-ir", "llvm", "asm")


class UserError(Exception):
    """A mistake on the command line or in the input; printed as one line, no traceback."""


class Diagnostic(UserError):
    """An error in an input file, already formatted as `file:line:col: error: message`."""


# -- helpers shared by the subcommands ---------------------------------------------------------


def _operator(name: str):
    from aclgen.ops import OPERATORS

    key = name.replace("-", "_")
    if key not in OPERATORS:
        # Accept CANN's names too: HardswishBackward, aclnnHardswishBackward.
        by_aclnn = {op.aclnn.lower(): op for op in OPERATORS.values()}
        op = by_aclnn.get(name.lower().removeprefix("aclnn"))
        if op is None:
            raise UserError(f"unknown operator {name!r}; known: {', '.join(OPERATORS)}")
        return op
    return OPERATORS[key]


def _dtypes(op, spec: str) -> tuple:
    """`--dtype float16` (every input) or `float16,float32` (one per input)."""
    from aclgen import dtypes as dt

    names = [s.strip() for s in spec.split(",")]
    try:
        ds = [dt.dtype(n) for n in names]
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if len(ds) == 1:
        ds = ds * len(op.inputs)
    if len(ds) != len(op.inputs):
        raise UserError(f"{op.name} has {len(op.inputs)} inputs ({', '.join(op.inputs)}); got {len(ds)} dtypes")
    allowed = op.all_dtypes()
    for d in ds:
        if d not in allowed:
            raise UserError(f"{op.name} does not support {d.name} (supported: {', '.join(a.name for a in allowed)})")
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


def _show_shape(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"



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


# -- aclgen ops ---------------------------------------------------------------------------------


def cmd_ops(args: argparse.Namespace) -> int:
    import inspect

    import aclgen.ops as ops

    for op in ops.OPERATORS.values():
        doc = (sys.modules[op.formula.__module__].__doc__ or op.signature).strip().splitlines()[0]
        entry = getattr(ops, op.name)
        print(f"{op.name}{inspect.signature(entry)}")
        print(f"    {doc}")
        print(f"    kernel: ({', '.join(op.inputs)}{''.join(', ' + p.name for p in op.params)}) -> ({', '.join(op.outputs)})")
        groups: dict[tuple[str, ...], list[str]] = {}
        for soc, names in op.dtypes.items():
            groups.setdefault(tuple(names), []).append(soc)
        for names, socs in groups.items():
            print(f"    {', '.join(socs)}: {', '.join(names) if names else '(none)'}")
    return EXIT_OK


# -- aclgen compile -----------------------------------------------------------------------------


def _variant(op, dtypes: tuple, rank: int, layout: str):
    from aclgen import dtypes as dt
    from aclgen.compiler import Variant

    n_in, n_out = len(op.inputs), len(op.outputs)
    out = dtypes[0] if len(set(dtypes)) == 1 else dt.float32  # SoftshrinkBackward's promotion
    layouts = [s.strip() for s in layout.split(",")]
    if len(layouts) == 1:
        # One layout names the inputs'; outputs are contiguous unless everything is strided.
        lay = layouts[0]
        layouts = [lay] * n_in + ["strided" if lay == "strided" else "contiguous"] * n_out
    if len(layouts) != n_in + n_out:
        raise UserError(f"--layout: give one layout or {n_in + n_out} (inputs then outputs), got {len(layouts)}")
    for lay in layouts:
        if lay not in ("contiguous", "strided", "broadcast"):
            raise UserError(f"--layout: {lay!r} is not one of contiguous, strided, broadcast")
    if rank < 1:
        raise UserError("--rank must be >= 1 (the launcher merges a 0-d tensor into rank 1)")
    return Variant(tuple(dtypes), (out,) * n_out, rank, tuple(layouts))


def cmd_compile(args: argparse.Namespace) -> int:
    from aclgen.compiler import Options, compile_variant

    op = _operator(args.op)
    variant = _variant(op, _dtypes(op, args.dtype), args.rank, args.layout)
    overrides = {}
    if args.width is not None:
        overrides["width"] = args.width
    if args.tile_size is not None:
        overrides["tile_size"] = args.tile_size
    if args.noalias:
        overrides["noalias"] = True
    options = Options.from_knobs(**overrides)
    kernel = compile_variant(op.formula, op.name, variant, op.params, op.arg_names, options)
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


def _diagnostic(exc: Exception, filename: str) -> str:
    """One line for a parse/verify/pass failure."""
    from xdsl.utils.exceptions import ParseError

    if isinstance(exc, ParseError):
        where = str(exc).splitlines()[0] if str(exc) else filename
        return f"{where}: error: {exc.msg}"
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{filename}: error: {' '.join(lines) or type(exc).__name__}"


class PassError(Exception):
    """A pass failed or left IR that does not verify; the message names the pass."""


def _run_opt(text: str, filename: str, spec: str, after_all: bool, out: list[str]) -> None:
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import DiagnosticException

    from aclgen.passes import pipeline

    running = [""]  # the pass being applied, for the error message

    def after(prev, module, nxt) -> None:
        running[0] = nxt.name if nxt is not None else ""
        if prev is None:
            return
        try:
            module.verify()
        except DiagnosticException as exc:
            raise PassError(f"in pass {prev.name}: the output does not verify: {exc}") from exc
        if after_all:
            out.append(_header(f"IR Dump After {prev.name}") + str(module) + "\n")

    ctx = pipeline.context()
    try:
        passes = pipeline.parse(spec, after) if spec.strip() else None
    except ValueError as exc:
        raise UserError(f"bad pass pipeline {spec!r}: {exc}") from None
    module = Parser(ctx, text, filename).parse_module()
    module.verify()
    if passes is not None:
        try:
            passes.apply(ctx, module)
        except PassError:
            raise
        except Exception as exc:
            raise PassError(f"in pass {running[0]}: {type(exc).__name__}: {exc}") from exc
    out.append(str(module) + "\n")


def cmd_opt(args: argparse.Namespace) -> int:
    from xdsl.utils.exceptions import DiagnosticException, ParseError

    if args.file == "-":
        text, filename = sys.stdin.read(), "<stdin>"
    else:
        try:
            with open(args.file) as f:
                text = f.read()
        except OSError as exc:
            raise UserError(f"cannot read {args.file}: {exc.strerror}") from None
        filename = args.file
    chunks = _split(text) if args.split_input_file else [text]
    outputs: list[str] = []
    status = EXIT_OK
    for chunk in chunks:
        out: list[str] = []
        try:
            _run_opt(chunk, filename, args.passes, args.print_ir_after_all, out)
        except UserError:
            raise
        except (ParseError, DiagnosticException, PassError) as exc:
            message = _diagnostic(exc, filename)
            if not args.verify_diagnostics:
                raise Diagnostic(message) from exc
            out = [message + "\n"]
        outputs.append("".join(out))
    _write("// -----\n".join(outputs), args.output)
    return status


def _split(text: str) -> list[str]:
    """`--split-input-file`: chunks separated by a line `// -----`, line numbers kept."""
    chunks, current, start = [], [], 0
    for line in text.splitlines(keepends=True):
        if line.strip() == "// -----":
            chunks.append("\n" * start + "".join(current))
            start += len(current) + 1
            current = []
        else:
            current.append(line)
    chunks.append("\n" * start + "".join(current))
    return chunks


# -- aclgen run ---------------------------------------------------------------------------------

# The reference build: the same formula with no vectorization, no LLVM optimization and one tile,
# so it shares nothing with the fast build but the traced formula and dtype legalization.
REFERENCE_ENV = {"ACLGEN_VECTOR_WIDTH": "1", "ACLGEN_OPT_LEVEL": "0", "ACLGEN_TILE_SIZE": str(1 << 40)}
DEFAULT_PARAMS = {"lambd": 0.5, "threshold": 0.5}


@dataclass
class Case:
    """One call of an operator's numpy entry point."""

    op: object
    args: list  # positional arguments of the entry point (tensors and scalars)
    out: np.ndarray  # pre-allocated output (passed as out=)

    def call(self) -> np.ndarray:
        import aclgen.ops as ops

        return getattr(ops, self.op.name)(*self.args, out=self.out)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.args if isinstance(a, np.ndarray)) + self.out.nbytes


def _random(shape: tuple[int, ...], dtype, rng: np.random.Generator, specials: Sequence[float]) -> np.ndarray:
    """Random values around the operators' interesting range, with edge values sprinkled in."""
    n = int(np.prod(shape))
    if dtype.is_float:
        a = (rng.standard_normal(n) * 4).astype(np.float32)
        if n:
            edges = np.array(
                [0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, -3.0, 1e-40, -1e-40, *specials, *(-s for s in specials)],
                dtype=np.float32,
            )
            k = min(n, max(len(edges), n // 100))
            a[rng.choice(n, k, replace=False)] = rng.choice(edges, k)
        return a.astype(dtype.np_dtype).reshape(shape)
    info = np.iinfo(dtype.np_dtype)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    a = rng.integers(lo, hi, n, endpoint=True, dtype=np.int64)
    if n >= 2:
        a[:2] = info.min, info.max
    return a.astype(dtype.np_dtype).reshape(shape)


def make_case(op, shape: tuple[int, ...], dtype, rng: np.random.Generator, params: dict | None = None) -> Case:
    """Random inputs for `op` in `dtype`; for SwiGluGrad `shape` is x's (the last dim is split)."""
    params = {**DEFAULT_PARAMS, **(params or {})}
    specials = [params.get(p.name, 0.5) for p in op.params]
    if op.name == "swi_glu_grad":
        if not shape or shape[-1] % 2:
            raise UserError(f"swi_glu_grad splits the last dim of x in halves: it must be even, got {_show_shape(shape)}")
        x = _random(shape, dtype, rng, specials)
        g = _random((*shape[:-1], shape[-1] // 2), dtype, rng, specials)
        return Case(op, [g, x, -1], np.empty(shape, dtype.np_dtype))
    tensors = [_random(shape, dtype, rng, specials) for _ in op.inputs]
    scalars = [params.get(p.name, 0.5) for p in op.params]
    return Case(op, [*tensors, *scalars], np.empty(shape, dtype.np_dtype))


def compare(out: np.ndarray, ref: np.ndarray) -> tuple[float, int]:
    """(max |out - ref|, number of elements whose value differs); NaN = NaN, +0 != -0."""
    a, b = out.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    both_nan = np.isnan(a) & np.isnan(b)
    same = ((a == b) & (np.signbit(a) == np.signbit(b))) | both_nan
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - b)  # inf - inf is NaN: counted as inf below
    diff[both_nan | (a == b)] = 0.0
    diff[np.isnan(diff)] = np.inf  # NaN on one side only
    return (float(diff.max()) if diff.size else 0.0), int((~same).sum())


def reference(case: Case) -> np.ndarray:
    """The case computed by the scalar, unoptimized build of the same formula (REFERENCE_ENV)."""
    ref = Case(case.op, case.args, np.empty_like(case.out))
    with overridden(**REFERENCE_ENV):
        return ref.call()


def time_calls(fn: Callable[[], object], budget_s: float = 0.25, min_calls: int = 5, max_calls: int = 200) -> float:
    """Median seconds per call of `fn` (already warmed up)."""
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < min_calls or (len(times) < max_calls and time.perf_counter() - start < budget_s):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cmd_run(args: argparse.Namespace) -> int:
    from aclgen import dtypes as dt

    op = _operator(args.op)
    dtype = _dtypes(op, args.dtype)[0]
    shape = _shape(args.shape)
    params = {}
    for item in args.param or []:
        name, _, value = item.partition("=")
        if name not in {p.name for p in op.params}:
            raise UserError(f"{op.name} has no parameter {name!r} (parameters: {', '.join(p.name for p in op.params) or 'none'})")
        try:
            params[name] = float(value)
        except ValueError:
            raise UserError(f"--param {item!r}: {value!r} is not a number") from None
    with overridden(ACLGEN_SOC_VERSION=args.soc) if args.soc else contextlib.nullcontext():
        case = make_case(op, shape, dtype, np.random.default_rng(args.seed), params)
        t = time.perf_counter()
        out = case.call()
        first = time.perf_counter() - t
        ref = reference(case)
        err, bad = compare(out, ref)
        median = time_calls(case.call, budget_s=args.seconds)
    gbs = case.nbytes / median / 1e9 if median > 0 else float("inf")
    print(f"{op.name} {dt.dtype(dtype).name} {_show_shape(shape)}")
    print(f"  max error   {err:g}  ({bad} of {out.size} elements differ from the scalar -O0 build)")
    print(f"  first call  {first * 1e3:.1f} ms (includes compiling the variant)")
    print(f"  median      {median * 1e6:.1f} us  ({gbs:.2f} GB/s moved)")
    return EXIT_OK if bad == 0 else EXIT_ERROR


# -- aclgen demo --------------------------------------------------------------------------------

# SPEC.md §4 examples: (operator, entry-point arguments, expected output as SPEC prints it, shape).
def spec_examples() -> list[tuple[str, list, list[str], tuple[int, ...]]]:
    f = np.float32
    ar = np.arange
    row_a = [str(644 + 61 * k + k * (k - 1)) for k in range(16)]  # "644, 705, ..., 1769 (step grows by 2)"
    row_b = [str(420 + 45 * k + k * (k - 1)) for k in range(16)]  # "420, 465, ..., 1305"
    swiglu = (
        "2.541959 -1.0849423 0 15.770399 39.268234 62.021935 84.21317 107.78748 "
        "133.62709 161.87914 192.45053 225.22208 260.10623 297.0496 336.0227 377.01022 "
        "0.47681168 0.26894143 0 0.7310586 3.5231884 8.573167 15.71222 24.832678 "
        "35.910984 48.955357 63.97854 80.990005 99.99546 120.99798 143.99911 168.99962"
    ).split() + row_a + row_b
    return [
        (
            "hardswish_backward",
            [ar(8, dtype=f).reshape(4, 2), ar(8, dtype=f).reshape(4, 2)],
            "0 0.8333334 2.3333335 4.5 4 5 6 7".split(),
            (4, 2),
        ),
        (
            "selu_backward",
            [np.ones((4, 2), f), np.array([-2, -1, 0, 1, 2, 3, -0.5, 0.5], f).reshape(4, 2)],
            "-0.2419007 0.7580993 1.7580993 1.050701 1.050701 1.050701 1.2580993 1.050701".split(),
            (4, 2),
        ),
        (
            "softshrink_backward",
            [ar(8, dtype=f).reshape(4, 2), np.array([1, 1, 1, 2, 1, 2, 3, 3], f).reshape(4, 2), 1.2],
            "0 0 0 3 0 5 6 7".split(),
            (4, 2),
        ),
        ("swi_glu_grad", [ar(-2, 30, dtype=f).reshape(2, 16), ar(-2, 62, dtype=f).reshape(2, 32), -1], swiglu, (2, 32)),
        (
            "threshold_backward",
            [np.array([4.5, 4.4, 4.3, 4.2], f).reshape(2, 2), np.array([0.2, 1.2, 2.2, 3.2], f).reshape(2, 2), 1.0],
            "0 4.4 4.3 4.2".split(),
            (2, 2),
        ),
    ]


# SPEC.md prints the examples' values rounded to 7-8 significant digits. The exact operators must
# match every printed digit (integers exactly); SwiGluGrad's values come from hardware whose exp
# is not exact (§4.4 holds it to a bound, not bits), so it must agree to 1e-5 relative.
SWIGLU_EXAMPLE_RTOL = 1e-5


def _printed_tolerance(text: str) -> float:
    """Half a unit in the last printed digit ("4.4" -> 0.05, "7" -> 0: exact)."""
    mantissa = text.lower().split("e")[0]
    if "." not in mantissa:
        return 0.0 if "e" not in text.lower() else 0.5 * 10.0 ** int(text.lower().split("e")[1])
    return 0.5 * 10.0 ** -len(mantissa.split(".")[1])


def check_example(out: np.ndarray, expected: Sequence[str], exact: bool) -> str | None:
    """None if `out` reproduces the printed example, else a short description of the mismatch."""
    got = out.astype(np.float64).ravel()
    if got.size != len(expected):
        return f"{got.size} values, expected {len(expected)}"
    bad = []
    for i, (g, text) in enumerate(zip(got, expected)):
        want = float(text)
        tol = _printed_tolerance(text) if exact else SWIGLU_EXAMPLE_RTOL * abs(want) + 1e-6
        if not abs(g - want) <= tol * (1 + 1e-9):
            bad.append(i)
    if not bad:
        return None
    i = bad[0]
    return f"element {i}: got {float(got[i])!r}, expected {expected[i]} ({len(bad)} differ)"


@dataclass
class Row:
    op: str
    dtype: str
    shape: str
    check: str
    compile_ms: float | None  # None: served by a variant compiled earlier in this run
    run_us: float
    ok: bool


def _timed_first(case: Case) -> tuple[np.ndarray, float | None]:
    """First call, and its compile time if it compiled a new variant (first call - median call)."""
    from aclgen.ops.operator import kernel_cache

    before = len(kernel_cache)
    t = time.perf_counter()
    out = case.call()
    first = time.perf_counter() - t
    return out, (first if len(kernel_cache) > before else None)


def demo_rows(shape: tuple[int, ...], seed: int, progress: Callable[[Row], None]) -> list[Row]:
    from aclgen.knobs import knobs
    from aclgen.ops import OPERATORS

    rows: list[Row] = []

    def add(row: Row) -> None:
        rows.append(row)
        progress(row)

    for name, args, expected, ex_shape in spec_examples():
        op = OPERATORS[name]
        exact = name != "swi_glu_grad"
        case = Case(op, args, np.empty(ex_shape, np.float32))
        out, compile_s = _timed_first(case)
        run_s = time_calls(case.call, budget_s=0.05)
        problem = check_example(out, expected, exact)
        kind = "every digit" if exact else f"rtol {SWIGLU_EXAMPLE_RTOL:g}"
        check = f"SPEC example ok ({kind})" if problem is None else f"SPEC example MISMATCH: {problem}"
        compile_ms = None if compile_s is None else (compile_s - run_s) * 1e3
        add(Row(name, "float32", _show_shape(ex_shape), check, compile_ms, run_s * 1e6, problem is None))

    rng = np.random.default_rng(seed)
    soc = knobs().soc_version
    for op in OPERATORS.values():
        op_shape = shape
        if op.name == "swi_glu_grad" and (not shape or shape[-1] % 2):
            op_shape = (*shape[:-1], (shape[-1] + 1) if shape else 2)  # x's last dim splits in halves
        for dtype in op.supported(soc):
            case = make_case(op, op_shape, dtype, rng)
            out, compile_s = _timed_first(case)
            run_s = time_calls(case.call, budget_s=0.1, max_calls=50)
            err, bad = compare(out, reference(case))
            check = "= scalar -O0 build" if bad == 0 else f"{bad} differ from scalar -O0 build, max error {err:g}"
            compile_ms = None if compile_s is None else (compile_s - run_s) * 1e3
            add(Row(op.name, dtype.name, _show_shape(case.out.shape), check, compile_ms, run_s * 1e6, bad == 0))
    return rows


def _format_row(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()


def cmd_demo(args: argparse.Namespace) -> int:
    from aclgen.codegen.target import host
    from aclgen.knobs import knobs

    shape = _shape(args.shape)
    start = time.perf_counter()
    with overridden(ACLGEN_SOC_VERSION=args.soc) if args.soc else contextlib.nullcontext():
        soc = knobs().soc_version
        h = host()
        print(f"aclgen demo: host {h.cpu} ({h.f32_lanes} x f32 lanes), SoC profile {soc}, random shape {_show_shape(shape)}")
        heads = ("operator", "dtype", "shape", "check", "compile ms", "run us")
        widths = (19, 8, 9, 34, 10, 10)
        print(_format_row(heads, widths))
        print(_format_row(["-" * w for w in widths], widths))

        def show(r: Row) -> None:
            cms = "cached" if r.compile_ms is None else f"{r.compile_ms:.1f}"
            print(_format_row([r.op, r.dtype, r.shape, r.check, cms, f"{r.run_us:.1f}"], widths), flush=True)

        rows = demo_rows(shape, args.seed, show)
    failed = [r for r in rows if not r.ok]
    print(
        f"\n{len(rows) - len(failed)} of {len(rows)} checks ok in {time.perf_counter() - start:.1f} s. "
        "'every digit': the SPEC.md §4 example reproduced to every digit SPEC prints; '= scalar -O0 build': random data with "
        "edge values (NaN, ±inf, ±0, ±3, subnormals, the parameter) gives the same bits as the same formula "
        "compiled without vectorization or LLVM optimization. 'cached': the variant was compiled for an "
        "earlier row."
    )
    return EXIT_OK if not failed else EXIT_ERROR


# -- aclgen cache -------------------------------------------------------------------------------


def cmd_cache(args: argparse.Namespace) -> int:
    """`aclgen cache info`: where the compile cache is, how many entries, their size;
    `aclgen cache clear`: delete the entries."""
    from aclgen import cache

    if args.action == "clear":
        n = cache.clear()
        print(f"removed {n} entr{'y' if n == 1 else 'ies'} from {cache.directory()}")
        return EXIT_OK
    info = cache.info()
    print(f"directory: {info['directory']}")
    print(f"entries:   {info['entries']}")
    print(f"size:      {info['bytes'] / 1024:.1f} KiB")
    counts = ("memory_hits", "disk_hits", "compiles", "rejected", "write_errors")
    if any(info[c] for c in counts):  # only a process that ran kernels has any
        print("this process: " + ", ".join(f"{c.replace('_', ' ')} {info[c]}" for c in counts))
    return EXIT_OK


# -- the parser ---------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    from aclgen.kernel import STAGES

    p = argparse.ArgumentParser(
        prog="aclgen",
        description="Compile elementwise operator formulas to native kernels, inspect every stage, run them.",
        epilog="Set ACLGEN_DEBUG=1 to see Python tracebacks. Settings: ACLGEN_* variables (see the README).",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    s = sub.add_parser("ops", help="list the operators, their signatures and dtypes per SoC profile")
    s.set_defaults(func=cmd_ops)

    s = sub.add_parser(
        "compile",
        help="compile one variant of an operator and print a stage",
        description="Compile one kernel variant (dtypes, rank, per-operand layout) and print one stage.",
    )
    s.add_argument("op", help="operator name, e.g. hardswish_backward (see `aclgen ops`)")
    s.add_argument("--dtype", required=True, help="dtype of every input, or a comma list, one per input (outputs follow; mixed inputs give float32)")
    s.add_argument("--emit", default="llvm", choices=STAGES, metavar="STAGE", help=f"stage to print (default llvm): {', '.join(STAGES)}")
    s.add_argument("--print-ir-after-all", action="store_true", help="print the trace, the ew IR and the IR after every pass, then the --emit stage")
    s.add_argument("--rank", type=int, default=1, help="iteration-space rank after dim merging (default 1)")
    s.add_argument("--layout", default="contiguous", help="contiguous, strided or broadcast for the inputs, or a comma list per operand (inputs then outputs)")
    s.add_argument("--width", type=int, help="vector width in lanes (default: ACLGEN_VECTOR_WIDTH, 0 = host native)")
    s.add_argument("--tile-size", type=int, help="elements per tile (default: ACLGEN_TILE_SIZE)")
    s.add_argument("--noalias", action="store_true", help="mark pointer arguments noalias")
    s.add_argument("--timing", action="store_true", help="print the time of each stage to stderr")
    s.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    s.set_defaults(func=cmd_compile)

    s = sub.add_parser(
        "opt",
        help="run a pass pipeline on textual IR",
        description="Parse IR (our ew/tile/llvmx dialects plus builtin, func, arith, scf, cf, math, llvm), "
        "run a pass pipeline and print the result.",
    )
    s.add_argument("file", help="input .mlir file, or - for stdin")
    s.add_argument("-p", "--passes", default="", help="pipeline, e.g. 'legalize-dtypes,tile-elementwise{tile_size=1024}'")
    s.add_argument("--print-ir-after-all", action="store_true", help="print the IR after every pass")
    s.add_argument("--verify-diagnostics", action="store_true", help="print a parse/verify/pass error to stdout and exit 0 (for filecheck tests)")
    s.add_argument("--split-input-file", action="store_true", help="handle chunks separated by '// -----' independently")
    s.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    s.set_defaults(func=cmd_opt)

    s = sub.add_parser(
        "run",
        help="run an operator on random data, check it and time it",
        description="Run an operator's numpy entry point on random data (normal * 4 with NaN, ±inf, ±0, "
        "±3, subnormals and the parameter's value sprinkled in; integers span the type's range) and "
        "report: MAX ERROR = max |out - ref| over the elements, and how many elements differ, where ref "
        "is the same formula compiled as a scalar, unoptimized kernel (no vectorization, one tile, LLVM "
        "-O0). It checks tiling, vectorization, tails and LLVM's optimizer, not the formula itself; the "
        "formula is checked against SPEC.md's examples by `aclgen demo` and against an independent "
        "reference by the test suite. Exits 1 if any element differs.",
    )
    s.add_argument("op", help="operator name (see `aclgen ops`)")
    s.add_argument("--shape", default="1024x1024", help="e.g. 1024x1024 (SwiGluGrad: x's shape; the last dim is halved)")
    s.add_argument("--dtype", default="float32", help="dtype of every tensor (default float32)")
    s.add_argument("--param", action="append", metavar="NAME=VALUE", help="scalar parameter (default lambd=0.5, threshold=0.5)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--seconds", type=float, default=0.5, help="timing budget (median of the calls made in it)")
    s.add_argument("--soc", help="SoC profile whose dtype list applies (default: ACLGEN_SOC_VERSION)")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser(
        "demo",
        help="compile all five operators, check the SPEC examples and every dtype, print a table",
        description="Compile all five operators, reproduce SPEC.md §4's examples, run every dtype of the "
        "SoC profile on random data against the scalar -O0 build (see `aclgen run -h`), print a table. "
        "Exits 1 on any mismatch.",
    )
    s.add_argument("--shape", default="1000x1002", help="random data shape (default 1000x1002: not a multiple of the vector width)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--soc", help="SoC profile (default: ACLGEN_SOC_VERSION or Ascend910B)")
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser(
        "cache",
        help="show or clear the on-disk compile cache (ACLGEN_CACHE_DIR)",
        description="info: the cache directory, number of entries and their size. clear: delete every entry.",
    )
    s.add_argument("action", choices=("info", "clear"))
    s.set_defaults(func=cmd_cache)

    from aclgen.bench import add_subcommand as add_bench  # `aclgen bench`: its options live in bench.py

    add_bench(sub)
    return p


def _user_errors() -> tuple[type[BaseException], ...]:
    """Exceptions whose message is meant for the user (printed as one line)."""
    from aclgen.compiler import CompileError
    from aclgen.frontend import FormulaError
    from aclgen.ops.entry import OperatorError

    return (UserError, CompileError, FormulaError, OperatorError)


def main(argv: Sequence[str] | None = None) -> int:
    debug = os.environ.get("ACLGEN_DEBUG", "") not in ("", "0")
    try:
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
        if debug:
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        try:
            known = isinstance(exc, _user_errors())
        except Exception:  # the package itself failed to import
            known = False
        if isinstance(exc, Diagnostic):
            print(first, file=sys.stderr)
        elif known:
            print(f"aclgen: error: {first}", file=sys.stderr)
        else:
            print(f"aclgen: internal error: {type(exc).__name__}: {first} (ACLGEN_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
