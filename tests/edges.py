"""Input values that hit the edges: ±0, ±inf, NaN, subnormals, the boundaries the seed
operators compare with (±3) and their neighbours, each dtype's extremes, an operator's
parameters ± 1 ulp; `values` mixes them into random data over many magnitudes. Every numerical
test of the suite draws its inputs here."""

from __future__ import annotations

import ml_dtypes
import numpy as np


def float_specials(npd: np.dtype, params: tuple[float, ...] = ()) -> np.ndarray:
    """±0, ±inf, NaN, subnormals, ±3 and their neighbours, the type's extremes, params ± 1 ulp."""
    fin = ml_dtypes.finfo(npd)
    base = [0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, -3.0, 1.0, -1.0, 0.5, 1.2, -1.2, 0.2, 2.2, 100.0, -100.0, 1e-3,
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


def values(npd: np.dtype, n: int, rng: np.random.Generator, mix: float = 0.3, params=()) -> np.ndarray:
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
