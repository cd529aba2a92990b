"""What the hardening tests (properties, guards) share: the seed operators as data, scalars as
aclCreateScalar stores them, strided tensors over numpy or runtime memory (so a write outside the
view shows in the storage), and the variant budget that bounds their compile time.

Inputs come from tests/edges.py, expected results from tests/reference.py (independent of
aclgen); this module only builds operands.
"""

from __future__ import annotations

import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

import aclgen.acl as acl
import aclgen.aclnn as aclnn
from aclgen import cache
from aclgen.declaration import Operator
from tests import reference as ref
from tests.registry import extras, resolve, seeds, union_dtypes

BF16 = np.dtype(ml_dtypes.bfloat16)
NP = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16), "bfloat16": BF16,
      "int8": np.dtype(np.int8), "int32": np.dtype(np.int32), "uint8": np.dtype(np.uint8),
      "int64": np.dtype(np.int64)}
CODE = {"float32": acl.ACL_FLOAT, "float16": acl.ACL_FLOAT16, "bfloat16": acl.ACL_BF16, "int8": acl.ACL_INT8,
        "int32": acl.ACL_INT32, "uint8": acl.ACL_UINT8, "int64": acl.ACL_INT64}
NAME_OF_NP = {v: k for k, v in NP.items()}


@dataclass(frozen=True)
class OpInfo:
    """What the hardening tests need of a declared operator (see tests/registry.py)."""

    op: Operator

    @property
    def key(self) -> str:
        return self.op.python_name

    @property
    def api(self) -> str:
        return self.op.api

    @property
    def n_in(self) -> int:
        return len(self.op.inputs)

    @property
    def param(self) -> str | None:
        """The scalar parameter's name ("lambd", "threshold", "dim") or None."""
        return extras(self.op)[0].name if extras(self.op) else None

    @property
    def param_kind(self) -> str | None:
        return extras(self.op)[0].kind if extras(self.op) else None

    @property
    def broadcast(self) -> bool:
        return self.op.broadcast

    @property
    def dtypes(self) -> tuple[str, ...]:
        """The union over SoC profiles (int64: Ascend950 only)."""
        return union_dtypes(self.op)

    @property
    def exact(self) -> bool:
        """Bit-exact against tests/reference.py, or held to an error bound (`<name>_violations`)."""
        return ref.exact(self.op.python_name)

    @property
    def gws(self):
        return getattr(aclnn, f"{self.api}GetWorkspaceSize")

    @property
    def run(self):
        return getattr(aclnn, self.api)


class Ops(dict):
    """OpInfo by Python name; also found by aclnn name or abbreviation (`OPS["swiglu"]`)."""

    def __missing__(self, key: str) -> OpInfo:
        return self[resolve(key).python_name]


OPS = Ops({op.python_name: OpInfo(op) for op in seeds()})


# ----------------------------------------------------------------------------------------------
# scalars, and strided tensors over numpy or runtime memory
# ----------------------------------------------------------------------------------------------

def scalar_value(value: float, code: int) -> float:
    """What aclCreateScalar stores for `value` in `code`, read back as a Python number."""
    with np.errstate(all="ignore"):
        if code == acl.ACL_FLOAT:
            return float(np.float32(value))
        if code == acl.ACL_FLOAT16:
            return float(np.float16(value))
        if code == acl.ACL_BF16:
            return float(np.array(value, np.float32).astype(BF16))
        if code == acl.ACL_DOUBLE:
            return float(value)
        if code == acl.ACL_INT32:
            v = int(value) & 0xFFFFFFFF
            return float(v - (1 << 32) if v >= 1 << 31 else v)
    raise ValueError(code)


