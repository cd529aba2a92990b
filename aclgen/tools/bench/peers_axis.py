"""The peers of the operators over an axis (Softmax, LogSoftmax, their backward data, RmsNorm,
RmsNormGrad, LayerNorm, LayerNormBackward): numpy, torch and numba, registered in peers.PEERS.

The bench's rows reduce the last dim (Softmax's dim = -1) or the trailing dims gamma, weight or
normalizedShape span. torch runs its own kernels: torch.softmax / log_softmax,
aten._softmax_backward_data / _log_softmax_backward_data, aten._fused_rms_norm,
aten.native_layer_norm and native_layer_norm_backward; RmsNormGrad's is torch's own
decomposition of aten._fused_rms_norm_backward (torch._decomp), as torch 2.13 has no CPU kernel
of it (what inductor lowers it to as well). The numba loops see each tensor as (rows, n) and run
a row per iteration (`prange` over rows in the parallel build: max, sum, write, as a numba user
writes it); the backward's sums across rows (dgamma, dweight, dbias) are kept per block of rows,
then added. `prepare` gives the backward rows what the forward saves (y, rstd, mean), computed in
float64; `*_scale` are the sizes of the terms where a result cancels (peers.agree).
"""

from __future__ import annotations

import numpy as np

F32 = np.float32
ONE = F32(1)


def _f64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64)


