"""Streams: None is synchronous; a created stream is a FIFO of tasks run one at a time, in order.

Who runs a task: the launching thread (small work on an idle stream, `launch`: it holds the
stream's lock while the task runs), the stream's worker thread, or a thread in `synchronize`,
which runs the work still pending itself instead of waiting for the worker. The last two take
the next task under the stream's lock and mark the stream busy while they run it, so the tasks
of one stream never overlap and always run in FIFO order; a thread that finds the stream busy
waits for that task.
The first failure of the work is kept until a `synchronize` hands it back (and forgets it),
as aclrtSynchronizeStream does; work after a failing task still runs. Kernel calls release the
GIL, so the tasks of different streams really run at the same time.

Why: waking a Python worker and then waiting to be woken back costs two cross-core wake-ups and
two GIL hand-offs: 17-28 µs a round trip on an idle 2-core VM (more on a busy one) for a
1K-element call that computes for 0.3 µs. A synchronize that runs the pending work itself
needs none of them.

Small operator calls onto a stream with nothing queued or running go further (`launch`): the
launching thread runs them at once, as a device would start work on an idle stream. Nothing can
be ahead of them, so FIFO order holds; their failure is kept for the next synchronize like any
other; and the launch costs what handing the work over would (a task, a lock, a counter), so
CANN's pattern (phase 1, launch, synchronize: a fresh executor per call) costs about what the
synchronous call costs. Small means below EAGER_NUMEL: work the lazy worker would not start
before a synchronize or GRACE_S anyway, so no overlap with the host is lost.

The worker is lazy, so that an immediate synchronize finds the work still pending. An enqueue
onto an empty stream wakes it (one notify); it then dozes GRACE_S and runs only work queued
before its doze and still pending — work that nobody synchronized — so queued work always makes
progress, within ~2 GRACE_S, with or without a synchronize. Calls of EAGER_NUMEL elements or
more (~60 µs kernels here) wake it with no grace, so they overlap the host's GIL-free work (a
4M-element call + 1 ms of sleep: 1.1 ms on a stream, 1.9 ms synchronously).
The GIL is why the worker must not wake often: while a woken thread waits for the GIL, each
release of it by the caller (every kernel call) signals it, ~2.5 µs a round trip more until it
gets the GIL (~25 µs); a worker that woke at every enqueue would make that the median. In a
tight loop of call + synchronize it wakes twice per GRACE_S (the enqueue's notify, the doze's
end) and runs nothing. An idle stream's worker sleeps on a condition: no CPU.

`aclgen bench --parts calls` times both stream rows: CANN's pattern with a fresh executor each
time ("aclnn two-phase call on a stream + synchronize", next to "aclnn two-phase call" with no
stream) and a repeatable executor queued and synchronized ("aclnn executor re-run on a stream +
synchronize").
"""

from __future__ import annotations

import collections
import ctypes
import functools
import threading
from collections.abc import Callable

from aclgen.runtime import constants as C
from aclgen.runtime.errors import AclError

GRACE_S = 1e-3  # how long queued work waits for a synchronize before the worker runs it
EAGER_NUMEL = 1 << 20  # calls this big are started by the worker at once

AWAKE, DOZING, ASLEEP = 0, 1, 2  # the worker: working, in its grace period, idle

_live: set[Stream] = set()
_live_lock = threading.Lock()


