"""Softmax, LogSoftmax and their gradients against PyTorch (float64) over edge rows (equal, ±inf,
NaN, huge, tiny, mixed scales, ±0, length 1) in every dtype and layout of the reduced axis
(contiguous, strided, transposed), within each declaration's bound; the same bits for every
thread count, vector width and tile size."""

from __future__ import annotations

import numpy as np
import pytest

import aclgen.aclnn as aclnn
import aclgen.ops as ops
from aclgen.knobs import overridden
from aclgen.tools.accuracy import NUMPY, ulp_error
from tests.ops.aclnn_checks import INVALID, NULL, status, tensor
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


# -- SoftmaxCrossEntropyWithLogits -----------------------------------------------------------------


def _labels(shape, rng, kind: str) -> np.ndarray:
    """Labels as training feeds them: one-hot rows, probability rows, or any values (the formula
    takes them as they come: backprop is not made to sum to 0)."""
    if kind == "one-hot":
        return np.eye(shape[1])[rng.integers(shape[1], size=shape[0])]
    if kind == "probabilities":
        p = rng.random(shape)
        return p / p.sum(1, keepdims=True)
    return rng.standard_normal(shape) * 2


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 7, 100])
@needs_torch
def test_softmax_cross_entropy_matches_torch(dtype, n):
    """loss against torch's cross entropy with class-probability targets (float64, reduction
    'none'); backprop against torch's softmax minus the labels; edge rows of features, every kind
    of labels, contiguous, strided and column-major inputs."""
    op = ops.OPERATORS["softmax_cross_entropy_with_logits"]
    rng = np.random.default_rng(n)
    x = edge_rows(dtype, n, huge=1e4)
    for kind in ("one-hot", "probabilities", "any"):
        y = _labels(x.shape, rng, kind).astype(NUMPY[dtype])
        wide = np.zeros((x.shape[0], 2 * n), x.dtype)
        wide[:, ::2] = x
        for a in (x, wide[:, ::2], np.asfortranarray(x)):
            loss, backprop = ops.softmax_cross_entropy_with_logits(a, y)
            assert loss.shape == (x.shape[0],) and backprop.shape == x.shape
            assert loss.dtype == backprop.dtype == NUMPY[dtype]
            x64, y64 = _t(a), _t(y)
            want_loss = torch.nn.functional.cross_entropy(x64, y64, reduction="none").numpy()
            want_backprop = (torch.softmax(x64, 1) - y64).numpy()
            with np.errstate(all="ignore"):
                scale = op.reference.scale(a.astype(np.float64), y.astype(np.float64))
            _check(op, loss, want_loss, dtype, scale[0])
            _check(op, backprop, want_backprop, dtype, scale[1])


def test_softmax_cross_entropy_edges():
    """A NaN or +inf feature makes its row's loss and backprop NaN; -inf is a class of probability
    0: its backprop is -label, and its term of the loss label * -log(0) is +inf for a label above
    0 and NaN for a label of 0 (0 * inf, as in torch's and TensorFlow's); equal features split
    evenly."""
    x = np.float32([[np.nan, 0, 1], [np.inf, 0, 1], [-np.inf, 0, 0], [-np.inf, 0, 0], [2, 2, 2]])
    y = np.float32([[0, 1, 0], [0, 1, 0], [0, 0.5, 0.5], [1, 0, 0], [1, 0, 0]])
    loss, backprop = ops.softmax_cross_entropy_with_logits(x, y)
    assert np.isnan(loss[:3]).all() and np.isnan(backprop[:2]).all()
    assert list(backprop[2]) == [0, 0, 0]
    assert loss[3] == np.inf and list(backprop[3]) == [-1, 0.5, 0.5]
    assert loss[4] == np.float32(np.log(3)) and backprop[4, 1] == np.float32(1 / 3)


@pytest.mark.parametrize("api,args", [
    ("aclnnSoftmax", (tensor((0, 3)), -1, tensor((5,)))),
    ("aclnnSoftmaxBackward", (tensor((0, 3)), tensor((0, 3)), -1, tensor((5, 2)))),
    ("aclnnLogSoftmaxBackward", (tensor((4, 0)), tensor((4, 0)), -1, tensor(()))),
    ("aclnnSoftmaxCrossEntropyWithLogits", (tensor((0, 3)), tensor((0, 3)), tensor((5,)), tensor((2, 2)))),
])
def test_an_empty_input_returns_before_the_outputs_are_looked_at(api, args):
    """CANN returns at once for an empty input of these operators, before it reads the outputs'
    shapes: success, nothing written (the outputs keep their values)."""
    ret, message = status(api, *args)
    assert ret == 0, message
    ws, ex, ret = getattr(aclnn, f"{api}GetWorkspaceSize")(*args)
    assert ret == 0 and ws == 0 and getattr(aclnn, api)(None, ws, ex, None) == 0


def test_softmax_cross_entropy_same_bits_for_every_schedule():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((300, 1001)) * 4).astype(np.float32)
    y = rng.random((300, 1001)).astype(np.float32)
    with overridden(ACLGEN_THREADS="1"):
        base = ops.softmax_cross_entropy_with_logits(x, y)
    for knobs in ({"ACLGEN_THREADS": "2"}, {"ACLGEN_VECTOR_WIDTH": "4"}):
        with overridden(**knobs):
            got = ops.softmax_cross_entropy_with_logits(x, y)
            assert all(g.tobytes() == b.tobytes() for g, b in zip(got, base)), knobs


@pytest.mark.parametrize("args,code,says", [
    ((None, tensor((2, 3)), tensor((2,)), tensor((2, 3))), NULL, "features is nullptr"),
    ((tensor((2, 3)), tensor((2, 3)), tensor((2,)), None), NULL, "backprop is nullptr"),
    ((tensor((2, 3), np.int32), tensor((2, 3)), tensor((2,)), tensor((2, 3))), INVALID, "features dtype ACL_INT32"),
    ((tensor((2, 3)), tensor((2, 3)), tensor((2,), np.float16), tensor((2, 3))), INVALID, "loss dtype ACL_FLOAT16"),
    ((tensor((2, 3, 1)), tensor((2, 3, 1)), tensor((2,)), tensor((2, 3, 1))), INVALID, "features has 3 dims"),
    ((tensor((2, 3)), tensor((3,)), tensor((2,)), tensor((2, 3))), INVALID, "labels has 1 dims"),
    ((tensor((2, 3)), tensor((2, 3), np.float16), tensor((2,)), tensor((2, 3))), INVALID, "labels dtype"),
    ((tensor((2, 3)), tensor((1, 3)), tensor((2,)), tensor((2, 3))), INVALID, "labels shape [1, 3]"),
    ((tensor((2, 3)), tensor((2, 3)), tensor((2, 1)), tensor((2, 3))), INVALID, "loss shape [2, 1]"),
    ((tensor((2, 3)), tensor((2, 3)), tensor((2,)), tensor((3, 2))), INVALID, "backprop shape [3, 2]"),
    ((tensor((0, 3)), tensor((0, 3)), tensor((5,)), tensor((0, 3))), 0, ""),  # empty: returns at once
])
def test_softmax_cross_entropy_checks_and_codes(args, code, says):
    ret, message = status("aclnnSoftmaxCrossEntropyWithLogits", *args)
    assert ret == code, message
    assert says in message, message
