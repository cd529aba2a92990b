"""`aclgen bench`: aclgen against its CPU peers, side by side, in one process.

    aclgen bench                                   the default matrix, small calls, compile times
    aclgen bench hardswish_backward --sizes 1K,1M --dtypes float32 --rounds 5
    aclgen bench my_ops.py:LeakyReluBackward --sizes 64K     a user's operator (aclgen alone)
    aclgen bench --json out.json --plot roofline.png

What runs. For every (operator, dtype, size) row each tool computes the same operator on the same
inputs into its own output (peers.py):

| tool | what |
|---|---|
| `aclgen` | the operator's Python function, `aclgen.ops.<op>(*inputs, *scalars, out=out)` for the built-ins |
| `numpy` | a straightforward vectorized numpy formula (fp16/bf16: computed in f32, cast on store) |
| `torch` | torch eager: `aten.hardswish_backward`, `aten.elu_backward(g, α, λ, 1, True, y)` for Selu, `aten.softshrink_backward`, `aten.threshold_backward`; SwiGluGrad as `cat(silu_backward(g·B, A), g·silu(A))` |
| `torch.compile` | the same functions through `torch.compile(dynamic=False)` (inductor, C++ on the CPU) |
| `numba` | an `@njit` loop over the elements (float32; fp16 when numba can) |
| `numba-prange` | the same loop as `@njit(parallel=True)` with `prange` |

Any declared operator runs (a built-in or aclnn name, or FILE.py:NAME): its inputs have the
shapes its declaration gives for the row's output (`run.input_shapes`) and the dtypes of its
first dtype combination for the row's dtype, its aclScalars their samples (their defaults, else
0.5) and its attributes their examples for the shape (`Attr.example_for`: LayerNorm's
normalizedShape is the last dim). The peers are written per operator (`peers.PEERS`, keyed by
aclnn name; the operators over an axis in peers_axis.py, CANN's activation family, torch alone,
in peers_family.py); an operator without an entry has none, and its rows time aclgen alone. Tools that are not
installed, or cannot handle a dtype or an operator, are skipped with the reason recorded. Every
peer's output is compared with aclgen's after warm-up; a disagreement is reported (a peer that
computes something else would make its timing meaningless), never silently timed.

How it times (timing.py). Warm-up first (compiles, first-touch of memory, calibration of the
repetitions so a sample lasts about `--target-ms`), then `--rounds` rounds; a round times one
sample of every tool, in an order that rotates from round to round, so slow drifts of a shared,
noisy machine hit every tool alike. A sample is the mean per call over its repetitions; a tool's
time is the median of its samples (the minima are kept too: the ratio of minima is what a quiet
machine would show, roughly). The garbage collector is off while timing. Each sample follows
`SETTLE_S` (50 ms) of untimed calls of the same tool: OpenMP runtimes (torch, numba prange) keep
their worker threads spinning for up to tens of milliseconds after a parallel region, and on a
two-core machine those threads slow whichever tool runs next (measured: aclgen's 1M calls at 1.4x
their time for 40 ms after torch's); idling instead lets the cores drop to a slow state that takes
~20-40 ms to leave (2x slower samples right after a pause). The lead-in times each tool on warm
cores of its own.

Bandwidth. Bytes per call = inputs + outputs (each read or written once; write-allocate traffic
is not counted, as in STREAM). The reference is a triad `a = b + s·c` over float32 arrays of the
same total size, timed in the same rounds with numpy and, where installed, numba prange and torch
(multi-threaded); the best of them is the triad bandwidth, and each tool's GB/s is also reported
as a fraction of it.

Sizes count the elements of each kernel output (1K = 1024): the output's, but SwiGluGrad's kernel
writes out in halves, so its size is yGrad's (x and out have 2N). A size may be a shape,
`4096x4096` or `65536x256` (`AxB[xC...]`, each dim as a size): the rows of an operator over an
axis are then that many rows of that length, and the table and the JSON (`shape`) show it; a
plain size is a 1-D problem. Without --sizes and --dtypes the default matrix runs: float32 at 1K,
64K, 1M, 16M and float16, bfloat16 at 1M; giving either option runs the full product of the two
lists.

`--isa avx2` measures every tool held to AVX2 on any x86-64 machine that has it (both code
paths on one AVX-512 machine: `aclgen bench` and `aclgen bench --isa avx2`): aclgen with
ACLGEN_CPU_NAME=haswell (its kernels are AVX2 code: aclgen/codegen/target.py), numba with
NUMBA_CPU_NAME=haswell and NUMBA_CPU_FEATURES set to haswell's exact features (numba alone would
keep the host's features), torch with ATEN_CPU_CAPABILITY=avx2 (its eager kernels and
torch.compile's C++). numba and torch read these once, when imported or first used, so the
measurement runs in a child process started with them (`aclgen bench ... --isa avx2` again, the
child's output is the command's); setting them in this process could come too late (a caller
that already imported torch or numba) and would leave this process's kernels, plans and replays
on the host's code. `--isa native` (the default) runs here, in the environment as it is. An ISA
this machine cannot run is refused before anything starts. The result's `isa` and the report's
"ISA" line say what each tool used: the LLVM CPU aclgen compiled for, torch's reported CPU
capability and torch.compile's vector ISA, numba's CPU.

`calls` times the small-call costs of hardswish_backward at 1K float32: an `aclgen.ops` call, a
repeatable aclnn executor re-run, the two-phase call (a fresh executor each time) without a
stream and on a stream with its synchronize (CANN's pattern), the repeatable executor on a
stream, and the peers' calls. `compile` times a new kernel variant compiled cold, the peers'
compile times (numba parallel njit, torch.compile), and fresh processes whose kernels are in the
on-disk cache (`ACLGEN_CACHE_DIR`; medians of `WARM_RUNS` processes): `import aclgen.ops` and
the first call against numpy's own import in the same process, and the second call. A command
that names operators runs the table alone unless --parts asks for more: the other parts time
the built-in hardswish_backward and the peers, not the operators named. The numbers are
reported, not judged: benchmarks/run_issue4.py holds a past work item's targets and checks them
against a result.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import sys
from collections.abc import Sequence

from aclgen.tools import UsageError
from aclgen.tools.bench import config, peers, report, table, timing
from aclgen.tools.bench.config import DEFAULT_DTYPES, DEFAULT_SIZES, PARTS, TOOLS, Config


def _load() -> float | None:
    """The 1-minute load average: other work on the machine (the timings are worth less above ~0.5)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def measure(cfg: Config) -> dict:
    """Run the benchmark; returns the result that --json writes (see the module docstring)."""
    say = cfg.progress or (lambda s: None)
    ops = cfg.ops or config.operators([])
    load = _load()
    result: dict = {
        "version": 1,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": "aclgen bench " + " ".join(a for a in sys.argv[2:] if a != _CHILD) if sys.argv[1:2] == ["bench"] else None,
        "isa": report.isa(cfg.isa, cfg.tools),
        "machine": report.machine(),
        "load_average": None if load is None else {"start": load},
        "versions": report.versions(),
        "rounds": cfg.rounds,
        "target_ms": cfg.target_s * 1e3,
        "tools": cfg.tools,
        "parts": cfg.parts,
        "rows": [],
    }
    if "torch" in cfg.tools or "torch.compile" in cfg.tools:
        with contextlib.suppress(peers.Skip):
            result["torch_threads"] = peers.need("torch").get_num_threads()
    if "table" in cfg.parts:
        result["rows"] = table.rows(cfg, ops)
    timed_parts = {  # after the table, in this order
        "calls": lambda: timing.small_calls(cfg.tools, cfg.rounds, cfg.target_s),
        "compile": lambda: timing.compile_times(ops, cfg.tools, cfg.compile_reps),
    }
    for part, measure_part in timed_parts.items():
        if part not in cfg.parts:
            continue
        try:
            result[part] = measure_part()
            say(f"{part}: {report.summary(part, result[part])}")
        except Exception as exc:  # one part failing must not lose the others' numbers
            result.setdefault("errors", {})[part] = table.one_line(exc)
            say(f"{part} failed: {table.one_line(exc)}")
    if result["load_average"]:
        result["load_average"]["end"] = _load()
    return result


