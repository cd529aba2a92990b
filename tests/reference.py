"""The suite's one numpy reference of the seed operators (SPEC.md §4): the same operation order
in f32, one rounding into the output dtype; SwiGluGrad in float64 with its error bound.

This is the only place where numpy computes a seed operator's result; it shares no code with
aclgen. Every function takes and returns numpy arrays (bfloat16 via ml_dtypes). The comparisons
with it are here too: `same_bits` for the exact operators, `<name>_violations` for a bounded one.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

F32 = np.float32
BF16 = np.dtype(ml_dtypes.bfloat16)
THIRD = F32(1 / 3)  # 0x3EAAAAAB
SCALE = F32(1.0507009873554805)
SCALE_ALPHA = F32(1.7580993408473769)


def _f32(a) -> np.ndarray:
    return np.asarray(a).astype(F32)


def store(v: np.ndarray, dtype) -> np.ndarray:
    """Round an f32 result once into `dtype`: nearest-even; integers saturate."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        r = np.rint(v.astype(np.float64))
        r = np.where(np.isnan(r), 0, r)
        return np.clip(r, info.min, info.max).astype(dtype)
    with np.errstate(over="ignore"):
        return v.astype(dtype)


def sigmoid64(x) -> np.ndarray:
    """sigmoid in float64 without overflow or cancellation: 1 / (1 + e) or e / (1 + e), e = exp(-|x|)."""
    x = np.asarray(x, np.float64)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def hardswish_backward(g, x):
    g, x = np.asarray(g), np.asarray(x)
    xf, gf = _f32(x), _f32(g)
    with np.errstate(all="ignore"):
        slope = xf * THIRD + F32(0.5)
        d = np.where(xf < F32(-3), F32(0), np.where(xf <= F32(3), slope, F32(1))).astype(F32)
        return store(gf * d, g.dtype)


def selu_backward(g, y):
    g, y = np.asarray(g), np.asarray(y)
    gf, yf = _f32(g), _f32(y)
    with np.errstate(all="ignore"):
        neg = y <= 0 if y.dtype.kind in "iu" else yf <= F32(0)
        r = np.where(neg, gf * (yf + SCALE_ALPHA), gf * SCALE).astype(F32)
    return store(r, g.dtype)


def softshrink_backward(g, x, lambd):
    g, x = np.asarray(g), np.asarray(x)
    out_dtype = g.dtype if g.dtype == x.dtype else np.dtype(F32)
    zero_mask = np.abs(_f32(x)) <= F32(lambd)
    shape = np.broadcast_shapes(g.shape, x.shape)
    gb = np.broadcast_to(g, shape).astype(out_dtype)
    return np.where(zero_mask, np.zeros((), out_dtype), gb).astype(out_dtype)


def threshold_backward(g, x, t):
    g, x = np.asarray(g), np.asarray(x)
    t32 = F32(t)
    if x.dtype.kind in "iu":
        if np.isnan(t32):
            mask = np.zeros(x.shape, bool)
        else:
            tt = int(np.trunc(np.float64(t32))) if np.isfinite(t32) else (2**64 if t32 > 0 else -(2**64))
            if tt >= 2**63:
                mask = np.ones(x.shape, bool)
            elif tt < -(2**63):
                mask = np.zeros(x.shape, bool)
            else:
                mask = x.astype(np.int64) <= np.int64(tt)
    else:
        mask = _f32(x) <= t32
    shape = np.broadcast_shapes(g.shape, x.shape)
    return np.where(mask, np.zeros((), g.dtype), np.broadcast_to(g, shape)).astype(g.dtype)


def swi_glu_grad_f64(g, x, dim=-1):
    """SwiGluGrad in float64 and the term sizes S_A, S_B of SPEC.md §4.4's error bound."""
    with np.errstate(all="ignore"):  # (bfloat16 NaNs widen with numpy's "invalid value" warning)
        x64 = np.asarray(x).astype(np.float64)
        g64 = np.asarray(g).astype(np.float64)
        a, b = np.split(x64, 2, axis=dim)
        s = 1.0 / (1.0 + np.exp(-a))
        out_a = g64 * b * (s + s * (1 - s) * a)
        out_b = g64 * s * a
        size_a = np.abs(g64 * b) * s * (1 + np.abs(a))
        size_b = np.abs(g64 * s * a)
        slack_b = 8 * 2.0**-149 * (1 + np.abs(g64)) * (1 + np.abs(a))  # out_B does not involve B
        slack_a = slack_b * (1 + np.abs(b))
    return (
        np.concatenate([out_a, out_b], axis=dim),
        np.concatenate([size_a, size_b], axis=dim),
        np.concatenate([slack_a, slack_b], axis=dim),
    )


