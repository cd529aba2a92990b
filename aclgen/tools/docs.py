"""`aclgen docs`: the operator reference, one Markdown page per built-in, written from the registry.

    pages()                  {file name: text}: README.md (the index) and aclnn<Name>.md per operator
    write(directory)         write them (and remove pages of operators that are gone)
    stale(directory)         what differs from what `write` would write (empty: current)

Each page says what the declaration says, in the order a C programmer reads CANN's doc pages:
the header and both phases' C declarations (aclgen/capi/abi.py, the SDK's own), the parameters,
the dtypes per SoC profile, the phase-1 checks and their codes, the formula (its module's notes,
its source), its reference and bound, and an example that is run while the page is written
(its printed output is on the page). The index lists every operator by family and CANN folder,
and every aclnn API of CANN's activation doc pages (aclgen/ops/catalog.py) with its status.

Example outputs are the only text that depends on the machine (a math function may round one
ulp differently with or without FMA): `stale` compares their numbers to 1%, everything else
exactly.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import keyword
import math
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from aclgen import dtypes as dt
from aclgen.declaration import DEFAULT_SOC, REQUIRED, SOCS, AttrKind, Example, Operator, ScalarKind, snake

ROOT = Path(__file__).resolve().parents[2]  # the checkout (when aclgen runs from one)
INDEX = "README.md"
COMMAND = "aclgen docs"
EXAMPLE_SHAPE = (2, 4)
OUTPUT_FENCE = "```text"  # example outputs: the only blocks compared loosely (see `stale`)
OUTPUT_RTOL = 1e-2

NULL, INVALID = 161001, 161002
CODES = {161001: "ACLNN_ERR_PARAM_NULLPTR", 161002: "ACLNN_ERR_PARAM_INVALID", 361001: "ACLNN_ERR_RUNTIME_ERROR",
         561002: "ACLNN_ERR_INNER_TILING_ERROR", 561103: "ACLNN_ERR_INNER_NULLPTR"}


def default_directory() -> Path | None:
    """docs/operators/ of the checkout aclgen runs from; None for an installed aclgen."""
    if (ROOT / "pyproject.toml").is_file() and (ROOT / "docs").is_dir():
        return ROOT / "docs" / "operators"
    return None


# ---------------------------------------------------------------------------------- the text


def own_words(text: str) -> str:
    """`text` (a docstring or comment written next to the code) without its pointers to documents
    outside the repository, and with paths relative to the checkout."""
    text = text.replace(str(ROOT) + os.sep, "")
    doc = r"(?:SPEC|DESIGN|C_API)(?:\.md)?(?: ?§ ?[\d.]*\d)?"
    text = re.sub(rf" ?\((?:see |as )?{doc}\)", "", text)  # "(SPEC.md §4.2)"
    text = re.sub(rf" (?:of|in|per|as|from) {doc}\b", "", text)  # "the formula of SPEC §4.4"
    text = re.sub(rf"{doc}('s)?:? ?", lambda m: "the " if m[1] else "", text)  # "SPEC §6's default", "SPEC §4.2: "
    return re.sub(r"\b([Tt]he) the\b", r"\1", text)


def _paragraphs(text: str) -> str:
    return own_words(textwrap.dedent(text).strip())


def _link(op: Operator) -> str:
    return f"[{op.api}]({op.api}.md)"


def _family(op: Operator) -> tuple[str, str]:
    parts = op.formula.__module__.split(".")
    return (parts[2], parts[3]) if len(parts) >= 4 and parts[:2] == ["aclgen", "ops"] else ("user", parts[-1])


def _source_file(op: Operator) -> str:
    return own_words(op.source[0])


def _declaration(f) -> str:
    """A C declaration, one parameter a line (as CANN's pages print them)."""
    params = ",\n".join(f"    {p.type} {p.name}" for p in f.params)
    return f"{f.returns} {f.name}(\n{params});"


def _code(language: str, text: str) -> list[str]:
    return [f"```{language}", text.rstrip("\n"), "```", ""]


def _table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in row) + " |" for row in rows]
    return [*lines, ""]


def _value(v) -> str:
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, float):
        return repr(float(np.float32(v))) if float(np.float32(v)) == v else repr(v)
    return repr(v)


# ----------------------------------------------------------------------------- the parameters


