"""`aclgen bench` runs end to end on a tiny size with one round and writes the JSON it documents.

Only the shape of the result is checked, never a timing: the machine is shared and noisy.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from aclgen.cli import UserError, main
from aclgen.declaration import unregister
from aclgen.tools import bench


def _issue4():
    """benchmarks/run_issue4.py, which judges a result against issue 4's targets."""
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "run_issue4.py"
    spec = importlib.util.spec_from_file_location("run_issue4", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(tmp_path, *args: str) -> dict:
    path = tmp_path / "bench.json"
    rc = main(["bench", *args, "--rounds", "1", "--target-ms", "0.5", "--quiet", "--json", str(path)])
    assert rc == 0
    return json.loads(path.read_text())


def _positive(x) -> bool:
    return isinstance(x, float) and math.isfinite(x) and x > 0


def test_bench_json_shape(tmp_path, capsys):
    result = _run(tmp_path, "hardswish_backward", "SwiGluGrad", "--sizes", "1K", "--dtypes", "float32,bfloat16",
                  "--tools", "aclgen,numpy", "--parts", "table,calls")
    out = capsys.readouterr().out
    assert "| op | dtype | size | aclgen µs | best peer |" in out
    assert result["version"] == 1 and result["rounds"] == 1
    assert result["tools"] == ["aclgen", "numpy"]
    assert {"cpu", "cores", "features"} <= set(result["machine"])
    rows = result["rows"]
    assert [(r["op"], r["dtype"], r["size"]) for r in rows] == [
        ("hardswish_backward", "float32", 1024), ("hardswish_backward", "bfloat16", 1024),
        ("swi_glu_grad", "float32", 1024), ("swi_glu_grad", "bfloat16", 1024),
    ]
    for r in rows:
        assert r["error"] is None and r["mismatch"] == {}, r
        assert set(r["us"]) == {"aclgen", "numpy"}
        assert all(_positive(v) for v in r["us"].values())
        assert all(len(s) == 1 for s in r["samples_us"].values())
        assert r["best_peer"] == "numpy" and _positive(r["best_peer_us"]) and _positive(r["ratio"])
        assert _positive(r["triad_gbps"]) and r["triad_tool"].startswith("triad ")
        assert _positive(r["triad_fraction"]["aclgen"]) and _positive(r["gbps"]["aclgen"])
        assert r["size_label"] == "1K"
    # SwiGluGrad's size is yGrad's: x and out hold 2N elements.
    assert rows[2]["bytes"] == 5 * 1024 * 4 and rows[0]["bytes"] == 3 * 1024 * 4
    calls = {c["name"]: c for c in result["calls"]["rows"]}
    assert {"aclgen.ops call", "aclnn executor re-run (repeatable)", "aclnn two-phase call",
            "aclnn two-phase call on a stream + synchronize", "aclnn executor re-run on a stream + synchronize",
            "numpy (peer)"} <= set(calls)
    assert all(_positive(c["us"]) for c in calls.values())
    assert "targets" not in result  # aclgen bench reports numbers; issue 4's targets judge them
    targets = _issue4().targets(result)
    kinds = {t["target"].split(" at ")[0] for t in targets}
    assert "aclnn two-phase call" in kinds  # the small-call targets are judged; 1K rows have none
    assert all(isinstance(t["met"], bool) for t in targets)


def test_bench_compile_part(tmp_path):
    result = _run(tmp_path, "threshold_backward", "--tools", "aclgen", "--parts", "compile", "--compile-reps", "1")
    assert result["rows"] == []
    comp = result["compile"]
    (c,) = comp["aclgen"]
    assert c["op"] == "threshold_backward" and _positive(c["ms"]) and c["stages_ms"]
    ws = comp["warm_start"]
    assert "error" not in ws, ws
    warm = ws["warm_cache"]
    assert all(_positive(warm[k]) for k in ("ms", "numpy_ms", "ratio", "second_ms"))
    assert isinstance(warm["xdsl_imported"], bool) and len(warm["runs"]) == bench.timing.WARM_RUNS
    samples = ws["warm_cache"]["samples_ms"]
    assert len(samples) == bench.timing.WARM_RUNS and ws["warm_cache"]["ms"] == sorted(samples)[len(samples) // 2]
    assert any(t["target"].startswith("compile a new variant") for t in _issue4().targets(result))


def test_named_operators_time_only_their_table(tmp_path, capsys):
    """`aclgen bench OP` times OP's rows; the small calls and compile times (the built-in
    hardswish_backward's and the peers') run only when --parts asks."""
    result = _run(tmp_path, "threshold_backward", "--sizes", "1K", "--dtypes", "float32", "--tools", "aclgen")
    assert result["parts"] == ["table"] and "calls" not in result and "compile" not in result
    assert [r["op"] for r in result["rows"]] == ["threshold_backward"]
    assert bench.config.parts(None) == list(bench.config.PARTS)


def test_without_numba_the_one_reason_is_that_it_is_missing(monkeypatch):
    """Not "numba has no bfloat16" for some rows and "not installed" for others."""
    import sys

    from aclgen import dtypes as dt
    from aclgen.ops import OPERATORS

    monkeypatch.setitem(sys.modules, "numba", None)  # import numba fails
    monkeypatch.setattr(bench.peers, "_NUMBA", {})
    for dtype in (dt.float32, dt.bfloat16):
        p = bench.peers.make_problem(OPERATORS["hardswish_backward"], dtype, 1024)
        for tool in ("numba", "numba-prange"):
            with pytest.raises(bench.peers.Skip, match=r"^numba is not installed$"):
                bench.peers.build(tool, p, p.empty_outs())


def test_bench_plot(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "roofline.png"
    rc = main(["bench", "threshold_backward", "--sizes", "1K,4K", "--dtypes", "float32", "--tools", "aclgen,numpy",
               "--parts", "table", "--rounds", "1", "--target-ms", "0.5", "--quiet", "--plot", str(png)])
    assert rc == 0 and png.read_bytes()[:4] == b"\x89PNG"


def test_matrix_and_sizes():
    cfg = bench.config
    assert cfg.parse_size("1K") == 1024 and cfg.parse_size("16m") == 1 << 24 and cfg.parse_size("1000") == 1000
    assert cfg.size_label(1 << 20) == "1M" and cfg.size_label(1000) == "1000"
    # the default matrix (issue 4's table): f32 at 4 sizes, half types at 1M
    assert cfg.matrix(None, None) == cfg.DEFAULT_MATRIX == _issue4().ISSUE_MATRIX == [
        ("float32", 1 << 10), ("float32", 1 << 16), ("float32", 1 << 20), ("float32", 1 << 24),
        ("float16", 1 << 20), ("bfloat16", 1 << 20)]
    assert cfg.matrix("1K,2K", "f16") == [("float16", 1024), ("float16", 2048)]
    assert cfg.tools("numba,aclgen") == ["aclgen", "numba"]


@pytest.mark.parametrize("args, message", [
    (["nope"], "unknown operator"),
    (["--sizes", "1Q"], "bad size"),
    (["--dtypes", "int8"], "float types"),
    (["--tools", "jax"], "unknown tool"),
    (["--parts", "all"], "unknown part"),
    (["--rounds", "0"], "--rounds"),
])
def test_bench_user_errors(args, message, capsys):
    assert main(["bench", *args, "--quiet"]) == 1
    assert message in capsys.readouterr().err


def test_peers_agree_with_aclgen():
    """Each installed peer computes the operator aclgen does, in every float dtype (4K elements;
    HardswishBackward at x = ±3 aside, where SPEC.md and torch differ on purpose)."""
    from aclgen import dtypes as dt
    from aclgen.ops import OPERATORS

    peers = bench.peers
    assert set(peers.PEERS) == {op.name for op in OPERATORS.values()}  # every built-in has its peers
    for op in OPERATORS.values():
        for dtype in (dt.float32, dt.float16, dt.bfloat16):
            p = peers.make_problem(op, dtype, 1 << 16)  # enough for rare cancellations
            ours = p.empty_outs()
            peers.build("aclgen", p, ours)()
            for tool in ("numpy", "torch", "numba"):
                out = p.empty_outs()
                try:
                    fn = peers.build(tool, p, out)
                except peers.Skip:
                    continue
                fn()
                why = peers.agree(p, ours, peers.results(fn, out))
                assert why is None, (tool, op.name, dtype.name, why)


def test_user_error_type():
    with pytest.raises(UserError):
        bench.config.parse_size("x")


def test_a_failing_part_keeps_the_others(tmp_path, monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("compiler changed under us")

    monkeypatch.setattr(bench.timing, "compile_times", broken)
    path = tmp_path / "bench.json"
    rc = main(["bench", "threshold_backward", "--sizes", "1K", "--dtypes", "float32", "--tools", "aclgen",
               "--parts", "table,compile", "--rounds", "1", "--target-ms", "0.5", "--quiet", "--json", str(path)])
    assert rc == 1
    result = json.loads(path.read_text())
    assert result["errors"] == {"compile": "RuntimeError: compiler changed under us"}
    assert len(result["rows"]) == 1 and result["rows"][0]["error"] is None
    assert "The compile part failed: RuntimeError: compiler changed under us" in capsys.readouterr().out


def test_any_declared_operator(tmp_path):
    """A user's operator (FILE.py:NAME) is timed through its Python function, with no peers; a
    built-in named by its aclnn name has its peers."""
    module = tmp_path / "bench_user_ops.py"
    module.write_text(
        "import aclgen\n"
        "from aclgen import select\n\n"
        "@aclgen.operator('BenchSuiteLeakyBackward', inputs=('gradOutput', 'self'), outputs=('gradInput',),\n"
        "                 scalars=('negativeSlope',), dtypes=('float32',))\n"
        "def bench_suite_leaky_backward(g, x, negative_slope):\n"
        "    return select(x > 0.0, g, g * negative_slope)\n"
    )
    try:
        result = _run(tmp_path, f"{module}:BenchSuiteLeakyBackward", "aclnnSeluBackward", "--sizes", "1K",
                      "--dtypes", "float32,float16", "--tools", "aclgen,numpy", "--parts", "table")
    finally:
        unregister("BenchSuiteLeakyBackward")  # other tests iterate the registry
    rows = result["rows"]
    assert [(r["op"], r["dtype"]) for r in rows] == [  # the user's operator declares float32 only
        ("bench_suite_leaky_backward", "float32"), ("selu_backward", "float32"), ("selu_backward", "float16")]
    mine = rows[0]
    assert mine["error"] is None and set(mine["us"]) == {"aclgen"} and _positive(mine["us"]["aclgen"])
    assert mine["best_peer"] is None and "no peer implementation" in mine["skipped"]["numpy"]
    assert mine["bytes"] == 3 * 1024 * 4
    assert all(r["best_peer"] == "numpy" and r["mismatch"] == {} for r in rows[1:])


def _avx2_runs_here() -> bool:
    from aclgen.codegen.target import named, real_host

    return real_host().triple.startswith("x86_64") and not named("haswell").missing


@pytest.mark.skipif(not _avx2_runs_here(), reason="needs an x86-64 machine that runs AVX2 code")
def test_bench_isa_avx2_holds_every_tool_to_avx2(tmp_path, capfd):
    """`--isa avx2` measures in a child process with ACLGEN_CPU_NAME, NUMBA_CPU_NAME/FEATURES and
    ATEN_CPU_CAPABILITY set; the result and the report say what each tool used."""
    path = tmp_path / "avx2.json"
    rc = main(["bench", "--isa", "avx2", "--sizes", "1K", "--dtypes", "float32", "--rounds", "2", "-q",
               "hardswish_backward", "--target-ms", "0.5", "--json", str(path)])
    out = capfd.readouterr().out
    assert rc == 0
    result = json.loads(path.read_text())
    isa = result["isa"]
    assert isa["requested"] == "avx2"
    assert isa["aclgen"] == {"llvm_cpu": "haswell", "llvm_features": "", "f32_lanes": 8}
    env = isa["environment"]
    assert env["ACLGEN_CPU_NAME"] == env["NUMBA_CPU_NAME"] == "haswell" and env["ATEN_CPU_CAPABILITY"] == "avx2"
    assert "+avx2" in env["NUMBA_CPU_FEATURES"] and "-avx512f" in env["NUMBA_CPU_FEATURES"]
    if "torch" in isa:  # the peers are optional; where installed they report what they ran
        assert isa["torch"] == "AVX2"
    if "numba" in isa:
        assert isa["numba"] == {"llvm_cpu": "haswell", "llvm_features": "NUMBA_CPU_FEATURES"}
    assert result["machine"]["llvm_cpu"] == "haswell" and "--isa-child" not in result["command"]
    (row,) = result["rows"]
    assert row["error"] is None and row["mismatch"] == {} and _positive(row["us"]["aclgen"])
    assert "ISA avx2: aclgen haswell (8 f32 lanes)" in out and "| hardswish_backward | float32 | 1K |" in out


def test_bench_isa_native_runs_here(tmp_path, monkeypatch):
    from aclgen.codegen.target import real_host

    monkeypatch.delenv("ACLGEN_CPU_NAME", raising=False)
    monkeypatch.delenv("ACLGEN_CPU_FEATURES", raising=False)
    result = _run(tmp_path, "threshold_backward", "--sizes", "1K", "--dtypes", "float32", "--tools", "aclgen",
                  "--parts", "table", "--isa", "native")
    assert result["isa"]["requested"] == "native" and result["isa"]["environment"] == {}
    assert result["isa"]["aclgen"] == {"llvm_cpu": real_host().cpu, "llvm_features": "host",
                                       "f32_lanes": real_host().f32_lanes}


def test_bench_refuses_an_isa_this_machine_lacks(capsys):
    from aclgen.codegen.target import named, real_host

    if not real_host().triple.startswith("x86_64") or not named("skylake-avx512").missing:
        pytest.skip("this machine runs AVX-512 code")
    assert main(["bench", "--isa", "avx512", "--sizes", "1K", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "--isa avx512: this machine" in err and "avx512f" in err


def test_bench_child_gets_the_same_arguments():
    import argparse

    parser = argparse.ArgumentParser()
    bench.add_subcommand(parser.add_subparsers())
    argv = ["bench", "a", "b.py:C", "--sizes", "1K,2K", "--dtypes", "float16", "--tools", "aclgen,numba",
            "--parts", "table", "--rounds", "3", "--target-ms", "2.5", "--compile-reps", "2", "--json", "x.json",
            "--isa", "avx2", "-q"]
    args = parser.parse_args(argv)
    again = parser.parse_args(["bench", *bench._argv(args)])
    assert vars(again) == vars(args)
