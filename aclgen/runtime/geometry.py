"""The iteration space of a call: broadcast strides and dim merging.

`plan()` turns the operands' shapes and strides into the smallest equivalent iteration space:
size-1 dims dropped, broadcast dims given stride 0, adjacent dims merged where every operand
is contiguous across them; for a reduction, the kept dims first and the reduced ones last. The result picks the kernel variant (rank, innermost layout per
operand) and fills the launch record (aclgen.abi.pack).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from aclgen.dialects.enums import Layout


@dataclass(frozen=True, slots=True)
class Plan:
    shape: tuple[int, ...]  # merged iteration space, rank >= 1
    strides: tuple[tuple[int, ...], ...]  # per operand, in elements
    numel: int
    reduced: int = 0  # trailing dims of `shape` that a reduction reduces (0: elementwise)
    columns: bool = False  # a reduction run a vector of rows at a time (see `plan`)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def rows(self) -> int:
        """Points of the kept dims: what a reduction kernel's threads split (elements otherwise)."""
        return math.prod(self.shape[: self.rank - self.reduced]) if self.reduced else self.numel

    @property
    def layouts(self) -> tuple[Layout, ...]:
        """Per operand, how it walks the dim the kernel vectorizes: the innermost, or for
        `columns` the innermost kept one."""
        lane = self.rank - self.reduced - 1 if self.columns else -1
        return tuple(Layout.of_stride(s[lane]) for s in self.strides)


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


def _merge(dims: list[int], sts: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Adjacent dims merged where every operand walks across them contiguously."""
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
    return mdims, msts


def plan(shape: Sequence[int], strides: Sequence[Sequence[int]], reduced: Sequence[int] | None = None) -> Plan:
    """Drop size-1 dims and merge dims that every operand walks contiguously.

    With `reduced` (the dims a reduction reduces), the kept dims come first and the reduced
    ones last, each group in its own order and merged only within itself; the reduced group keeps
    at least one dim (of size 1 when every reduced dim is), so a row always exists. When every
    operand walks the innermost kept dim contiguously (or not at all) and one walks the reduced
    ones with a stride, the plan runs rows `columns`-wise: a vector of adjacent rows at a time,
    each lane adding its row's elements in the order a row at a time would (RmsNormGrad's dgamma
    sums down the columns of x: a row at a time, each element would be a gather). So do rows of
    one element (a sum across the rows of a single row): a row at a time, each would be a whole
    reduction's setup and fold (LayerNormBackward's dgamma and dbeta of [1, 2^20]: 7.2 ms)."""
    numel = math.prod(shape)
    if reduced is None:
        keep = [k for k, n in enumerate(shape) if n != 1]
        if not keep:
            return Plan((1,), tuple((1,) for _ in strides), numel)
        dims, sts = _merge([shape[k] for k in keep], [[s[k] for k in keep] for s in strides])
        return Plan(tuple(dims), tuple(tuple(s) for s in sts), numel)
    groups = []
    for group in ([k for k in range(len(shape)) if k not in reduced], sorted(reduced)):
        keep = [k for k in group if shape[k] != 1]
        if not keep:
            groups.append(([], [[] for _ in strides]))
            continue
        groups.append(_merge([shape[k] for k in keep], [[s[k] for k in keep] for s in strides]))
    (kdims, ksts), (rdims, rsts) = groups
    single = not rdims  # every reduced dim of size 1: each row is one element
    if single:
        rdims, rsts = [1], [[0] for _ in strides]
    columns = bool(kdims) and kdims[-1] > 1 and all(k[-1] in (0, 1) for k in ksts) \
        and any(k[-1] == 1 and (single or r[-1] not in (0, 1)) for k, r in zip(ksts, rsts))
    return Plan(tuple(kdims + rdims), tuple(tuple(a + b) for a, b in zip(ksts, rsts)), numel, len(rdims), columns)
