"""Guarded replays (aclgen.codegen.native.Replays), without the operator machinery: a call made
with a compiled kernel is recorded; a later call replays only when every guard holds, and a
miss (None) writes nothing."""

import os

import numpy as np
import pytest

from aclgen.codegen import native
from aclgen.kernel import Param
from aclgen.knobs import environ_keys
from tests.kernels import formula_kernel, meta_for
from tests.runners import run_threads

pytestmark = pytest.mark.skipif(not native.available(), reason="numpy's array layout is not the probed one")
KNOB = "ACLGEN_REPLAY_TEST_KNOB"


def fma_free(g, x):
    return x * 2.0 + g  # 2x is exact: one rounding with or without FMA


def scale(x, alpha):
    return x * alpha


def two(a, b):
    return a + b, a * b


@pytest.fixture(scope="module")
def kernels():
    return {
        "axpy": formula_kernel(fma_free, "replay_axpy", 2),
        "axpy2": formula_kernel(fma_free, "replay_axpy2", 2, rank=2),
        "scale": formula_kernel(scale, "replay_scale", 1, params=(Param("alpha"),)),
        "two": formula_kernel(two, "replay_two", 2, 2),
    }


def axpy(g, x):
    return x * np.float32(2) + g


def call_and_record(replays, kernel, inputs, outputs, params=(), threads=1, env=None):
    """Run the kernel on these arrays (the full path's job), then record the call."""
    arrays = (*inputs, *outputs)
    meta = meta_for(kernel, arrays, params)
    numel = outputs[0].size
    e = native.entry(kernel)
    e.call(threads)(*[a.ctypes.data for a in arrays], meta.ctypes.data, 0, numel)
    launch = native.Launch(e.words(threads), tuple((i, 0) for i in range(len(arrays))), meta.ctypes.data, numel)
    return replays.record(inputs, params, outputs, launch, env or environ_keys((KNOB,)), (meta, kernel))


def data(n, seed=0, shape=None):
    rng = np.random.default_rng(seed)
    g, x = (rng.standard_normal(n) * 4).astype(np.float32), (rng.standard_normal(n) * 4).astype(np.float32)
    return (g, x) if shape is None else (g.reshape(shape), x.reshape(shape))


def recorded(kernels, n=64, **kw):
    replays = native.Replays()
    g, x = data(n)
    assert call_and_record(replays, kernels["axpy"], (g, x), (np.empty(n, np.float32),), **kw)
    return replays


def test_a_hit_with_new_data_computes_right(kernels):
    replays = recorded(kernels, 1000)
    g, x = data(1000, seed=1)
    out = np.empty(1000, np.float32)
    assert replays.run((g, x), (), out) is out
    np.testing.assert_array_equal(out, axpy(g, x))
    fresh = replays.run((g, x), (), None)  # the replay allocates the output
    assert type(fresh) is np.ndarray and fresh.dtype == np.float32 and fresh.shape == (1000,)
    np.testing.assert_array_equal(fresh, axpy(g, x))
    assert replays.run((g, x), (), [out]) is out  # a one-output sequence


def test_a_hit_on_the_pool(kernels):
    replays = native.Replays()
    n = 200_000
    g, x = data(n)
    assert call_and_record(replays, kernels["axpy"], (g, x), (np.empty(n, np.float32),), threads=2)
    g, x = data(n, seed=5)
    np.testing.assert_array_equal(replays.run((g, x), (), None), axpy(g, x))


class Sub(np.ndarray):
    pass


def unaligned(n):
    buf = np.zeros(4 * n + 1, np.uint8)
    a = np.frombuffer(buf.data, np.float32, count=n, offset=1)
    assert not a.flags.aligned
    return a


@pytest.mark.parametrize("change", ["dtype", "size", "rank", "stride", "subclass", "list", "unaligned",
                                    "readonly_out", "out_dtype", "out_stride", "offset_view"])
def test_geometry_guards(kernels, change):
    replays = recorded(kernels, 64)
    g, x = data(64, seed=2)
    big_g, big_x = data(128, seed=3)
    out = np.full(64, -7.0, np.float32)
    if change == "dtype":
        g = g.astype(np.float64)
    elif change == "size":
        g, x, out = g[:63].copy(), x[:63].copy(), out[:63].copy()
    elif change == "rank":
        g, x, out = g.reshape(8, 8), x.reshape(8, 8), out.reshape(8, 8)
    elif change == "stride":
        g, x = big_g[::2], big_x[::2]
    elif change == "subclass":
        g = g.view(Sub)
    elif change == "list":
        g = list(g)
    elif change == "unaligned":
        g = unaligned(64)
    elif change == "readonly_out":
        out.flags.writeable = False
    elif change == "out_dtype":
        out = np.full(64, -7.0, np.float64)
    elif change == "out_stride":
        out = np.full(128, -7.0, np.float32)[::2]
    else:  # same geometry as recorded: replays, reading from the views
        g, x = big_g[3:67], big_x[5:69]
    hit = replays.run((g, x), (), out)
    if change == "offset_view":
        assert hit is out
        np.testing.assert_array_equal(out, axpy(g, x))
    else:
        assert hit is None
        assert (out == -7).all()  # a miss writes nothing


