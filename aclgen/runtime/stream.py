"""Streams: None is synchronous; a created stream is a FIFO of tasks run one at a time, in order.

Who runs a task: the stream's worker thread, or a thread in `synchronize`, which runs the work
still pending itself instead of waiting for the worker. Either takes the next task under the
stream's lock and marks the stream busy while it runs it, so the tasks of one stream never
overlap and always run in FIFO order; a thread that finds the stream busy waits for that task.
The first failure of the work is kept until a `synchronize` hands it back (and forgets it),
as aclrtSynchronizeStream does; work after a failing task still runs. Kernel calls release the
GIL, so the tasks of different streams really run at the same time.

Why: waking a Python worker and then waiting to be woken back costs two cross-core wake-ups and
two GIL hand-offs: 17-28 µs a round trip on an idle 2-core VM (more on a busy one) for a
1K-element call that computes for 0.3 µs. A synchronize that runs the pending work itself
needs none of them.

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

Measured on a 2-core AMD EPYC VM, a 1K float32 aclnnHardswishBackward (repeatable executor)
queued on a stream + synchronize_stream, 20000 round trips: median 2.5 µs, mean 2.6 µs, against
17-28 µs with a worker woken per task through a condition variable; the same call synchronous
(stream None) takes 0.7 µs. `aclgen bench --parts calls` times it ("aclnn call on a stream +
synchronize").
"""

from __future__ import annotations

import collections
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
            if eager:
                self._eager = True
            if self._state == ASLEEP or (eager and self._state == DOZING):
                self._state = AWAKE
                self._nap.notify()

    def synchronize(self) -> tuple[int, str] | None:
        """Run (or wait for) everything queued before this call; returns the first failure of
        the stream's work since the last synchronize, if any."""
        with self._lock:
            target = self._queued
            while self._done < target:
                self._step()
            error, self._error = self._error, None
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
        error = None
        try:
            task()
        except AclError as e:
            error = (e.status, e.message)
        except Exception as e:  # a bug, reported rather than killing the thread
            error = (C.ACLNN_ERR_RUNTIME_ERROR, f"stream task failed: {type(e).__name__}: {e}")
        finally:
            self._lock.acquire()
            self._busy = False
            self._done += 1
            if self._error is None:
                self._error = error
            if self._waiting:
                self._finished.notify_all()

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
