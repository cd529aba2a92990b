"""The torch peers of CANN's activation family, registered in peers.PEERS: the helpers of the
operators that take more than a one-liner (torch's own operator where torch has one; the formula
as a torch user writes it where it has none, computed in float32 for half types: `formula`),
what their data needs (`*_prepare`) and the sizes of the terms where a result cancels (`*_scale`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

F32 = np.float32


def _f64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64)


def F(torch):
    return torch.nn.functional


def formula(make: Callable) -> Callable:
    """A torch peer written as a formula of torch ops (torch has no such operator), computed in
    float32 for half-type inputs and rounded once at the end, as aclgen and torch.compile do:
    eager torch would round every step to the half type, and its result would be another one."""

    def made(torch, *scalars):
        fn = make(torch, *scalars)

        def in_f32(*args):
            dtype = args[0].dtype
            if dtype == torch.float32:
                return fn(*args)
            out = fn(*(a.float() for a in args))
            return tuple(o.to(dtype) for o in out) if isinstance(out, tuple) else out.to(dtype)

        return in_f32

    return made


def mode(approximate) -> str:
    """torch's `approximate` of an int (GeluV2, GeGlu: 1 = tanh) or str attribute."""
    if isinstance(approximate, str):
        return approximate
    return "tanh" if approximate == 1 else "none"


def _gelu64(x: np.ndarray, approximate) -> np.ndarray:
    import math

    x = _f64(x)
    if mode(approximate) == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    try:
        from scipy.special import erf  # pyright: ignore[reportMissingImports]  (optional)
    except ImportError:
        erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def ge_glu_torch(torch, dim, approximate, activate_left=False):
    gelu = F(torch).gelu
    approximate = mode(approximate)

    def ge_glu(x):
        a, b = x.chunk(2, dim=dim)
        linear, gated = (b, a) if activate_left else (a, b)
        g = gelu(gated, approximate=approximate)
        return linear * g, g

    return ge_glu


def ge_glu_backward_torch(torch, dim, approximate, activate_left=False):
    gelu_backward = torch.ops.aten.gelu_backward
    approximate = mode(approximate)

    def ge_glu_backward(g, x, gelu):  # around aten.gelu_backward
        a, b = x.chunk(2, dim=dim)
        linear, gated = (b, a) if activate_left else (a, b)
        d_linear, d_gated = g * gelu, gelu_backward(g * linear, gated, approximate=approximate)
        return torch.cat([d_gated, d_linear] if activate_left else [d_linear, d_gated], dim=dim)

    return ge_glu_backward


def ge_glu_backward_prepare(rng, inputs, scalars):
    """`gelu` is the forward's outGelu: Gelu of the gated half."""
    g, x, gelu = inputs
    dim, approximate = scalars[0], scalars[1]
    activate_left = len(scalars) > 2 and scalars[2]
    a, b = np.split(x, 2, axis=dim)
    return [g, x, _gelu64(a if activate_left else b, approximate).astype(gelu.dtype)]


def situ_glu_torch(torch, dim, beta, linear_beta, activate_left):
    beta, linear_beta = float(np.float32(beta)), float(np.float32(linear_beta))  # CANN's f32 attributes

    def situ_glu(x):
        a, b = x.chunk(2, dim=dim)
        gate, up = (a, b) if activate_left else (b, a)
        if linear_beta > 0:
            up = linear_beta * torch.tanh(up / linear_beta)
        return beta * torch.tanh(gate / beta) * torch.sigmoid(gate) * up

    return situ_glu


def swi_glu_torch(torch, dim):
    silu = F(torch).silu

    def swi_glu(x):
        a, b = x.chunk(2, dim=dim)
        return silu(a) * b

    return swi_glu


def gelu_mul_torch(torch, approximate):
    gelu = F(torch).gelu

    def gelu_mul(x):
        a, b = x.chunk(2, dim=-1)
        return gelu(a, approximate=mode(approximate)) * b

    return gelu_mul


def fatrelu_mul_torch(torch):
    def fatrelu_mul(x, t):
        a, b = x.chunk(2, dim=-1)
        return torch.where(a >= t, a, 0.0) * b

    return fatrelu_mul


def swish_torch(torch, beta):
    silu = F(torch).silu
    return silu if beta == 1 else (lambda x: x * torch.sigmoid(beta * x))


def swish_backward_torch(torch, beta):
    silu_backward = torch.ops.aten.silu_backward
    if beta == 1:
        return silu_backward

    def swish_backward(g, x):
        s = torch.sigmoid(beta * x)
        return g * (s + beta * x * s * (1 - s))

    return swish_backward


def fast_gelu_backward_torch(torch):
    def fast_gelu_backward(g, x):
        s = torch.sigmoid(1.702 * x)
        return g * (s + 1.702 * x * s * (1 - s))

    return fast_gelu_backward


def shrink_torch(torch, lambd, bias):
    def shrink(x):
        return torch.where(x > lambd, x - bias, torch.where(x < -lambd, x + bias, 0.0))

    return shrink


