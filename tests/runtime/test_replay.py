"""Guarded replays of operator calls (aclgen.codegen.native.Replays, recorded by
aclgen.runtime.function): every guard that fails sends the call down the full path, which checks
it and computes it right; a guard that holds re-runs the recorded kernel. `fn.replay(...)` runs
only a replay (None when no guard holds), `fn.replays` is the operator's table."""

import os

import ml_dtypes
import numpy as np
import pytest

import aclgen.ops as ops
from aclgen import OperatorError, acl
from aclgen.codegen import native
from tests import reference as ref
from tests.runners import run_threads

pytestmark = pytest.mark.skipif(not native.available(), reason="numpy's array layout is not the probed one")
HS = ops.hardswish_backward


def data(n, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * 4).astype(dtype), (rng.standard_normal(n) * 4).astype(dtype)


@pytest.fixture(autouse=True)
def fresh():
    native.clear_replays()
    yield
    native.clear_replays()


def recorded(g, x, out, params=(), fn=HS):
    """Whether a replay of these arguments runs (guards hold)."""
    return fn.replay(g, x, *params, out=out) is not None


def test_a_checked_call_is_recorded_and_replays_new_data():
    g, x = data(1000)
    out = np.empty_like(g)
    ops.hardswish_backward(g, x, out=out)
    assert recorded(g, x, out)
    g2, x2 = data(1000, seed=1)
    out2 = np.empty_like(g)
    assert HS.replay(g2, x2, out=out2) is out2
    np.testing.assert_array_equal(out2, ref.hardswish_backward(g2, x2))


class Subclass(np.ndarray):
    """An ndarray subclass (numpy's own, np.matrix, is deprecated)."""


@pytest.mark.parametrize("change", ["dtype", "size", "rank", "stride", "offset_view", "subclass", "list"])
def test_geometry_guards(change):
    g, x = data(64)
    out = np.empty_like(g)
    ops.hardswish_backward(g, x, out=out)
    big_g, big_x = data(128, seed=3)
    if change == "dtype":
        g2, x2, out2 = g.astype(np.float16), x.astype(np.float16), np.empty(64, np.float16)
    elif change == "size":
        g2, x2, out2 = g[:63].copy(), x[:63].copy(), np.empty(63, np.float32)
    elif change == "rank":
        g2, x2, out2 = g.reshape(8, 8), x.reshape(8, 8), np.empty((8, 8), np.float32)
    elif change == "stride":
        g2, x2, out2 = big_g[::2], big_x[::2], np.empty(64, np.float32)
    elif change == "offset_view":  # same geometry as recorded: replays, reading from the view
        g2, x2, out2 = big_g[3:67], big_x[5:69], np.empty(64, np.float32)
    elif change == "subclass":
        g2, x2, out2 = g.view(Subclass), x.view(Subclass), np.empty(64, np.float32)
    else:
        g2, x2, out2 = list(g), list(x), np.empty(64, np.float32)
    hit = HS.replay(g2, x2, out=out2) is not None
    assert hit == (change == "offset_view")
    got = ops.hardswish_backward(g2, x2, out=out2)
    want = ref.hardswish_backward(np.asarray(g2, dtype=out2.dtype), np.asarray(x2, dtype=out2.dtype))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_copied_inputs_are_never_recorded():
    """Reversed views are copied for aclTensor (negative strides): the plan is for the copy."""
    g, x = data(1000)
    out = np.empty_like(g)
    for _ in range(3):
        ops.hardswish_backward(g[::-1], x[::-1], out=out)
        np.testing.assert_array_equal(out, ref.hardswish_backward(g[::-1], x[::-1]))
    assert not len(HS.replays)


def test_reversed_output_is_written_back_every_time():
    g, x = data(100)
    base = np.zeros(100, np.float32)
    for _ in range(3):
        ops.hardswish_backward(g, x, out=base[::-1])
        np.testing.assert_array_equal(base[::-1], ref.hardswish_backward(g, x))