def _input_note(op: Operator, name: str) -> str:
    spec = op.tensor(name)
    notes = []
    if op.split and op.split.input == name:
        dim = f"attribute `{op.split.dim}`" if isinstance(op.split.dim, str) else f"dim {op.split.dim}"
        notes.append(f"cut in two halves along {dim} (the formula's `{op.split.into[0]}` and `{op.split.into[1]}`); "
                     f"that dim must be even")
    elif op.split:
        notes.append(f"one half of `{op.split.input}`'s shape")
    elif op.check is not None:
        pass  # the operator's own checks say which shapes go together (Checks below)
    elif op.broadcast:
        notes.append("broadcasts with the other inputs (numpy's rule)")
    elif len(op.inputs) > 1:
        notes.append(f"the shape of `{op.inputs[0]}`" if name != op.inputs[0] else "its shape is the call's")
    if spec.along is not None:
        notes.append(f"1-D, one value per element of dim {spec.along} of the others (or one value)")
    if spec.optional:
        seen = "the formula receives None" if spec.default is None else f"the formula uses {_value(spec.default)}"
        notes.append(f"optional: NULL (None) means {seen}")
    if op.inplace == name:
        notes.append(f"{op.inplace_api} takes it as `{name}Ref` and writes the result into it")
    return "; ".join(notes)


def _output_note(op: Operator, name: str) -> str:
    spec = op.tensor(name)
    notes = []
    if op.split and name in op.split.whole:
        notes.append(f"the shape of `{op.split.input}` (both halves)")
    elif name in _reduced(op) and not spec.keepdims:
        notes.append("made by reductions: the call's shape without the reduced dims")
    elif name in _reduced(op):
        notes.append("made by reductions: the call's shape with the reduced dims 1")
    elif op.split:
        notes.append(f"one half of `{op.split.input}`'s shape")
    elif op.check is not None:
        notes.append("the call's shape (Checks below)")
    else:
        notes.append("the broadcast shape of the inputs" if op.broadcast else f"the shape of `{op.inputs[0]}`")
    notes.append(f"dtype {spec.dtype}" if spec.dtype else "its column of the dtype combinations" if op.combinations
                 else "the inputs' dtype" if op.promote is None else "the promoted dtype (see Dtypes)")
    if spec.optional:
        notes.append("optional: NULL (None) writes nothing")
    return "; ".join(notes)


def _reduced(op: Operator) -> set[str]:
    """The outputs the formula makes from reductions (their reduced dims are 1)."""
    return {n for n, row in zip(op.kernel_outputs, op.graph.row_results()) if row}


def _scalar_note(s) -> str:
    read = ("read as float32; next to integer tensors truncated to an exact integer"
            if s.kind is ScalarKind.LIKE_INPUT else "read as float32")
    notes = [read]
    if s.optional:
        notes.append(f"optional: NULL (None) means {_value(s.default)}")
    if s.default is not REQUIRED:
        notes.append(f"Python default {_value(s.default)}")
    return "; ".join(notes)


def _attr_note(op: Operator, a) -> str:
    notes = []
    if a.choices:
        notes.append("one of " + ", ".join(f'`"{c}"`' for c in a.choices))
    if op.split and op.split.dim == a.name:
        notes.append(f"the dim `{op.split.input}` is split along (negative counts from the end)")
    notes.append("a compile-time constant of the formula" if not (op.split and op.split.dim == a.name) else "")
    if a.default is not REQUIRED:
        notes.append(f"Python default {_value(a.default)}")
    return "; ".join(n for n in notes if n)


def parameters(op: Operator) -> list[tuple[str, ...]]:
    """(C name, Python name, kind, C type, notes) of each C argument, in CANN's order."""
    from aclgen.capi.abi import c_type

    rows = []
    kinds = {"input": "input tensor", "output": "output tensor", "scalar": "aclScalar", "attr": "attribute"}
    for name in op.arg_names:
        kind = op.kinds[name]
        python = "`out=`" if kind == "output" else f"`{snake(name)}`"
        if kind == "input":
            note = _input_note(op, name)
        elif kind == "output":
            note = _output_note(op, name)
        elif kind == "scalar":
            note = _scalar_note(next(s for s in op.scalars if s.name == name))
        else:
            attr = next(a for a in op.attrs if a.name == name)
            note = _attr_note(op, attr)
            kind = f"attribute ({AttrKind(attr.kind).value})"
        rows.append((f"`{name}`", python, kinds.get(kind, kind), f"`{c_type(op, name)}`", note))
    rows.append(("`workspaceSize`", "", "out", "`uint64_t*`", "phase 1 stores the workspace bytes phase 2 needs"))
    rows.append(("`executor`", "", "out", "`aclOpExecutor**`", "phase 1 stores the planned call; phase 2 runs it "
                                                                "once (unless made repeatable)"))
    return rows