def gelu_scale(x, *attrs):
    """Gelu's terms, |x| (0.5·x·(1 + tanh) and torch's 1 + erf cancel for x < 0)."""
    return np.abs(_f64(x))


def ge_glu_scale(x, dim, approximate, activate_left=False):
    """out = linear · Gelu(gated): |linear · gated|; outGelu: |gated|."""
    a, b = np.split(_f64(x), 2, axis=dim)
    linear, gated = (b, a) if activate_left else (a, b)
    return [np.abs(linear * gated), np.abs(gated)]


def gelu_mul_scale(x, approximate):
    a, b = np.split(_f64(x), 2, axis=-1)
    return np.abs(a * b)


def ge_glu_backward_scale(g, x, gelu, dim, approximate, activate_left=False):
    """grad_gated = g·linear·Gelu'(gated), whose two terms are each at most about 1 in size:
    2·|g·linear|; grad_linear: |g·gelu|."""
    a, b = np.split(_f64(x), 2, axis=dim)
    linear = b if activate_left else a
    d_linear, d_gated = np.abs(_f64(g) * _f64(gelu)), 2 * np.abs(_f64(g) * linear)
    return np.concatenate([d_gated, d_linear] if activate_left else [d_linear, d_gated], axis=dim)


def glu_backward_scale(g, x, dim):
    """a_grad = g·σ(b); b_grad = g·(a - a·σ(b))·σ(b), whose terms are |g·a|·σ(b) (torch's
    float32 a - a·σ(b) cancels)."""
    a, b = np.split(_f64(x), 2, axis=dim)
    s = 1 / (1 + np.exp(-b))
    return np.concatenate([np.abs(_f64(g)) * s, np.abs(_f64(g) * a) * s], axis=dim)


def gradient_scale(g, x, *scalars):
    """A gradient whose derivative crosses 0 (SiluBackward near x = -1.28, MishBackward,
    GeluBackward): its terms, 2·|g|·(1 + |x|)."""
    return 2 * np.abs(_f64(g)) * (1 + np.abs(_f64(x)))


def hardtanh_ends(g, x, lo, hi):
    """The doc passes gradOutput at x = min and max, torch does not."""
    x = x.astype(np.float32)
    return (x == F32(lo)) | (x == F32(hi))


def sigmoid_prepare(rng, inputs, scalars):
    """SigmoidBackward's output is sigmoid(x)."""
    g, x = inputs
    return [g, (1 / (1 + np.exp(-_f64(x)))).astype(x.dtype)]


def log_sigmoid_backward_prepare(rng, inputs, scalars):
    """`buffer` is the forward's e^-|x| (torch's CPU kernel reads it; aclgen ignores it)."""
    g, x, buffer = inputs
    return [g, x, np.exp(-np.abs(_f64(x))).astype(buffer.dtype)]


def erfinv_prepare(rng, inputs, scalars):
    """erfinv's domain, (-1, 1)."""
    (x,) = inputs
    return [rng.uniform(-1, 1, x.shape).astype(x.dtype)]


def prelu_prepare(rng, inputs, scalars):
    """A weight per channel (self's dim 1; one for a self of fewer dims: there run.input_shapes
    gives the weight self's shape, and `aclgen run prelu --shape 1024` fails the same way); the
    weight is the last input (Prelu's self, weight; PreluBackward's gradOutput, self, weight)."""
    *tensors, w = inputs
    x = tensors[-1]
    channels = x.shape[1] if x.ndim >= 2 else 1
    return [*tensors, (rng.standard_normal(channels) * 0.25).astype(w.dtype)]


def prelu_backward_torch(torch):
    """torch's PReLU backward kernel (a weight gradient per element of self), then the sum over
    every dim but the channel, as torch's autograd of prelu does."""

    def run(g, x, w):
        per_channel = x.dim() > 1 and w.numel() > 1
        gi, gw = torch.ops.aten._prelu_kernel_backward(g, x, w.reshape(-1, *[1] * (x.dim() - 2)) if per_channel
                                                       else w.reshape(()))
        dims = [d for d in range(x.dim()) if not (per_channel and d == 1)]
        return gi, gw.sum(dims).reshape(w.shape)

    return run


def softmax_cross_entropy_torch(torch):
    """The loss and the logits' gradient as eager torch code writes them: log_softmax once, the
    loss -sum(labels * it) per row, the gradient its exp minus the labels."""

    def run(x, y):
        ls = x.log_softmax(1)
        return -(y * ls).sum(1), ls.exp() - y

    return run


def reference_scale(name: str) -> Callable:
    """An error scale from the declaration's own (`reference.scale`: the size of the terms, per
    output), for operators whose outputs cancel."""

    def scale(*args):
        from aclgen.ops import OPERATORS  # the built-ins import this package's users lazily

        return OPERATORS[name].reference.scale(*(_f64(a) for a in args))  # type: ignore[union-attr]

    return scale
