"""Issue 4's performance table, measured side by side with the peers, optionally into the README.

    python benchmarks/run_issue4.py                    # the full table (about 5-10 minutes)
    python benchmarks/run_issue4.py --update-readme    # ... and replace README.md's Performance table
    python benchmarks/run_issue4.py --quick            # 1K and 64K float32, 2 rounds: a smoke run

It drives `aclgen.bench` (the code behind `aclgen bench`) with issue 4's matrix: all five operators,
float32 at 1K, 64K, 1M and 16M elements and float16/bfloat16 at 1M, against numpy and, when
installed, torch eager, torch.compile, numba and numba prange (`pip install -e ".[bench]"`), plus
the small-call costs at 1K and the compile times. Results go to benchmarks/results/ (`issue4.json`
with every sample, `issue4.md` the tables, `issue4.png` GB/s against size when matplotlib is
installed). `--update-readme` rewrites the part of README.md between the `bench:begin` and
`bench:end` markers with the tables, the command and the machine; nothing else in the README.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys

from aclgen import bench

ROOT = pathlib.Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def readme_section(result: dict, command: str) -> str:
    m = result["machine"]
    la = result.get("load_average") or {}
    load = f" (load average {la['start']:.1f} at the start, {la['end']:.1f} at the end)" if "end" in la else ""
    return (
        f"{BEGIN}\n"
        f"Measured {result['date'][:10]} on {m['cpu']} ({m['cores']} cores, {', '.join(m['features'])}), a "
        f"machine shared with other work{load}: single numbers move with it, ratios less (every tool runs in the "
        f"same interleaved rounds). Reproduce with `{command}` (or `aclgen bench` for the tables alone).\n\n"
        f"{bench.report(result, every_tool=False).strip()}\n\n"
        f"Every tool's time per row: `benchmarks/results/issue4.md`; every sample: `issue4.json`; GB/s against "
        f"size: `issue4.png`.\n"
        f"{END}"
    )


def update_readme(section: str) -> None:
    path = ROOT / "README.md"
    text = path.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"README.md has no {BEGIN} ... {END} markers: add them under '## Performance' first")
    text = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: section, text, count=1, flags=re.S)
    path.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    ap.add_argument("--target-ms", type=float, default=20.0, help="length of one sample (default 20 ms)")
    ap.add_argument("--quick", action="store_true", help="1K and 64K float32 only, 2 rounds")
    ap.add_argument("--tools", help="comma list of tools (default: every installed one)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="directory for issue4.{json,md,png}")
    ap.add_argument("--update-readme", action="store_true", help="put the tables into README.md's Performance section")
    ap.add_argument("--from-json", metavar="FILE", help="render an earlier run's issue4.json instead of measuring")
    args = ap.parse_args()

    cfg = bench.Config(
        ops=bench.operators([]),
        matrix=[("float32", 1 << 10), ("float32", 1 << 16)] if args.quick else list(bench.ISSUE_MATRIX),
        tools=bench.tools(args.tools),
        rounds=2 if args.quick else args.rounds,
        target_s=args.target_ms / 1e3,
        progress=lambda s: print(s, file=sys.stderr, flush=True),
    )
    command = "python benchmarks/run_issue4.py --update-readme"
    if args.from_json:
        result = json.loads(pathlib.Path(args.from_json).read_text())
        result["targets"] = bench.targets(result)  # judged by this version's rules
    else:
        result = bench.run(cfg)
        result["command"] = command
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.from_json:
        (out / "issue4.json").write_text(json.dumps(result, indent=1))
    (out / "issue4.md").write_text(bench.report(result))
    try:
        bench.plot(result, str(out / "issue4.png"))
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
    sys.stdout.write(bench.report(result))
    if args.update_readme:
        update_readme(readme_section(result, command))
        print("README.md: Performance section updated", file=sys.stderr)


if __name__ == "__main__":
    main()
