"""CANN's own calling programs for the activation family, built and run against aclgen's SDK.

    python benchmarks/cann_examples.py OPS_NN                     # a checkout of hicann/ops-nn, or its git dir
    python benchmarks/cann_examples.py OPS_NN --update-docs       # ... and rewrite docs/cann-examples.md's table
    python benchmarks/cann_examples.py OPS_NN --only relu,glu     # folders whose examples to run

Every `activation/<folder>/examples/[arch35/]test_aclnn_*.cpp` of OPS_NN (read from the working
tree, or with `git show HEAD:path` when OPS_NN is a bare git dir) is compiled with the g++ line of
ops-nn's build.sh, unchanged, against an SDK this script lays out in a temporary prefix
(`aclgen sdk`), then run from a shell that only sourced the SDK's set_env.sh. A program calling an
API aclgen does not provide is not built: its row says why (aclgen/ops/activation/__init__.py's
OUT_OF_SCOPE, or "not provided yet").

Whether the values agree: the SDK is built with benchmarks/cann_trace.py as an `--ops` module,
which records the arguments of each aclnn<Name>GetWorkspaceSize call the program makes (its
tensors' data at that moment, its scalars and attributes). Each group of values the program
prints (`result[i] is: v`, a label per group) must be the leading values of one output of one
recorded call, computed here from the recorded inputs by the operator's numpy formula: its
declaration's float64 `reference=`, else the suite's numpy reference (tests/reference.py), else
(said in the row) aclgen's own Python call. A value agrees within what `%f` printing loses (half
a unit in the last digit printed) plus the operator's bound (its `tolerance=` ulps, at least one,
of the output dtype, relative to the reference's value, or to its terms' size where the reference
gives one).

Examples written for the arch35 chips (`examples/arch35/`) run under the Ascend950 profile
(ACLGEN_SOC_VERSION), the others under the default profile. The table is Markdown on stdout; with
--json the rows with each program's output.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.reference, when run as a script

import aclgen.ops  # noqa: E402
from aclgen.declaration import Operator  # noqa: E402
from aclgen.ops.activation import OUT_OF_SCOPE  # noqa: E402
from aclgen.runtime.function import function_of  # noqa: E402
from aclgen.tools.accuracy import widened  # noqa: E402

TRACE_MODULE = Path(__file__).resolve().parent / "cann_trace.py"
DOCS = ROOT / "docs" / "cann-examples.md"
BEGIN, END = "<!-- table:begin -->", "<!-- table:end -->"
RUN_TIMEOUT_S = 300
EPS = {"float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}
# ops-nn's build.sh, for an aclnn example against an installed CANN (ASCEND_HOME_PATH and
# ASCEND_OPP_PATH come from set_env.sh)
GPP = ('g++ "{file}" -I "$ASCEND_HOME_PATH/include" -I "$ASCEND_HOME_PATH/include/aclnnop" '
       '-I "$ASCEND_HOME_PATH/include/aclnn" -L "$ASCEND_OPP_PATH/lib64" -L "$ASCEND_HOME_PATH/lib64" '
       '-lopapi_nn -lopapi_math -lascendcl -lnnopbase -o "{out}"')


# ------------------------------------------------------------------------------- the sources


class Source:
    """An ops-nn checkout, or its git dir (files read at HEAD)."""

    def __init__(self, path: str):
        self.path = Path(path)
        self.worktree = (self.path / "activation").is_dir()
        if not self.worktree:
            r = subprocess.run(["git", "--git-dir", str(self.path), "rev-parse", "HEAD"], capture_output=True,
                               text=True)
            if r.returncode:
                raise SystemExit(f"{path}: neither an ops-nn checkout (no activation/) nor its git dir")
            self.commit = r.stdout.strip()
        else:
            r = subprocess.run(["git", "-C", str(self.path), "rev-parse", "HEAD"], capture_output=True, text=True)
            self.commit = r.stdout.strip() or "(not a git checkout)"

    def examples(self) -> list[str]:
        if self.worktree:
            return sorted(str(p.relative_to(self.path)) for p in self.path.glob("activation/*/examples/**/test_aclnn_*.cpp"))
        r = subprocess.run(["git", "--git-dir", str(self.path), "ls-tree", "-r", "--name-only", "HEAD", "activation"],
                           capture_output=True, text=True, check=True)
        return sorted(p for p in r.stdout.split() if re.fullmatch(r"activation/[^/]+/examples/(.+/)?test_aclnn_\w+\.cpp", p))

    def read(self, rel: str) -> str:
        if self.worktree:
            return (self.path / rel).read_text()
        return subprocess.run(["git", "--git-dir", str(self.path), "show", f"HEAD:{rel}"], capture_output=True,
                              text=True, check=True).stdout


# ---------------------------------------------------------------------------------- the rows


@dataclass
class Row:
    example: str  # activation/<folder>/examples/[arch35/]test_aclnn_x.cpp
    apis: list[str]
    status: str = ""  # "" (provided), or why not run
    compiles: bool | None = None
    runs: bool | None = None
    agrees: bool | None = None
    note: str = ""
    output: str = field(default="", repr=False)

    @property
    def name(self) -> str:
        return self.example.removeprefix("activation/").replace("/examples/", "/")


def _apis(text: str) -> list[str]:
    return list(dict.fromkeys(re.findall(r"\b(aclnn\w+?)GetWorkspaceSize\s*\(", text)))


def _provided() -> dict[str, tuple[Operator, bool]]:
    """aclnn API -> (operator, in place)."""
    out: dict[str, tuple[Operator, bool]] = {}
    for op in aclgen.ops.OPERATORS.values():
        out[op.api] = (op, False)
        if op.inplace:
            out[op.inplace_api] = (op, True)
    return out


def _missing(apis: list[str], provided) -> str:
    gone = [a for a in apis if a not in provided]
    if not gone:
        return ""
    why = [f"{a}: out of scope ({OUT_OF_SCOPE[a]})" if a in OUT_OF_SCOPE else f"{a}: not provided yet" for a in gone]
    return "not provided: " + "; ".join(why)


# ------------------------------------------------------------------------------ the checking


def _printed(output: str) -> list[tuple[str, list[str]]]:
    """The groups of values the program printed: (label, values as printed), a new group where
    the label changes or the index starts again at 0."""
    groups: list[tuple[str, list[str]]] = []
    for m in re.finditer(r"^(.*?)\[(\d+)\](?: is)?\s*[:=]\s*(\S+)\s*$", output, re.M):
        label, index, value = m[1].strip(), int(m[2]), m[3]
        if not groups or groups[-1][0] != label or index == 0 or index != len(groups[-1][1]):
            if index != 0:
                continue  # not a listing from its start
            groups.append((label, []))
        groups[-1][1].append(value)
    return groups


def _half_unit(text: str) -> float:
    mantissa, _, exponent = text.lower().partition("e")
    digits = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (-digits + (int(exponent) if exponent else 0))


def _reference_for(op: Operator):
    """(numpy formula, what it is) of `op`."""
    if op.reference is not None:
        return op.reference, "reference="
    try:
        from tests import reference as suite
    except ImportError:
        suite = None
    fn = getattr(suite, op.python_name, None) if suite is not None else None
    if fn is not None:
        return fn, "tests/reference.py"
    return None, "aclgen's Python call"


def _expected(record: dict) -> tuple[list[tuple[np.ndarray, np.ndarray | None, str]], str]:
    """The outputs of one recorded call by the numpy formula: [(values, scale, dtype)], and which
    formula it was."""
    op = aclgen.ops.OPERATORS[next(n for n, o in aclgen.ops.OPERATORS.items() if o.name == record["op"])]
    args = record["args"]
    if record["inplace"]:
        args = dict(zip(op.arg_names, op.from_inplace(tuple(args[n] for n in op.inplace_args))))
    tensors = [args[n] for n in op.inputs]
    scalars = [args[s.name] if args[s.name] is not None else s.default for s in op.scalars]
    attrs = [args[a.name] for a in op.attrs]
    out_dtypes = []
    for n in op.outputs:
        v = args.get(n)
        out_dtypes.append(np.dtype(v.dtype).name if isinstance(v, np.ndarray) else "float32")
    fn, what = _reference_for(op)
    with np.errstate(all="ignore"):
        if fn is None:
            got = function_of(op)(*tensors, *scalars, *attrs)
            scale = None
        elif what == "reference=":
            wide = [None if t is None else widened(np.asarray(t)) for t in tensors]
            got = fn(*wide, *scalars, *attrs)
            scale = fn.scale(*wide, *scalars, *attrs) if hasattr(fn, "scale") else None
        else:
            got = fn(*tensors, *scalars, *attrs)
            scale = None
    outs = got if isinstance(got, tuple) else (got,)
    scales = scale if isinstance(scale, tuple) else (scale,) * len(outs)
    result = []
    for k, o in enumerate(outs):
        given = args.get(op.outputs[k]) if k < len(op.outputs) else None
        shape = np.shape(given) if given is not None else np.shape(o)
        values = np.broadcast_to(np.asarray(o, np.float64), shape) if shape else np.asarray(o, np.float64)
        sc = None if scales[k] is None else np.broadcast_to(np.asarray(scales[k], np.float64), values.shape)
        result.append((values.ravel(), None if sc is None else sc.ravel(), out_dtypes[k] if k < len(out_dtypes)
                       else "float32"))
    return result, what


def _agrees(printed: list[str], values: np.ndarray, scale, dtype: str, ulps: float) -> float:
    """The largest error of the printed values against `values`, in units of what is allowed
    (<= 1 agrees); inf where a value is missing or NaN disagrees."""
    if len(printed) > len(values):
        return math.inf
    worst = 0.0
    eps = EPS.get(dtype, 0.0)
    for k, text in enumerate(printed):
        try:
            p = float(text)
        except ValueError:
            return math.inf
        r = float(values[k])
        if math.isnan(r) or math.isnan(p):
            if math.isnan(r) != math.isnan(p):
                return math.inf
            continue
        if math.isinf(r) or math.isinf(p):
            if p != r:
                return math.inf
            continue
        size = max(abs(r), abs(float(scale[k])) if scale is not None else 0.0)
        allowed = _half_unit(text) + max(ulps, 1.0) * eps * size + 1e-300
        worst = max(worst, abs(p - r) / allowed)
    return worst


def check(row: Row, records: list[dict]) -> None:
    """Whether every group the program printed is one output of one recorded call."""
    groups = _printed(row.output)
    calls = [r for r in records if r["status"] == 0]
    if not groups:
        own = re.search(r"Total: (\d+) PASS, (\d+) FAIL", row.output)  # a program that checks itself
        row.agrees = None if own is None else own[2] == "0"
        row.note = "prints no values" if own is None else f"its own check against the doc formula: {own[0]}"
        return
    if not calls:
        row.agrees, row.note = False, "no successful aclnn call"
        return
    candidates, formulas = [], set()
    for record in calls:
        try:
            outs, what = _expected(record)
        except Exception as exc:  # a record the formula cannot take: said in the row
            row.note = f"formula failed on {record['api']}'s inputs: {type(exc).__name__}: {exc}"
            continue
        formulas.add(what)
        op = next(o for o in aclgen.ops.OPERATORS.values() if o.name == record["op"])
        candidates += [(record["api"], values, scale, dtype, op.tolerance) for values, scale, dtype in outs]
        for name in op.inplace_args if record["inplace"] else op.inputs:  # a program may print its inputs too
            v = record["args"].get(name)
            if isinstance(v, np.ndarray):
                candidates.append((f"{record['api']} input {name}", v.astype(np.float64).ravel(), None, "", 0.0))
    bad, inputs = [], 0
    for label, printed in groups:
        errors = [(_agrees(printed, v, s, d, t), api) for api, v, s, d, t in candidates]
        best = min(errors, default=(math.inf, ""))
        if best[0] > 1:
            bad.append(f"'{label}' ({len(printed)} values) off by {best[0]:.3g}x the allowed error"
                       if best[0] < math.inf else f"'{label}' ({len(printed)} values) matches no output")
        inputs += " input " in best[1]
    row.agrees = not bad
    sources = ", ".join(sorted(formulas))
    outputs = len(groups) - inputs
    row.note = "; ".join(bad) if bad else (f"{outputs} output{'s' * (outputs != 1)} vs {sources}"
                                           + (f" (and {inputs} input{'s' * (inputs > 1)} printed back)" if inputs else ""))


# ---------------------------------------------------------------------------------- running


def build_sdk(prefix: Path) -> float:
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "aclgen.cli", "sdk", "--prefix", str(prefix), "--ops", str(TRACE_MODULE)],
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"aclgen sdk failed:\n{r.stdout}{r.stderr}")
    return time.perf_counter() - start


def _shell(prefix: Path, command: str, env: dict[str, str] | None = None, timeout: float | None = None):
    script = f'source "{prefix}/set_env.sh" && {command}'
    base = {k: os.environ[k] for k in ("HOME", "PATH", "TMPDIR", "ACLGEN_CACHE_DIR") if k in os.environ}
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env={**base, **(env or {})},
                          timeout=timeout)


def compile_one(row: Row, source: Source, prefix: Path, work: Path) -> None:
    src = work / row.example
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(source.read(row.example))
    binary = src.with_suffix("")
    r = _shell(prefix, GPP.format(file=src, out=binary))
    row.compiles = r.returncode == 0
    if not row.compiles:
        errors = [line for line in r.stderr.splitlines() if "error" in line]
        row.note = _compile_error(errors[0] if errors else r.stderr.strip()[-200:])


def _compile_error(line: str) -> str:
    line = re.sub(r"^.*?error: ", "", line)
    return "compile error: " + line.replace("‘", "'").replace("’", "'")[:200]


def run_one(row: Row, prefix: Path, work: Path) -> None:
    binary = (work / row.example).with_suffix("")
    trace = binary.with_suffix(".trace")
    trace.unlink(missing_ok=True)
    env = {"ACLGEN_TRACE_FILE": str(trace)}
    if "/examples/arch35/" in row.example:
        env["ACLGEN_SOC_VERSION"] = "Ascend950"
    try:
        r = _shell(prefix, f'cd "{binary.parent}" && "{binary}"', env, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        row.runs, row.note = False, f"no exit within {RUN_TIMEOUT_S} s"
        return
    row.output = r.stdout + r.stderr
    row.runs = r.returncode == 0
    records = []
    if trace.exists():
        with trace.open("rb") as f:
            while True:
                try:
                    records.append(pickle.load(f))
                except EOFError:
                    break
    if not row.runs:
        failed = [f"{x['api']} {x['status']}: {x.get('message', '')}" for x in records if x["status"]]
        last = [line for line in row.output.splitlines() if line.strip()][-1:] or [""]
        row.note = f"exit {r.returncode}" + (f" ({', '.join(failed)})" if failed else f": {last[0][:160]}")
        return
    check(row, records)


# ---------------------------------------------------------------------------------- the table


def _mark(v: bool | None) -> str:
    return "—" if v is None else "yes" if v else "**no**"


def table(rows: list[Row]) -> str:
    lines = ["| example | compiles | runs (exit 0) | values agree | notes |", "|---|---|---|---|---|"]
    for r in rows:
        note = r.status or r.note
        lines.append(f"| `{r.name}` | {_mark(r.compiles)} | {_mark(r.runs)} | {_mark(r.agrees)} | "
                     f"{note.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def summary(rows: list[Row]) -> str:
    provided = [r for r in rows if not r.status]
    return (f"{len(rows)} examples; {len(provided)} call only provided APIs: {sum(bool(r.compiles) for r in provided)} "
            f"compile, {sum(bool(r.runs) for r in provided)} run, {sum(bool(r.agrees) for r in provided)} print "
            f"values that agree; {len(rows) - len(provided)} call an API aclgen does not provide.")


def update_docs(text: str) -> None:
    page = DOCS.read_text()
    if BEGIN not in page or END not in page:
        raise SystemExit(f"{DOCS} has no {BEGIN} ... {END} markers")
    head, rest = page.split(BEGIN, 1)
    DOCS.write_text(head + BEGIN + "\n" + text + END + rest.split(END, 1)[1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ops_nn", help="a checkout of hicann/ops-nn, or its (bare) git dir")
    p.add_argument("--only", help="comma-separated folders of activation/ to run (default: all)")
    p.add_argument("-j", "--jobs", type=int, default=2, help="programs compiled and run at once (default 2)")
    p.add_argument("--json", metavar="FILE", help="also write the rows, with each program's output")
    p.add_argument("--update-docs", action="store_true", help=f"rewrite the table of {DOCS.relative_to(ROOT)}")
    p.add_argument("--keep", metavar="DIR", help="build under DIR and keep it (default: a temporary directory)")
    args = p.parse_args(argv)
    if shutil.which("g++") is None:
        raise SystemExit("needs g++")
    source = Source(args.ops_nn)
    only = set(args.only.split(",")) if args.only else None
    provided = _provided()
    rows = []
    for rel in source.examples():
        if only and rel.split("/")[1] not in only:
            continue
        apis = _apis(source.read(rel))
        rows.append(Row(rel, apis, _missing(apis, provided)))
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="aclgen-cann-examples-"))
    try:
        prefix = work / "cann"
        seconds = build_sdk(prefix)
        print(f"SDK: {len(aclgen.ops.OPERATORS)} operators in {prefix} ({seconds:.1f} s); ops-nn {source.commit[:12]}",
              file=sys.stderr)
        todo = [r for r in rows if not r.status]
        with ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(lambda r: compile_one(r, source, prefix, work), todo))
            list(pool.map(lambda r: run_one(r, prefix, work), [r for r in todo if r.compiles]))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    text = table(rows) + "\n" + summary(rows) + "\n"
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    if args.update_docs:
        update_docs(f"ops-nn commit `{source.commit[:12]}`, {len(aclgen.ops.OPERATORS)} built-in operators.\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