def test_an_equal_dtype_that_is_another_object_is_a_miss(kernels):
    """The guard compares dtype objects by identity: a safe miss, never a wrong hit."""
    replays = recorded(kernels, 16)
    g, x = data(16)
    other = g.view(np.dtype(np.float32).newbyteorder().newbyteorder())
    assert other.dtype == g.dtype and other.dtype is not g.dtype
    assert replays.run((other, x), (), None) is None
    assert replays.run((g, x), (), None) is not None


def test_ordinary_bad_input_is_a_miss_never_an_error(kernels):
    replays = recorded(kernels, 8)
    g, x = data(8)
    for inputs, params, out in [(5, (), None), ((g, x), 5, None), ((g,), (), None), ((g, x, x), (), None),
                                ((g, x), (1,), None), ((g, x), ([1],), None), ((g, x), (), "out"),
                                ((g, x), (), (None,)), ((g, x), (), 3.5), ((None, None), (), None)]:
        assert replays.run(inputs, params, out) is None
    assert native.Replays().run((g, x), (), None) is None  # nothing recorded


@pytest.mark.parametrize("first,second", [(0.5, 0.25), (0.0, -0.0), (1.0, 1), (0.5, np.float32(0.5)),
                                          (2, 3), (1, True), (2, 2**70), (2, 2.0), (-1, -2)])
def test_parameter_guards(kernels, first, second):
    replays = native.Replays()
    x = np.linspace(-4, 4, 300, dtype=np.float32)
    assert call_and_record(replays, kernels["scale"], (x,), (np.empty_like(x),), (first,))
    out = replays.run((x,), (first,), None)
    np.testing.assert_array_equal(out, x * np.float32(first))
    assert replays.run((x,), (second,), None) is None


@pytest.mark.parametrize("param", [np.float32(0.5), 2**63, -(2**63) - 1, b"0.5", ((1,),), (1, b"a"), [2**64], {1: 2}])
def test_unrecordable_parameters(kernels, param):
    x = np.ones(10, np.float32)
    replays = native.Replays()
    e = native.entry(kernels["scale"])
    launch = native.Launch(e.words(), ((0, 0), (1, 0)), 0, 10)
    assert not replays.record((x,), (param,), (np.empty_like(x),), launch, environ_keys(()), ())
    assert not len(replays)


def test_sequence_and_identity_parameters(kernels):
    """Attributes a plan was made for (LayerNorm's normalized_shape, an output mask): a tuple or a
    list is guarded by its exact type, length and items, True/False/None and a str (GeluMul's
    approximate) by identity: an equal string in another object misses."""
    x = np.linspace(-4, 4, 100, dtype=np.float32)
    out = np.empty_like(x)
    kernel = kernels["scale"]
    meta = meta_for(kernel, (x, out), (0.5,))
    e = native.entry(kernel)
    e.call(1)(x.ctypes.data, out.ctypes.data, meta.ctypes.data, 0, x.size)
    launch = native.Launch(e.words(), ((0, 0), (1, 0)), meta.ctypes.data, x.size)
    replays = native.Replays()
    tanh = "tanh"
    recorded = (0.5, (2, 3), True, [1.5, None], None, tanh, ("a", tanh))
    assert replays.record((x,), recorded, (out,), launch, environ_keys(()), (meta, kernel))
    again = (0.5, tuple([2, 3]), True, [1.5, None], None, tanh, tuple(["a", tanh]))  # equal, new objects
    np.testing.assert_array_equal(replays.run((x,), again, None), x * np.float32(0.5))
    fresh = "".join(["ta", "nh"])  # equal to tanh, another object
    for k, changed in [(1, (2, 4)), (1, (2, 3, 1)), (1, (2,)), (1, [2, 3]), (1, (2.0, 3)), (1, (2, True)),
                       (2, False), (2, 1), (2, None), (3, [1.5, 0]), (3, [1.5]), (3, (1.5, None)),
                       (3, [1.25, None]), (4, False), (4, 0), (5, "none"), (5, fresh), (5, None),
                       (6, ("a", fresh)), (6, ("b", tanh))]:
        args = list(again)
        args[k] = changed
        assert replays.run((x,), tuple(args), None) is None, (k, changed)