def swi_glu_grad_violations(out, g, x, dim=-1) -> np.ndarray:
    """Mask of elements of `out` outside SPEC.md §4.4's bound (empty mask = all good)."""
    ref, size, slack = swi_glu_grad_f64(g, x, dim)
    o = np.asarray(out).astype(np.float64)
    dtype = np.asarray(out).dtype
    with np.errstate(all="ignore"):
        bound = 8 * 2.0**-24 * size + slack
        if dtype != np.float32:
            fin = ml_dtypes.finfo(dtype)
            # ulp(ref) in the output type
            e = np.floor(np.log2(np.maximum(np.abs(ref), float(fin.smallest_normal))))
            bound = bound + 2.0 ** (e - fin.nmant)
        err = np.abs(o - ref)
        ok = err <= bound
        ok |= np.isnan(ref) & np.isnan(o)
        ok |= np.isinf(o) & (np.isinf(ref) | (np.abs(ref) > float(ml_dtypes.finfo(dtype).max))) & (np.sign(o) == np.sign(ref))
        ok |= (o == ref)
    return ~ok


def exact(python_name: str) -> bool:
    """Whether an operator's results must equal its reference bit for bit (else it has a bound:
    `<name>_violations`)."""
    return f"{python_name}_violations" not in globals()


def same_or_nan(got, want) -> np.ndarray:
    """Elementwise: identical bits, or both NaN (payloads are not part of the contract)."""
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[got.itemsize]
    same = got.view(bits) == want.view(bits)
    if got.dtype.kind == "f" or got.dtype == BF16:
        with np.errstate(invalid="ignore"):
            same |= np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
    return same


def same_bits(got, want) -> bool:
    """Identical dtype, shape and bits (NaN payloads aside)."""
    got, want = np.asarray(got), np.asarray(want)
    return got.dtype == want.dtype and got.shape == want.shape and bool(same_or_nan(got, want).all())


#: A function whose result only a half type stores is computed to 2^-16 (docs/math.md): its half
#: result is within 0.5 ulp of the exact value plus 2^-16 of the value, 2^-5 of an f16 ulp and
#: 2^-8 of a bf16 one (the type's ulp is 2^-11 and 2^-8 of the value at least).
HALF_BOUND = {np.dtype(np.float16): 0.5 + 2.0**-5, BF16: 0.5 + 2.0**-8}


def half_ulps(got, want) -> np.ndarray:
    """|got - want| in ulps of got's half type at the exact value `want` (float64; the ulp of the
    type's subnormals below its smallest normal), elementwise: 0 where both are NaN, where want
    rounds to the infinity got is, and where want is a zero got is with its sign; inf for any
    other NaN, infinity or zero mismatch. An infinite got for a finite want counts as the power of
    two after the type's largest value, and the largest value for a want that rounds to infinity
    is a plain error too: rounding across the overflow threshold is measured like any other."""
    got = np.asarray(got)
    fin = ml_dtypes.finfo(got.dtype)
    w = np.asarray(want, np.float64)
    with np.errstate(all="ignore"):  # (bfloat16 NaNs widen with numpy's "invalid value" warning)
        g = got.astype(np.float64)
        rounded = w.astype(got.dtype).astype(np.float64)
        top = 2.0 ** (fin.maxexp)
        gf = np.where(np.isinf(g) & np.isfinite(w), np.copysign(top, g), g)
        e = np.floor(np.log2(np.maximum(np.abs(w), float(fin.smallest_normal))))
        err = np.abs(gf - w) / 2.0 ** (e - fin.nmant)
    err = np.where(np.isnan(err), np.inf, err)
    err[(np.isnan(g) & np.isnan(w)) | (np.isinf(rounded) & (g == rounded))] = 0.0
    exact = np.isinf(w) | (w == 0)
    err[exact] = np.where(same_or_nan(g[exact], rounded[exact]), 0.0, np.inf)
    return err
