"""Rows worth reducing, shared by the tests of the operators over an axis (softmax, the norms):
each row of a matrix one edge case, in any dtype, and the layouts the reduced axis can have."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from aclgen.tools.accuracy import NUMPY

# the cases, one row each: what a reduction must get right
ROWS = ("random", "equal", "+inf", "-inf", "nan", "huge", "tiny", "mixed scale", "zeros")


def edge_rows(dtype: str, n: int, seed: int = 0, huge: float | None = None) -> np.ndarray:
    """A [len(ROWS) * 2, n] matrix in `dtype`: each case of ROWS twice (different random data).
    `huge` is the magnitude of the huge row (default: a quarter of the dtype's largest value)."""
    d = NUMPY[dtype]
    info = ml_dtypes.finfo(d)
    rng = np.random.default_rng(seed)
    big = float(info.max) / 4 if huge is None else huge
    out = []
    for _ in range(2):
        for case in ROWS:
            r = rng.standard_normal(n)
            if case == "equal":
                r = np.full(n, 3.0)
            elif case in ("+inf", "-inf", "nan"):
                r[rng.integers(n)] = {"+inf": np.inf, "-inf": -np.inf, "nan": np.nan}[case]
            elif case == "huge":
                r = r * big / 4
            elif case == "tiny":
                r = r * float(info.smallest_subnormal) * 8
            elif case == "mixed scale":
                r = r * np.exp2(rng.integers(-20, 20, n))
            elif case == "zeros":
                r = np.zeros(n) * np.sign(r)  # ±0
            out.append(r)
    with np.errstate(over="ignore"):
        return np.array(out).astype(d)


def layouts(x: np.ndarray) -> dict[str, tuple[np.ndarray, int]]:
    """`x` (rows reduced along the last axis) as the operators may see it: (array, axis of the
    rows' elements): contiguous, transposed (the reduced axis strided, reduced along axis 0),
    and every other element of a wider buffer."""
    wide = np.empty((x.shape[0], 2 * x.shape[1]), x.dtype)
    wide[:, ::2] = x
    return {"contiguous": (x, -1), "transposed": (x.T.copy(), 0), "strided": (wide[:, ::2], -1)}