# --------------------------------------------------------------------------------- the checks


def default_checks(op: Operator) -> list[str]:
    """aclgen/runtime/checks.py `default`, as it applies to `op`: one line per step, with codes."""
    steps = ["every argument present and of its kind, in C order: a NULL tensor, scalar or attribute "
             f"(but an optional one) is {NULL}; another object, a destroyed one, or an attribute value "
             f"of the wrong kind is {INVALID}"]
    own = [n for n in op.outputs if op.tensor(n).dtype]
    steps.append(f"each tensor's dtype in the SoC profile's list (Dtypes below): {INVALID}")
    if op.promote is None:
        steps.append(f"every tensor of the first input's dtype{' (outputs of their own dtype aside)' if own else ''}: "
                     f"{INVALID}")
    else:
        steps.append(f"the outputs of the dtype the promotion gives for the inputs': {INVALID}")
    if own:
        steps.append(f"{', '.join(f'`{n}`' for n in own)} of {'its' if len(own) == 1 else 'their'} own dtype: "
                     f"{INVALID}")
    if op.max_rank is not None:
        steps.append(f"at most {op.max_rank} dims per tensor: {INVALID}")
    if op.split is not None:
        s = op.split
        steps.append(f"`{s.dim}` inside [-rank, rank - 1] of `{s.input}`, and that dim of even size: {s.status}")
        others = [n for n in op.inputs if n != s.input]
        if others:
            steps.append(f"{', '.join(f'`{n}`' for n in others)} of `{s.input}`'s shape with that dim halved: "
                         f"{s.status}")
        steps.append(f"the outputs of that half shape{' (' + ', '.join(s.whole) + ': the whole)' if s.whole else ''}: "
                     f"{INVALID}")
    elif op.broadcast:
        steps.append(f"the inputs broadcast together (numpy's rule): {INVALID}")
        steps.append(f"each output of the broadcast shape: {INVALID}")
    else:
        if len(op.inputs) > 1:
            steps.append(f"every input of the first input's shape: {INVALID}")
        steps.append(f"each output of that shape: {INVALID}")
    if op.graph.reductions():
        steps[-1] = steps[-1].removesuffix(f": {INVALID}") + (
            f", outputs made by reductions with the reduced dims 1 (a reduction's dims outside the shape are "
            f"{INVALID} too): {INVALID}")
    return steps


def _function_source(fn: Callable) -> str | None:
    try:
        text = inspect.getsource(inspect.unwrap(fn))
    except (OSError, TypeError):
        return None
    lines = textwrap.dedent(text).splitlines()
    start = next((k for k, line in enumerate(lines) if line.lstrip().startswith(("def ", "async def "))), 0)
    return own_words("\n".join(lines[start:]))


def _doc(fn: Callable | None) -> str:
    return _paragraphs(inspect.getdoc(fn) or "") if fn is not None else ""


# ------------------------------------------------------------------------------- the example


def _dtype(op: Operator) -> dt.DType:
    """The example's dtype: float32 where the default SoC profile takes it, else its first."""
    listed = op.supported(DEFAULT_SOC) or op.all_dtypes()
    return next((d for d in listed if d.name == "float32"), listed[0])


def _input_shapes(op: Operator) -> list[tuple[int, ...]]:
    if op.input_shapes is not None:
        return [tuple(s) for s in op.input_shapes(EXAMPLE_SHAPE)]
    out = []
    for name in op.inputs:
        along = op.tensor(name).along
        out.append((EXAMPLE_SHAPE[along],) if along is not None else EXAMPLE_SHAPE)
    return out


def _sample(shape: tuple[int, ...], dtype: dt.DType, k: int) -> np.ndarray:
    """-2, -1.5, ..., 1.5 (integers: -4 .. 3) over `shape`, the k-th input rotated by 3k."""
    n = int(np.prod(shape))
    base = np.arange(n) - n // 2
    values = base * 0.5 if dtype.is_float else base
    return np.roll(values, 3 * k).reshape(shape).astype(dtype.np_dtype)