def test_readonly_or_wrong_output_is_refused():
    g, x = data(32)
    out = np.empty_like(g)
    ops.hardswish_backward(g, x, out=out)
    ro = np.empty_like(g)
    ro.flags.writeable = False
    assert not recorded(g, x, ro)
    with pytest.raises(OperatorError):
        ops.hardswish_backward(g, x, out=ro)


def test_aliasing_guards():
    g, x = data(200)
    want = ref.hardswish_backward(g, x)
    out = np.empty_like(g)
    ops.hardswish_backward(g, x, out=out)  # recorded with a disjoint output
    g1 = g.copy()
    assert not recorded(g1, x, g1)  # now out is gradOutput itself: another plan
    ops.hardswish_backward(g1, x, out=g1)
    np.testing.assert_array_equal(g1, want)
    g2 = g.copy()
    assert recorded(g2, x, g2)  # the in-place call was recorded as such
    np.testing.assert_array_equal(g2, want)
    buf = np.concatenate([g, np.zeros(1, np.float32)])  # partial overlap: staged, never replayed
    assert not recorded(buf[:-1], x, buf[1:])
    ops.hardswish_backward(buf[:-1], x, out=buf[1:])
    np.testing.assert_array_equal(buf[1:], want)
    assert HS.replay(buf[:-1], x, out=buf[1:]) is None


@pytest.mark.parametrize("first,second", [(0.5, 0.25), (0.0, -0.0), (1, 1.0), (0.5, np.float32(0.5)), (2, 3)])
def test_parameter_guards(first, second):
    g, x = data(300)
    out = np.empty_like(g)
    ops.threshold_backward(g, x, first, out=out)
    assert recorded(g, x, out, (first,), ops.threshold_backward)
    assert not recorded(g, x, out, (second,), ops.threshold_backward)
    got = ops.threshold_backward(g, x, second)
    np.testing.assert_array_equal(got, ref.threshold_backward(g, x, np.float32(second)))


def test_bad_parameter_after_a_replay_still_fails():
    g, x = data(16)
    ops.softshrink_backward(g, x, 0.5)
    with pytest.raises(OperatorError):
        ops.softshrink_backward(g, x, -1.0)


def test_environment_change_is_a_miss(monkeypatch):
    g, x = data(50000)
    out = np.empty_like(g)
    ops.hardswish_backward(g, x, out=out)
    assert recorded(g, x, out)
    monkeypatch.setenv("ACLGEN_THREADS", "1")
    assert not recorded(g, x, out)
    ops.hardswish_backward(g, x, out=out)
    assert recorded(g, x, out)
    np.testing.assert_array_equal(out, ref.hardswish_backward(g, x))
    os.environ["ACLGEN_THREADS"] = "1"  # the same value again: a hit or a (safe) miss, both right
    r = HS.replay(g, x, out=out)
    assert r is None or r is out
    monkeypatch.delenv("ACLGEN_THREADS")
    assert recorded(g, x, out)  # the first record, made with the variable unset, holds again
    np.testing.assert_array_equal(out, ref.hardswish_backward(g, x))
    monkeypatch.setenv("ACLGEN_CACHE_DIR", os.environ.get("ACLGEN_CACHE_DIR", "/tmp/x"))  # not a plan knob
    ops.hardswish_backward(g, x, out=out)
    assert recorded(g, x, out)


def test_soc_change_forgets_recorded_calls():
    g = np.ones(16, ml_dtypes.bfloat16)
    ops.hardswish_backward(g, g)
    assert len(HS.replays)
    try:
        assert acl.set_soc_version("Ascend910") == 0
        assert not len(HS.replays)
        with pytest.raises(OperatorError) as info:
            ops.hardswish_backward(g, g)
        assert info.value.status == 161002
    finally:
        acl.set_soc_version("Ascend910B")


def test_unaligned_arrays_take_the_full_path():
    buf = np.zeros(4 * 100 + 1, np.uint8)
    g = np.frombuffer(buf.data, np.float32, count=100, offset=1)
    assert not g.flags.aligned
    x = np.linspace(-4, 4, 100, dtype=np.float32)
    for _ in range(2):
        got = ops.hardswish_backward(g, x)
        np.testing.assert_array_equal(got, ref.hardswish_backward(g, x))


