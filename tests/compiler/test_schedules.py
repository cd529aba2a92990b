"""Schedules: the model's choice per target, tuned schedules on disk (aclgen/schedules.py) and
`aclgen tune` (aclgen/tools/tune.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from aclgen import schedules
from aclgen.cache import formula_digest
from aclgen.codegen.target import host, named
from aclgen.compiler import compile_variant
from aclgen.kernel import Options
from aclgen.knobs import overridden
from aclgen.tools import tune
from aclgen.tools.operators import find
from tests import runners

X86 = host().triple.startswith("x86_64")


def _ir(op_name: str, dtype: str = "float32", **env: str) -> str:
    from aclgen import dtypes as dt

    op = find(op_name)
    with overridden(**env):
        variant = op.variant((dt.dtype(dtype),))
        k = compile_variant(op.formula, op.python_name, variant, op.params, op.kernel_arg_names, Options.from_knobs())
        return k.ir["llvm-ir"]


# ---------------------------------------------------------------------------------- the model


@pytest.mark.skipif(not X86, reason="x86-64 CPU names")
@pytest.mark.parametrize("cpu, simple, heavy", [
    ("x86-64", 8, 16),  # SSE2: two xmm; exp bodies four xmm
    ("haswell", 16, 32),  # AVX2: two ymm; four ymm
    ("skylake-avx512", 32, 64),  # AVX-512: two zmm; four zmm
])
def test_model_width_per_target(cpu, simple, heavy):
    assert f"<{simple} x float>" in _ir("hardswish_backward", ACLGEN_CPU_NAME=cpu)
    assert f"<{2 * simple} x float>" not in _ir("hardswish_backward", ACLGEN_CPU_NAME=cpu)
    swiglu = _ir("swi_glu_grad", ACLGEN_CPU_NAME=cpu)
    assert f"<{heavy} x float>" in swiglu and f"<{2 * heavy} x float>" not in swiglu
    # a light deinterleaved bf16 body: 32 lanes, at most four registers
    half = _ir("hardswish_backward", "bfloat16", ACLGEN_CPU_NAME=cpu)
    lanes = min(32, heavy)
    assert f"<{lanes} x float>" in half and f"<{2 * lanes} x float>" not in half


# ------------------------------------------------------------------------ tuned schedules


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ACLGEN_CACHE_DIR", str(tmp_path))
    return tmp_path


def _variant(op_name="hardswish_backward"):
    from aclgen import dtypes as dt

    op = find(op_name)
    return op, op.variant((dt.dtype("float32"),))


def _entry(op, width, tile, **extra):
    return {"width": width, "tile_size": tile, "formula": formula_digest(op.formula), **extra}


def test_nothing_tuned_leaves_the_model(cache_dir):
    op, v = _variant()
    options = Options.from_knobs()
    assert (options.width, options.tile_size) == (0, 0)
    assert schedules.choose(op.python_name, formula_digest(op.formula), v, options) is options
    assert schedules.entries() == {}


def test_tuned_entry_fills_what_options_leave_at_zero(cache_dir):
    op, v = _variant()
    key = schedules.entry_key(op.python_name, v, False)
    path = schedules.save({key: _entry(op, 32, 4096)})
    assert os.path.dirname(path) == str(cache_dir) and json.load(open(path))["target"] == host().key
    digest = formula_digest(op.formula)
    chosen = schedules.choose(op.python_name, digest, v, Options())
    assert (chosen.width, chosen.tile_size) == (32, 4096)
    explicit = schedules.choose(op.python_name, digest, v, Options(width=8))
    assert (explicit.width, explicit.tile_size) == (8, 4096)  # an explicit width wins
    # the streaming-store variant is its own entry
    nt = schedules.choose(op.python_name, digest, v, Options(nontemporal=True))
    assert (nt.width, nt.tile_size) == (0, 0)


def test_stale_or_foreign_or_broken_entries_are_ignored(cache_dir):
    op, v = _variant()
    key = schedules.entry_key(op.python_name, v, False)
    digest = formula_digest(op.formula)
    schedules.save({key: {**_entry(op, 32, 0), "formula": "another formula"}})
    assert schedules.tuned(op.python_name, digest, v, False) is None
    schedules.save({key: _entry(op, 24, 0)})  # not a power of two
    assert schedules.tuned(op.python_name, digest, v, False) is None
    schedules.save({key: _entry(op, 16, 0)})
    assert schedules.tuned(op.python_name, digest, v, False) == (16, 0)
    path = schedules.path()
    data = json.load(open(path))
    data["target"] = "some/other/cpu"
    with open(path, "w") as f:
        json.dump(data, f)
    os.utime(path, ns=(1, 1))  # a new mtime: re-read
    assert schedules.tuned(op.python_name, digest, v, False) is None
    with open(path, "w") as f:
        f.write("{not json")
    os.utime(path, ns=(2, 2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert schedules.entries() == {}
    assert any("ignoring the tuned schedules" in str(w.message) for w in caught)
    assert schedules.forget() and not os.path.exists(path) and not schedules.forget()


def test_a_tuned_schedule_reaches_the_kernel_a_call_runs(cache_dir):
    """In a fresh process (this one's kernels are memoized): the call's kernel is compiled with
    the tuned width, and its results are the model's, bit for bit."""
    op, v = _variant()
    schedules.save({schedules.entry_key(op.python_name, v, False): _entry(op, 8, 2048)})
    code = (
        "import numpy as np\n"
        "from aclgen.runtime.function import function_of\n"
        "from aclgen.tools.operators import find\n"
        "x = np.linspace(-5, 5, 1001, dtype=np.float32)\n"
        "fn = function_of(find('hardswish_backward'))\n"
        "k = fn.kernel_for(x, x)\n"
        "print(k.options.width, k.options.tile_size, '<8 x float>' in k.ir['llvm-ir'])\n"
        "np.save('out.npy', fn(x, x))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cache_dir,
                       env={**os.environ, "ACLGEN_CACHE_DIR": str(cache_dir)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["8", "2048", "True"]
    x = np.linspace(-5, 5, 1001, dtype=np.float32)
    want = find("hardswish_backward")
    from aclgen.runtime.function import function_of

    assert np.load(cache_dir / "out.npy").tobytes() == function_of(want)(x, x).tobytes()


# --------------------------------------------------------------------------- aclgen tune


def _tune(cache_dir, *args):
    return runners.aclgen("tune", *args, env={"ACLGEN_CACHE_DIR": str(cache_dir)})


def test_tune_saves_show_and_forget(cache_dir):
    r = _tune(cache_dir, "hardswish_backward", "threshold_backward", "--dtypes", "float32,float16",
              "--sizes", "4K", "--rounds", "2", "--target-ms", "1")
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if line.startswith("[")]
    assert len(lines) == 4 and all(" 4K " in line for line in lines), r.stdout
    assert "4 schedules saved to" in r.stdout
    file = next(cache_dir.glob("schedules-*.json"))
    data = json.load(open(file))
    assert len(data["entries"]) == 4
    for key, e in data["entries"].items():
        assert key.startswith(("hardswish_backward/", "threshold_backward/"))
        assert e["width"] == 0 or e["width"] & (e["width"] - 1) == 0
        assert e["us"]["4K"] > 0 and e["model_us"]["4K"] > 0
    shown = _tune(cache_dir, "--show")
    assert shown.returncode == 0 and shown.stdout.count("  hardswish_backward/") == 2
    gone = _tune(cache_dir, "--forget")
    assert gone.returncode == 0 and "removed" in gone.stdout and not file.exists()


def test_tune_rejects_what_it_cannot_do(cache_dir):
    r = _tune(cache_dir, "hardswish_backward", "--dtypes", "int64")
    assert r.returncode == 1 and "nothing to tune" in r.stderr
    r = _tune(cache_dir, "no_such_op")
    assert r.returncode == 1 and "error" in r.stderr and "Traceback" not in r.stderr
    r = _tune(cache_dir, "--rounds", "0")
    assert r.returncode == 1 and "--rounds" in r.stderr


def test_a_schedule_that_changes_bits_is_an_error(monkeypatch):
    """The tuner compares every candidate's outputs with the model's; a difference is reported
    as a compiler bug and nothing is saved."""
    op = find("hardswish_backward")

    class Fake:  # a "kernel" whose bits follow the width
        def __call__(self, *args, **kwargs):
            return np.full(8, int(os.environ.get("ACLGEN_VECTOR_WIDTH", "0")), np.float32)

        def every_output(self, *args):
            return [np.empty(8, np.float32)]

    def fake_function_of(_op):
        return Fake()

    monkeypatch.setattr("aclgen.runtime.function.function_of", fake_function_of)
    from aclgen import dtypes as dt

    with pytest.raises(RuntimeError, match="changed result bits"):
        tune._edge_check(op, dt.dtype("float32"), [(16, 0)])
    tune._edge_check(op, dt.dtype("float32"), [(0, 4096)])  # same bits: fine


@pytest.mark.skipif(not X86 or named("haswell").missing != (), reason="needs an AVX2 host")
def test_schedules_are_per_target(cache_dir):
    op, v = _variant()
    schedules.save({schedules.entry_key(op.python_name, v, False): _entry(op, 64, 0)})
    native = schedules.path()
    with overridden(ACLGEN_CPU_NAME="haswell", ACLGEN_CPU_FEATURES="-fma"):
        assert schedules.path() != native
        assert schedules.tuned(op.python_name, formula_digest(op.formula), v, False) is None
