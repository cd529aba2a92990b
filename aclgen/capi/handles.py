"""The pointers C programs hold: opaque handles, each looked up before anything uses it.

An `aclTensor*`, `aclScalar*`, `aclOpExecutor*` or `aclrtStream` handed to C is not the address
of anything: it is a number this module made up and maps to the runtime object. C code never
dereferences it (the types are opaque), so a wrong one can only come back to us, where it is
looked up: a live handle gives its object; one destroyed or consumed a while ago gives the dead
object (the runtime then reports "was destroyed", "was already run"); anything else, a handle
of another kind included, gives an `UnknownPointer`, which every check rejects as a wrong type.
Nothing is ever read through a pointer the caller passed as a handle.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from aclgen.runtime.array import AclArray
from aclgen.runtime.executor import Executor
from aclgen.runtime.scalar import AclScalar
from aclgen.runtime.stream import Stream
from aclgen.runtime.tensor import AclTensor

T = TypeVar("T")

DEAD_KEPT = 1 << 14  # dead handles remembered per kind (older ones read as unknown pointers)


class UnknownPointer:
    """A pointer aclgen never returned as a handle of the expected kind (or long dead)."""

    __slots__ = ("address",)
    destroyed = False
    block = None

    def __init__(self, address: int):
        self.address = address

    def __repr__(self) -> str:
        return f"UnknownPointer(0x{self.address:x})"

    @property
    def described_as(self) -> str:  # what messages call it (runtime/errors.py kind_of)
        return f"0x{self.address:x}, a pointer aclgen never returned as one"


class Handles(Generic[T]):
    """The live and recently dead objects of one kind, by handle. Handles are distinct per kind
    (`tag` in bits 40-47) and never reused.

    A dead handle keeps a small token (`kill`); `revive` turns it back into the object that
    answers for the handle, when one is asked for (a failure path: the common path never pays
    for it). Every method is one or two dict operations, atomic under the GIL: no lock."""

    def __init__(self, tag: int, revive: Callable[[Any], T] | None = None):
        self._base = 0x7A00_0000_0000 | (tag << 40)
        self._serial = itertools.count(1)
        self._live: dict[int, T] = {}
        self._dead: dict[int, Any] = {}  # insertion-ordered: the oldest is forgotten first
        self._revive = revive
        self.live = self._live.get  # `live(handle)`: the object or None, as fast as Python looks up

    def add(self, obj: T) -> int:
        handle = self._base + next(self._serial) * 64
        self._live[handle] = obj
        return handle

    def get(self, handle: int) -> T | UnknownPointer:
        """The object of a live handle, the dead object of a recently dead one, else an
        UnknownPointer (never None: the caller decides what NULL means)."""
        obj = self._live.get(handle)
        if obj is not None:
            return obj
        token = self._dead.get(handle)
        if token is None:
            return UnknownPointer(handle)
        return self._revive(token) if self._revive is not None else token

    def kill(self, handle: int, dead: Any) -> None:
        """Forget a live handle; `dead` (the object stripped of what it kept alive, or the token
        `revive` takes) answers for it from now on."""
        self._live.pop(handle, None)
        graveyard = self._dead
        graveyard[handle] = dead
        if len(graveyard) > DEAD_KEPT:
            graveyard.pop(next(iter(graveyard)), None)

    def __len__(self) -> int:
        return len(self._live)


def _dead_executor(token: tuple[str, int]) -> Executor:
    """What a dead executor handle answers with: its API and state, nothing it kept alive."""
    api, state = token
    dead = Executor(api, 0, None, (), 0, None, (), ())
    dead.state = state
    return dead


tensors: Handles[AclTensor] = Handles(1)
scalars: Handles[AclScalar] = Handles(2)
executors: Handles[Executor] = Handles(3, _dead_executor)  # dead: (api, state)
streams: Handles[Stream] = Handles(4)
arrays: Handles[AclArray] = Handles(5)  # aclIntArray, aclFloatArray, aclBoolArray