def test_swi_glu_grad_dim_guard():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    g0 = rng.standard_normal((3, 8)).astype(np.float32)
    ops.swi_glu_grad(g0, x, 0)
    assert recorded(g0, x, np.empty_like(x), (0,), ops.swi_glu_grad)
    assert not recorded(g0, x, np.empty_like(x), (-2,), ops.swi_glu_grad)  # same axis, other spelling
    r = ops.swi_glu_grad(g0, x, -2)
    assert not ref.swi_glu_grad_violations(r, g0, x, 0).any()
    with pytest.raises(OperatorError):
        ops.swi_glu_grad(g0, x, 1)  # shapes no longer fit


def test_replays_per_operator_are_bounded_and_newest_first():
    size = HS.replays.size
    for n in range(1, size + 4):
        g, x = data(n)
        ops.hardswish_backward(g, x)
    assert len(HS.replays) == size
    assert HS.replays.output_shapes()[0] == (size + 3,)


def test_a_hit_moves_to_the_front():
    arrays = [data(n) for n in (10, 20, 30)]
    for g, x in arrays:
        ops.hardswish_backward(g, x)
    assert HS.replays.output_shapes() == [(30,), (20,), (10,)]
    g, x = arrays[0]
    np.testing.assert_array_equal(ops.hardswish_backward(g, x), ref.hardswish_backward(g, x))
    assert HS.replays.output_shapes() == [(10,), (30,), (20,)]


def test_many_geometries_replay_from_the_geometry_dict():
    pairs = [data(n, seed=n) for n in range(1, 3 * HS.replays.size)]
    for g, x in pairs:
        ops.hardswish_backward(g, x)
    g, x = pairs[0]  # long out of the MRU list
    assert recorded(g, x, np.empty_like(g))
    assert HS.replays.output_shapes()[0] == g.shape  # back at the front
    for g, x in pairs:
        np.testing.assert_array_equal(ops.hardswish_backward(g, x), ref.hardswish_backward(g, x))


def test_recording_a_geometry_compiles_nothing():
    """One native replay function serves every record: a new shape must not cost a compile."""
    g, x = data(33)
    ops.hardswish_backward(g, x)
    compiled = native.compiled_modules()
    for n in range(34, 60):
        g, x = data(n)
        ops.hardswish_backward(g, x)
        assert recorded(g, x, np.empty_like(g))
    assert native.compiled_modules() == compiled


def test_threads_replaying_and_recording_many_geometries():

    pairs = [data(n, seed=n) for n in range(40, 40 + 2 * HS.replays.size)]

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(150):
            g, x = pairs[rng.integers(len(pairs))]
            assert np.array_equal(ops.hardswish_backward(g, x), ref.hardswish_backward(g, x)), g.shape

    run_threads(work, 4)


def _same_bits(a, b) -> bool:
    return all(np.array_equal(x.view(np.uint32), y.view(np.uint32)) for x, y in zip(a, b))


@pytest.mark.parametrize("shape", ["tuple", "list"])
def test_several_kernels_and_sequence_attributes_replay(shape):
    """LayerNorm (a tuple or list normalized_shape), LayerNormBackward (and its output mask) and
    RmsNormGrad (two kernels: dx a row at a time, then dgamma) replay every kernel, with the full
    path's bits; another attribute value is a miss."""
    rng = np.random.default_rng(5)
    x, dy = (rng.standard_normal((6, 40)).astype(np.float32) for _ in range(2))
    w, b = (rng.standard_normal(40).astype(np.float32) for _ in range(2))
    normalized = (40,) if shape == "tuple" else [40]
    y, mean, rstd = ops.layer_norm(x, w, b, normalized, 1e-5)
    mask = (True, True, True)
    ops.layer_norm_backward(dy, x, mean, rstd, w, b, normalized, mask)
    ops.rms_norm_grad(dy, x, rstd, w)
    x2, dy2 = x * 1.5 - 0.25, dy * -2.0
    calls = [(ops.layer_norm, (x2, w, b, normalized, 1e-5)),
             (ops.layer_norm_backward, (dy2, x2, mean, rstd, w, b, normalized, mask)),
             (ops.rms_norm_grad, (dy2, x2, rstd, w))]
    replayed = [fn.replay(*args) for fn, args in calls]
    assert all(r is not None for r in replayed)
    native.clear_replays()
    full = [fn(*args) for fn, args in calls]
    assert all(_same_bits(r, f) for r, f in zip(replayed, full))
    assert ops.layer_norm.replay(x2, w, b, (40,) if shape == "list" else [40], 1e-5) is None  # the other type
    assert ops.layer_norm.replay(x2, w, b, normalized, 1e-6) is None
    assert ops.layer_norm_backward.replay(dy2, x2, mean, rstd, w, b, normalized, (True, False, True)) is None