def _literal(x) -> str:
    if isinstance(x, list):
        return "[" + ", ".join(_literal(v) for v in x) + "]"
    if isinstance(x, float):
        if math.isnan(x):
            return "np.nan"
        if math.isinf(x):
            return "np.inf" if x > 0 else "-np.inf"
        return repr(x)
    return repr(x)


def _array(a: np.ndarray) -> tuple[str, bool]:
    """Python source making `a`, and whether it needs ml_dtypes."""
    name = np.dtype(a.dtype).name
    dtype = "ml_dtypes.bfloat16" if name == "bfloat16" else f"np.{name}"
    flat = a.astype(np.float64).ravel()
    if a.ndim and flat.size > 6 and np.array_equal(flat, flat[0] + np.arange(flat.size)) and float(flat[0]).is_integer():
        lo = int(flat[0])
        text = f"np.arange({lo}, {lo + flat.size}, dtype={dtype})"
        return (f"{text}.reshape({', '.join(map(str, a.shape))})" if a.ndim > 1 else text), name == "bfloat16"
    values = a.astype(np.float64).tolist() if a.dtype.kind == "f" or name == "bfloat16" else a.tolist()
    return f"np.array({_literal(values)}, {dtype})", name == "bfloat16"


def example_code(op: Operator, example: Example | None = None) -> str:
    """A Python program calling `op` on its worked example's arguments, or on generated inputs
    (`_sample`, the scalars' and attributes' samples), and printing the outputs."""
    if example is not None:
        args = list(example.args)
    else:
        d = _dtype(op)
        shapes = _input_shapes(op)
        args = [_sample(s, d, k) for k, s in enumerate(shapes)]
        args += [s.sample for s in op.scalars] + [a.example_for(shapes[0]) for a in op.attrs]
    names = [snake(n) for n in op.python_args]
    tensors = len(op.inputs)
    lines, bf16 = [], False
    call = []
    for k, (name, value) in enumerate(zip(names, args)):
        var = name + "_" if keyword.iskeyword(name) else name
        if k < tensors:
            if isinstance(value, np.ndarray):
                text, needs = _array(value)
                bf16 |= needs
                lines.append(f"{var} = {text}")
                call.append(var)
            else:
                call.append(repr(value))
        else:
            call.append(f"{name}={_value(value) if not isinstance(value, np.ndarray) else _array(value)[0]}")
    outs = [snake(n) for n in op.outputs]
    head = ["import numpy as np", *(["import ml_dtypes"] if bf16 else []), "import aclgen.ops as ops", ""]
    invocation = f"ops.{op.python_name}({', '.join(call)})"
    if len(outs) == 1:
        body = [f"print({invocation})"]
    else:
        targets = [n + "_" if n in names else n for n in outs]
        body = [f"{', '.join(targets)} = {invocation}", *(f"print({t})" for t in targets)]
    return "\n".join(head + lines + body) + "\n"


FAILED = "**This example failed when the page was written:**"


def failed_examples(generated: Mapping[str, str]) -> list[str]:
    """The pages whose example failed to run (each says why)."""
    return [name for name, text in generated.items() if FAILED in text]


class ExampleError(RuntimeError):
    """A page's example did not run (the message: the error it raised)."""