def test_several_launches_run_in_order(kernels):
    """An operator of several kernels (RmsNormGrad: dx, then dgamma) replays every launch."""
    g, x = data(50)
    out1, out2 = np.empty_like(x), np.empty_like(x)
    launches, metas = [], []
    for kernel, arrays, sources, params in [(kernels["scale"], (x, out1), ((1, 0), (2, 0)), (0.5,)),
                                            (kernels["axpy"], (g, x, out2), ((0, 0), (1, 0), (3, 0)), ())]:
        meta = meta_for(kernel, arrays, params)
        e = native.entry(kernel)
        e.call(1)(*[a.ctypes.data for a in arrays], meta.ctypes.data, 0, x.size)
        launches.append(native.Launch(e.words(), sources, meta.ctypes.data, x.size))
        metas += [meta, kernel]
    replays = native.Replays()
    assert replays.record((g, x), (), (out1, out2), tuple(launches), environ_keys(()), tuple(metas))
    g2, x2 = data(50, seed=7)
    got1, got2 = replays.run((g2, x2), (), None)
    np.testing.assert_array_equal(got1, x2 * np.float32(0.5))
    np.testing.assert_array_equal(got2, axpy(g2, x2))


def test_environment_value_objects(kernels, monkeypatch):
    monkeypatch.delenv(KNOB, raising=False)
    replays = recorded(kernels, 32)  # recorded with the variable unset
    g, x = data(32)
    assert replays.run((g, x), (), None) is not None
    monkeypatch.setenv(KNOB, "12")
    assert replays.run((g, x), (), None) is None
    assert call_and_record(replays, kernels["axpy"], (g, x), (np.empty(32, np.float32),))  # with "12"
    assert replays.run((g, x), (), None) is not None
    os.environ[KNOB] = "34"
    assert replays.run((g, x), (), None) is None
    os.environ[KNOB] = "12"  # the same value again, usually a new object: a hit or a (safe) miss
    got = replays.run((g, x), (), None)
    assert got is None or np.array_equal(got, axpy(g, x))
    monkeypatch.delenv(KNOB)
    np.testing.assert_array_equal(replays.run((g, x), (), None), axpy(g, x))  # the first record again


def test_aliasing_guards(kernels):
    n = 200
    g, x = data(n)
    want = axpy(g, x)
    replays = native.Replays()
    assert call_and_record(replays, kernels["axpy"], (g, x), (np.empty(n, np.float32),))  # out disjoint
    g1 = g.copy()
    assert replays.run((g1, x), (), g1) is None  # now out is g itself: another plan
    assert (g1 == g).all()
    assert call_and_record(replays, kernels["axpy"], (g1, x), (g1,))  # the exact in-place call
    np.testing.assert_array_equal(g1, want)
    g2 = g.copy()
    assert replays.run((g2, x), (), g2) is g2  # replays in place
    np.testing.assert_array_equal(g2, want)
    np.testing.assert_array_equal(replays.run((g, x), (), None), want)  # the disjoint record still holds
    buf = np.concatenate([g, np.zeros(1, np.float32)])
    assert replays.run((buf[:-1], x), (), buf[1:]) is None  # partial overlap: neither record holds
    assert not call_and_record(native.Replays(), kernels["axpy"], (buf[:-1], x), (buf[1:],))
    wide = np.zeros(2 * n, np.float32)  # the same data pointer, another geometry: no exact in-place
    assert not call_and_record(native.Replays(), kernels["axpy"], (wide[:n], x), (wide[::2],))


def test_several_outputs(kernels):
    k = kernels["two"]
    replays = native.Replays()
    a, b = data(100)
    assert call_and_record(replays, k, (a, b), (np.empty(100, np.float32), np.empty(100, np.float32)))
    a, b = data(100, seed=9)
    s, p = replays.run((a, b), (), None)
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(p, a * b)
    outs = [np.empty(100, np.float32), np.empty(100, np.float32)]
    got = replays.run((a, b), (), outs)
    assert type(got) is tuple and got[0] is outs[0] and got[1] is outs[1]
    np.testing.assert_array_equal(got[1], a * b)
    q = np.full(100, -7.0, np.float32)
    ro = np.full(100, -7.0, np.float32)
    ro.flags.writeable = False
    for bad in [(q, q), (a, q), (q,), q, (q, ro), (q, np.full(100, -7.0)), (q, q[:99].copy())]:
        assert replays.run((a, b), (), bad) is None
    assert (q == -7).all()
    # outputs that overlap each other are never recorded
    buf = np.empty(150, np.float32)
    assert not call_and_record(native.Replays(), k, (a, b), (buf[:100], buf[50:]))


