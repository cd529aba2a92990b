"""The family's promised rare ranges (`aclgen.unlikely`: sigmoid tails, Mish's |x| > 64, products
that overflow early): a lane's bits never depend on a rare value elsewhere in its vector step.
Every 7th column gets the rare value; every other output lane must keep its bits."""

from __future__ import annotations

import numpy as np
import pytest

import aclgen.ops as ops
from aclgen import dtypes as dt
from tests.reference import same_bits

ROWS, COLS = 6, 96  # a split input is [ROWS, 2 * COLS]
RARE = np.arange(0, COLS, 7)  # the columns that get the rare value

# (operator call, number of same-shape inputs, which input gets the rare value, the rare value);
# inputs are [ROWS, COLS]
ELEMENTWISE = [
    ("silu_backward", lambda g, x: ops.silu_backward(g, x), 2, 1, -90.0),
    ("swish_backward", lambda g, x: ops.swish_backward(g, x, 1.5), 2, 1, -90.0),
    ("fast_gelu_backward", lambda g, x: ops.fast_gelu_backward(g, x), 2, 1, -90.0),
    ("mish", lambda x: ops.mish(x), 1, 0, -70.0),
    ("mish_backward", lambda g, x: ops.mish_backward(g, x), 2, 1, -70.0),
    ("mish_backward overflow", lambda g, x: ops.mish_backward(g, x), 2, 0, 3e38),
    ("elu_backward", lambda g, x: ops.elu_backward(g, x), 2, 1, -70.0),
]
# split operators: (call on x [ROWS, 2 * COLS] and, for gradients, g; whether the output is x's shape)
SPLIT = [
    ("glu", lambda x, g: ops.glu(x, -1), False, -90.0),
    ("swi_glu", lambda x, g: ops.swi_glu(x, -1), False, -90.0),
    ("swi_glu overflow", lambda x, g: ops.swi_glu(x, -1), False, 3e38),
    ("ge_glu", lambda x, g: ops.ge_glu(x, -1, 1), False, -90.0),
    ("glu_backward", lambda x, g: ops.glu_backward(g, x, -1), True, -90.0),
    ("glu_backward overflow", lambda x, g: ops.glu_backward((g * 1e30).astype(g.dtype), x, -1), True, 1e20),
    ("situ_glu_grad", lambda x, g: ops.situ_glu_grad(g, x, -1), True, -90.0),
]


def _data(shape, dtype, seed):
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dt.dtype(dtype).np_dtype)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", ELEMENTWISE, ids=[c[0] for c in ELEMENTWISE])
def test_elementwise_lanes_ignore_a_rare_neighbour(case, dtype):
    _, call, n, which, value = case
    inputs = [_data((ROWS, COLS), dtype, k) for k in range(n)]
    base = call(*inputs)
    inputs[which][:, RARE] = value
    got = call(*inputs)
    keep = np.ones(COLS, bool)
    keep[RARE] = False
    assert same_bits(got[:, keep], base[:, keep])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", SPLIT, ids=[c[0] for c in SPLIT])
def test_split_lanes_ignore_a_rare_neighbour(case, dtype):
    _, call, whole, value = case
    x, g = _data((ROWS, 2 * COLS), dtype, 0), _data((ROWS, COLS), dtype, 1)
    base = call(x, g)
    x[:, RARE] = value  # both halves: whichever is the gate
    x[:, COLS + RARE] = value
    got = call(x, g)
    keep = np.ones(2 * COLS if whole else COLS, bool)
    keep[RARE] = False
    if whole:
        keep[COLS + RARE] = False
    for a, b in zip(got if isinstance(got, tuple) else (got,), base if isinstance(base, tuple) else (base,)):
        assert same_bits(a[:, keep], b[:, keep])