def run_example(op: Operator, code: str) -> str:
    """What `code` prints, run in a fresh namespace under the default SoC profile."""
    from aclgen.knobs import overridden

    out = io.StringIO()
    try:
        with overridden(ACLGEN_SOC_VERSION=DEFAULT_SOC), contextlib.redirect_stdout(out):
            exec(compile(code, f"<{op.api} example>", "exec"), {"__name__": "docs"})
    except Exception as exc:
        raise ExampleError(own_words(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")) from exc
    return out.getvalue()


# ---------------------------------------------------------------------------------- a page


def _bound(op: Operator) -> str:
    """The bound the family tests hold the operator to, in a few words."""
    if op.reference is None:
        return "see the [contract](../contract.md#exactness)"
    if not op.tolerance:
        return "0 ulp (exact)"
    scaled = " of the terms' size" if hasattr(op.reference, "scale") else ""
    return f"≤ {op.tolerance:g} ulp{scaled}"


def _dtype_rows(op: Operator) -> list[tuple[str, str]]:
    groups: dict[tuple[str, ...], list[str]] = {}
    for soc in SOCS:
        groups.setdefault(tuple(op.dtypes.get(soc, ())), []).append(soc)
    return [(", ".join(socs), ", ".join(names) if names else "(not supported)") for names, socs in groups.items()]


def page(op: Operator, ops: Mapping[str, Operator]) -> str:
    """The reference page of one operator (see the module docstring)."""
    from aclgen.capi import abi
    from aclgen.runtime.function import function_of

    family, folder = _family(op)
    module = sys.modules.get(op.formula.__module__)
    lines = [f"# {op.api}", "", f"<!-- Written by `{COMMAND}` from the operator registry: edit the declaration "
             f"({_source_file(op)}), then run `{COMMAND}`. -->", ""]
    lines += [own_words(op.doc or op.signature), ""]
    facts = [f"CANN family `{family}`, folder `{folder}`; declared in `{_source_file(op)}`",
             f"Python: `aclgen.ops.{op.python_name}{inspect.signature(function_of(op))}`"
             + (f" (in place: `out={snake(op.inplace)}`)" if op.inplace else ""),
             f"torch: `torch.ops.aclgen.{op.python_name}`"]
    if op.backward:
        back = ops.get(op.backward)
        facts.append(f"backward: {_link(back) if back else 'aclnn' + op.backward} (torch autograd runs it)")
    grads = [o for o in ops.values() if o.backward == op.name]
    if grads:
        facts.append("the backward of " + ", ".join(_link(o) for o in grads))
    lines += [f"- {f}" for f in facts] + [""]

    lines += ["## C API", ""]
    functions = abi.operator_functions(op)
    decls = "\n\n".join(_declaration(f) for f in functions)
    lines += _code("c", f'#include "aclnnop/{abi.header_name(op)}"\n\n{decls}')
    lines += [f"Phase 1 (`{op.api}GetWorkspaceSize`) checks the arguments and plans the call; phase 2 "
              f"(`{op.api}`) runs the plan on `stream` (NULL: at once). Link with CANN's line "
              "(`-lopapi_nn -lopapi_math -lascendcl -lnnopbase`) against `aclgen sdk --prefix DIR`: "
              "see [C and C++](../c-sdk.md)."]
    if op.inplace:
        lines[-1] += (f" `{op.inplace_api}` is the same operator with `{op.inplace}` as its output: "
                      f"`{op.inplace}Ref` is read and overwritten.")
    lines.append("")

    lines += ["## Parameters", ""]
    lines += _table(("C name", "Python", "kind", "C type", "notes"), parameters(op))

    lines += ["## Dtypes", ""]
    lines += _table(("SoC profile", "dtypes"), _dtype_rows(op))
    combos: dict[tuple, list[str]] = {}
    for soc in SOCS:
        if op.combinations.get(soc):
            combos.setdefault(tuple(op.combinations[soc]), []).append(soc)
    for rows, socs in combos.items():
        lines += [f"The dtype combinations CANN's page lists for {', '.join(socs)} (one row per accepted call):", ""]
        lines += _table((*op.inputs, *op.outputs), rows)
    if op.promote is not None:
        lines += [f"Inputs may differ in dtype: {_doc(op.promote) or 'the outputs take the promoted dtype'}", ""]
    lines += [f"The profile is `ACLGEN_SOC_VERSION` (default {DEFAULT_SOC}). float16 and bfloat16 are computed in "
              "float32 and rounded once, to nearest even.", ""]

    lines += ["## Checks and status codes", ""]
    if op.check is None:
        lines += ["Phase 1 runs aclgen's default sequence, in this order; the first failure is returned:", ""]
        lines += [f"{k}. {step}" for k, step in enumerate(default_checks(op), 1)] + [""]
    else:
        lines += [f"Phase 1 runs the operator's own sequence (`{op.check.__name__}` in `{_source_file(op)}`), "
                  "in CANN's order; the first failure is returned:", ""]
        source = _function_source(op.check)
        if source:
            lines += _code("python", source)
        elif _doc(op.check):
            lines += [_doc(op.check), ""]
    lines += [f"Then every view must lie inside its storage, its memory must still be allocated, and outputs "
              f"must be writable without repeating elements ({INVALID}). Phase 2 returns 361001 "
              "(ACLNN_ERR_RUNTIME_ERROR) for work that fails when it runs (memory freed since phase 1). "
              f"Every failure leaves a one-line message for `aclGetRecentErrMsg()`.", ""]
    used = sorted({NULL, INVALID, 361001} | ({op.split.status} if op.split else set()))
    lines += [", ".join(f"{c} {CODES.get(c, '')}".strip() for c in used) + ".", ""]

    lines += ["## Formula", ""]
    if module is not None and module.__doc__:
        lines += [_paragraphs(module.__doc__), ""]
    source = _function_source(op.formula)
    if source:
        lines += [f"The formula (float32 arithmetic in this order; `aclgen compile {op.python_name} --dtype "
                  f"{_dtype(op).name} --emit dsl` shows its trace):", ""]
        lines += _code("python", source)
    else:
        lines += ["The formula, as traced:", ""] + _code("python", own_words(op.graph.listing))

    lines += ["## Reference and bound", ""]
    if op.reference is not None:
        lines += [f"The family tests compare every dtype on edge values (±0, ±inf, NaN, subnormals, the formula's "
                  f"boundaries) with this float64 numpy reference: {_bound(op)} of the output dtype.", ""]
        ref = _function_source(op.reference)
        if ref:
            lines += _code("python", ref)
    else:
        lines += ["No numpy reference in the declaration: the suite checks it against its own reference "
                  "(the bound is in the [contract](../contract.md#exactness)).", ""]

    lines += ["## Example", ""]
    example = op.examples[0] if op.examples else None
    code = example_code(op, example)
    if example is not None:
        how = "to every digit" if not example.rtol else f"within {example.rtol:g} relative"
        lines += [f"The declaration's worked example (`aclgen demo` reproduces its values {how}):", ""]
    else:
        lines += ["Generated inputs; the output is what the call printed when this page was written:", ""]
    lines += _code("python", code)
    try:
        lines += ["prints", ""] + [OUTPUT_FENCE, run_example(op, code).rstrip("\n"), "```", ""]
    except ExampleError as exc:  # the page is still written; `failed_examples` names it
        lines += [f"{FAILED} {exc}", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# ---------------------------------------------------------------------------------- the index


def _status(api: str, ops: Mapping[str, Operator], out_of_scope: Mapping[str, str]) -> tuple[str, str]:
    """(status, bound) of one aclnn API of CANN's doc pages."""
    by_api = {op.api: op for op in ops.values()}
    by_inplace = {op.inplace_api: op for op in ops.values() if op.inplace}
    if api in by_api:
        return f"provided: {_link(by_api[api])}", _bound(by_api[api])
    if api in by_inplace:
        op = by_inplace[api]
        return f"provided: in place, on {_link(op)}", _bound(op)
    if api in out_of_scope:
        return f"out of scope: {out_of_scope[api]}", ""
    return "not provided yet", ""


def index(ops: Mapping[str, Operator]) -> str:
    from aclgen.ops import catalog
    from aclgen.ops.activation import OUT_OF_SCOPE

    lines = ["# Operator reference", "",
             f"<!-- Written by `{COMMAND}` from the operator registry: do not edit; run `{COMMAND}`. -->", "",
             f"One page per built-in operator ({len(ops)}), written by `{COMMAND}` from the declarations in "
             "`aclgen/ops/`: the C declarations of both phases, the parameters, the dtypes per SoC profile, the "
             "checks and their status codes, the formula, its reference and bound, and an example that ran when "
             "the page was written. The [contract](../contract.md) says what every operator promises; "
             "[Declaring operators](../operators.md) how a built-in is added. After adding or changing one, "
             f"run `{COMMAND}` (the test suite checks that these pages are current).", ""]
    lines += ["## By family and CANN folder", ""]
    families: dict[str, dict[str, list[Operator]]] = {}
    for op in ops.values():
        family, folder = _family(op)
        families.setdefault(family, {}).setdefault(folder, []).append(op)
    for family in sorted(families):
        lines += [f"### {family}", ""]
        rows = []
        for folder in sorted(families[family]):
            for op in families[family][folder]:
                apis = _link(op) + (f", {op.inplace_api}" if op.inplace else "")
                rows.append((f"`{folder}`", apis, f"`{op.python_name}`", own_words(op.doc or ""), _bound(op)))
        lines += _table(("folder", "aclnn API", "Python", "computes", "bound"), rows)

    apis = catalog.activation_apis()
    statuses = [(api, page.folder, *_status(api, ops, OUT_OF_SCOPE)) for page in catalog.ACTIVATION for api in page.apis]
    provided = sum(s.startswith("provided") for _, _, s, _ in statuses)
    scoped = sum(s.startswith("out of scope") for _, _, s, _ in statuses)
    lines += ["## CANN's activation family", "",
              f"Every aclnn API on the doc pages of CANN's activation family ({len(apis)} APIs on "
              f"{len(catalog.ACTIVATION)} pages, `activation/<folder>/docs/` of the ops-nn repository; the list is "
              f"kept in `aclgen/ops/catalog.py`): {provided} provided, {scoped} out of scope, "
              f"{len(apis) - provided - scoped} not provided yet. The bound is what the family tests hold the "
              "operator to against its numpy reference, in ulps of the output dtype.", ""]
    lines += _table(("aclnn API", "CANN folder", "status", "bound"),
                    [(f"`{api}`" if not s.startswith("provided") else api, f"`{folder}`", s, b)
                     for api, folder, s, b in statuses])
    return "\n".join(lines).rstrip("\n") + "\n"


# ------------------------------------------------------------------------------- the files


def builtins() -> dict[str, Operator]:
    """The built-in operators by aclnn name."""
    import aclgen.ops

    return {op.name: op for op in aclgen.ops.OPERATORS.values()}


def pages(ops: Mapping[str, Operator] | None = None) -> dict[str, str]:
    """Every page by file name: the index and one per operator."""
    ops = builtins() if ops is None else ops
    out = {INDEX: index(ops)}
    for op in ops.values():
        out[f"{op.api}.md"] = page(op, ops)
    return out


def _ours(name: str) -> bool:
    return name == INDEX or (name.startswith("aclnn") and name.endswith(".md"))


def write(directory: str | os.PathLike, generated: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """Write the pages under `directory`; remove pages of operators no longer declared.
    Returns (written, removed) file names."""
    generated = pages() if generated is None else generated
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    removed = [p.name for p in sorted(root.glob("*.md")) if _ours(p.name) and p.name not in generated]
    for name in removed:
        (root / name).unlink()
    for name, text in generated.items():
        path = root / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
    return sorted(generated), removed


_NUMBER = re.compile(r"[-+]?(?:inf|nan|(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)", re.I)


def _same_output(a: str, b: str) -> bool:
    """Two example outputs print the same values (to OUTPUT_RTOL), whatever their spacing."""
    if re.sub(r"\s+", "", _NUMBER.sub("#", a)) != re.sub(r"\s+", "", _NUMBER.sub("#", b)):
        return False
    for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
        u, v = float(x), float(y)
        if not (u == v or (math.isnan(u) and math.isnan(v)) or math.isclose(u, v, rel_tol=OUTPUT_RTOL, abs_tol=1e-6)):
            return False
    return True


def _split(text: str) -> list[tuple[bool, str]]:
    """The page as (is an example output, text) pieces."""
    pieces = re.split(rf"(^{re.escape(OUTPUT_FENCE)}\n.*?^```$)", text, flags=re.S | re.M)
    return [(k % 2 == 1, p) for k, p in enumerate(pieces)]


def same_page(want: str, have: str) -> bool:
    a, b = _split(want), _split(have)
    return len(a) == len(b) and all(
        x == y if not out else _same_output(x, y) for (out, x), (_, y) in zip(a, b))


def stale(directory: str | os.PathLike, generated: Mapping[str, str] | None = None) -> list[str]:
    """The pages under `directory` that `write` would change: "NAME (missing)", "NAME (differs)",
    "NAME (no such operator)". Empty when the reference is current."""
    generated = pages() if generated is None else generated
    root = Path(directory)
    problems = []
    for name, text in generated.items():
        path = root / name
        if not path.is_file():
            problems.append(f"{name} (missing)")
        elif not same_page(text, path.read_text()):
            problems.append(f"{name} (differs)")
    if root.is_dir():
        problems += [f"{p.name} (no such operator)" for p in sorted(root.glob("*.md"))
                     if _ours(p.name) and p.name not in generated]
    return problems
