"""`aclgen bench` runs end to end on a tiny size with one round and writes the JSON it documents.

Only the shape of the result is checked, never a timing: the machine is shared and noisy.
"""

from __future__ import annotations

import importlib.util
import json
import math

import pytest

from aclgen.cli import UserError, main
from aclgen.declaration import unregister
from aclgen.tools import bench
from tests import ROOT


def _issue4():
    """benchmarks/run_issue4.py, which judges a result against issue 4's targets."""
    path = ROOT / "benchmarks" / "run_issue4.py"
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
        assert r["size_label"] == "1K" and r["shape"] == [1024]
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
    (["hardswish_backward", "--sizes", "99999999999999", "--tools", "aclgen", "--parts", "table"], "out of memory"),
])
def test_bench_user_errors(args, message, capsys):
    assert main(["bench", *args, "--quiet"]) == 1
    assert message in capsys.readouterr().err


FIRST = ("HardswishBackward", "SeluBackward", "SoftshrinkBackward", "ThresholdBackward", "SwiGluGrad")
OVER_AN_AXIS = ("Softmax", "LogSoftmax", "SoftmaxBackward", "LogSoftmaxBackward", "RmsNorm", "RmsNormGrad",
                "LayerNorm", "LayerNormBackward")


def _agreeing(p, tools) -> dict[str, str]:
    """{tool: why} for each of `tools` whose result differs from aclgen's on `p`; the skipped ones
    are left out."""
    peers = bench.peers
    ours = p.empty_outs()
    peers.build("aclgen", p, ours)()
    bad = {}
    for tool in tools:
        out = p.empty_outs()
        try:
            fn = peers.build(tool, p, out)
        except peers.Skip:
            continue
        fn()
        why = peers.agree(p, ours, peers.results(fn, out))
        if why is not None:
            bad[tool] = why
    return bad


def test_peers_agree_with_aclgen():
    """Each installed peer of the first five built-ins computes the operator aclgen does, in every
    float dtype (64K elements; HardswishBackward at x = ±3 aside, where SPEC.md and torch differ on
    purpose). The other peers: test_peers_over_an_axis, test_family_peers."""
    from aclgen import dtypes as dt
    from aclgen.ops import OPERATORS

    peers = bench.peers
    builtin = {op.name: op for op in OPERATORS.values()}
    assert set(peers.PEERS) <= set(builtin)  # peers of operators that exist
    assert set(FIRST + OVER_AN_AXIS) <= set(peers.PEERS)
    for name in FIRST:
        for dtype in (dt.float32, dt.float16, dt.bfloat16):
            p = peers.make_problem(builtin[name], dtype, 1 << 16)  # enough for rare cancellations
            assert _agreeing(p, ("numpy", "torch", "numba")) == {}, (name, dtype.name)


def test_shapes():
    cfg = bench.config
    assert cfg.parse_shape("4096x4096") == (4096, 4096) and cfg.parse_shape("64Kx256") == (1 << 16, 256)
    assert cfg.parse_shape("2x3x4") == (2, 3, 4) and cfg.parse_shape("1x1024") == (1, 1024)
    assert cfg.parse_shape("1M") == 1 << 20  # a plain size stays a 1-D problem
    assert cfg.size_label((4096, 4096)) == "4096x4096" and cfg.size_label((1 << 16, 256)) == "65536x256"
    assert cfg.shape_of(1024) == (1024,) and cfg.shape_of((2, 3)) == (2, 3)
    assert cfg.matrix("4096x4096,1K", "float32") == [("float32", (4096, 4096)), ("float32", 1024)]
    for bad in ("4096x", "x8", "0x4", "1x1", "4Qx4"):
        with pytest.raises(UserError, match="bad shape"):
            cfg.parse_shape(bad)


def test_problem_of_a_shape():
    """A shape gives the inputs run.input_shapes gives, in the dtypes of the operator's first
    combination, with the attributes' examples for it; a backward's saved tensors come from the
    forward."""
    import numpy as np

    from aclgen import dtypes as dt
    from aclgen.ops import OPERATORS

    peers = bench.peers
    p = peers.make_problem(OPERATORS["rms_norm"], dt.bfloat16, (8, 64))
    assert [(a.shape, a.dtype.name) for a in p.inputs] == [((8, 64), "bfloat16"), ((64,), "float32")]
    assert [(s, d.name) for s, d in p.outputs] == [((8, 64), "bfloat16"), ((8, 1), "float32")]
    p = peers.make_problem(OPERATORS["layer_norm"], dt.float32, (8, 64))
    assert p.scalars == [(64,), 1e-5]  # normalizedShape's example for the shape, eps's default
    p = peers.make_problem(OPERATORS["softmax_backward"], dt.float32, (8, 64))
    assert np.allclose(p.inputs[1].sum(-1), 1, rtol=1e-5) and (p.inputs[1] >= 0).all()  # y = softmax(x)
    p = peers.make_problem(OPERATORS["rms_norm_grad"], dt.float32, (8, 64))
    x, rstd = p.inputs[1], p.inputs[2]
    assert rstd.shape == (8, 1) and np.allclose(rstd, 1 / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True)))
    # a 1-D size keeps its meaning: n elements per kernel output (SwiGluGrad's x holds 2n)
    p = peers.make_problem(OPERATORS["swi_glu_grad"], dt.float32, 1024)
    assert [a.shape for a in p.inputs] == [(1024,), (2048,)]
    p = peers.make_problem(OPERATORS["swi_glu_grad"], dt.float32, (4, 256))
    assert [a.shape for a in p.inputs] == [(4, 256), (4, 512)]


