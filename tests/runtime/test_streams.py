"""Streams: FIFO order, asynchronous enqueue, independence of streams, error reporting, destroy."""

from __future__ import annotations

import threading
import time

import numpy as np

import aclgen.acl as acl
import aclgen.aclnn as aclnn
from tests import reference as ref
from tests.runners import run_threads
from tests.runtime.aclnn_calls import gws, run, s


def blocker(stream):
    """Queue a task that holds `stream` until the returned event is set."""
    ev = threading.Event()
    stream.enqueue(lambda: ev.wait(10))
    return ev


def test_default_stream_and_sync_none():
    assert acl.rt.synchronize_stream(None) == 0
    assert acl.rt.destroy_stream(None) == acl.ACL_ERROR_INVALID_PARAM


def test_enqueue_returns_at_once_and_runs_in_order():
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    rng = np.random.default_rng(1)
    a = rng.uniform(-6, 6, 1000).astype(np.float32)
    c = rng.uniform(-6, 6, 1000).astype(np.float32)
    b = np.zeros_like(a)
    ev = blocker(stream)
    want_a, want_b = chain(stream, a, b, c, 20)  # each call reads what the previous one wrote
    assert not b.any()  # nothing ran yet: the stream is held
    ev.set()
    assert acl.rt.synchronize_stream(stream) == 0
    assert ref.same_bits(a, want_a) and ref.same_bits(b, want_b)
    assert acl.rt.destroy_stream(stream) == 0


def test_streams_are_independent():
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    ev = blocker(s2)
    g = np.linspace(-4, 4, 4096, dtype=np.float32)
    out1, out2 = np.zeros_like(g), np.zeros_like(g)
    tg = acl.from_numpy(g)
    for out, st in ((out2, s2), (out1, s1)):
        ws, ex, ret = aclnn.aclnnSeluBackwardGetWorkspaceSize(tg, tg, acl.from_numpy(out))
        assert aclnn.aclnnSeluBackward(None, ws, ex, st) == 0
    assert acl.rt.synchronize_stream(s1) == 0  # does not wait for the held s2
    assert ref.same_bits(out1, ref.selu_backward(g, g)) and not out2.any()
    ev.set()
    assert acl.rt.synchronize_stream(s2) == 0
    assert ref.same_bits(out2, out1)
    assert acl.rt.destroy_stream(s1) == 0 and acl.rt.destroy_stream(s2) == 0


def test_streams_run_at_the_same_time():
    """A rendezvous of two tasks on two streams only completes if both run at once."""
    barrier = threading.Barrier(2, timeout=5)
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    s1.enqueue(barrier.wait)
    s2.enqueue(barrier.wait)
    assert acl.rt.synchronize_stream(s1) == 0 and acl.rt.synchronize_stream(s2) == 0
    acl.rt.destroy_stream(s1)
    acl.rt.destroy_stream(s2)


