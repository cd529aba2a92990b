"""`aclgen demo`: every registered operator's worked examples, then every dtype of the SoC
profile on random data against the scalar -O0 build (aclgen.tools.run), then a user's operators
against their `reference=` on edge values (aclgen.tools.accuracy), one row per check."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from aclgen import cache
from aclgen.declaration import Example, Operator
from aclgen.knobs import knobs
from aclgen.runtime.function import function_of
from aclgen.tools import accuracy
from aclgen.tools.run import compare_all, input_shapes, make_case, reference, time_calls


def show_shape(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def _printed_tolerance(text: str) -> float:
    """Half a unit in the last printed digit ("4.4" -> 0.05, "7" -> 0: exact)."""
    mantissa = text.lower().split("e")[0]
    if "." not in mantissa:
        return 0.0 if "e" not in text.lower() else 0.5 * 10.0 ** int(text.lower().split("e")[1])
    return 0.5 * 10.0 ** -len(mantissa.split(".")[1])


def check_example(out: np.ndarray, expected: Sequence[str], rtol: float = 0.0) -> str | None:
    """None if `out` reproduces the printed values (every digit, or within `rtol`), else a
    short description of the mismatch."""
    got = np.asarray(out).astype(np.float64).ravel()
    if got.size != len(expected):
        return f"{got.size} values, expected {len(expected)}"
    bad = []
    for i, (g, text) in enumerate(zip(got, expected)):
        want = float(text)
        tol = _printed_tolerance(text) if not rtol else rtol * abs(want) + 1e-6
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
    compile_ms: float | None  # the variant's compile stages (None: not compiled for this row)
    load_ms: float | None  # its load from the disk cache (None: not loaded for this row)
    run_us: float
    ok: bool
    timed: bool = True  # False: a check without a timing (a reference row)

    @property
    def kernel(self) -> str:
        """How the row's variant came: its compile time, its load time, or "cached" (an earlier row's)."""
        if not self.timed:
            return "-"
        if self.compile_ms is not None:
            return f"{self.compile_ms:.1f}"
        return "cached" if self.load_ms is None else f"disk {self.load_ms:.1f}"


def _first_call(fn, args: Sequence, out=None) -> tuple[object, float | None, float | None]:
    """The first call's result, and the compile time (its stages: not the compiler's one-time
    import) or the disk load time of its variant when this call made or loaded it, in ms."""
    before = dict(cache.stats)
    result = fn(*args, out=out)
    compiled, loaded = (cache.stats[k] > before[k] for k in ("compiles", "disk_hits"))
    if not compiled and not loaded:
        return result, None, None
    kernels = fn.kernels_for(*args, out=out)
    if compiled:
        return result, sum(v for k in kernels for s, v in k.seconds.items() if s != "cache-load") * 1e3, None
    return result, None, sum(k.seconds.get("cache-load", 0.0) for k in kernels) * 1e3


def example_row(op: Operator, ex: Example) -> Row:
    fn = function_of(op)
    out, compile_ms, load_ms = _first_call(fn, ex.args)
    outs = out if isinstance(out, tuple) else (out,)
    run_s = time_calls(lambda: fn(*ex.args), budget_s=0.05)
    values = np.concatenate([np.asarray(o).ravel() for o in outs])
    problem = check_example(values, ex.expected, ex.rtol)
    kind = "every digit" if not ex.rtol else f"rtol {ex.rtol:g}"
    check = f"example ok ({kind})" if problem is None else f"example MISMATCH: {problem}"
    dtype = str(np.asarray(outs[0]).dtype)
    first = np.asarray(outs[0])
    return Row(op.python_name, dtype, show_shape(first.shape), check, compile_ms, load_ms, run_s * 1e6,
               problem is None)


def random_row(op: Operator, shape: tuple[int, ...], dtype, rng: np.random.Generator) -> Row:
    case = make_case(op, shape, dtype, rng)
    _, compile_ms, load_ms = _first_call(function_of(op), case.args, case.out_arg)
    run_s = time_calls(case.call, budget_s=0.1, max_calls=50)
    err, bad = compare_all(case.outs, reference(case))
    check = "= scalar -O0 build" if bad == 0 else f"{bad} differ from scalar -O0 build, max error {err:g}"
    return Row(op.python_name, dtype.name, show_shape(case.out.shape), check, compile_ms, load_ms, run_s * 1e6,
               bad == 0)


def reference_rows(op: Operator) -> list[Row]:
    """`op` against its `reference=` on edge values, a row per dtype (or row of its dtype
    combinations): the worst error in ulp of the output dtype, within `op.tolerance`. An operator
    without a reference gets one row that says so: the -O0 build shares its formula's mistakes
    (select(x > 0, x, 0) is 0 at NaN, unlike torch.relu)."""
    if op.reference is None:
        return [Row(op.python_name, "-", "-", "no reference= to compare with", None, None, 0.0, True, False)]
    out = []
    for case in accuracy.dtype_cases(op):
        findings = accuracy.check(op, case if "+" not in case else tuple(case.split("+")))
        worst = max(findings, key=lambda f: f.ulp)
        ok = worst.ulp <= op.tolerance
        check = (f"reference: {worst.ulp:.2g} <= {op.tolerance:g} ulp" if ok else
                 f"reference: {worst} > {op.tolerance:g}")
        out.append(Row(op.python_name, case.split("+")[0], "edges", check, None, None, 0.0, ok, False))
    return out


def fitting_shape(op: Operator, shape: tuple[int, ...]) -> tuple[int, ...]:
    """`shape`, else the first shape near it that `op` can make: the last dim one larger (SwiGluGrad
    splits it in two even halves), then as many elements in rows of 256 (FatreluMul's tiling takes
    a last dim of at most 1024 before the split)."""
    candidates = [shape, (*shape[:-1], shape[-1] + 1) if shape else (2,), (max(1, math.prod(shape) // 256), 256)]
    for candidate in candidates:
        try:
            input_shapes(op, candidate)
        except ValueError:
            continue
        return candidate
    return shape  # its rows then show what it refuses


def rows(ops: Sequence[Operator], shape: tuple[int, ...], seed: int, progress: Callable[[Row], None],
         referenced: Sequence[Operator] = ()) -> list[Row]:
    """Every operator's examples, then every dtype of the SoC profile on random data of `shape`
    (for an operator that cannot make outputs of `shape`, the last dim one larger), then each of
    `referenced` against its reference."""
    out: list[Row] = []

    def add(row: Row) -> None:
        out.append(row)
        progress(row)

    for op in ops:
        for ex in op.examples:
            add(example_row(op, ex))
    rng = np.random.default_rng(seed)
    soc = knobs().soc_version
    for op in ops:
        op_shape = fitting_shape(op, shape)
        for dtype in op.supported(soc):
            add(random_row(op, op_shape, dtype, rng))
    for op in referenced:
        for row in reference_rows(op):
            add(row)
    return out
