"""Issue 4's performance table, measured side by side with the peers, optionally into the docs.

    python benchmarks/run_issue4.py                    # the full table (about 5-10 minutes)
    python benchmarks/run_issue4.py --update-docs      # ... and replace docs/performance.md's table
    python benchmarks/run_issue4.py --quick            # 1K and 64K float32, 2 rounds: a smoke run
    python benchmarks/run_issue4.py --isa avx2         # the table with every tool held to AVX2

`--isa avx2` (`aclgen bench --isa`, see aclgen/tools/bench/__init__.py) reruns this script in a
child process with ACLGEN_CPU_NAME=haswell, NUMBA_CPU_NAME=haswell (and haswell's features) and
ATEN_CPU_CAPABILITY=avx2, and names its results issue4-avx2.*: on an AVX-512 machine the two runs
are both code paths measured on one machine. The docs' table is the native run's.

It drives `aclgen.tools.bench` (the code behind `aclgen bench`) with issue 4's matrix: all five
operators, float32 at 1K, 64K, 1M and 16M elements and float16/bfloat16 at 1M, against numpy and,
when installed, torch eager, torch.compile, numba and numba prange (`pip install -e ".[bench]"`),
plus the small-call costs at 1K and the compile times, and judges the result against issue 4's
targets (`TARGETS` here; `aclgen bench` reports numbers only). Results go to benchmarks/results/
(`issue4.json` with every sample and the targets, `issue4.md` the tables and the targets,
`issue4.png` GB/s against size when matplotlib is installed). `--update-docs` rewrites the part
of docs/performance.md between the `bench:begin` and `bench:end` markers with the tables (not the
targets: the docs describe aclgen, not a work item) and the machine; nothing else of the page.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys

from aclgen.tools import UsageError, bench

ROOT = pathlib.Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

# Issue 4's matrix (also `aclgen bench`'s default): float32 at every size, the half types at 1M.
ISSUE_MATRIX = [("float32", n) for n in (1 << 10, 1 << 16, 1 << 20, 1 << 24)] + [
    ("float16", 1 << 20),
    ("bfloat16", 1 << 20),
]

# Issue 4's targets (ratios are best-peer time / aclgen time: > 1 means aclgen is faster).
TARGETS = {
    "ratio_16M_simple": 1.2,
    "ratio_16M_swi_glu_grad": 2.5,
    "ratio_64K_1M": 1.0,
    "ratio_half_vs_torch": 2.0,
    "ops_call_us": 2.0,
    "executor_rerun_us": 1.5,
    "two_phase_us": 6.0,
    "compile_ms": 150.0,
    "warm_start_ms": 150.0,
}
CALL_TARGETS = {  # the small calls' rows (at 1K float32) and their targets
    "aclgen.ops call": "ops_call_us",
    "aclnn executor re-run (repeatable)": "executor_rerun_us",
    "aclnn two-phase call": "two_phase_us",
}


def targets(result: dict) -> list[dict]:
    """Issue 4's targets that a result of `aclgen bench` measured, each with its number and
    whether it is met."""
    out: list[dict] = []

    def add(what: str, value: float | None, goal: float, higher_is_better: bool, unit: str) -> None:
        if value is None:
            return
        met = value >= goal if higher_is_better else value <= goal
        out.append({"target": what, "value": value, "goal": goal, "unit": unit, "met": met,
                    "higher_is_better": higher_is_better})

    for r in result.get("rows", []):
        ratio = r["ratio"]
        peer = f"{r['best_peer']} {r['best_peer_us']:.1f} us" if r["best_peer"] else ""
        if r.get("ratio_of_minima") is not None:
            peer += f"; of minima {r['ratio_of_minima']:.2f}x"
        where = f"{r['op']} {r['dtype']} {r['size_label']}"
        if r["dtype"] == "float32" and r["size"] == 1 << 24:
            goal = TARGETS["ratio_16M_swi_glu_grad"] if r["op"] == "swi_glu_grad" else TARGETS["ratio_16M_simple"]
            add(f"{where}: x vs best peer ({peer})", ratio, goal, True, "x")
        elif r["dtype"] == "float32" and r["size"] in (1 << 16, 1 << 20):
            add(f"{where}: x vs best peer ({peer})", ratio, TARGETS["ratio_64K_1M"], True, "x")
        elif r["dtype"] in ("float16", "bfloat16") and r["size"] == 1 << 20:
            add(f"{where}: x vs torch eager", r["ratio_vs_torch"], TARGETS["ratio_half_vs_torch"], True, "x")
    calls = result.get("calls") or {}
    for c in calls.get("rows", []):
        if c["name"] in CALL_TARGETS:
            add(f"{c['name']} at 1K float32", c["us"], TARGETS[CALL_TARGETS[c["name"]]], False, "us")
    comp = result.get("compile") or {}
    for c in comp.get("aclgen", []):
        add(f"compile a new variant cold ({c['op']} float32)", c["ms"], TARGETS["compile_ms"], False, "ms")
    warm = (comp.get("warm_start") or {}).get("warm_cache")
    if warm:
        add("fresh process, disk cache warm: import aclgen to first call", warm["ms"], TARGETS["warm_start_ms"], False, "ms")
        out.append({"target": "fresh process, disk cache warm: xDSL stays unimported",
                    "value": "xDSL imported" if warm["xdsl_imported"] else "xDSL not imported",
                    "goal": False, "unit": "", "met": not warm["xdsl_imported"], "higher_is_better": False})
    return out


def targets_markdown(tg: list[dict]) -> str:
    """The targets as a checklist, and how many are met."""
    if not tg:
        return ""
    lines = ["Issue 4 targets:", ""]
    for t in tg:
        if t["unit"]:
            op = "≥" if t["higher_is_better"] else "≤"
            lines.append(f"- [{'x' if t['met'] else ' '}] {t['target']}: {t['value']:.2f}{t['unit']} (goal {op} {t['goal']:g}{t['unit']})")
        else:
            lines.append(f"- [{'x' if t['met'] else ' '}] {t['target']}: {t['value']}")
    met = sum(t["met"] for t in tg)
    lines.append(f"\n{met} of {len(tg)} measured targets met.")
    return "\n".join(lines) + "\n"


def tables(result: dict, every_tool: bool = True) -> str:
    """`aclgen bench`'s tables, then the targets."""
    text = bench.report.markdown(result, every_tool)
    return text + "\n" + targets_markdown(result["targets"]) if result.get("targets") else text


