"""The calling convention of generated kernels, shared by the tiling pass and the launcher.

    void kernel(ptr in0, ..., ptr out0, ..., ptr meta, i64 begin, i64 end)

`meta` is an array of 8-byte slots: the `rank` dims, then each operand's `rank` strides (in
elements; inputs then outputs), then the parameters (an f32 in the low 4 bytes of its slot, an
i64 as itself). The kernel computes elements `begin <= i < end` of the row-major flattened
iteration space; a thread split is a partition of `[0, numel)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MetaLayout:
    rank: int
    n_operands: int
    n_params: int

    def dim(self, k: int) -> int:
        return k

    def stride(self, operand: int, k: int) -> int:
        return self.rank + operand * self.rank + k

    def param(self, j: int) -> int:
        return self.rank + self.n_operands * self.rank + j

    @property
    def size(self) -> int:
        return self.rank + self.n_operands * self.rank + self.n_params


def pack(layout: MetaLayout, dims: Sequence[int], strides: Sequence[Sequence[int]], params: Sequence[int]) -> np.ndarray:
    """The launch record of one call geometry: `dims`, each operand's element `strides` (inputs
    then outputs) and the parameters' 8-byte slots (aclgen.runtime.planner computes them)."""
    meta = np.zeros(layout.size, dtype=np.int64)
    meta[: layout.rank] = dims
    for o, st in enumerate(strides):
        at = layout.stride(o, 0)
        meta[at : at + layout.rank] = st
    for j, p in enumerate(params):
        meta[layout.param(j)] = p
    return meta