class Stream:
    __slots__ = (
        "__weakref__",
        "_busy",
        "_closed",
        "_done",
        "_eager",
        "_error",
        "_finished",
        "_lock",
        "_nap",
        "_queue",
        "_queued",
        "_state",
        "_thread",
        "_waiting",
        "destroyed",
        "unsettled",
    )

    def __init__(self):
        self._lock = threading.Lock()  # guards everything below
        self._finished = threading.Condition(self._lock)  # a task finished (notified when _waiting)
        self._nap = threading.Condition(self._lock)  # where the worker dozes and sleeps
        self._queue: collections.deque[Callable[[], None]] = collections.deque()
        self._queued = self._done = 0  # tasks ever queued, ever finished
        self._busy = False  # a task of this stream is running, on some thread
        self._waiting = 0  # threads waiting on _finished
        self._error: tuple[int, str] | None = None
        self._state = AWAKE
        self._eager = False  # eager work is queued: no grace
        self._closed = False
        self.destroyed = False
        # 0 exactly while nothing is queued or running and no failure waits for a synchronize
        # (written under the lock): a word native code may read without the GIL, so that the C
        # SDK's aclrtSynchronizeStream of a settled stream returns without entering Python.
        # Work run by `launch` on the launching thread never unsettles it unless it fails.
        self.unsettled = ctypes.c_int64(0)
        self._thread = threading.Thread(target=self._work, name="aclgen-stream", daemon=True)
        self._thread.start()
        with _live_lock:
            _live.add(self)

    def enqueue(self, task: Callable[[], None], eager: bool = False) -> None:
        """Queue `task` (raises AclError to report a failure) behind everything queued before;
        `eager`: big work, which the worker starts at once rather than after GRACE_S."""
        with self._lock:
            self._queue.append(task)
            self._queued += 1
            self.unsettled.value = 1
            if eager:
                self._eager = True
            if self._state == ASLEEP or (eager and self._state == DOZING):
                self._state = AWAKE
                self._nap.notify()

    def launch(self, fn: Callable[..., None], *args) -> None:
        """Small work (see the module docstring): run `fn(*args)` now, on this thread, when
        nothing is queued or running on the stream, else queue it. Its failure (AclError) is
        kept for synchronize.
        The lock is held while it runs (a small task: a synchronize or launch from another
        thread meanwhile waits for it, as it would wait for the task to finish anyway)."""
        lock = self._lock
        lock.acquire()
        if self._busy or self._queue:
            self._queue.append(functools.partial(fn, *args))
            self._queued += 1
            self.unsettled.value = 1
            if self._state == ASLEEP:
                self._state = AWAKE
                self._nap.notify()
            lock.release()
            return
        # Not counted in _queued/_done: it is finished before the lock is released, and only a
        # synchronize that takes the lock waits (one running meanwhile on another thread is
        # concurrent with this launch: it owes it nothing).
        try:
            fn(*args)
        except AclError as e:
            self._fault(e.status, e.message)
        except Exception as e:  # a bug, reported rather than raised into the launch
            self._fault(C.ACLNN_ERR_RUNTIME_ERROR, f"stream task failed: {type(e).__name__}: {e}")
        finally:
            lock.release()

    def synchronize(self) -> tuple[int, str] | None:
        """Run (or wait for) everything queued before this call; returns the first failure of
        the stream's work since the last synchronize, if any."""
        # Nothing pending and nothing to report: no lock. Under the GIL each read is atomic; the
        # counts only grow and _done <= _queued, so equal counts mean that everything queued
        # before this call has finished; a task's failure is stored before _done counts it.
        if self._done == self._queued and self._error is None:
            return None
        with self._lock:
            target = self._queued
            while self._done < target:
                self._step()
            error, self._error = self._error, None
            if self._done == self._queued:
                self.unsettled.value = 0
        return error

    def destroy(self) -> tuple[int, str] | None:
        """Finish pending work, stop the worker; returns its unreported failure, if any."""
        error = self.synchronize()
        self.destroyed = True
        with self._lock:
            self._closed = True
            self._nap.notify()
        self._thread.join()
        with _live_lock:
            _live.discard(self)
        return error

    def _step(self) -> None:
        """Run the next task, or wait while another thread runs one. Called with the lock held
        (released while the task runs) and some work pending."""
        if self._busy:
            self._waiting += 1
            self._finished.wait()
            self._waiting -= 1
            return
        task = self._queue.popleft()
        self._busy = True
        self._lock.release()
        failure = None
        try:
            task()
        except AclError as e:
            failure = (e.status, e.message)
        except Exception as e:  # a bug, reported rather than killing the thread that ran it
            failure = (C.ACLNN_ERR_RUNTIME_ERROR, f"stream task failed: {type(e).__name__}: {e}")
        finally:
            self._lock.acquire()
            self._busy = False
            if failure is not None:
                self._fault(*failure)  # before `_done` counts the task: synchronize's fast path
            self._done += 1
            if self._done == self._queued and self._error is None:
                self.unsettled.value = 0
            if self._waiting:
                self._finished.notify_all()

    def _fault(self, status: int, message: str) -> None:
        """Keep a task's failure for synchronize unless an earlier one is waiting (lock held)."""
        if self._error is None:
            self._error = (status, message)
        self.unsettled.value = 1

    def _rest(self, state: int, timeout: float | None) -> None:
        self._state = state
        self._nap.wait(timeout)
        self._state = AWAKE

    def _work(self) -> None:
        """The worker: runs work that nobody synchronized within GRACE_S, and eager work."""
        with self._lock:
            while True:
                if not self._queue:
                    if self._closed:
                        return
                    self._eager = False
                    self._rest(ASLEEP, None)  # until an enqueue (or destroy)
                    if self._closed:
                        continue
                if not self._eager:
                    mark = self._queued
                    self._rest(DOZING, GRACE_S)  # an immediate synchronize runs it meanwhile
                    if self._done >= mark and not self._eager:
                        continue  # all synchronized in time: doze again, or sleep
                while self._queue:
                    self._step()


def live_streams() -> list[Stream]:
    with _live_lock:
        return list(_live)