def docs_section(result: dict) -> str:
    m = result["machine"]
    la = result.get("load_average") or {}
    load = f" (load average {la['start']:.1f} at the start, {la['end']:.1f} at the end)" if "end" in la else ""
    return (
        f"{BEGIN}\n"
        f"Measured {result['date'][:10]} on {m['cpu']} ({m['cores']} cores, {', '.join(m['features'])}"
        f"{'; ' + m['caches'] if m.get('caches') else ''}), a "
        f"machine shared with other work{load}: single numbers move with it, ratios less (every tool runs in the "
        f"same interleaved rounds). Reproduce with `aclgen bench`.\n\n"
        f"{bench.report.markdown(result, every_tool=False).strip()}\n"
        f"{END}"
    )


def update_docs(section: str) -> None:
    path = ROOT / "docs" / "performance.md"
    text = path.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"docs/performance.md has no {BEGIN} ... {END} markers: add them under '## Throughput' first")
    text = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: section, text, count=1, flags=re.S)
    path.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    ap.add_argument("--target-ms", type=float, default=20.0, help="length of one sample (default 20 ms)")
    ap.add_argument("--quick", action="store_true", help="1K and 64K float32 only, 2 rounds")
    ap.add_argument("--tools", help="comma list of tools (default: every installed one)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="directory for issue4.{json,md,png}")
    ap.add_argument("--update-docs", action="store_true", help="put the tables into docs/performance.md")
    ap.add_argument("--from-json", metavar="FILE", help="render an earlier run's issue4.json instead of measuring")
    ap.add_argument("--isa", default="native", choices=list(bench.config.ISAS),
                    help="instruction set every tool is held to (default native; avx2: in a child process)")
    ap.add_argument("--isa-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    isa = bench.config.isa(args.isa)
    try:
        env = {} if args.from_json else bench.config.isa_environment(isa)
    except UsageError as exc:
        sys.exit(f"run_issue4.py: {exc}")
    if env and not args.isa_child:
        sys.exit(bench.in_child([__file__, *sys.argv[1:], "--isa-child"], env))
    name = "issue4" if isa.name == "native" else f"issue4-{isa.name}"

    cfg = bench.Config(
        ops=bench.config.operators([]),
        matrix=[("float32", 1 << 10), ("float32", 1 << 16)] if args.quick else list(ISSUE_MATRIX),
        tools=bench.config.tools(args.tools),
        rounds=2 if args.quick else args.rounds,
        target_s=args.target_ms / 1e3,
        isa=isa.name,
        progress=lambda s: print(s, file=sys.stderr, flush=True),
    )
    command = "python benchmarks/run_issue4.py --update-docs" + ("" if isa.name == "native" else f" --isa {isa.name}")
    if args.from_json:
        result = json.loads(pathlib.Path(args.from_json).read_text())
    else:
        result = bench.measure(cfg)
        result["command"] = command
    result["targets"] = targets(result)  # an earlier run's too: judged by this version's rules
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.from_json:
        (out / f"{name}.json").write_text(json.dumps(result, indent=1))
    (out / f"{name}.md").write_text(tables(result))
    try:
        bench.report.plot(result, str(out / f"{name}.png"))
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
    sys.stdout.write(tables(result))
    if args.update_docs:
        update_docs(docs_section(result))
        print("docs/performance.md: the table updated", file=sys.stderr)


if __name__ == "__main__":
    main()
