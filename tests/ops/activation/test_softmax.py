"""Softmax, LogSoftmax and their gradients against PyTorch (float64) over edge rows (equal, ±inf,
NaN, huge, tiny, mixed scales, ±0, length 1) in every dtype and layout of the reduced axis
(contiguous, strided, transposed), within each declaration's bound; the same bits for every
thread count, vector width and tile size."""

from __future__ import annotations

import numpy as np
import pytest

import aclgen.ops as ops
from aclgen.knobs import overridden
from aclgen.tools.accuracy import NUMPY, ulp_error
from tests.ops.reductions import edge_rows, layouts
from tests.oracle import needs_torch, torch
from tests.reference import same_bits

DTYPES = ("float32", "float16", "bfloat16")


def _t(a: np.ndarray):
    return torch.from_numpy(np.ascontiguousarray(a.astype(np.float64)))


def _forward(name: str, x: np.ndarray, dim: int) -> np.ndarray:
    f = torch.softmax if name == "softmax" else torch.log_softmax
    return f(_t(x), dim).numpy()


def _backward(name: str, g: np.ndarray, y: np.ndarray, dim: int) -> np.ndarray:
    f = torch._softmax_backward_data if name == "softmax" else torch._log_softmax_backward_data
    return f(_t(g), _t(y), dim, torch.float64).numpy()


def _check(op, got, want, dtype, scale):
    err = ulp_error(got, want, dtype, np.broadcast_to(scale, got.shape))
    worst = int(np.argmax(err))
    assert err.max() <= op.tolerance, (op.api, dtype, err.max(), got.ravel()[worst], want.ravel()[worst])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("n", [1, 7, 100])
@needs_torch
def test_forward_matches_torch(name, dtype, n):
    op = ops.OPERATORS[name]
    x = edge_rows(dtype, n)
    for layout, (a, dim) in layouts(x).items():
        got = ops.__dict__[name](a, dim)
        want = _forward(name, a, dim)
        with np.errstate(all="ignore"):
            scale = op.reference.scale(a.astype(np.float64), dim)
        _check(op, got, want, dtype, scale)
        assert got.dtype == NUMPY[dtype], layout


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("n", [1, 7, 100])
@needs_torch
def test_backward_matches_torch(name, dtype, n):
    op = ops.OPERATORS[f"{name}_backward"]
    rng = np.random.default_rng(n)
    x = edge_rows(dtype, n)
    for a, dim in layouts(x).values():
        y = _forward(name, a, dim).astype(NUMPY[dtype])
        g = (rng.standard_normal(a.shape) * 3).astype(NUMPY[dtype])
        got = ops.__dict__[f"{name}_backward"](g, y, dim)
        want = _backward(name, g, y, dim)
        with np.errstate(all="ignore"):
            scale = op.reference.scale(g.astype(np.float64), y.astype(np.float64), dim)
        _check(op, got, want, dtype, scale)


SHAPES = [(3, 100003), (257, 33), (64, 1000)]


@pytest.mark.parametrize("shape", SHAPES)
def test_same_bits_for_every_schedule(shape):
    """Threads split rows, widths and tiles change the code: no sum's order changes."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32) * 5
    g = rng.standard_normal(shape).astype(np.float32)
    calls = [lambda: ops.softmax(x, -1), lambda: ops.log_softmax(x, 0), lambda: ops.softmax_backward(g, x, -1),
             lambda: ops.log_softmax_backward(g, x, 0)]
    with overridden(ACLGEN_THREADS="1"):
        base = [c() for c in calls]
    for knobs in ({"ACLGEN_THREADS": "2"}, {"ACLGEN_VECTOR_WIDTH": "4"}, {"ACLGEN_TILE_SIZE": "96"}):
        with overridden(**knobs):
            for c, b in zip(calls, base):
                assert c().tobytes() == b.tobytes(), knobs


def test_long_rows_hold_exp_in_the_output():
    """A float32 row too long for the stack buffer keeps exp(x - max) in its output until the
    final pass divides it there: the same bits as a row that fits (a -inf appended adds e = +0
    to its lane's sum, after the others), and in place too (out is self)."""
    from aclgen.passes.tile_rows import ROW_BUFFER

    rng = np.random.default_rng(9)
    x = (rng.standard_normal((3, ROW_BUFFER)) * 4).astype(np.float32)
    x[1, 5], x[2, :40] = np.inf, -np.inf
    fits = ops.softmax(x, -1)
    longer = np.concatenate([x, np.full((3, 1), -np.inf, np.float32)], axis=1)
    held = ops.softmax(longer, -1)
    assert same_bits(held[:, :-1], fits)
    assert np.array_equal(held[:, -1], [0, np.nan, 0], equal_nan=True)  # row 1 is NaN: inf - inf
    for a, want in ((longer.copy(), held), (x.copy(), fits)):
        ops.softmax(a, -1, out=a)
        assert same_bits(a, want)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_long_half_rows_compute_exp_again(dtype):
    """A half-type row too long for the stack buffer cannot hold exp(x - max) in its output: its
    passes store e to a scratch (the same code as a row that fits) and the final pass computes
    it again, to the same bits as the row that fits (a -inf appended adds e = +0 to its lane)."""
    from aclgen.passes.tile_rows import ROW_BUFFER

    rng = np.random.default_rng(11)
    x = (rng.standard_normal((3, ROW_BUFFER)) * 4).astype(dtype)
    x[1, 7], x[2, :33] = np.inf, -np.inf
    fits = ops.softmax(x, -1)
    longer = np.concatenate([x, np.full((3, 1), -np.inf, dtype)], axis=1)
    held = ops.softmax(longer, -1)
    assert same_bits(held[:, :-1], fits)
    assert np.array_equal(held[:, -1].astype(np.float32), [0, np.nan, 0], equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(2, 64, 96), (2, 96, 128), (3, 5, 1728), (2, 96, 100), (3, 5, 1700)])
def test_softmax_over_two_axes_keeps_exp_per_run(dtype, shape):
    """A user's softmax over the last two axes: each row is several runs of the inner axis, whose
    exps are kept run by run in the stack buffer (6144 floats), else in the f32 output or (a half
    type) stored to the scratch and computed again (12288 and 8640 floats, 9600 and 8500 with a
    masked step a run). Runs of whole vectors add up in the order of one long row: the built-in
    softmax's bits; other runs against float64 (sums of ~9000 floats in 32 lanes: 64 ulp)."""
    import aclgen

    def softmax2(x):
        e = aclgen.exp(x - aclgen.amax(x, (-2, -1)))
        return e / aclgen.sum(e, (-2, -1))

    op = aclgen.compile(softmax2, dtype, name=f"softmax2_{dtype}")
    rng = np.random.default_rng(12)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    x[0, 1, 2] = np.inf
    got = np.asarray(op(x))
    if shape[-1] % 32 == 0:
        assert same_bits(got, ops.softmax(x.reshape(shape[0], -1), -1).reshape(shape))
        return
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x64 - x64.max(axis=(-2, -1), keepdims=True))
        want = e / e.sum(axis=(-2, -1), keepdims=True)
    err = ulp_error(got, want, dtype, want)
    assert err.max() <= 64, err.max()
