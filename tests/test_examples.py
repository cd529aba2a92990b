"""The five CANN example programs under examples/ run end to end and print SPEC.md §4's values."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.aclnn_reference import swi_glu_grad_ok

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"

ROW0_A = [2.541959, -1.0849423, 0, 15.770399, 39.268234, 62.021935, 84.21317, 107.78748, 133.62709, 161.87914,
          192.45053, 225.22208, 260.10623, 297.0496, 336.0227, 377.01022]
ROW0_B = [0.47681168, 0.26894143, 0, 0.7310586, 3.5231884, 8.573167, 15.71222, 24.832678, 35.910984, 48.955357,
          63.97854, 80.990005, 99.99546, 120.99798, 143.99911, 168.99962]
ROW1_A = [644 + 61 * k + k * (k - 1) for k in range(16)]  # 644, 705, ... (the step grows by 2)
ROW1_B = [420 + 45 * k + k * (k - 1) for k in range(16)]

# program -> (expected values, relative tolerance) from SPEC.md §4: 0 = bit-exact; SPEC prints
# SeluBackward with 7-8 digits; SwiGluGrad is held to an error bound (checked below), not bits.
EXPECTED = {
    "hardswish_backward": ([0, 0.8333334, 2.3333335, 4.5, 4, 5, 6, 7], 0),
    "selu_backward": ([-0.2419007, 0.7580993, 1.7580993, 1.050701, 1.050701, 1.050701, 1.2580993, 1.050701], 2e-7),
    "softshrink_backward": ([0, 0, 0, 3, 0, 5, 6, 7], 0),
    "swi_glu_grad": (ROW0_A + ROW0_B + ROW1_A + ROW1_B, 1e-6),
    "threshold_backward": ([0, 4.4, 4.3, 4.2], 0),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_example_prints_spec_values(name):
    proc = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], capture_output=True, text=True,
                          timeout=300, cwd=EXAMPLES.parent)
    assert proc.returncode == 0, proc.stderr
    rows = re.findall(r"^result\[(\d+)\] is: (\S+)$", proc.stdout, re.M)
    want, rtol = EXPECTED[name]
    assert [int(i) for i, _ in rows] == list(range(len(want)))
    got = np.array([float(v) for _, v in rows], np.float32)
    want = np.array(want, np.float32)
    if rtol == 0:
        assert np.array_equal(got, want), (got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-7)
    if name == "swi_glu_grad":
        g = np.arange(-2, 30, dtype=np.float32).reshape(2, 16)
        x = np.arange(-2, 62, dtype=np.float32).reshape(2, 32)
        assert swi_glu_grad_ok(got.reshape(2, 32), g, x, -1)