def test_sums_across_rows_replay_with_the_records_own_workspace():
    """Sums across blocks of rows (LayerNormBackward's dgamma and dbeta, RmsNormGrad's dgamma)
    keep partial sums in the workspace: the record owns one, so the call replays with the full
    path's bits. Threads replaying the record at once take the workspace in turn (a thread that
    finds it taken goes down the full path with its own): every result is right, and the record
    replays afterwards."""
    rng = np.random.default_rng(8)
    rows, n = 520, 512  # nine blocks of 64 rows, large enough to split over threads: partial sums

    def args(seed):
        r = np.random.default_rng(seed)
        x, dy = (r.standard_normal((rows, n)).astype(np.float32) for _ in range(2))
        mean, rstd = x.mean(1, keepdims=True), 1 / np.sqrt(x.var(1, keepdims=True) + 1e-5)
        return dy, x, mean.astype(np.float32), rstd.astype(np.float32)

    w, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    calls = {seed: [(ops.layer_norm_backward, (dy, x, mean, rstd, w, b, [n])), (ops.rms_norm_grad, (dy, x, rstd, w))]
             for seed, (dy, x, mean, rstd) in ((s, args(s)) for s in range(4))}
    want = {seed: [fn(*a) for fn, a in c] for seed, c in calls.items()}  # recorded, then replayed
    assert all(len(fn.replays) == 1 for fn in (ops.layer_norm_backward, ops.rms_norm_grad))
    assert all(fn.replays._records[0].words[native.Header.WORKSPACE] for fn in (ops.layer_norm_backward, ops.rms_norm_grad))
    assert not any(fn.replays._by_geometry for fn in (ops.layer_norm_backward, ops.rms_norm_grad))  # at most `size` kept
    assert all(_same_bits(fn.replay(*a), w_) for (fn, a), w_ in zip(calls[3], want[3]))
    native.clear_replays()
    assert all(_same_bits(fn(*a), w_) for (fn, a), w_ in zip(calls[0], want[0]))  # the full path's bits

    def work(k):
        for _ in range(60):
            for (fn, a), w_ in zip(calls[k], want[k]):
                assert _same_bits(fn(*a), w_), (fn.op.api, k)

    run_threads(work, 4)
    assert all(fn.replay(*a) is not None for fn, a in calls[1])


def test_string_attributes_replay_by_identity():
    """GeluMul's approximate (a str attribute) is guarded by identity: the same object (a literal,
    the default) replays with the full path's bits, another value misses, and an equal string in
    another object misses too and is computed right by the full path."""
    x = np.random.default_rng(6).standard_normal((4, 64)).astype(np.float32)
    tanh = "tanh"
    want = {a: ops.gelu_mul(x, a) for a in ("none", tanh)}
    assert ops.gelu_mul.replay(x) is not None and ops.gelu_mul.replay(x, tanh) is not None
    x2 = x * -0.5
    replayed = ops.gelu_mul.replay(x2, tanh)
    native.clear_replays()
    assert _same_bits([replayed], [ops.gelu_mul(x2, tanh)])
    assert ops.gelu_mul.replay(x2, "none") is None  # this string was not recorded
    fresh_tanh = "".join(["ta", "nh"])
    assert fresh_tanh == tanh and fresh_tanh is not tanh
    assert ops.gelu_mul.replay(x, fresh_tanh) is None
    assert _same_bits([ops.gelu_mul(x, fresh_tanh)], [want[tanh]])
    assert not np.array_equal(want["none"], want[tanh])
