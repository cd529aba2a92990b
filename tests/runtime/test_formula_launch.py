"""`aclgen.compile` formulas at call time go through the one planner the aclnn operators use: the
native pool for big calls, streaming stores past the last-level cache, one plan per call
geometry, staging of partial overlaps."""

import dataclasses

import numpy as np
import pytest

import aclgen
import aclgen.acl as acl
from aclgen.codegen import native
from aclgen.kernel import Options
from aclgen.ops import hardswish_backward as builtin
from aclgen.runtime import api, planner
from tests.reference import hardswish_backward as ref

hardswish = builtin.op.formula


@pytest.fixture(scope="module")
def op():
    return aclgen.compile(hardswish, dtypes="float16", name="hardswish_formula_launch")


def data(n, seed=0, dtype=np.float16):
    rng = np.random.default_rng(seed)
    g = (rng.standard_normal(n) * 4).astype(dtype)
    x = (rng.standard_normal(n) * 4).astype(dtype)
    x[: min(n, 4)] = [-3.0, 3.0, np.nan, -0.0][: min(n, 4)]
    return g, x


def executor(fn, *arrays):
    """The aclnn executor phase 1 plans for this call of `fn` (what its Python call runs)."""
    tensors = [acl.from_numpy(a) for a in arrays]
    return api.get_workspace_size(fn.op, tuple(tensors))


def test_big_calls_run_on_the_pool_and_match_one_thread(op, monkeypatch):
    n = planner.PARALLEL_MIN * 4 + 13
    g, x = data(n)
    monkeypatch.setenv("ACLGEN_THREADS", "1")
    one = op(g, x)
    monkeypatch.setenv("ACLGEN_THREADS", "2")
    two = op(g, x)
    np.testing.assert_array_equal(two.view(np.uint16), one.view(np.uint16))
    np.testing.assert_array_equal(two.view(np.uint16), ref(g, x).view(np.uint16))
    ex = executor(op, g, x, np.empty_like(g))
    assert ex.call is native.entry(ex.template.kernel).call(2), "the big call does not split over the pool"


def test_small_calls_stay_on_the_calling_thread(op, monkeypatch):
    monkeypatch.setenv("ACLGEN_THREADS", "2")
    assert planner.threads_for(planner.PARALLEL_MIN - 1, 2) == 1
    assert planner.threads_for(planner.PARALLEL_MIN, 2) == 2
    g, x = data(1000)
    np.testing.assert_array_equal(op(g, x).view(np.uint16), ref(g, x).view(np.uint16))
    ex = executor(op, g, x, np.empty_like(g))
    assert ex.call is native.entry(ex.template.kernel).call(1)


def test_a_call_geometry_is_planned_once(op, monkeypatch):
    calls = []
    real = planner._template

    def counting(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(planner, "_template", counting)
    monkeypatch.setattr(planner, "_templates", {})
    native.clear_replays()  # every call below takes the planner's path
    for seed in range(3):  # new arrays (new addresses), same geometry
        g, x = data(777, seed)
        np.testing.assert_array_equal(op(g, x).view(np.uint16), ref(g, x).view(np.uint16))
    assert len(calls) == 1
    g, x = data(778)
    op(g, x)
    g2, x2 = data(2 * 777)
    op(g2[::2], x2[::2])  # same shape, other strides: another plan
    assert len(calls) == 3


def test_partial_overlap_is_staged(op):
    g, x = data(4099)
    want = ref(g[1:], x[:-1])
    out = x[1:]  # shares memory with the input x[:-1], shifted by one element
    got = op(g[1:], x[:-1], out=out)
    assert got is out
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


def test_in_place_and_subclassed_arrays(op):
    class Tagged(np.ndarray):
        pass

    g, x = data(1001)
    want = ref(g, x)
    gt = g.view(Tagged)
    op(gt, x, out=x)  # exact aliasing runs in place
    np.testing.assert_array_equal(x.view(np.uint16), want.view(np.uint16))


def test_out_must_be_an_array(op):
    g, x = data(8)
    with pytest.raises(TypeError, match="out0 must be a numpy array"):
        op(g, x, out=[0.0] * 8)


def test_streaming_stores_past_the_last_level_cache(monkeypatch):
    monkeypatch.setattr(planner, "last_level_cache_bytes", lambda: 1 << 20)
    base = Options()
    assert planner.options_for(base, 1 << 20) is base
    assert planner.options_for(base, (1 << 20) + 1) == dataclasses.replace(base, nontemporal=True)
    f32 = aclgen.compile(hardswish, dtypes="float32", name="hardswish_formula_streaming")
    g, x = data(1 << 17, dtype=np.float32)  # 1.5 MiB moved: past the patched 1 MiB cache
    np.testing.assert_array_equal(f32(g, x), ref(g, x))
    kernel = executor(f32, g, x, np.empty_like(g)).template.kernel
    assert kernel.options.nontemporal
    assert "nontemporal" in kernel.ir["llvm"] or "movnt" in kernel.asm
