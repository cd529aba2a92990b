"""benchmarks/cann_examples.py, on a small stand-in for an ops-nn checkout: aclgen's own family
programs laid out as CANN's (activation/<folder>/examples/test_aclnn_*.cpp), one calling an API
aclgen leaves out of scope, one printing a wrong value. CANN's programs themselves are not in
the repository (docs/cann-examples.md has their table)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

import numpy as np
import pytest

from tests import ROOT

EXAMPLES = ROOT / "examples" / "cpp"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


def _script():
    spec = importlib.util.spec_from_file_location("cann_examples", ROOT / "benchmarks" / "cann_examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("cann_examples", module)  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def test_printed_groups_and_the_allowed_error():
    m = _script()
    out = "x\nresult[0] is: 1.000000\nresult[1] is: 2.500000\nresult[0] is: 3.000000\nmean y[0] = -0.5\nz[3] is: 9\n"
    assert m._printed(out) == [("result", ["1.000000", "2.500000"]), ("result", ["3.000000"]), ("mean y", ["-0.5"])]
    values = np.array([1.0, 2.5000004, 7.0])
    assert m._agrees(["1.000000", "2.500000"], values, None, "float32", 0) <= 1  # %f drops 4e-7
    assert m._agrees(["1.000000", "2.500010"], values, None, "float32", 0) > 1
    assert m._agrees(["1.000000", "2.500010"], values, None, "float32", 100) <= 1  # 100 ulps of 2.5
    assert m._agrees(["nan"], np.array([np.nan]), None, "float32", 0) == 0
    assert m._agrees(["1.0", "2.5", "7.0", "8.0"], values, None, "float32", 0) == float("inf")


def test_the_g_plus_plus_line_is_build_shs():
    assert "-lopapi_nn -lopapi_math -lascendcl -lnnopbase" in _script().GPP


def test_a_stand_in_checkout_end_to_end(tmp_path):
    ops_nn = tmp_path / "ops-nn"
    good = ops_nn / "activation" / "leaky_relu" / "examples"
    good.mkdir(parents=True)
    # one file, as CANN's programs are: common.h inlined
    program = (EXAMPLES / "inplace_leaky_relu.cpp").read_text().replace('#include "common.h"',
                                                                          (EXAMPLES / "common.h").read_text())
    (good / "test_aclnn_inplace_leaky_relu.cpp").write_text(program)
    wrong = program.replace("ret = PrintResult(selfAddr, shape);", 'LOG_PRINT("result[0] is: %f\\n", 12.5);')
    (good / "test_aclnn_leaky_relu_wrong.cpp").write_text(wrong)
    gone = ops_nn / "activation" / "gelu_quant" / "examples"
    gone.mkdir(parents=True)
    (gone / "test_aclnn_gelu_quant.cpp").write_text("int main() { return aclnnGeluQuantGetWorkspaceSize(0); }\n")
    report = tmp_path / "rows.json"
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cann_examples.py"), str(ops_nn), "--json",
                        str(report)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {row["example"].split("/")[-1]: row for row in __import__("json").loads(report.read_text())}
    ok = rows["test_aclnn_inplace_leaky_relu.cpp"]
    assert (ok["compiles"], ok["runs"], ok["agrees"]) == (True, True, True), ok["note"]
    assert ok["note"] == "1 output vs reference="
    bad = rows["test_aclnn_leaky_relu_wrong.cpp"]
    assert (bad["compiles"], bad["runs"], bad["agrees"]) == (True, True, False), bad
    out = rows["test_aclnn_gelu_quant.cpp"]
    assert out["compiles"] is None and out["status"].startswith("not provided: aclnnGeluQuant: out of scope (")
    assert "| `gelu_quant/test_aclnn_gelu_quant.cpp` | — | — | — | not provided" in r.stdout
