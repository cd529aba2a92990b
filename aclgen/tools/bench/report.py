"""What `aclgen bench` prints and writes: the markdown tables, the plot, and the description of
the machine and the versions that a result carries."""

from __future__ import annotations

import contextlib
import os
import platform

from aclgen.tools import UsageError, count
from aclgen.tools.bench.peers import TOOLS, need
from aclgen.tools.bench.timing import CALLS_OP


def versions() -> dict[str, str | None]:
    """The versions of Python, aclgen, its dependencies and the peers (None: not installed)."""
    import importlib.metadata as md

    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in ("aclgen", "numpy", "llvmlite", "xdsl", "torch", "numba", "matplotlib"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = None
    return out


def _caches() -> str:
    """`L1d 32K, L2 512K, L3 32768K` from sysfs (per core's view; "" where it is not readable)."""
    names = []
    root = "/sys/devices/system/cpu/cpu0/cache"
    with contextlib.suppress(OSError):
        for entry in sorted(os.listdir(root)):
            if not entry.startswith("index"):
                continue
            with contextlib.suppress(OSError):
                def read(name: str, entry: str = entry) -> str:
                    with open(os.path.join(root, entry, name)) as f:
                        return f.read().strip()

                kind = read("type")
                if kind == "Instruction":
                    continue
                names.append(f"L{read('level')}{'d' if kind == 'Data' else ''} {read('size')}")
    return ", ".join(names)


def machine() -> dict:
    """The CPU, its cores and vector features, the OS, the LLVM target and aclgen's knobs."""
    cpu = platform.processor() or platform.machine()
    flags: set[str] = set()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and cpu in ("", platform.machine()):
                cpu = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    info = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "features": [f for f in ("avx2", "fma", "f16c", "avx512f", "avx512bf16") if f in flags],
        "os": platform.platform(),
        "caches": _caches(),
    }
    with contextlib.suppress(Exception):
        from aclgen.codegen.target import host

        h = host()
        info["llvm_cpu"] = h.cpu
        info["f32_lanes"] = h.f32_lanes
        if h.override:
            info["llvm_features"] = h.features
    with contextlib.suppress(Exception):
        from aclgen.knobs import knobs

        info["aclgen_knobs"] = knobs().as_dict()
    return info


def isa(requested: str, tools) -> dict:
    """The instruction set each tool generated code for in this process: `requested` (--isa),
    the variables that set it, aclgen's LLVM target, torch's ATen CPU capability and
    torch.compile's vector ISA, numba's CPU (only for the tools that run)."""
    from aclgen.knobs import cpu_target

    env: dict[str, str] = dict(zip(("ACLGEN_CPU_NAME", "ACLGEN_CPU_FEATURES"), cpu_target()))
    env.update((k, os.environ.get(k, "")) for k in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "ATEN_CPU_CAPABILITY"))
    out: dict = {"requested": requested, "environment": {k: v for k, v in env.items() if v}}
    with contextlib.suppress(Exception):
        from aclgen.codegen.target import host

        h = host()
        out["aclgen"] = {"llvm_cpu": h.cpu, "llvm_features": h.features if h.override else "host",
                         "f32_lanes": h.f32_lanes}
    if "torch" in tools or "torch.compile" in tools:
        with contextlib.suppress(Exception):
            out["torch"] = need("torch").backends.cpu.get_cpu_capability()
    if "torch.compile" in tools:
        with contextlib.suppress(Exception):
            from torch._inductor import cpu_vec_isa  # pyright: ignore[reportMissingImports]

            out["torch.compile"] = str(cpu_vec_isa.pick_vec_isa())
    if "numba" in tools or "numba-prange" in tools:
        with contextlib.suppress(Exception):
            cfg = need("numba").config
            out["numba"] = {"llvm_cpu": cfg.CPU_NAME or "host",
                            "llvm_features": "host" if cfg.CPU_FEATURES is None else "NUMBA_CPU_FEATURES"}
    return out


def isa_line(info: dict | None) -> str:
    """"ISA avx2: aclgen haswell (8 f32 lanes), torch AVX2, torch.compile avx2, numba haswell"."""
    if not info:
        return ""
    parts = []
    if "aclgen" in info:
        a = info["aclgen"]
        parts.append(f"aclgen {a['llvm_cpu']} ({a['f32_lanes']} f32 lanes)")
    parts += [f"{t} {info[t]}" for t in ("torch", "torch.compile") if t in info]
    if "numba" in info:
        parts.append(f"numba {info['numba']['llvm_cpu']}")
    return f"ISA {info['requested']}: " + ", ".join(parts)


