"""Status codes travel as return values; the message of the last failure lives per thread.

Inside the runtime a failed check raises `AclError(status, message)`: raising is free on the
success path and lets a check sequence read top to bottom. The public API catches it at the
boundary, records the message for `acl.get_recent_err_msg()` on the calling thread, and returns
the status, so no exception ever reaches a caller of `acl`/`aclnn`.
"""

from __future__ import annotations

import threading

_local = threading.local()


class AclError(Exception):
    """A failed check: `status` is the CANN code, the message one line naming what was wrong."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def set_recent(message: str) -> None:
    _local.message = message


def recent() -> str:
    """The message of the last failure on this thread ("" when none failed yet)."""
    return getattr(_local, "message", "")


def kind_of(value) -> str:
    """How a message names a value of the wrong kind: its type, or what the value says it is
    (the C ABI's unknown pointers say which address aclgen never returned)."""
    return getattr(value, "described_as", None) or type(value).__name__


def fail(status: int, message: str) -> int:
    """Record `message` for this thread and return `status` (the failure path of every API)."""
    _local.message = message
    return status


class OperatorError(ValueError):
    """Bad arguments to an operator's Python call; `status` is the aclnn status code SPEC.md
    names and the message the one the aclnn API would leave for aclGetRecentErrMsg."""

    def __init__(self, message: str, status: int = 161002):
        super().__init__(message)
        self.status = status


class OperatorTypeError(OperatorError, TypeError):
    """An argument of a kind the call cannot take at all (an `out` that is not an array)."""
