"""The table part: one row per (operator, dtype, size or shape), every tool timed in the same
rounds next to the triad at the row's bytes."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from aclgen import dtypes as dt
from aclgen.tools.bench import peers, timing
from aclgen.tools.bench.config import Config, Size, shape_of, size_label
from aclgen.tools.bench.report import fmt_us


def one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"


@dataclass
class Row:
    op: str
    dtype: str
    size: Size  # elements per kernel output (a 1-D problem), or a shape
    nbytes: int
    us: dict[str, float] = field(default_factory=dict)
    samples_us: dict[str, list[float]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    mismatch: dict[str, str] = field(default_factory=dict)
    triad_gbps: float | None = None
    triad_tool: str | None = None
    error: str | None = None

    def gbps(self, tool: str) -> float | None:
        us = self.us.get(tool)
        return None if not us else self.nbytes / (us * 1e3)

    def triad_fraction(self, tool: str) -> float | None:
        gbps = self.gbps(tool)
        return gbps / self.triad_gbps if gbps and self.triad_gbps else None

    def best_peer(self) -> tuple[str, float] | None:
        times = [(us, t) for t, us in self.us.items() if t != "aclgen" and t not in self.mismatch]
        if not times:
            return None
        us, t = min(times)
        return t, us

    def ratio(self, peer: str | None = None) -> float | None:
        """Peer time / aclgen time (> 1: aclgen is faster); the best peer unless one is named."""
        if "aclgen" not in self.us:
            return None
        if peer is None:
            best = self.best_peer()
            return None if best is None else best[1] / self.us["aclgen"]
        return self.us[peer] / self.us["aclgen"] if peer in self.us else None

    def ratio_of_minima(self) -> float | None:
        """The ratio from each tool's fastest sample: what a quiet machine would show, roughly
        (load slows the multi-threaded tools' medians most)."""
        mins = {t: min(v) for t, v in self.samples_us.items() if v and t not in self.mismatch}
        times = [us for t, us in mins.items() if t != "aclgen"]
        return min(times) / mins["aclgen"] if times and "aclgen" in mins else None

    def as_dict(self) -> dict:
        best = self.best_peer()
        return {
            "op": self.op,
            "dtype": self.dtype,
            "size": int(np.prod(shape_of(self.size))),  # elements
            "shape": list(shape_of(self.size)),
            "size_label": size_label(self.size),
            "bytes": self.nbytes,
            "us": self.us,
            "min_us": {t: min(v) for t, v in self.samples_us.items()},
            "samples_us": self.samples_us,
            "gbps": {t: self.gbps(t) for t in self.us},
            "triad_gbps": self.triad_gbps,
            "triad_tool": self.triad_tool,
            "triad_fraction": {t: self.triad_fraction(t) for t in self.us},
            "best_peer": best[0] if best else None,
            "best_peer_us": best[1] if best else None,
            "ratio": self.ratio(),
            "ratio_of_minima": self.ratio_of_minima(),
            "ratio_vs_torch": self.ratio("torch"),
            "skipped": self.skipped,
            "mismatch": self.mismatch,
            "error": self.error,
        }


def run_row(op, dtype: dt.DType, n: Size, chosen: list[str], rounds: int, target_s: float, triad_cache: dict) -> Row:
    """Warm every tool up (compiles, first touch), check the peers' outputs against aclgen's, then
    time them all and the triad at the same bytes in interleaved rounds."""
    try:
        p = peers.make_problem(op, dtype, n)
    except ValueError as exc:  # the operator cannot make outputs of this size
        return Row(op.python_name, dtype.name, n, 0, error=one_line(exc))
    row = Row(op.python_name, dtype.name, n, p.nbytes)
    fns: dict[str, peers.Call] = {}
    outs: dict[str, list[np.ndarray]] = {}
    for tool in chosen:
        out = p.empty_outs()
        try:
            fn = peers.build(tool, p, out)
            fn()  # warm up: compile, first touch
            outs[tool] = peers.results(fn, out)
            fns[tool] = fn
        except peers.Skip as exc:
            row.skipped[tool] = str(exc)
        except Exception as exc:
            if tool == "aclgen":
                row.error = one_line(exc)
                return row
            row.skipped[tool] = f"failed: {one_line(exc)}"
    for tool, result in outs.items():
        if tool != "aclgen":
            why = peers.agree(p, outs["aclgen"], result)
            if why is not None:
                row.mismatch[tool] = why
    n_triad = max(2, p.nbytes // 12)
    if n_triad not in triad_cache:
        triad_cache[n_triad] = timing.triad_impls(n_triad, chosen)
    triads = triad_cache[n_triad]
    try:
        samples = timing.interleaved({**fns, **triads}, rounds, target_s)
    except Exception as exc:  # a tool that ran at warm-up and fails later: keep the other rows
        row.error = f"while timing: {one_line(exc)}"
        return row
    for tool in fns:
        row.samples_us[tool] = [s * 1e6 for s in samples[tool]]
        row.us[tool] = timing.median_us(samples[tool])
    triad_gbps = {name: 12 * n_triad / (timing.median_us(samples[name]) * 1e3) for name in triads}
    row.triad_tool, row.triad_gbps = max(triad_gbps.items(), key=lambda kv: kv[1])
    return row


def rows(cfg: Config, ops: list) -> list[dict]:
    """Every row of the matrix that an operator supports, as the JSON has them."""
    say = cfg.progress or (lambda s: None)
    out = []
    for op in ops:
        triad_cache: dict = {}
        for dtype_name, n in cfg.matrix:
            dtype = dt.dtype(dtype_name)
            if dtype not in op.all_dtypes():
                continue
            t = time.perf_counter()
            row = run_row(op, dtype, n, cfg.tools, cfg.rounds, cfg.target_s, triad_cache)
            out.append(row.as_dict())
            best = row.best_peer()
            say(f"{op.python_name} {dtype_name} {size_label(n)}: aclgen {fmt_us(row.us.get('aclgen'))} us, "
                + (f"best peer {best[0]} {fmt_us(best[1])} us" if best else "no peer")
                + (f", error: {row.error}" if row.error else "") + f" ({time.perf_counter() - t:.1f} s)")
    return out
