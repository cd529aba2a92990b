"""Stream faults: a failure inside queued operator work is returned by synchronize_stream once,
the work queued behind it still runs, and the stream stays usable; destroying a stream with
pending work waits for it and returns its failure."""

from __future__ import annotations

import threading
import time

import numpy as np

import aclgen.acl as acl
import aclgen.aclnn as aclnn
from tests import reference as ref
from tests.reference import same_bits


def hold(stream):
    ev = threading.Event()
    stream.enqueue(lambda: ev.wait(30))
    return ev


def queue_hardswish(stream, g, out):
    ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(acl.from_numpy(g), acl.from_numpy(g),
                                                               acl.from_numpy(out))
    assert ret == 0
    assert aclnn.aclnnHardswishBackward(None, ws, ex, stream) == 0


def queue_on_freed_memory(stream):
    """A call whose memory is freed after it was queued: fails when it runs (361001)."""
    ptr, _ = acl.rt.malloc(256, 0)
    t = acl.create_tensor([64], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [64], ptr)
    ws, ex, ret = aclnn.aclnnSeluBackwardGetWorkspaceSize(t, t, t)
    assert ret == 0
    assert aclnn.aclnnSeluBackward(None, ws, ex, stream) == 0
    assert acl.rt.free(ptr) == 0


def test_failure_in_queued_work_is_reported_once_and_the_stream_goes_on():
    stream, _ = acl.rt.create_stream()
    g = np.linspace(-5, 5, 999, dtype=np.float32)
    before, after, later = (np.zeros_like(g) for _ in range(3))
    ev = hold(stream)
    queue_hardswish(stream, g, before)
    queue_on_freed_memory(stream)
    queue_hardswish(stream, g, after)
    ev.set()
    assert acl.rt.synchronize_stream(stream) == aclnn.ACLNN_ERR_RUNTIME_ERROR
    assert "aclnnSeluBackward: operand memory at" in acl.get_recent_err_msg()
    want = ref.hardswish_backward(g, g)
    assert same_bits(before, want) and same_bits(after, want)  # nothing lost around the fault
    assert acl.rt.synchronize_stream(stream) == 0  # reported once
    queue_hardswish(stream, g, later)
    assert acl.rt.synchronize_stream(stream) == 0 and same_bits(later, want)
    assert acl.rt.destroy_stream(stream) == 0


def test_workspace_freed_before_queued_work_runs():
    stream, _ = acl.rt.create_stream()
    buf = np.linspace(-5, 5, 64, dtype=np.float32)
    ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(acl.from_numpy(buf[:60]), acl.from_numpy(buf[:60]),
                                                               acl.from_numpy(buf[2:62]))
    assert ret == 0 and ws > 0
    ptr, _ = acl.rt.malloc(ws, 0)
    ev = hold(stream)
    assert aclnn.aclnnHardswishBackward(ptr, ws, ex, stream) == 0
    assert acl.rt.free(ptr) == 0
    ev.set()
    assert acl.rt.synchronize_stream(stream) == aclnn.ACLNN_ERR_RUNTIME_ERROR
    assert "was freed before the call ran" in acl.get_recent_err_msg()
    assert acl.rt.destroy_stream(stream) == 0


def test_python_exception_in_a_task_does_not_kill_the_worker():
    stream, _ = acl.rt.create_stream()
    stream.enqueue(lambda: {}["missing"])
    g = np.ones(10, np.float32)
    out = np.zeros_like(g)
    queue_hardswish(stream, g, out)
    assert acl.rt.synchronize_stream(stream) == aclnn.ACLNN_ERR_RUNTIME_ERROR
    assert "KeyError" in acl.get_recent_err_msg()
    assert same_bits(out, ref.hardswish_backward(g, g))
    assert acl.rt.destroy_stream(stream) == 0


def test_destroy_with_pending_work_waits_and_returns_its_failure():
    stream, _ = acl.rt.create_stream()
    ev = hold(stream)
    g = np.linspace(-4, 4, 77, dtype=np.float32)
    out = np.zeros_like(g)
    queue_hardswish(stream, g, out)
    queue_on_freed_memory(stream)
    result = []
    th = threading.Thread(target=lambda: result.append((acl.rt.destroy_stream(stream), acl.get_recent_err_msg())))
    th.start()
    time.sleep(0.05)
    assert not result, "destroy must wait for the pending work"
    ev.set()
    th.join(30)
    assert not th.is_alive()
    status, message = result[0]
    assert status == aclnn.ACLNN_ERR_RUNTIME_ERROR and "was freed before the call ran" in message
    assert same_bits(out, ref.hardswish_backward(g, g))
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_INVALID_PARAM  # destroyed
    assert aclnn.aclnnHardswishBackward(None, 0, None, stream) == aclnn.ACLNN_ERR_PARAM_NULLPTR


def test_failure_in_work_that_the_synchronize_runs_itself():
    """No hold: a synchronize right after queueing finds the work pending and runs it itself;
    the report and the work around the fault are the same. (A first task queued as such keeps
    the small launches behind it from running at once, on an idle stream.)"""
    stream, _ = acl.rt.create_stream()
    g = np.linspace(-5, 5, 1000, dtype=np.float32)
    want = ref.hardswish_backward(g, g)
    for _ in range(20):
        before, after = np.zeros_like(g), np.zeros_like(g)
        stream.enqueue(lambda: None)
        queue_hardswish(stream, g, before)
        queue_on_freed_memory(stream)
        queue_on_freed_memory(stream)
        queue_hardswish(stream, g, after)
        assert acl.rt.synchronize_stream(stream) == aclnn.ACLNN_ERR_RUNTIME_ERROR
        assert "aclnnSeluBackward: operand memory at" in acl.get_recent_err_msg()
        assert same_bits(before, want) and same_bits(after, want)
        assert acl.rt.synchronize_stream(stream) == 0  # reported once
    assert acl.rt.destroy_stream(stream) == 0


def test_destroy_right_after_queueing_runs_the_work_and_returns_its_failure():
    stream, _ = acl.rt.create_stream()
    g = np.linspace(-4, 4, 77, dtype=np.float32)
    out = np.zeros_like(g)
    stream.enqueue(lambda: None)  # (the launches behind it are queued, not run at once)
    queue_on_freed_memory(stream)
    queue_hardswish(stream, g, out)
    assert acl.rt.destroy_stream(stream) == aclnn.ACLNN_ERR_RUNTIME_ERROR
    assert "was freed before the call ran" in acl.get_recent_err_msg()
    assert same_bits(out, ref.hardswish_backward(g, g))
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_INVALID_PARAM  # destroyed