def _trailing(x: np.ndarray, k: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(the leading axes, the last k axes) of x."""
    return tuple(range(x.ndim - k)), tuple(range(x.ndim - k, x.ndim))


def _softmax64(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(_f64(x) - _f64(x).max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def softmax_numpy(x, dim, out):
    e = np.exp(x - x.max(dim, keepdims=True))
    out[...] = e / e.sum(dim, keepdims=True)


def log_softmax_numpy(x, dim, out):
    d = x - x.max(dim, keepdims=True)
    out[...] = d - np.log(np.exp(d).sum(dim, keepdims=True))


def softmax_backward_numpy(g, y, dim, out):
    out[...] = y * (g - (g * y).sum(dim, keepdims=True))


def log_softmax_backward_numpy(g, y, dim, out):
    out[...] = g - np.exp(y) * g.sum(dim, keepdims=True)


def softmax_numba(loop):
    def softmax(x, dim, out):
        n = x.shape[-1]
        rows = x.size // n
        x2, o2 = x.reshape((rows, n)), out.reshape((rows, n))
        for r in loop(rows):
            m = x2[r, 0]
            for j in range(n):
                m = max(m, x2[r, j])
            s = 0.0
            for j in range(n):
                e = np.exp(x2[r, j] - m)
                o2[r, j] = e
                s += e
            inv = 1.0 / s
            for j in range(n):
                o2[r, j] *= inv

    return softmax


def log_softmax_numba(loop):
    def log_softmax(x, dim, out):
        n = x.shape[-1]
        rows = x.size // n
        x2, o2 = x.reshape((rows, n)), out.reshape((rows, n))
        for r in loop(rows):
            m = x2[r, 0]
            for j in range(n):
                m = max(m, x2[r, j])
            s = 0.0
            for j in range(n):
                s += np.exp(x2[r, j] - m)
            c = m + np.log(s)
            for j in range(n):
                o2[r, j] = x2[r, j] - c

    return log_softmax


def softmax_backward_numba(loop):
    def softmax_backward(g, y, dim, out):
        n = y.shape[-1]
        rows = y.size // n
        g2, y2, o2 = g.reshape((rows, n)), y.reshape((rows, n)), out.reshape((rows, n))
        for r in loop(rows):
            s = 0.0
            for j in range(n):
                s += g2[r, j] * y2[r, j]
            for j in range(n):
                o2[r, j] = y2[r, j] * (g2[r, j] - s)

    return softmax_backward


def log_softmax_backward_numba(loop):
    def log_softmax_backward(g, y, dim, out):
        n = y.shape[-1]
        rows = y.size // n
        g2, y2, o2 = g.reshape((rows, n)), y.reshape((rows, n)), out.reshape((rows, n))
        for r in loop(rows):
            s = 0.0
            for j in range(n):
                s += g2[r, j]
            for j in range(n):
                o2[r, j] = g2[r, j] - np.exp(y2[r, j]) * s

    return log_softmax_backward


def softmax_torch(torch, dim):
    return lambda x: torch.softmax(x, dim)


def log_softmax_torch(torch, dim):
    return lambda x: torch.log_softmax(x, dim)


def softmax_backward_torch(torch, dim):
    kernel = torch.ops.aten._softmax_backward_data
    return lambda g, y: kernel(g, y, dim, y.dtype)


def log_softmax_backward_torch(torch, dim):
    kernel = torch.ops.aten._log_softmax_backward_data
    return lambda g, y: kernel(g, y, dim, y.dtype)


def softmax_prepare(rng, inputs, scalars):
    """SoftmaxBackward's output is softmax(x)."""
    g, x = inputs
    return [g, _softmax64(x, scalars[0]).astype(x.dtype)]


def log_softmax_prepare(rng, inputs, scalars):
    """LogSoftmaxBackward's output is log_softmax(x)."""
    g, x = inputs
    x64, dim = _f64(x), scalars[0]
    d = x64 - x64.max(dim, keepdims=True)
    return [g, (d - np.log(np.exp(d).sum(dim, keepdims=True))).astype(x.dtype)]


def log_softmax_scale(x, dim):
    """x - max - log(sum): the terms' size where the result nears 0."""
    d = np.abs(_f64(x) - _f64(x).max(dim, keepdims=True))
    return d + np.log(x.shape[dim]) + 1


def softmax_backward_scale(g, y, dim):
    """y·(g - Σg·y): the terms' size, |y|·(|g| + Σ|g·y|)."""
    g, y = _f64(g), _f64(y)
    return np.abs(y) * (np.abs(g) + np.abs(g * y).sum(dim, keepdims=True))


def log_softmax_backward_scale(g, y, dim):
    """g - e^y·Σg: the terms' size, |g| + e^y·Σ|g|."""
    g = _f64(g)
    return np.abs(g) + np.exp(_f64(y)) * np.abs(g).sum(dim, keepdims=True)


def _rstd64(x: np.ndarray, k: int, eps: float) -> np.ndarray:
    _, axes = _trailing(x, k)
    return 1 / np.sqrt((_f64(x) ** 2).mean(axes, keepdims=True) + eps)


def rms_norm_numpy(x, gamma, eps, y, rstd):
    _, axes = _trailing(x, gamma.ndim)
    r = ONE / np.sqrt((x * x).mean(axes, keepdims=True) + F32(eps))
    y[...] = x * r * gamma
    rstd[...] = r


def rms_norm_torch(torch, eps):
    kernel = torch.ops.aten._fused_rms_norm
    return lambda x, gamma: kernel(x, list(gamma.shape), gamma, eps)


def rms_norm_numba(loop):
    def rms_norm(x, gamma, eps, y, rstd):
        n = gamma.size
        rows = x.size // n
        x2, y2, g1, r1 = x.reshape((rows, n)), y.reshape((rows, n)), gamma.reshape(n), rstd.reshape(rows)
        for r in loop(rows):
            s = 0.0
            for j in range(n):
                s += x2[r, j] * x2[r, j]
            rs = 1.0 / np.sqrt(s / n + eps)
            r1[r] = rs
            for j in range(n):
                y2[r, j] = x2[r, j] * rs * g1[j]

    return rms_norm


def rms_norm_grad_numpy(dy, x, rstd, gamma, dx, dgamma):
    lead, axes = _trailing(x, gamma.ndim)
    dyg, xr = dy * gamma, x * rstd
    dx[...] = (dyg - xr * (dyg * xr).mean(axes, keepdims=True)) * rstd
    dgamma[...] = (dy * xr).sum(lead)


def rms_norm_grad_torch(torch):
    # torch 2.13 has no CPU kernel of aten._fused_rms_norm_backward: its own decomposition (what
    # inductor lowers it to) is the eager peer
    from torch._decomp import decomposition_table  # pyright: ignore[reportMissingImports]

    backward = decomposition_table[torch.ops.aten._fused_rms_norm_backward.default]
    return lambda dy, x, rstd, gamma: backward(dy, x, list(gamma.shape), rstd, gamma, [True, True])


BLOCKS = 16  # blocks of rows whose sums across rows the numba loops keep apart (then add)


def rms_norm_grad_numba(loop):
    def rms_norm_grad(dy, x, rstd, gamma, dx, dgamma):
        n = gamma.size
        rows = x.size // n
        dy2, x2, dx2 = dy.reshape((rows, n)), x.reshape((rows, n)), dx.reshape((rows, n))
        g1, r1, dg1 = gamma.reshape(n), rstd.reshape(rows), dgamma.reshape(n)
        blocks = min(rows, BLOCKS)
        part = np.zeros((blocks, n))
        for b in loop(blocks):
            for r in range(b * rows // blocks, (b + 1) * rows // blocks):
                rs = r1[r]
                s = 0.0
                for j in range(n):
                    s += dy2[r, j] * g1[j] * x2[r, j] * rs
                m = s / n
                for j in range(n):
                    xr = x2[r, j] * rs
                    dx2[r, j] = (dy2[r, j] * g1[j] - xr * m) * rs
                    part[b, j] += dy2[r, j] * xr
        # explicit loops: under parallel=True a `part[:, j].sum()` per j is a parallel region each
        for j in range(n):
            dg1[j] = 0.0
        for b in range(blocks):
            for j in range(n):
                dg1[j] += part[b, j]

    return rms_norm_grad


def rms_norm_grad_prepare(rng, inputs, scalars):
    """rstd of x, as RmsNorm (epsilon 1e-6) computes it."""
    dy, x, rstd, gamma = inputs
    return [dy, x, _rstd64(x, gamma.ndim, 1e-6).reshape(rstd.shape).astype(rstd.dtype), gamma]


def rms_norm_grad_scale(dy, x, rstd, gamma):
    """The terms' sizes: dx's (|dy·γ| + |x̂|·mean|dy·γ·x̂|)·rstd, dgamma's Σ|dy·x̂|."""
    lead, axes = _trailing(x, gamma.ndim)
    dyg, xr, r = _f64(dy) * _f64(gamma), _f64(x) * _f64(rstd), _f64(rstd)
    return [(np.abs(dyg) + np.abs(xr) * np.abs(dyg * xr).mean(axes, keepdims=True)) * r,
            np.abs(_f64(dy) * xr).sum(lead)]


def layer_norm_numpy(x, w, b, shape, eps, out, mean, rstd):
    _, axes = _trailing(x, len(shape))
    m = x.mean(axes, keepdims=True)
    d = x - m
    r = ONE / np.sqrt((d * d).mean(axes, keepdims=True) + F32(eps))
    out[...] = d * r * w + b
    mean[...] = m.reshape(mean.shape)
    rstd[...] = r.reshape(rstd.shape)


def layer_norm_torch(torch, shape, eps):
    kernel = torch.ops.aten.native_layer_norm
    return lambda x, w, b: kernel(x, list(shape), w, b, eps)


def layer_norm_numba(loop):
    def layer_norm(x, w, b, shape, eps, out, mean, rstd):
        n = w.size
        rows = x.size // n
        x2, o2, w1, b1 = x.reshape((rows, n)), out.reshape((rows, n)), w.reshape(n), b.reshape(n)
        m1, r1 = mean.reshape(rows), rstd.reshape(rows)
        for r in loop(rows):
            s = 0.0
            for j in range(n):
                s += x2[r, j]
            m = s / n
            v = 0.0
            for j in range(n):
                d = x2[r, j] - m
                v += d * d
            rs = 1.0 / np.sqrt(v / n + eps)
            m1[r] = m
            r1[r] = rs
            for j in range(n):
                o2[r, j] = (x2[r, j] - m) * rs * w1[j] + b1[j]

    return layer_norm


def layer_norm_scale(x, w, b, shape, eps):
    """out's terms, (|x| + |mean|)·rstd·|w| + |b| (x - mean and + b cancel); mean's, mean|x|;
    rstd: relative."""
    _, axes = _trailing(x, len(shape))
    x64 = _f64(x)
    m = x64.mean(axes, keepdims=True)
    r = 1 / np.sqrt(((x64 - m) ** 2).mean(axes, keepdims=True) + eps)
    return [(np.abs(x64) + np.abs(m)) * r * np.abs(_f64(w)) + np.abs(_f64(b)), np.abs(x64).mean(axes), np.zeros_like(r)]


def layer_norm_backward_numpy(g, x, mean, rstd, w, b, shape, mask, dx, dw, db):
    lead, axes = _trailing(x, len(shape))
    stats = x.shape[: x.ndim - len(shape)] + (1,) * len(shape)
    r = rstd.reshape(stats)
    xhat = (x - mean.reshape(stats)) * r
    dyw = g * w
    dx[...] = (dyw - dyw.mean(axes, keepdims=True) - xhat * (dyw * xhat).mean(axes, keepdims=True)) * r
    dw[...] = (g * xhat).sum(lead)
    db[...] = g.sum(lead)


def layer_norm_backward_torch(torch, shape, mask):
    kernel = torch.ops.aten.native_layer_norm_backward
    return lambda g, x, mean, rstd, w, b: kernel(g, x, list(shape), mean, rstd, w, b, list(mask))


def layer_norm_backward_numba(loop):
    def layer_norm_backward(g, x, mean, rstd, w, b, shape, mask, dx, dw, db):
        n = w.size
        rows = x.size // n
        g2, x2, dx2 = g.reshape((rows, n)), x.reshape((rows, n)), dx.reshape((rows, n))
        w1, m1, r1, dw1, db1 = w.reshape(n), mean.reshape(rows), rstd.reshape(rows), dw.reshape(n), db.reshape(n)
        blocks = min(rows, BLOCKS)
        pw = np.zeros((blocks, n))
        pb = np.zeros((blocks, n))
        for k in loop(blocks):
            for r in range(k * rows // blocks, (k + 1) * rows // blocks):
                m, rs = m1[r], r1[r]
                s1 = 0.0
                s2 = 0.0
                for j in range(n):
                    dyw = g2[r, j] * w1[j]
                    s1 += dyw
                    s2 += dyw * (x2[r, j] - m) * rs
                a1, a2 = s1 / n, s2 / n
                for j in range(n):
                    xhat = (x2[r, j] - m) * rs
                    dx2[r, j] = (g2[r, j] * w1[j] - a1 - xhat * a2) * rs
                    pw[k, j] += g2[r, j] * xhat
                    pb[k, j] += g2[r, j]
        for j in range(n):  # explicit loops, as in rms_norm_grad
            dw1[j] = 0.0
            db1[j] = 0.0
        for k in range(blocks):
            for j in range(n):
                dw1[j] += pw[k, j]
                db1[j] += pb[k, j]

    return layer_norm_backward


def layer_norm_backward_prepare(rng, inputs, scalars):
    """mean and rstd of x, as LayerNorm (eps 1e-5) computes them."""
    g, x, mean, rstd, w, b = inputs
    _, axes = _trailing(x, len(scalars[0]))
    x64 = _f64(x)
    m = x64.mean(axes, keepdims=True)
    r = 1 / np.sqrt(((x64 - m) ** 2).mean(axes, keepdims=True) + 1e-5)
    return [g, x, m.reshape(mean.shape).astype(mean.dtype), r.reshape(rstd.shape).astype(rstd.dtype), w, b]


def layer_norm_backward_scale(g, x, mean, rstd, w, b, shape, mask):
    """The terms' sizes: dx's (|dy·w| + mean|dy·w| + |x̂|·mean|dy·w·x̂|)·rstd, dw's Σ|dy·x̂|, db's Σ|dy|."""
    lead, axes = _trailing(x, len(shape))
    stats = x.shape[: x.ndim - len(shape)] + (1,) * len(shape)
    r = _f64(rstd).reshape(stats)
    g64 = _f64(g)
    xhat = (_f64(x) - _f64(mean).reshape(stats)) * r
    dyw = np.abs(g64 * _f64(w))
    return [(dyw + dyw.mean(axes, keepdims=True) + np.abs(xhat) * (dyw * np.abs(xhat)).mean(axes, keepdims=True)) * r,
            np.abs(g64 * xhat).sum(lead), np.abs(g64).sum(lead)]
