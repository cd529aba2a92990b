"""The numpy entry points' fast path replays checked plans; it must never skip a check."""

import ml_dtypes
import numpy as np
import pytest

import aclgen.ops as ops
from aclgen import OperatorError, acl
from tests import reference as ref


def twice(f, *args, **kw):
    f(*args, **kw)
    return f(*args, **kw)  # the second call replays the plan


def test_replay_is_exact_for_fresh_and_given_outputs():
    g = np.linspace(-5, 5, 1000, dtype=np.float32)
    x = np.linspace(4, -4, 1000, dtype=np.float32)
    out = np.empty_like(g)
    np.testing.assert_array_equal(twice(ops.hardswish_backward, g, x), ref.hardswish_backward(g, x))
    twice(ops.hardswish_backward, g, x, out=out)
    np.testing.assert_array_equal(out, ref.hardswish_backward(g, x))
    assert ops.hardswish_backward.replay(g, x, out=out) is out  # a recorded call, guards hold


def test_new_data_same_geometry_is_recomputed():
    g, x = np.ones(64, np.float32), np.zeros(64, np.float32)
    twice(ops.threshold_backward, g, x, 1.0)
    x2 = np.full(64, 2.0, np.float32)
    np.testing.assert_array_equal(ops.threshold_backward(g, x2, 1.0), g)
    np.testing.assert_array_equal(ops.threshold_backward(g, x, 1.0), 0 * g)
    np.testing.assert_array_equal(ops.threshold_backward(g, x, -1.0), g)  # parameter is in the key


def test_soc_change_is_not_bypassed():
    g = np.ones(16, ml_dtypes.bfloat16)
    twice(ops.hardswish_backward, g, g)
    try:
        assert acl.set_soc_version("Ascend910") == 0
        with pytest.raises(OperatorError) as info:
            ops.hardswish_backward(g, g)
        assert info.value.status == 161002 and "ACL_BF16" in str(info.value)
    finally:
        acl.set_soc_version("Ascend910B")
    ops.hardswish_backward(g, g)


def test_output_checks_are_not_bypassed():
    g = np.ones(32, np.float32)
    out = np.empty(32, np.float32)
    twice(ops.selu_backward, g, g, out=out)
    ro = np.empty(32, np.float32)
    ro.flags.writeable = False
    with pytest.raises(OperatorError):
        ops.selu_backward(g, g, out=ro)
    with pytest.raises(OperatorError):
        ops.selu_backward(g, g, out=np.empty(32, np.float16))
    with pytest.raises(OperatorError):
        ops.selu_backward(g, g, out=np.empty(31, np.float32))


def test_partial_overlap_still_staged_after_a_replayed_call():
    rng = np.random.default_rng(0)
    g, x = rng.standard_normal(100).astype(np.float32), rng.standard_normal(100).astype(np.float32)
    want = ref.softshrink_backward(g, x, 0.3)
    for _ in range(3):
        buf = np.concatenate([g, np.zeros(1, np.float32)])
        ops.softshrink_backward(buf[:-1], x, 0.3, out=buf[1:])
        np.testing.assert_array_equal(buf[1:], want)
    for _ in range(3):  # exact in place replays
        g2 = g.copy()
        ops.softshrink_backward(g2, x, 0.3, out=g2)
        np.testing.assert_array_equal(g2, want)


def test_non_arrays_and_subclasses_take_the_full_path():
    g = [1.0, 2.0, 3.0]
    out = twice(ops.hardswish_backward, np.array(g, np.float32), np.array(g, np.float32))
    m = np.array([g], np.float32).view(Subclass)
    np.testing.assert_array_equal(np.asarray(ops.hardswish_backward(m, m)).ravel(), out)


class Subclass(np.ndarray):
    """An ndarray subclass (numpy's own, np.matrix, is deprecated)."""


@pytest.mark.parametrize("shape,dim", [((2, 32), -1), ((6, 8, 5), 1), ((4, 1000), 0)])
def test_swi_glu_grad_replays_views_into_x_and_out(shape, dim):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    half = list(shape)
    half[dim] //= 2
    g = rng.standard_normal(half).astype(np.float32)
    out = np.full(shape, np.nan, np.float32)
    for _ in range(3):
        ops.swi_glu_grad(g, x, dim, out=out)
        assert not ref.swi_glu_grad_violations(out, g, x, dim).any()
    assert ops.swi_glu_grad.replay(g, x, dim, out=out) is out
    x2 = rng.standard_normal(shape).astype(np.float32)  # same geometry, new data
    r = ops.swi_glu_grad(g, x2, dim)
    assert not ref.swi_glu_grad_violations(r, g, x2, dim).any()


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 5)])
def test_empty_calls_replay(shape):
    """A call with nothing to compute is recorded like any other: the next one takes the fast
    path (its guards: dtypes, shapes, strides, aliasing)."""
    e = np.ones(shape, np.float32)
    first = ops.hardswish_backward(e, e)
    assert first.shape == shape
    again = ops.hardswish_backward.replay(e, e)
    assert again is not None and again.shape == shape and again is not first
    assert ops.hardswish_backward.replay(e.astype(np.float16), e.astype(np.float16)) is None  # another dtype


def test_large_outputs_the_runtime_allocates_start_on_a_line():
    """Results of 1 MiB or more start on a 64-byte line, on the first call and on the fast path
    (a row kernel streams only rows that start on one); smaller ones are numpy's own."""
    x = np.linspace(-3, 3, 1024 * 512, dtype=np.float32).reshape(1024, 512)
    for _ in range(3):
        r = ops.softmax(x)
        assert r.ctypes.data % 64 == 0 and r.strides == (2048, 4)
        np.testing.assert_allclose(r.sum(-1), 1, rtol=1e-5)
    small = ops.softmax(x[:4])
    assert small.strides == np.empty((4, 512), np.float32).strides