@dataclass
class View:
    """An operand: `dims`, element `strides`, `offset` into a 1-D storage of `storage` elements."""

    dims: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    storage: int
    buffer: int = -1  # index into Case.buffers (operands may share a buffer: in place)

    def extent(self) -> int:
        if any(n == 0 for n in self.dims):
            return 0
        return self.offset + sum((n - 1) * s for n, s in zip(self.dims, self.strides)) + 1

    def injective(self) -> bool:
        """No two elements share memory (sufficient test: sorted strides nest)."""
        reach = 0
        for n, s in sorted(((n, s) for n, s in zip(self.dims, self.strides) if n > 1), key=lambda p: p[1]):
            if s <= reach:
                return False
            reach += (n - 1) * s
        return True


def np_view(buf: np.ndarray, v: View) -> np.ndarray:
    item = buf.itemsize
    if any(n == 0 for n in v.dims):
        return np.zeros(v.dims, buf.dtype)
    return np.lib.stride_tricks.as_strided(buf[v.offset:], v.dims, [s * item for s in v.strides], writeable=False)


class Storage:
    """A 1-D storage buffer in numpy memory or in a runtime allocation (`acl.rt.malloc`)."""

    def __init__(self, host: np.ndarray, runtime: bool):
        self.host = host.copy()  # the initial content, kept for the comparison
        self.runtime = runtime
        if runtime:
            size = max(host.nbytes, 1)
            self.ptr, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            assert ret == 0, acl.get_recent_err_msg()
            if host.nbytes:
                assert acl.rt.memcpy(self.ptr, size, host.ctypes.data, host.nbytes,
                                     acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
            self.arr = None
        else:
            self.arr = host.copy()
            self.ptr = self.arr.ctypes.data

    def read(self) -> np.ndarray:
        if not self.runtime:
            return self.arr.copy()
        got = np.empty_like(self.host)
        if got.nbytes:
            assert acl.rt.memcpy(got.ctypes.data, got.nbytes, self.ptr, got.nbytes,
                                 acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        return got

    def free(self):
        if self.runtime:
            assert acl.rt.free(self.ptr) == 0
            self.runtime = False
            self.arr = np.empty(0, self.host.dtype)


def make_tensor(st: Storage, v: View, code: int, fmt: int = acl.ACL_FORMAT_ND, storage_dims=None):
    t = acl.create_tensor(list(v.dims), code, list(v.strides), v.offset, fmt,
                          list(storage_dims or [v.storage]), st.ptr)
    assert t is not None, acl.get_recent_err_msg()
    return t


# ----------------------------------------------------------------------------------------------
# the variant budget: bounds compile time of the property tests
# ----------------------------------------------------------------------------------------------

class OverBudget(Exception):
    pass


class VariantBudget:
    """Counts the distinct kernel variants a test asks for; past `limit` new ones raise
    OverBudget inside the planner (the call fails with 561000, and the test retries with a
    plain layout). Deterministic: counts only what this budget itself let through."""

    def __init__(self):
        self.seen: dict[str, set] = {}
        self.limit: dict[str, int] = {}
        self.tripped = threading.local()
        self._orig = None

    @contextmanager
    def active(self, op_name: str, limit: int):
        kernels = cache.kernels
        orig = kernels.get
        seen = self.seen.setdefault(op_name, set())

        def get(op, variant, options):
            key = (op.name, variant, options)
            if key not in seen:
                if len(seen) >= limit:
                    self.tripped.flag = True
                    raise OverBudget(f"{op.name}: variant budget {limit} spent")
                seen.add(key)
            return orig(op, variant, options)

        kernels.get = get
        try:
            yield self
        finally:
            del kernels.get  # back to the class's method

    def take_trip(self) -> bool:
        hit = getattr(self.tripped, "flag", False)
        self.tripped.flag = False
        return hit


BUDGET = VariantBudget()


@dataclass
class Tally:
    cases: Counter = field(default_factory=Counter)
    plain: Counter = field(default_factory=Counter)  # cases rerun with a plain layout (budget)
    empty: Counter = field(default_factory=Counter)
    staged: Counter = field(default_factory=Counter)


TALLY = Tally()
