"""Planning and launching a kernel on strided views: the host side of the kernel ABI.

`plan()` turns the operands' shapes and strides into the smallest equivalent iteration space:
size-1 dims dropped, broadcast dims given stride 0, adjacent dims merged where every operand
is contiguous across them. The result picks the kernel variant (rank, innermost layout per
operand); `Launch` packs the launch record (aclgen.abi) once and calls the kernel.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from aclgen.codegen.target import last_level_cache_bytes

LAYOUT_OF_STRIDE = {1: "contiguous", 0: "broadcast"}
PARALLEL_MIN = 1 << 15  # below this many elements one thread beats the (native, ~1 us) handoff


def threads_for(numel: int, threads: int) -> int:
    """Threads a call of `numel` elements runs on: `threads` only where they pay."""
    return threads if numel >= PARALLEL_MIN else 1


def options_for(options, moved_bytes: int):
    """`options` (aclgen.kernel.Options) for a call moving `moved_bytes`: streaming stores once
    the operands outgrow the last-level cache (below it they halve the speed)."""
    if moved_bytes > last_level_cache_bytes() and not options.nontemporal:
        return dataclasses.replace(options, nontemporal=True)
    return options


@dataclass(frozen=True)
class Operand:
    """A strided view in elements: `address` of element [0, ..., 0], `shape`, `strides`."""

    address: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    itemsize: int

    @staticmethod
    def of(a: np.ndarray) -> "Operand":
        size = a.itemsize
        if any(s % size for s in a.strides):
            raise ValueError(f"array strides {a.strides} are not multiples of its item size {size}")
        return Operand(a.ctypes.data, a.shape, tuple(s // size for s in a.strides), size)


@dataclass(frozen=True)
class Plan:
    shape: tuple[int, ...]  # merged iteration space, rank >= 1
    strides: tuple[tuple[int, ...], ...]  # per operand, in elements
    numel: int

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def layouts(self) -> tuple[str, ...]:
        return tuple(LAYOUT_OF_STRIDE.get(s[-1], "strided") for s in self.strides)


def broadcast_strides(op_shape: Sequence[int], op_strides: Sequence[int], shape: Sequence[int]) -> tuple[int, ...]:
    """Strides of a view of `op_shape` broadcast (numpy rules) to `shape`: 0 on broadcast dims."""
    pad = len(shape) - len(op_shape)
    if pad < 0:
        raise ValueError(f"shape {tuple(op_shape)} has more dims than {tuple(shape)}")
    out = []
    for k, n in enumerate(shape):
        if k < pad:
            out.append(0)
            continue
        m, s = op_shape[k - pad], op_strides[k - pad]
        if m == n:
            out.append(s if n != 1 else 0)
        elif m == 1:
            out.append(0)
        else:
            raise ValueError(f"shape {tuple(op_shape)} does not broadcast to {tuple(shape)}")
    return tuple(out)


def plan(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> Plan:
    """Drop size-1 dims and merge dims that every operand walks contiguously."""
    numel = math.prod(shape)
    keep = [k for k, n in enumerate(shape) if n != 1]
    dims = [shape[k] for k in keep]
    sts = [[s[k] for k in keep] for s in strides]
    if not dims:
        return Plan((1,), tuple((1,) for _ in strides), numel)
    mdims, msts = [dims[0]], [[s[0]] for s in sts]
    for k in range(1, len(dims)):
        if all(ms[-1] == s[k] * dims[k] for ms, s in zip(msts, sts)):
            mdims[-1] *= dims[k]
            for ms, s in zip(msts, sts):
                ms[-1] = s[k]
        else:
            mdims.append(dims[k])
            for ms, s in zip(msts, sts):
                ms.append(s[k])
    return Plan(tuple(mdims), tuple(tuple(s) for s in msts), numel)


def f32_bits(value: float) -> int:
    return int(np.float32(value).view(np.uint32))


class Launch:
    """A kernel bound to operand addresses and a packed launch record; `run()` calls it."""

    def __init__(self, kernel, plan_: Plan, addresses: Sequence[int], params: Sequence[int]):
        self.kernel = kernel
        layout = kernel.meta_layout
        meta = np.zeros(layout.size, dtype=np.int64)
        for k, n in enumerate(plan_.shape):
            meta[layout.dim(k)] = n
        for o, st in enumerate(plan_.strides):
            for k, s in enumerate(st):
                meta[layout.stride(o, k)] = s
        for j, p in enumerate(params):
            meta[layout.param(j)] = p
        self.meta = meta
        self.numel = plan_.numel
        self.args = (*addresses, meta.ctypes.data)

    def run(self, begin: int = 0, end: int | None = None) -> None:
        end = self.numel if end is None else end
        if end > begin:
            self.kernel.cfunc(*self.args, begin, end)