def test_several_outputs_one_in_place(kernels):
    k = kernels["two"]
    replays = native.Replays()
    a, b = data(50)
    a0 = a.copy()
    assert call_and_record(replays, k, (a, b), (a, np.empty(50, np.float32)))
    np.testing.assert_array_equal(a, a0 + b)
    a, b = data(50, seed=4)
    a1, q = a.copy(), np.empty(50, np.float32)
    got = replays.run((a1, b), (), (a1, q))
    assert got[0] is a1 and got[1] is q
    np.testing.assert_array_equal(a1, a + b)
    np.testing.assert_array_equal(q, a * b)
    assert replays.run((a, b), (), None) is None  # fresh outputs are not the recorded in-place call


def test_rank_two_and_broadcast_strides(kernels):
    k = kernels["axpy2"]
    replays = native.Replays()
    g, x = data(24, shape=(4, 6))
    row = np.arange(6, dtype=np.float32)[None, :]  # an input broadcast along dim 0: stride 0
    rowb = np.broadcast_to(row, (4, 6))
    assert call_and_record(replays, k, (g, rowb), (np.empty((4, 6), np.float32),))
    g2, _ = data(24, seed=8, shape=(4, 6))
    np.testing.assert_array_equal(replays.run((g2, rowb), (), None), axpy(g2, rowb))
    assert replays.run((g2, x), (), None) is None  # full strides: another geometry


def geometries(replays, kernels, sizes):
    for n in sizes:
        g, x = data(n, seed=n)
        assert call_and_record(replays, kernels["axpy"], (g, x), (np.empty(n, np.float32),))


def front_shapes(replays):
    return replays.output_shapes()


def test_mru_is_bounded_and_newest_first(kernels):
    replays = native.Replays(size=3)
    geometries(replays, kernels, range(1, 6))
    assert front_shapes(replays) == [(5,), (4,), (3,)]


def test_a_hit_moves_to_the_front(kernels):
    replays = native.Replays(size=3)
    geometries(replays, kernels, (10, 20, 30))
    assert front_shapes(replays) == [(30,), (20,), (10,)]
    g, x = data(10, seed=3)
    np.testing.assert_array_equal(replays.run((g, x), (), None), axpy(g, x))
    assert front_shapes(replays) == [(10,), (30,), (20,)]


def test_many_geometries_replay_from_the_geometry_index(kernels):
    replays = native.Replays(size=2)
    sizes = range(1, 25)
    geometries(replays, kernels, sizes)
    g, x = data(1)  # long out of the MRU list
    np.testing.assert_array_equal(replays.run((g, x), (), None), axpy(g, x))
    assert front_shapes(replays)[0] == (1,)  # back at the front
    for n in sizes:
        g, x = data(n, seed=100 + n)
        np.testing.assert_array_equal(replays.run((g, x), (), None), axpy(g, x))


def test_recording_a_geometry_compiles_nothing(kernels):
    """One native replay function serves every record: a new shape must not cost a compile."""
    replays = native.Replays()
    geometries(replays, kernels, [33])
    compiled = native.compiled_modules()
    geometries(replays, kernels, range(34, 60))
    g, x = data(40)
    assert replays.run((g, x), (), None) is not None
    assert native.compiled_modules() == compiled


def test_clear_and_clear_replays(kernels):
    first, second = recorded(kernels, 16), recorded(kernels, 16)
    g, x = data(16)
    first.clear()
    assert first.run((g, x), (), None) is None and second.run((g, x), (), None) is not None
    native.clear_replays()
    assert second.run((g, x), (), None) is None
    geometries(second, kernels, [16])  # records again afterwards
    assert second.run((g, x), (), None) is not None
    stale = second._records[0]
    second.clear()
    second._to_front(stale)  # a hit from a snapshot taken before clear() does not bring it back
    assert not second._records


def test_threads_replaying_and_recording(kernels):
    replays = native.Replays(size=4)
    sizes = list(range(40, 56))
    geometries(replays, kernels, sizes[:4])

    def work(seed):
        rng = np.random.default_rng(seed)
        for i in range(150):
            n = sizes[rng.integers(len(sizes))]
            g, x = data(n, seed=seed * 1000 + i)
            out = replays.run((g, x), (), None)
            if out is None:
                out = np.empty(n, np.float32)
                call_and_record(replays, kernels["axpy"], (g, x), (out,))
            assert np.array_equal(out, axpy(g, x)), n

    run_threads(work, 4)
    assert len(replays) == 4