def fmt_us(us: float | None) -> str:
    if us is None:
        return "-"
    return f"{us:,.0f}" if us >= 1000 else f"{us:.1f}" if us >= 10 else f"{us:.2f}"


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def _versus(row: dict, tool: str) -> str:
    """` (1.52×)`: a peer's median time over aclgen's in a row ("" for aclgen or no time)."""
    us, ours = row["us"].get(tool), row["us"].get("aclgen")
    return "" if tool == "aclgen" or not us or not ours else f" ({us / ours:.2f}×)"


def summary(part: str, numbers: dict) -> str:
    """The progress line of the calls or the compile part."""
    if part == "calls":
        return ", ".join(f"{c['name']} {c['us']:.2f} us" for c in numbers["rows"])
    return ", ".join(f"{c['tool']} {c['op']} {c['ms']:.0f} ms" for c in numbers["aclgen"] + numbers["peers"])


def markdown(result: dict, every_tool: bool = True) -> str:
    """The markdown tables; `every_tool=False` leaves out the table of every tool's time."""
    lines: list[str] = []
    m = result["machine"]
    v = result["versions"]
    peers = ", ".join(f"{k} {v[k]}" for k in ("numpy", "torch", "numba") if v.get(k))
    load = result.get("load_average")
    load_text = f"; load average {load['start']:.1f} at the start, {load['end']:.1f} at the end" if load and "end" in load else ""
    lines.append(f"aclgen bench, {result['date']}: {m['cpu']}, {m['cores']} cores ({', '.join(m['features'])}); "
                 f"{peers}; {count(result['rounds'], 'interleaved round')}, median per tool{load_text}")
    if result.get("isa"):
        lines.append(f"{isa_line(result['isa'])}.")
    rows = result.get("rows", [])
    if rows:
        lines += ["", "| op | dtype | size | aclgen µs | best peer | peer µs | × | × of minima | aclgen GB/s | of triad | best peer of triad |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            if r["error"]:
                lines.append(f"| {r['op']} | {r['dtype']} | {r['size_label']} | error: {r['error']} |")
                continue
            frac = r["triad_fraction"]
            best = r["best_peer"]
            lines.append(
                f"| {r['op']} | {r['dtype']} | {r['size_label']} | {fmt_us(r['us'].get('aclgen'))} | {best or '-'} | "
                f"{fmt_us(r['best_peer_us'])} | {_fmt(r['ratio'], '.2f')} | {_fmt(r.get('ratio_of_minima'), '.2f')} | "
                f"{_fmt(r['gbps'].get('aclgen'), '.1f')} | "
                f"{_fmt(frac.get('aclgen'), '.2f')} | {_fmt(frac.get(best) if best else None, '.2f')} |"
            )
        lines += ["", "× = best peer's median µs / aclgen's (> 1: aclgen is faster); × of minima = the same from each "
                  "tool's fastest round (less hurt by other load); GB/s = (inputs + output bytes) / median time; "
                  "of triad = GB/s / the triad's GB/s at the same bytes, measured in the same rounds."]
        used = [t for t in TOOLS if any(t in r["us"] for r in rows)] if every_tool else []
        lines += [] if not used else ["", "Median µs per call, every tool, and in brackets each peer's time / aclgen's "
                                      "(triad: GB/s of the best triad at the row's bytes):", "",
                  "| op | dtype | size | " + " | ".join(used) + " | triad GB/s |",
                  "|---|---|---|" + "---|" * (len(used) + 1)]
        for r in rows if used else []:
            cells = [fmt_us(r["us"].get(t)) + _versus(r, t) + (" ≠" if t in r["mismatch"] else "") for t in used]
            lines.append(f"| {r['op']} | {r['dtype']} | {r['size_label']} | " + " | ".join(cells)
                         + f" | {_fmt(r['triad_gbps'], '.1f')} ({(r['triad_tool'] or '-').removeprefix('triad ')}) |")
        skipped: dict[str, set[str]] = {}  # reason -> tools
        for r in rows:
            for t, why in r["skipped"].items():
                skipped.setdefault(why, set()).add(t)
        notes = sorted(f"{', '.join(t for t in TOOLS if t in tools)}: {why}" for why, tools in skipped.items())
        bad = [f"{r['op']} {r['dtype']} {r['size_label']} {t}: {why}" for r in rows for t, why in r["mismatch"].items()]
        if notes:
            lines += ["", "Skipped: " + "; ".join(notes)]
        if bad:
            lines += ["", "Results that differ from aclgen's (marked ≠, not counted as best peer):"] + [f"  {b}" for b in bad]
    calls = result.get("calls")
    if calls:
        lines += ["", f"Small calls ({calls['op']}, {calls['size']} {calls['dtype']}):", "",
                  "| call | median µs |", "|---|---|"]
        for c in calls["rows"]:
            lines.append(f"| {c['name']} | {c['us']:.2f} |")
    comp = result.get("compile")
    if comp:
        lines += ["", f"Compile times (a new variant, cold; peers: a fresh function, {CALLS_OP} float32):", "",
                  "| tool | op | median ms |", "|---|---|---|"]
        for c in comp["aclgen"] + comp["peers"]:
            lines.append(f"| {c['tool']} | {c['op']} | {c['ms']:.0f} |")
        ws = comp.get("warm_start") or {}
        if "error" in ws:
            lines.append(f"\nFresh process: failed: {ws['error']}")
        elif ws:
            c, w = ws["cold_cache"], ws["warm_cache"]
            lines.append(f"\nFresh processes with the kernels on disk (medians of {len(w['samples_ms'])}): `import "
                         f"aclgen.ops` and the first call {w['ms']:.0f} ms, {w['ratio']:.2f}x numpy's own import "
                         f"({w['numpy_ms']:.0f} ms) in the same process; the second call {w['second_ms']:.2f} ms; xDSL "
                         f"imported: {w['xdsl_imported']}. With an empty disk cache: {c['ms']:.0f} ms to the end of "
                         f"the first call.")
    for part, why in (result.get("errors") or {}).items():
        lines += ["", f"The {part} part failed: {why}"]
    return "\n".join(lines) + "\n"


def plot(result: dict, path: str) -> None:
    """GB/s against bytes per call, one panel per operator: a colour per tool, a marker per dtype
    (float32 sizes joined by a line), the triad as the dashed memory limit."""
    # optional (the [bench] extra), so not installed where the package is type-checked
    import matplotlib  # pyright: ignore[reportMissingImports]

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pyright: ignore[reportMissingImports]
    from matplotlib.lines import Line2D  # pyright: ignore[reportMissingImports]

    rows = [r for r in result["rows"] if not r["error"]]
    ops_ = list(dict.fromkeys(r["op"] for r in rows))
    if not ops_:
        raise UsageError("--plot: no rows to plot")
    colors: dict[str, str] = dict(zip(TOOLS, ("tab:blue", "tab:gray", "tab:orange", "tab:red", "tab:green", "tab:purple")))
    markers = {"float32": "o", "float16": "s", "bfloat16": "^"}
    cols = min(3, len(ops_))
    nrows = (len(ops_) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.8 * nrows + 0.8), squeeze=False)
    for ax, op in zip(axes.ravel(), ops_):
        mine = [r for r in rows if r["op"] == op]
        for tool in TOOLS:
            for dtype, marker in markers.items():
                pts = sorted((r["bytes"], r["gbps"][tool]) for r in mine if r["dtype"] == dtype and r["gbps"].get(tool))
                if pts:
                    xs, ys = zip(*pts)
                    ax.plot(xs, ys, marker=marker, color=colors[tool], linestyle="-" if dtype == "float32" else "none",
                            linewidth=2.4 if tool == "aclgen" else 1.0, markersize=6 if tool == "aclgen" else 4)
        tri = sorted({(r["bytes"], r["triad_gbps"]) for r in mine if r["triad_gbps"] and r["dtype"] == "float32"})
        if tri:
            xs, ys = zip(*tri)
            ax.plot(xs, ys, "k--", linewidth=1.5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(op, fontsize=10)
        ax.set_xlabel("bytes moved per call (inputs + output)")
        ax.set_ylabel("GB/s")
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes.ravel()[len(ops_):]:
        ax.set_visible(False)
    used = [t for t in TOOLS if any(r["gbps"].get(t) for r in rows)]
    handles = [Line2D([], [], color=colors[t], linewidth=2.4 if t == "aclgen" else 1.2, label=t) for t in used]
    handles += [Line2D([], [], color="k", linestyle="--", label="triad a = b + s·c (float32)")]
    handles += [Line2D([], [], color="k", marker=m, linestyle="none", label=d) for d, m in markers.items()
                if any(r["dtype"] == d for r in rows)]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    m = result["machine"]
    fig.suptitle(f"aclgen bench {result['date'][:16]}: {m['cpu']}, {m['cores']} cores, median of "
                 f"{result['rounds']} interleaved rounds", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


