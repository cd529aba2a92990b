"""The native thread pool: split launches are exact, busy pools fall back, sleepers wake."""

import time

import numpy as np
import pytest

import aclgen
from aclgen.codegen import pycall, threads
from aclgen.launch import Launch, plan
from aclgen.ops.hardswish_backward import formula as hardswish
from tests.hardening_support import run_threads
from tests.reference import hardswish_backward as ref


@pytest.fixture(scope="module")
def par():
    k = aclgen.compile(hardswish, name="hardswish_pool_test").kernel
    entry = threads.parallel_entry(k, 2)
    assert entry is not None
    return k, pycall.fastcall(entry, "aaaiii")


def run(k, call, n, begin=0, end=None):
    rng = np.random.default_rng(n)
    g = rng.standard_normal(n).astype(np.float32)
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    out = np.full(n, -7.0, np.float32)
    meta = Launch(k, plan((n,), [(1,)] * 3), [0, 0, 0], []).meta
    call(g, x, out, meta.ctypes.data, begin, n if end is None else end)
    return g, x, out


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 127, 1000, 4097, 65536 + 7])
def test_split_launch_is_exact(par, n):
    k, call = par
    g, x, out = run(k, call, n)
    np.testing.assert_array_equal(out, ref(g, x))


def test_subrange_only(par):
    k, call = par
    g, x, out = run(k, call, 1000, 100, 900)
    np.testing.assert_array_equal(out[100:900], ref(g, x)[100:900])
    assert (out[:100] == -7).all() and (out[900:] == -7).all()


def test_workers_wake_after_sleeping(par):
    k, call = par
    time.sleep(0.3)  # past the spin: the worker sleeps on its futex
    g, x, out = run(k, call, 50000)
    np.testing.assert_array_equal(out, ref(g, x))


def test_concurrent_launches_fall_back_not_deadlock(par):
    k, call = par
    errors = []

    def worker(seed):
        try:
            for i in range(30):
                g, x, out = run(k, call, 20000 + seed * 31 + i)
                if not np.array_equal(out, ref(g, x)):
                    errors.append(seed)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    assert not run_threads(worker, 6), "a launch hung"
    assert not errors
