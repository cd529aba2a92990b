"""Shared machinery of the hardening tests: the operators (from the registry) as data, edge values, strided
tensors over numpy or runtime memory, a bit-exact check of whole storage buffers (so a write
outside the view is a failure too), the variant budget, and a subprocess runner.

The expected results come from tests/reference.py (independent of aclgen); this module only
builds inputs and compares.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
        return not hasattr(ref, f"{self.op.python_name}_violations")

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
# values that hit the edges
# ----------------------------------------------------------------------------------------------

def float_specials(npd: np.dtype, params: tuple[float, ...] = ()) -> np.ndarray:
    """±0, ±inf, NaN, subnormals, ±3 and their neighbours, the type's extremes, params ± 1 ulp."""
    fin = ml_dtypes.finfo(npd)
    base = [0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, -3.0, 1.0, -1.0, 0.5, 1.2,
            float(fin.max), -float(fin.max), float(fin.smallest_normal), float(fin.smallest_subnormal),
            -float(fin.smallest_subnormal), 1e-40, -1e-40, 65504.0, 7e4, 1e30, -1e30, 88.7, -88.7, 20.0, -20.0]
    base += [p for p in params if p == p] + [-p for p in params if p == p]
    with np.errstate(all="ignore"):
        v = np.array(base, np.float32).astype(npd)
        up = np.nextafter(v.astype(np.float32), np.float32(np.inf)).astype(npd)
        down = np.nextafter(v.astype(np.float32), np.float32(-np.inf)).astype(npd)
    # the neighbours in the storage type: one step of its own ulp
    return np.concatenate([v, _step(v, npd, +1), _step(v, npd, -1), up, down])


def _step(v: np.ndarray, npd: np.dtype, direction: int) -> np.ndarray:
    """Next representable value of each element in `npd` (through the bit pattern)."""
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32}[npd.itemsize]
    u = v.view(bits).astype(np.int64)
    neg = (u >> (8 * npd.itemsize - 1)) & 1
    u = u + np.where(neg == 1, -direction, direction)
    u = np.clip(u, 0, (1 << (8 * npd.itemsize)) - 1)
    return u.astype(bits).view(npd)


def values(npd: np.dtype, n: int, rng: np.random.Generator, mix: float, params=()) -> np.ndarray:
    """n values of `npd`: a `mix` share of edge values, the rest random over many magnitudes."""
    if n == 0:
        return np.zeros(0, npd)
    if npd.kind in "iu":
        info = np.iinfo(npd)
        edges = [info.min, info.max, 0, 1, -1, info.min + 1, info.max - 1, 3, -3, 2, -2]
        for p in params:
            if p == p and abs(p) < 2.0**62:
                tr = int(np.trunc(np.float64(np.float32(p))))
                edges += [tr - 1, tr, tr + 1]
        edges = np.array([e for e in edges if info.min <= e <= info.max], np.int64)
        v = rng.integers(info.min, info.max, n, endpoint=True, dtype=np.int64)
        small = rng.integers(-8, 9, n)
        v = np.where(rng.random(n) < 0.5, np.clip(small, info.min, info.max), v)
        pick = rng.random(n) < mix
        v[pick] = rng.choice(edges, int(pick.sum()))
        return v.astype(npd)
    scale = 2.0 ** rng.integers(-20, 20, n)
    v = (rng.standard_normal(n) * 4 * np.where(rng.random(n) < 0.8, 1.0, scale)).astype(np.float32)
    with np.errstate(all="ignore"):
        v = v.astype(npd)
    specials = float_specials(npd, params)
    pick = rng.random(n) < mix
    v[pick] = rng.choice(specials, int(pick.sum()))
    return v


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


# ----------------------------------------------------------------------------------------------
# strided tensors over numpy or runtime memory
# ----------------------------------------------------------------------------------------------

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


def same_or_nan(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: identical bits, or both NaN (payloads aside)."""
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[got.itemsize]
    same = got.view(bits) == want.view(bits)
    if got.dtype.kind == "f" or got.dtype == BF16:
        with np.errstate(invalid="ignore"):
            same |= np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
    return same


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


# ----------------------------------------------------------------------------------------------
# subprocesses: a crash is a failure, not a lost test
# ----------------------------------------------------------------------------------------------

def run_threads(target, count: int, timeout: float = 120) -> list[threading.Thread]:
    """Run target(0), ..., target(count - 1) on their own threads; the threads still alive
    after `timeout` (hung) are returned."""
    ts = [threading.Thread(target=target, args=(s,)) for s in range(count)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=timeout)
    return [t for t in ts if t.is_alive()]


def run_python(code: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.update(env or {})
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=e)


def run_json(code: str, timeout: float = 120, env: dict | None = None):
    """Run `code` (which prints one JSON line last) in a fresh interpreter; crash -> AssertionError."""
    p = run_python(code, timeout, env)
    assert p.returncode == 0, f"subprocess died with {p.returncode}:\n{p.stderr[-3000:]}"
    return json.loads(p.stdout.strip().splitlines()[-1])


def report(config, line: str) -> None:
    """Print a summary line past pytest's capture (shown with -q too)."""
    tr = config.pluginmanager.get_plugin("terminalreporter")
    capman = config.pluginmanager.get_plugin("capturemanager")
    if tr is None or capman is None:
        print(line)
        return
    with capman.global_and_fixture_disabled():
        tr.write_line(line)


def same_bits(a, b) -> bool:
    """Identical dtype, shape and bits (NaN payloads aside)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and bool(same_or_nan(a, b).all())
