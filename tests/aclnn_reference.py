"""A small numpy reference of SPEC.md §4 for the runtime tests (independent of aclgen and of
tests/reference.py): f32 arithmetic in SPEC's order, one rounding into the output dtype."""

from __future__ import annotations

import ml_dtypes
import numpy as np

F32 = np.float32


def f32(a) -> np.ndarray:
    return np.asarray(a).astype(F32)


def store(v, dtype) -> np.ndarray:
    """f32 -> dtype once: nearest-even; integer types saturate."""
    dtype = np.dtype(dtype)
    v = np.asarray(v, F32)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(v.astype(np.float64)), info.min, info.max).astype(dtype)
    with np.errstate(over="ignore"):
        return v.astype(dtype)


def hardswish_backward(g, x):
    gf, xf = f32(g), f32(x)
    with np.errstate(all="ignore"):
        mid = xf * F32(1 / 3) + F32(0.5)
        d = np.where(xf < -3, F32(0), np.where(xf <= 3, mid, F32(1)))
        return store(gf * d, np.asarray(g).dtype)


def selu_backward(g, y):
    gf, yf = f32(g), f32(y)
    with np.errstate(all="ignore"):
        neg = gf * (yf + F32(1.7580993408473769))
        pos = gf * F32(1.0507009873554805)
        return store(np.where(yf <= 0, neg, pos), np.asarray(g).dtype)


def softshrink_backward(g, x, lambd):
    g, x = np.asarray(g), np.asarray(x)
    out_dtype = g.dtype if g.dtype == x.dtype else np.dtype(F32)
    lam = F32(lambd)
    with np.errstate(invalid="ignore"):
        r = np.where(np.abs(f32(x)) <= lam, F32(0), f32(g))
    return store(r, out_dtype)


def threshold_backward(g, x, t):
    g, x = np.asarray(g), np.asarray(x)
    t32 = F32(t)
    if x.dtype.kind == "f" or x.dtype == np.dtype(ml_dtypes.bfloat16):
        with np.errstate(invalid="ignore"):
            keep = ~(f32(x) <= t32)
    else:
        tt = float(np.trunc(t32))
        if tt != tt:
            keep = np.ones(x.shape, bool)
        else:
            lo, hi = np.iinfo(x.dtype).min, np.iinfo(x.dtype).max
            keep = np.ones(x.shape, bool) if tt < lo else np.zeros(x.shape, bool) if tt >= hi else x > int(tt)
    return np.where(keep, g, np.zeros((), g.dtype)).astype(g.dtype)


def swi_glu_grad_f64(g, x, dim=-1):
    """(out in float64, size of the terms S, underflow slack) for SPEC §4.4's bound."""
    x64, g64 = np.asarray(x).astype(np.float64), np.asarray(g).astype(np.float64)
    a, b = np.split(x64, 2, axis=dim)
    with np.errstate(all="ignore"):
        s = 1 / (1 + np.exp(-a))
        out_a = g64 * b * (s + s * (1 - s) * a)
        out_b = g64 * s * a
        size_a = np.abs(g64 * b) * s * (1 + np.abs(a))
        size_b = np.abs(g64 * s * a)
        slack = 8 * 2.0**-149 * (1 + np.abs(g64)) * (1 + np.abs(a)) * (1 + np.abs(b))
    cat = lambda p, q: np.concatenate([p, q], axis=dim)
    return cat(out_a, out_b), cat(size_a, size_b), cat(slack, slack)


def swi_glu_grad_ok(out, g, x, dim=-1) -> bool:
    """Whether `out` is within SPEC §4.4's error bound of the float64 formula."""
    ref, size, slack = swi_glu_grad_f64(g, x, dim)
    o = np.asarray(out).astype(np.float64)
    tol = 8 * 2.0**-24 * size + slack
    if np.asarray(out).dtype != np.float32:
        with np.errstate(all="ignore"):
            ulp = np.abs(np.spacing(np.asarray(ref).astype(np.asarray(out).dtype)).astype(np.float64))
        tol = tol + ulp
    with np.errstate(all="ignore"):
        rounded = ref.astype(np.asarray(out).dtype).astype(np.float64)  # inf beyond the type's range
        ok = (np.abs(o - ref) <= tol) | (np.isnan(ref) & np.isnan(o)) | (np.isinf(rounded) & (o == rounded))
    return bool(ok.all())


def same_bits(a, b) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
