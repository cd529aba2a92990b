"""The bad-input matrix through the aclnn API: every row (tests/runtime/bad_inputs.py) is declared
with its expected status code and message text. Rows run in batches in fresh interpreters, so a
segfault or abort fails the batch's rows instead of killing pytest.

Covered: wrong argument types (str, float, list, ndarray, aclScalar for a tensor and the other
way round), None, destroyed objects, wrong dtype/shape/format/rank > 8, create_tensor misuse,
negative and huge dims (byte sizes past int64), views outside storage or allocation, freed
memory (before phase 1 and between the phases), foreign pointers, repeated or read-only outputs,
outputs partly overlapping an input (staged, and the result checked), workspace too small /
None / not runtime memory, executors consumed / destroyed / of another operator, bad streams.
"""

from __future__ import annotations

import pytest

from tests.runners import run_json
from tests.runtime.bad_inputs import OPERATORS, ROWS

BATCH = 40
NAMES = list(ROWS)
BATCHES = [NAMES[i:i + BATCH] for i in range(0, len(NAMES), BATCH)]
_results: dict[int, dict] = {}


def batch_result(k: int) -> dict:
    if k not in _results:
        code = f"from tests.runtime.bad_inputs import main; main({BATCHES[k]!r})"
        _results[k] = run_json(code, timeout=300)
    return _results[k]


def test_every_operator_has_the_generic_rows(report):
    for op in OPERATORS:
        assert f"{op}-first-input-none" in ROWS and f"{op}-last-output-destroyed" in ROWS, op
    report(f"bad-input matrix: {len(ROWS)} rows in {len(BATCHES)} subprocess batches")


@pytest.mark.parametrize("name", NAMES)
def test_bad_input(name):
    status, message = batch_result(NAMES.index(name) // BATCH)[name]
    row = ROWS[name]
    assert status == row.status, f"{name}: status {status} ({message}), expected {row.status}"
    assert row.message in message, f"{name}: message {message!r} lacks {row.message!r}"
