"""Concurrency: 8 threads running both phases on shared and separate streams and on the
default stream, and 8 threads compiling the same new kernel variant at once. Every wait has a
timeout (a deadlock fails the test), every result is checked bit for bit, every output written."""

from __future__ import annotations

import threading

import numpy as np

import aclgen.acl as acl
import aclgen.aclnn as aclnn
from aclgen import dtypes as dt
from aclgen.compiler import Options, Variant
from aclgen.ops import OPERATORS
from tests import reference as ref
from tests.reference import same_bits
from tests.runners import run_threads

THREADS = 8
TIMEOUT = 120


def one_call(k, i, stream):
    """Both phases of one of four operators on fresh data; returns (out, expected)."""
    rng = np.random.default_rng(1000 * k + i)
    n = int(rng.integers(1, 5000))
    g = rng.standard_normal(n).astype(np.float32) * 4
    x = rng.standard_normal(n).astype(np.float32) * 4
    out = np.full(n, np.nan, np.float32)
    op = ("hardswish", "selu", "softshrink", "threshold")[(k + i) % 4]
    tg, tx, to = acl.from_numpy(g), acl.from_numpy(x), acl.from_numpy(out)
    if op == "hardswish":
        ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(tg, tx, to)
        run, want = aclnn.aclnnHardswishBackward, ref.hardswish_backward(g, x)
    elif op == "selu":
        ws, ex, ret = aclnn.aclnnSeluBackwardGetWorkspaceSize(tg, tx, to)
        run, want = aclnn.aclnnSeluBackward, ref.selu_backward(g, x)
    elif op == "softshrink":
        ws, ex, ret = aclnn.aclnnSoftshrinkBackwardGetWorkspaceSize(tg, tx, acl.create_scalar(0.7, 0), to)
        run, want = aclnn.aclnnSoftshrinkBackward, ref.softshrink_backward(g, x, np.float32(0.7))
    else:
        ws, ex, ret = aclnn.aclnnThresholdBackwardGetWorkspaceSize(tg, tx, acl.create_scalar(0.3, 0), to)
        run, want = aclnn.aclnnThresholdBackward, ref.threshold_backward(g, x, np.float32(0.3))
    assert ret == 0, acl.get_recent_err_msg()
    assert run(None, ws, ex, stream) == 0, acl.get_recent_err_msg()
    return out, want


def test_eight_threads_default_separate_and_shared_streams():
    shared, _ = acl.rt.create_stream()
    own = [acl.rt.create_stream()[0] for _ in range(THREADS)]
    calls = 40

    def work(k):
        pending = []
        for i in range(calls):
            stream = (None, own[k], shared)[i % 3]
            out, want = one_call(k, i, stream)
            if stream is None:
                assert same_bits(out, want), f"call {i} on the default stream"
            else:
                pending.append((i, out, want))
        assert acl.rt.synchronize_stream(own[k]) == 0, acl.get_recent_err_msg()
        assert acl.rt.synchronize_stream(shared) == 0, acl.get_recent_err_msg()
        for i, out, want in pending:
            assert same_bits(out, want), f"call {i}: wrong or lost output"

    run_threads(work, THREADS, TIMEOUT)
    for s in (shared, *own):
        assert acl.rt.destroy_stream(s) == 0


def test_eight_threads_one_repeatable_executor_each_on_one_stream():
    stream, _ = acl.rt.create_stream()
    outs, wants = [], []
    for k in range(THREADS):
        g = np.linspace(-5, 5, 1000 + k, dtype=np.float32)
        outs.append(np.zeros_like(g))
        wants.append(ref.hardswish_backward(g, g))
    barrier = threading.Barrier(THREADS, timeout=TIMEOUT)

    def work(k):
        tg = acl.from_numpy(np.linspace(-5, 5, 1000 + k, dtype=np.float32))
        ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(tg, tg, acl.from_numpy(outs[k]))
        assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
        barrier.wait()
        for _ in range(20):
            assert aclnn.aclnnHardswishBackward(None, ws, ex, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert aclnn.aclDestroyAclOpExecutor(ex) == 0

    run_threads(work, THREADS, TIMEOUT)
    assert all(same_bits(o, w) for o, w in zip(outs, wants))
    assert acl.rt.destroy_stream(stream) == 0


def test_eight_threads_compile_the_same_new_variant():
    from aclgen.abi import pack
    from aclgen.codegen import native
    from aclgen.runtime.geometry import plan

    g = np.linspace(-6, 6, 5 * 8 * 18, dtype=np.float32).reshape(5, 8, 18)[:, :7, ::2]
    x = np.ascontiguousarray(g)
    out = np.zeros((5, 8, 18), np.float32)[:, :7, ::2]
    p = plan(g.shape, [tuple(s // a.itemsize for s in a.strides) for a in (g, x, out)])
    f = dt.dtype("float32")
    variant = Variant((f, f), (f,), p.rank, p.layouts)
    assert p.rank == 2 and p.layouts == ("strided", "contiguous", "strided")
    options = Options.from_knobs(tile_size=4093)  # a tile size nothing else uses: a new variant
    barrier = threading.Barrier(THREADS, timeout=TIMEOUT)
    kernels = [None] * THREADS

    def work(k):
        barrier.wait()
        kernels[k] = OPERATORS["hardswish_backward"].kernel(variant, options)

    run_threads(work, THREADS, TIMEOUT)
    assert all(k is kernels[0] for k in kernels), "one compile, one kernel object for every thread"
    meta = pack(kernels[0].meta_layout, p.shape, p.strides, [])
    native.entry(kernels[0]).call()(g.ctypes.data, x.ctypes.data, out.ctypes.data, meta.ctypes.data, 0, p.numel)
    assert same_bits(out, ref.hardswish_backward(g, x))