def test_peers_over_an_axis(tmp_path, capsys):
    """A row of a reduction at a small shape: its shape in the table and the JSON, every peer
    (numpy, torch; numba where installed) agreeing, numba's bfloat16 a skip with its reason."""
    pytest.importorskip("torch")
    result = _run(tmp_path, "rms_norm", "--sizes", "16x96", "--dtypes", "float32,bfloat16",
                  "--tools", "aclgen,numpy,torch,numba-prange", "--parts", "table")
    assert "| rms_norm | float32 | 16x96 |" in capsys.readouterr().out
    f32, bf16 = result["rows"]
    for r in (f32, bf16):
        assert r["error"] is None and r["mismatch"] == {}, r
        assert r["shape"] == [16, 96] and r["size"] == 16 * 96 and r["size_label"] == "16x96"
        assert {"aclgen", "numpy", "torch"} <= set(r["us"])
    assert f32["bytes"] == 4 * (2 * 16 * 96 + 96 + 16)  # x, y; gamma; rstd
    assert bf16["bytes"] == 2 * 2 * 16 * 96 + 4 * (96 + 16)  # bfloat16 x and y, float32 gamma and rstd
    if "numba-prange" not in f32["skipped"]:
        assert "numba-prange" in f32["us"]
        assert bf16["skipped"]["numba-prange"] == "numba has no bfloat16"


def test_axis_peers_agree_in_every_dtype():
    """The eight operators over an axis: numpy and torch agree with aclgen in every dtype (numba:
    test_peers_over_an_axis), at a shape whose rows are not a multiple of any vector width."""
    pytest.importorskip("torch")
    from aclgen import dtypes as dt
    from aclgen.ops import OPERATORS

    peers = bench.peers
    builtin = {op.name: op for op in OPERATORS.values()}
    for name in OVER_AN_AXIS:
        for dtype in (dt.float32, dt.float16, dt.bfloat16):
            p = peers.make_problem(builtin[name], dtype, (6, 203))
            assert _agreeing(p, ("numpy", "torch")) == {}, (name, dtype.name)


def test_family_peers(tmp_path):
    """An activation-family operator has torch's own operator for a peer, no numpy or numba loop
    (skips that say so); GeGluBackward's torch formula agrees on the forward's `gelu`."""
    pytest.importorskip("torch")
    from aclgen import dtypes as dt
    from aclgen.ops import OPERATORS

    result = _run(tmp_path, "gelu_backward", "--sizes", "4K", "--dtypes", "bfloat16",
                  "--tools", "aclgen,numpy,torch,numba", "--parts", "table")
    (row,) = result["rows"]
    assert row["error"] is None and row["mismatch"] == {} and set(row["us"]) == {"aclgen", "torch"}
    assert row["skipped"]["numpy"] == "no numpy peer of GeluBackward"
    assert row["skipped"]["numba"] in ("no numba peer of GeluBackward", "numba is not installed")
    p = bench.peers.make_problem(OPERATORS["ge_glu_backward"], dt.float32, (4, 64))
    assert _agreeing(p, ("torch",)) == {}


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


def test_a_size_an_operator_cannot_take_as_one_dim_runs_as_rows():
    """GeluMul's input halves' last dim is at most 512: 1M outputs run as 2048 rows of 512; other
    operators keep one dim; a size no row shape fits keeps the operator's own message."""
    import aclgen.ops
    from aclgen.tools.bench.peers import output_shape

    ops = aclgen.ops.OPERATORS
    assert output_shape(ops["gelu_mul"], 1 << 20) == (2048, 512)
    assert output_shape(ops["fatrelu_mul"], 3 * 1024) == (6, 512)
    assert output_shape(ops["leaky_relu"], 1 << 20) == (1 << 20,)
    assert output_shape(ops["swi_glu_grad"], 1000) == (2000,)
    with pytest.raises(ValueError, match="tiling's limits"):
        output_shape(ops["gelu_mul"], 513 * 400_000)