def add_subcommand(sub) -> None:
    """Register `aclgen bench` on the CLI's subparsers."""
    s = sub.add_parser(
        "bench",
        help="time operators against numpy, torch, torch.compile and numba, with a triad bandwidth",
        description="Time aclgen against its CPU peers (numpy; torch eager, torch.compile and numba when installed) "
        "in the same process, in interleaved rounds (median per tool), next to a triad bandwidth "
        "measurement, and print the ratio to the best peer and the fraction of the triad per row, then "
        "the small-call costs and the compile times. Without --sizes and --dtypes the default matrix is "
        "float32 at 1K,64K,1M,16M plus float16 and bfloat16 at 1M; sizes are elements per kernel output "
        "(SwiGluGrad: yGrad's, x has 2N).",
    )
    s.add_argument("ops", nargs="*", metavar="OP",
                   help="operators: built-in or aclnn names, or FILE.py:NAME (default: the built-ins)")
    s.add_argument("--sizes", help=f"comma list of sizes in elements, e.g. {DEFAULT_SIZES} (K = 1024), or of "
                   "shapes, e.g. 4096x4096,65536x256")
    s.add_argument("--dtypes", help=f"comma list of dtypes (default with --sizes: {DEFAULT_DTYPES})")
    s.add_argument("--tools", help=f"comma list of tools to run (default: all installed of {','.join(TOOLS)}; aclgen always runs)")
    s.add_argument("--parts", help=f"comma list of parts (default: {','.join(PARTS)})")
    s.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7); each tool's time is the median")
    s.add_argument("--target-ms", type=float, default=20.0, help="length of one sample (default 20 ms)")
    s.add_argument("--compile-reps", type=int, default=3, help="compiles per tool in the compile part (median; default 3)")
    s.add_argument("--json", metavar="FILE", help="write every number (samples included) as JSON")
    s.add_argument("--plot", metavar="FILE.png", help="draw GB/s against size per tool (needs matplotlib)")
    s.add_argument("--isa", default="native", choices=list(config.ISAS),
                   help="instruction set every tool is held to: native (default: this machine's best), avx2 "
                   "(aclgen and numba generate haswell code, torch runs its AVX2 kernels; in a child process), avx512")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    s.add_argument(_CHILD, action="store_true", help=argparse.SUPPRESS)  # set by run() for its child
    s.set_defaults(func=run)


