"""Streams: None is synchronous; a created stream is a FIFO drained by its own worker thread.

Kernels are ctypes calls, which release the GIL, so two streams really compute at once. The
worker keeps the first failure of queued work; `synchronize` waits for the queue to drain and
hands that failure back (and forgets it), as aclrtSynchronizeStream does.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable

from aclgen.runtime import constants as C
from aclgen.runtime.errors import AclError

_live: set[Stream] = set()
_live_lock = threading.Lock()


class Stream:
    __slots__ = ("__weakref__", "_cond", "_error", "_pending", "_queue", "_thread", "destroyed")

    def __init__(self):
        self._queue: collections.deque = collections.deque()
        self._cond = threading.Condition()
        self._pending = 0
        self._error: tuple[int, str] | None = None
        self.destroyed = False
        self._thread = threading.Thread(target=self._work, name="aclgen-stream", daemon=True)
        self._thread.start()
        with _live_lock:
            _live.add(self)

    def enqueue(self, task: Callable[[], None]) -> None:
        """Queue `task` (raises AclError to report a failure) behind everything queued before."""
        with self._cond:
            self._queue.append(task)
            self._pending += 1
            self._cond.notify_all()

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                task = self._queue.popleft()
            if task is None:
                return
            try:
                task()
            except AclError as e:
                self._record(e.status, e.message)
            except Exception as e:  # a bug, reported rather than killing the worker
                self._record(C.ACLNN_ERR_RUNTIME_ERROR, f"stream task failed: {type(e).__name__}: {e}")
            with self._cond:
                self._pending -= 1
                if not self._pending:
                    self._cond.notify_all()

    def _record(self, status: int, message: str) -> None:
        with self._cond:
            if self._error is None:
                self._error = (status, message)

    def synchronize(self) -> tuple[int, str] | None:
        """Wait until the queue is empty; the first failure since the last synchronize, if any."""
        with self._cond:
            while self._pending:
                self._cond.wait()
            error, self._error = self._error, None
        return error

    def destroy(self) -> tuple[int, str] | None:
        """Finish pending work, stop the worker; returns its unreported failure, if any."""
        error = self.synchronize()
        self.destroyed = True
        with self._cond:
            self._queue.append(None)
            self._cond.notify_all()
        self._thread.join()
        with _live_lock:
            _live.discard(self)
        return error


def live_streams() -> list[Stream]:
    with _live_lock:
        return list(_live)