def test_large_calls_on_two_streams():
    """Large (multi-threaded) calls on two streams at once give the same results."""
    n = 1 << 22
    g = np.ones(n, np.float32)
    outs = [np.zeros(n, np.float32) for _ in range(2)]
    streams = [acl.rt.create_stream()[0] for _ in range(2)]
    executors = []
    for out in outs:
        ws, ex, ret = aclnn.aclnnSwiGluGradGetWorkspaceSize(acl.from_numpy(g[: n // 2]), acl.from_numpy(g), 0,
                                                            acl.from_numpy(out))
        assert ret == 0
        aclnn.aclSetAclOpExecutorRepeatable(ex)
        executors.append(ex)
    for ex, st in zip(executors, streams):
        assert aclnn.aclnnSwiGluGrad(None, 0, ex, st) == 0
    assert acl.rt.synchronize_device() == 0
    assert np.array_equal(outs[0], outs[1]) and outs[0].all()
    for st in streams:
        assert acl.rt.destroy_stream(st) == 0


def test_async_failure_reported_by_synchronize():
    stream, _ = acl.rt.create_stream()
    ptr, _ = acl.rt.malloc(64, 0)
    t = acl.create_tensor([16], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [16], ptr)
    ws, ex, ret = gws("threshold")(t, t, s(0.0), t)
    assert ret == 0
    ev = blocker(stream)
    assert run("threshold")(None, ws, ex, stream) == 0
    assert acl.rt.free(ptr) == 0  # too early: the queued call has not run
    ev.set()
    assert acl.rt.synchronize_stream(stream) == aclnn.ACLNN_ERR_RUNTIME_ERROR
    assert "aclnnThresholdBackward: operand memory at" in acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0  # reported once
    stream.enqueue(lambda: 1 / 0)
    stream.enqueue(lambda: None)
    assert acl.rt.synchronize_stream(stream) == aclnn.ACLNN_ERR_RUNTIME_ERROR
    assert "ZeroDivisionError" in acl.get_recent_err_msg()
    assert acl.rt.destroy_stream(stream) == 0


def test_first_error_wins():
    from aclgen.runtime.errors import AclError

    stream, _ = acl.rt.create_stream()

    def failing(code):
        def task():
            raise AclError(code, f"failure {code}")
        return task

    stream.enqueue(failing(361001))
    stream.enqueue(failing(561000))
    assert acl.rt.synchronize_stream(stream) == 361001
    assert acl.get_recent_err_msg() == "failure 361001"
    acl.rt.destroy_stream(stream)


def test_destroy_waits_for_pending_work():
    stream, _ = acl.rt.create_stream()
    ev = blocker(stream)
    done = []
    g = np.linspace(-1, 1, 64, dtype=np.float32)
    out = np.zeros_like(g)
    ws, ex, ret = gws("hardswish")(acl.from_numpy(g), acl.from_numpy(g), acl.from_numpy(out))
    assert run("hardswish")(None, ws, ex, stream) == 0
    th = threading.Thread(target=lambda: done.append(acl.rt.destroy_stream(stream)))
    th.start()
    time.sleep(0.05)
    assert not done  # still waiting on the held work
    ev.set()
    th.join(10)
    assert done == [0] and ref.same_bits(out, ref.hardswish_backward(g, g))


def test_destroyed_stream_misuse():
    stream, _ = acl.rt.create_stream()
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.destroy_stream(stream) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_INVALID_PARAM
    assert "the stream was destroyed" in acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream("s") == acl.ACL_ERROR_INVALID_PARAM
    g = acl.from_numpy(np.zeros(4, np.float32))
    ws, ex, ret = gws("hardswish")(g, g, g)
    assert run("hardswish")(None, ws, ex, stream) == 161002
    assert acl.get_recent_err_msg() == "aclnnHardswishBackward: stream was destroyed"
    assert run("hardswish")(None, ws, ex, None) == 0  # the failed enqueue did not consume it


def test_repeatable_executor_on_a_stream_many_times():
    stream, _ = acl.rt.create_stream()
    acc = np.full(8, 10.0, np.float32)
    ta = acl.from_numpy(acc)
    ws, ex, ret = gws("selu")(ta, acl.from_numpy(np.ones(8, np.float32)), ta)
    aclnn.aclSetAclOpExecutorRepeatable(ex)
    for _ in range(5):
        assert run("selu")(None, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    want = np.full(8, 10.0, np.float32)
    for _ in range(5):
        want = want * np.float32(1.0507009873554805)
    assert np.array_equal(acc, want)
    acl.rt.destroy_stream(stream)


# -- who runs the work: a synchronize runs what is still pending, the worker what nobody waits for --


def chain(stream, a, b, c, calls):
    """Queue `calls` HardswishBackward calls, each reading what the previous one wrote; the expected
    (a, b) afterwards."""
    ta, tb, tc = acl.from_numpy(a), acl.from_numpy(b), acl.from_numpy(c)
    want_a, want_b = a.copy(), b.copy()
    for k in range(calls):
        src, dst = (ta, tb) if k % 2 == 0 else (tb, ta)
        ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(src, tc, dst)
        assert ret == 0
        assert aclnn.aclnnHardswishBackward(None, ws, ex, stream) == 0
        if k % 2 == 0:
            want_b = ref.hardswish_backward(want_a, c)
        else:
            want_a = ref.hardswish_backward(want_b, c)
    return want_a, want_b


def wait_until(predicate, timeout=10.0):
    """Poll `predicate` until true (a deadlock fails after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


class Tasks:
    """Tasks that record the order they ran in, the threads that ran them and how many ran at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.ran, self.threads = [], set()
        self.active = self.peak = 0

    def task(self, key, fail=None, pause=0.0):
        from aclgen.runtime.errors import AclError

        def body():
            with self.lock:
                self.active += 1
                self.peak = max(self.peak, self.active)
                self.threads.add(threading.get_ident())
            if pause:
                time.sleep(pause)
            with self.lock:
                self.ran.append(key)
                self.active -= 1
            if fail is not None:
                raise AclError(fail, f"failure of task {key}")

        return body


def test_synchronize_right_after_queueing_runs_the_chain_in_order():
    stream, _ = acl.rt.create_stream()
    rng = np.random.default_rng(2)
    for calls in (1, 2, 7, 50):
        a = rng.uniform(-6, 6, 1024).astype(np.float32)
        b, c = np.zeros_like(a), rng.uniform(-6, 6, 1024).astype(np.float32)
        want_a, want_b = chain(stream, a, b, c, calls)
        assert acl.rt.synchronize_stream(stream) == 0
        assert ref.same_bits(a, want_a) and ref.same_bits(b, want_b)
    assert acl.rt.destroy_stream(stream) == 0


def test_synchronizes_and_worker_share_the_work_in_order_with_the_first_failure():
    """A synchronize in a helper thread runs the work queued before it; the work queued meanwhile is
    left to the worker or to the next synchronize. Whoever runs it: one task at a time, in FIFO
    order, the first failure reported once, the work after it run."""
    stream, _ = acl.rt.create_stream()
    tasks, got = Tasks(), []
    for k in range(30):
        stream.enqueue(tasks.task(k, fail=361001 if k == 20 else None, pause=0.0005))
    helper = threading.Thread(target=lambda: got.append((acl.rt.synchronize_stream(stream), acl.get_recent_err_msg())))
    helper.start()
    for k in range(30, 60):
        stream.enqueue(tasks.task(k, pause=0.0005))
    got.append((acl.rt.synchronize_stream(stream), acl.get_recent_err_msg()))
    helper.join(10)
    assert sorted(status for status, _ in got) == [0, 361001]
    assert (361001, "failure of task 20") in got
    assert tasks.ran == list(range(60)) and tasks.peak == 1
    assert tasks.threads <= {threading.get_ident(), helper.ident, stream._thread.ident}
    assert acl.rt.synchronize_stream(stream) == 0  # reported once
    assert acl.rt.destroy_stream(stream) == 0


def test_synchronize_never_overtakes_a_running_task():
    """While the worker runs task k, a synchronize waits for it and does not start task k+1."""
    stream, _ = acl.rt.create_stream()
    started, release, order = threading.Event(), threading.Event(), []

    def held():
        started.set()
        release.wait(10)
        order.append("held")

    stream.enqueue(held)
    assert started.wait(10)  # the worker took it: nobody synchronized
    stream.enqueue(lambda: order.append("next"))
    result = []
    th = threading.Thread(target=lambda: result.append(acl.rt.synchronize_stream(stream)))
    th.start()
    time.sleep(0.05)
    assert not result and not order
    release.set()
    th.join(10)
    assert result == [0] and order == ["held", "next"]
    assert acl.rt.destroy_stream(stream) == 0


def test_queued_work_runs_without_a_synchronize():
    """Small work (run after the worker's grace) and big work (started at once) both run with
    nobody synchronizing."""
    from aclgen.runtime.stream import EAGER_NUMEL

    stream, _ = acl.rt.create_stream()
    ran = threading.Event()
    stream.enqueue(ran.set)
    assert ran.wait(10)
    for n in (1024, EAGER_NUMEL):
        g = np.linspace(-4, 4, n, dtype=np.float32)
        out = np.zeros_like(g)
        ws, ex, ret = gws("hardswish")(acl.from_numpy(g), acl.from_numpy(g), acl.from_numpy(out))
        assert run("hardswish")(None, ws, ex, stream) == 0
        want = ref.hardswish_backward(g, g)
        assert wait_until(lambda out=out, want=want: ref.same_bits(out, want)), f"{n} elements never ran"
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.destroy_stream(stream) == 0


def test_a_small_launch_on_an_idle_stream_runs_at_once_and_keeps_its_failure():
    """CANN's pattern (phase 1, launch, synchronize) on an idle stream: the launching thread runs
    small work at once (nothing is ahead of it); a failure is still the next synchronize's, once.
    The stream's `unsettled` word (read by the C SDK without the GIL) stays 0 throughout."""
    stream, _ = acl.rt.create_stream()
    g = np.linspace(-4, 4, 1024, dtype=np.float32)
    out = np.zeros_like(g)
    ws, ex, ret = gws("hardswish")(acl.from_numpy(g), acl.from_numpy(g), acl.from_numpy(out))
    assert run("hardswish")(None, ws, ex, stream) == 0
    assert ref.same_bits(out, ref.hardswish_backward(g, g))  # ran within the launch
    assert stream.unsettled.value == 0
    assert acl.rt.synchronize_stream(stream) == 0

    ptr, _ = acl.rt.malloc(256, 0)  # memory freed between the phases: the launch's work fails
    t = acl.create_tensor([64], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [64], ptr)
    ws, ex, ret = gws("selu")(t, t, t)
    assert ret == 0 and acl.rt.free(ptr) == 0
    assert run("selu")(None, ws, ex, stream) == 0  # launched; the failure waits for synchronize
    assert stream.unsettled.value == 1
    assert acl.rt.synchronize_stream(stream) == aclnn.ACLNN_ERR_RUNTIME_ERROR
    assert "was freed before the call ran" in acl.get_recent_err_msg()
    assert stream.unsettled.value == 0 and acl.rt.synchronize_stream(stream) == 0  # reported once
    assert acl.rt.destroy_stream(stream) == 0


def test_unsettled_while_work_is_queued():
    stream, _ = acl.rt.create_stream()
    ev = blocker(stream)
    assert stream.unsettled.value == 1
    g = np.ones(64, np.float32)
    ws, ex, ret = gws("hardswish")(acl.from_numpy(g), acl.from_numpy(g), acl.from_numpy(g))
    assert run("hardswish")(None, ws, ex, stream) == 0  # behind the held task: queued
    ev.set()
    assert acl.rt.synchronize_stream(stream) == 0 and stream.unsettled.value == 0
    assert acl.rt.destroy_stream(stream) == 0


def test_many_threads_queue_and_synchronize_on_one_stream():
    """8 threads queue tasks on one stream and synchronize it at once: each synchronize returns
    after its own thread's tasks ran; every task runs once, never two at a time, each thread's in
    its order."""
    stream, _ = acl.rt.create_stream()
    tasks, threads = Tasks(), 8
    counts = [0] * threads

    def count(k):
        counts[k] += 1

    def body(k):
        for i in range(200):
            stream.enqueue(tasks.task((k, i)))
            stream.enqueue(lambda k=k: count(k))
            if i % 5 == k % 5:
                assert acl.rt.synchronize_stream(stream) == 0
                assert counts[k] == i + 1, "synchronize returned before its work ran"

    run_threads(body, threads)
    assert acl.rt.synchronize_stream(stream) == 0
    assert tasks.peak == 1 and len(tasks.ran) == threads * 200
    for k in range(threads):
        assert [i for j, i in tasks.ran if j == k] == list(range(200))
    assert acl.rt.destroy_stream(stream) == 0


def test_destroy_runs_the_pending_work_and_stops_the_worker():
    stream, _ = acl.rt.create_stream()
    rng = np.random.default_rng(3)
    a = rng.uniform(-6, 6, 1024).astype(np.float32)
    b, c = np.zeros_like(a), rng.uniform(-6, 6, 1024).astype(np.float32)
    tasks = Tasks()
    stream.enqueue(tasks.task("failing", fail=561000))
    want_a, want_b = chain(stream, a, b, c, 9)
    stream.enqueue(tasks.task("last"))
    assert acl.rt.destroy_stream(stream) == 561000
    assert acl.get_recent_err_msg() == "failure of task failing"
    assert ref.same_bits(a, want_a) and ref.same_bits(b, want_b) and tasks.ran == ["failing", "last"]
    assert not stream._thread.is_alive()