_CHILD = "--isa-child"  # the child of an --isa run: the environment is already the ISA's


def _argv(args) -> list[str]:
    """The command line of `args` (what run() passes to its child)."""
    argv = list(args.ops)
    for flag, value in (("--sizes", args.sizes), ("--dtypes", args.dtypes), ("--tools", args.tools),
                        ("--parts", args.parts), ("--rounds", args.rounds), ("--target-ms", args.target_ms),
                        ("--compile-reps", args.compile_reps), ("--json", args.json), ("--plot", args.plot),
                        ("--isa", args.isa)):
        if value is not None:
            argv += [flag, str(value)]
    return argv + (["--quiet"] if args.quiet else [])


def in_child(argv: Sequence[str], env: dict[str, str | None]) -> int:
    """`python ARGV...` in a child process with this process's environment and `env` over it
    (None: removed), importing this aclgen (its directory leads PYTHONPATH); the exit status. Its
    output is this command's (inherited stdout and stderr)."""
    import subprocess

    import aclgen

    root = os.path.dirname(os.path.dirname(os.path.abspath(aclgen.__file__)))
    environ = {k: v for k, v in os.environ.items() if k not in env} | {k: v for k, v in env.items() if v is not None}
    environ["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])
    sys.stdout.flush()
    sys.stderr.flush()
    return subprocess.run([sys.executable, *argv], env=environ).returncode


def run(args) -> int:
    """`aclgen bench ARGS`: measure, print the tables, write --json and --plot; 1 when a row or a
    part failed."""
    if args.rounds < 1:
        raise UsageError("--rounds must be >= 1")
    if args.target_ms <= 0 or args.compile_reps < 1:
        raise UsageError("--target-ms must be > 0 and --compile-reps >= 1")
    isa = config.isa(args.isa)
    env = config.isa_environment(isa)
    if args.plot:
        try:
            import matplotlib  # noqa: F401  # pyright: ignore[reportMissingImports]  (optional: the [bench] extra)
        except ImportError:
            raise UsageError("--plot needs matplotlib: pip install matplotlib (or pip install -e '.[bench]')") from None
    cfg = Config(
        ops=config.operators(args.ops),
        matrix=config.matrix(args.sizes, args.dtypes),
        tools=config.tools(args.tools),
        parts=config.parts(args.parts, named_ops=bool(args.ops)),
        rounds=args.rounds,
        target_s=args.target_ms / 1e3,
        compile_reps=args.compile_reps,
        isa=isa.name,
        progress=None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True)),
    )
    if env and not args.isa_child:  # the arguments are valid: measure in a child with the ISA's variables
        # -P: no working directory on sys.path, so this aclgen (PYTHONPATH) is the one imported
        main = "import sys; from aclgen.cli import main; sys.exit(main(sys.argv[1:]))"
        return in_child(["-P", "-c", main, "bench", *_argv(args), _CHILD], env)
    result = measure(cfg)
    sys.stdout.write(report.markdown(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.plot:
        report.plot(result, args.plot)
    return 1 if any(r["error"] for r in result["rows"]) or result.get("errors") else 0
