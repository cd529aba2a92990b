"""The native thread pool (aclgen.codegen.native): split launches are exact, busy pools fall
back, sleepers wake, a forked child gets its own pool."""

import time

import numpy as np
import pytest

import aclgen.ops as ops
from aclgen.codegen import native
from aclgen.codegen import native_ir as nir
from aclgen.knobs import environ_keys, overridden
from tests.kernels import formula_kernel
from tests.runners import python, run_threads

pytestmark = pytest.mark.skipif(not native._has_pool(), reason="the native pool is x86-64 Linux only")


def formula(g, x):
    return x * 2.0 + g  # 2x is exact: one rounding with or without FMA


def ref(g, x):
    return x * np.float32(2) + g


@pytest.fixture(scope="module")
def kernel():
    return formula_kernel(formula, "pool_test", 2)


@pytest.fixture(scope="module")
def call(kernel):
    e = native.entry(kernel)
    words = e.words(2)
    assert words[nir.CallWords.CTX] != 0 and words[nir.CallWords.THREADS] == 2  # split over the pool
    assert e.words(2) is words and e.call(2) is e.call(2)  # made once per (kernel, threads)
    return e.call(2)


def run(call, n, begin=0, end=None):
    rng = np.random.default_rng(n)
    g = rng.standard_normal(n).astype(np.float32)
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    out = np.full(n, -7.0, np.float32)
    meta = np.array([n, 1, 1, 1], np.int64)  # dims, then each operand's stride (elements)
    call(g.ctypes.data, x.ctypes.data, out.ctypes.data, meta.ctypes.data, begin, n if end is None else end)
    return g, x, out


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 127, 1000, 4097, 65536 + 7, 300_001])
def test_split_launch_is_exact(call, n):
    g, x, out = run(call, n)
    np.testing.assert_array_equal(out, ref(g, x))


@pytest.mark.parametrize("threads", [3, 5])
def test_other_thread_counts(kernel, threads):
    g, x, out = run(native.entry(kernel).call(threads), 100_003)
    np.testing.assert_array_equal(out, ref(g, x))


def test_subrange_only(call):
    for begin, end in ((100, 900), (70_000, 140_001)):
        g, x, out = run(call, 150_000, begin, end)
        np.testing.assert_array_equal(out[begin:end], ref(g, x)[begin:end])
        assert (out[:begin] == -7).all() and (out[end:] == -7).all()


def test_empty_range_writes_nothing(call):
    g, x, out = run(call, 100, 50, 50)
    assert (out == -7).all()


def test_workers_wake_after_sleeping(call):
    for _ in range(2):
        time.sleep(0.3)  # past the spin: the workers sleep on their futex
        g, x, out = run(call, 50000)
        np.testing.assert_array_equal(out, ref(g, x))


def test_concurrent_launches_fall_back_not_deadlock(call):
    def worker(seed):
        for i in range(30):
            g, x, out = run(call, 20000 + seed * 31 + i)
            assert np.array_equal(out, ref(g, x)), seed

    run_threads(worker, 6)


def test_replays_split_by_the_call_words(kernel):
    """A replay runs a kernel through its call words, as its call does: split over the pool."""
    e = native.entry(kernel)
    n = 100_000
    g, x = np.ones(n, np.float32), np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    meta = np.array([n, 1, 1, 1], np.int64)
    replays = native.Replays()
    launch = native.Launch(e.words(2), ((0, 0), (1, 0), (2, 0)), meta.ctypes.data, n)
    assert replays.record((g, x), (), (out,), launch, environ_keys(()), (meta, kernel))
    assert replays.run((g, x), (), out) is out
    np.testing.assert_array_equal(out, ref(g, x))


def test_a_forked_child_gets_its_own_pool():
    code = """
import os, numpy as np
from aclgen.codegen import native
from tests.kernels import formula_kernel
e = native.entry(formula_kernel(lambda x: x * 2.0, 'f'))
n = 200_000
x, meta = np.arange(n, dtype=np.float32), np.array([n, 1, 1], np.int64)

def check(tag):
    out = np.zeros(n, np.float32)
    e.call(2)(x.ctypes.data, out.ctypes.data, meta.ctypes.data, 0, n)
    assert (out == 2 * x).all(), tag

check('parent')
parent_pool = e.words(2)[native.nir.CallWords.CTX]
pid = os.fork()
if pid == 0:
    try:
        check('child')
        assert e.words(2)[native.nir.CallWords.CTX] != parent_pool
        os._exit(0)
    except BaseException:
        os._exit(3)
_, status = os.waitpid(pid, 0)
check('parent again')
print('status', os.waitstatus_to_exitcode(status))
"""
    proc = python(code, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "status 0"



def _last_job() -> tuple[int, int]:
    """(chunk, chunks) of the 2-thread pool's last launch, read from its context (native_ir.Ctx)."""
    pool = native._pool(2)
    assert pool is not None
    words = pool._memory[(pool.ctx - pool._memory.ctypes.data) // 8:]
    return int(words[nir.Ctx.CHUNK // 8]), int(words[nir.Ctx.N_CHUNKS // 8])


def test_the_pool_cuts_each_kernel_by_its_unit():
    """Each kernel's range is cut in its own unit (Kernel.chunking), four chunks a thread: a
    kernel a row at a time by single rows (64 softmax rows were one chunk, one thread, when every
    range was cut into multiples of 64), one whose blocks of 64 rows sum across rows by whole
    blocks (RmsNormGrad at [4000, 96]: 63 blocks, its range 4032 rows), an elementwise one by
    multiples of 64 elements."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4000, 96)).astype(np.float32)
    with overridden(ACLGEN_THREADS="2"):
        ops.softmax(rng.standard_normal((64, 65536)).astype(np.float32), -1)
        assert _last_job() == (8, 8)
        ops.rms_norm(x, np.ones(96, np.float32), 1e-6)
        assert _last_job() == (500, 8)
        # (then the blocks are added by one thread: 6048 elements)
        ops.rms_norm_grad(x, x, np.ones((4000, 1), np.float32), np.ones(96, np.float32))
        assert _last_job() == (512, 8)
        ops.relu(rng.standard_normal(1 << 20).astype(np.float32))
        assert _last_job() == (1 << 17, 8)
