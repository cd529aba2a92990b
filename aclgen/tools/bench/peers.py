"""What each tool runs for one row: the data (`Problem`), aclgen's call, and the peers.

aclgen's row of any operator is its Python function (`function_of(op)`, `aclgen.ops.<name>` for
the built-ins) called as `fn(*inputs, *scalars, out=out)` on the data `make_problem` makes. The
peers are the operator's math written as numpy, torch and numba users would, one `Peer` per
operator in `PEERS`, keyed by its aclnn name: an operator without an entry (a user's
declaration) has no peers, and its rows time aclgen alone; a Peer without one of the tools (the
activation family has torch alone) makes that tool a Skip with the reason. A peer's output is
compared with aclgen's (`agree`) before anything is timed.

Three groups of peers:
- the first five built-ins (HardswishBackward ... SwiGluGrad, below): numpy, torch's own
  backward kernels, numba loops over the elements;
- the operators over an axis (Softmax ... LayerNormBackward, peers_axis.py): numpy, torch's own
  kernels (RmsNormGrad: torch's decomposition, as torch has no CPU kernel), numba loops over the
  rows; their backward rows get the saved tensors of a forward pass (`Peer.prepare`);
- CANN's activation family (`_family`, peers_family.py): torch alone, its own operator where it
  has one, else the formula of torch ops.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from aclgen import dtypes as dt
from aclgen.codegen.native import aligned_empty
from aclgen.declaration import Operator
from aclgen.runtime.function import function_of
from aclgen.tools import run
from aclgen.tools.bench import peers_axis as ax
from aclgen.tools.bench import peers_family as fam

TOOLS = ("aclgen", "numpy", "torch", "torch.compile", "numba", "numba-prange")

Call = Callable[[], object]
Size = int | tuple[int, ...]  # elements of a 1-D problem, or a shape (config.parse_shape)


class Skip(Exception):
    """A tool cannot run this row (not installed, dtype unsupported); the message says why."""


def need(module: str):
    """An optional peer's module, or Skip naming what is missing."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise Skip(f"{module} is not installed") from None


# -- the data of a row ---------------------------------------------------------------------------


def output_shape(op: Operator, size: Size) -> tuple[int, ...]:
    """The API output's shape for a row of `size`: n elements (or a shape) per kernel output, so an
    output the kernel writes in parts (SwiGluGrad's out, as halves) holds a multiple of it, along
    its last dim. n elements are one dim, or, for an operator whose inputs cannot be one dim of
    that length (GeluMul's and FatreluMul's last dim is at most 512), rows of the longest
    power-of-two last dim it takes (1M: 2048 x 512)."""
    parts = len(op.kernel_outputs) // len(op.outputs)
    if not isinstance(size, int):
        return (*size[:-1], size[-1] * parts)
    n = size * parts
    if _makes(op, (n,)):
        return (n,)
    for last in (2**k for k in range(n.bit_length() - 1, 0, -1)):
        if n % last == 0 and _makes(op, (n // last, last)):
            return (n // last, last)
    run.input_shapes(op, (n,))  # raises the operator's own message
    return (n,)


def _makes(op: Operator, shape: tuple[int, ...]) -> bool:
    """Whether the operator's inputs can make outputs of `shape` (run.input_shapes)."""
    try:
        run.input_shapes(op, shape)
    except ValueError:
        return False
    return True


def scalar_values(op: Operator, shape: Sequence[int]) -> list:
    """The Python call's arguments after the inputs, as `aclgen run` sets them for outputs of
    `shape`: the aclScalars' samples (their defaults, else 0.5), then the attributes' examples
    for that shape (LayerNorm's normalizedShape: its last dim; else their defaults)."""
    return [*(s.sample for s in op.scalars), *(a.example_for(shape) for a in op.attrs)]


def input_dtypes(op: Operator, dtype: dt.DType) -> list[dt.DType]:
    """The inputs' dtypes of a row in `dtype`: the operator's first dtype combination whose first
    input is `dtype` (RmsNorm's bfloat16 x takes a float32 gamma), else `dtype` for each."""
    row = op.combination(dtype.name)
    return [dt.dtype(d) for d in row[: len(op.inputs)]] if row else [dtype] * len(op.inputs)


@dataclass
class Problem:
    """One row's arguments in the row's dtypes (1-D for a plain size: the launcher merges dims
    anyway), and the shapes and dtypes of its outputs."""

    op: Operator
    dtype: dt.DType
    size: Size  # the row's key: elements per kernel output (SwiGluGrad: yGrad's), or a shape
    inputs: list[np.ndarray]
    scalars: list  # the Python call's arguments after the inputs: aclScalars, then attributes
    outputs: list[tuple[tuple[int, ...], np.dtype]]

    @property
    def nbytes(self) -> int:
        """Inputs + outputs, each read or written once (STREAM's convention)."""
        return sum(a.nbytes for a in self.inputs) + sum(int(np.prod(s)) * d.itemsize for s, d in self.outputs)

    def empty_outs(self) -> list[np.ndarray]:
        outs = [aligned_empty(s, d) for s, d in self.outputs]  # as aclgen's own results
        for o in outs:
            o.fill(0)  # first touch outside the timing
        return outs

    def f32_scalars(self) -> list:
        """`scalars` as the numpy and numba peers take them: aclScalars as f32 constants."""
        n = len(self.op.scalars)
        return [*(np.float32(v) for v in self.scalars[:n]), *self.scalars[n:]]

    @functools.cached_property
    def error_scale(self) -> np.ndarray | None:
        """The peer's `error_scale` over every output element, flat (computed once per row)."""
        peer = PEERS.get(self.op.name)
        if peer is None or peer.error_scale is None:
            return None
        with np.errstate(all="ignore"):
            scale = peer.error_scale(*self.inputs, *self.scalars)
        return np.concatenate([np.ravel(s) for s in scale]) if isinstance(scale, (list, tuple)) else np.ravel(scale)

    @functools.cached_property
    def ignored(self) -> np.ndarray | None:
        """The peer's `ignore` over every output element, flat."""
        peer = PEERS.get(self.op.name)
        return None if peer is None or peer.ignore is None else np.ravel(peer.ignore(*self.inputs, *self.scalars))


def make_problem(op: Operator, dtype: dt.DType, size: Size, seed: int = 0) -> Problem:
    """Inputs of the shapes the declaration gives for the row's output (run.input_shapes), in the
    dtypes of its first combination for `dtype`, normal values times 4: no edge values as
    `aclgen run` sprinkles in (NaN, inf and subnormals would time other paths, and there the
    peers differ from SPEC.md on purpose). The peer's `prepare` then puts what a forward pass
    saves where the backward takes it (softmax's y, rstd, mean), or data in the operator's domain."""
    rng = np.random.default_rng(seed)
    shape = output_shape(op, size)
    inputs = [(rng.standard_normal(int(np.prod(s)), dtype=np.float32) * 4).astype(d.np_dtype).reshape(s)
              for s, d in zip(run.input_shapes(op, shape), input_dtypes(op, dtype))]
    scalars = scalar_values(op, shape)
    peer = PEERS.get(op.name)
    if peer is not None and peer.prepare is not None:
        with np.errstate(all="ignore"):
            inputs = peer.prepare(rng, inputs, scalars)
    outs = function_of(op).every_output(*inputs, *scalars)
    return Problem(op, dtype, size, inputs, scalars, [(o.shape, o.dtype) for o in outs])


# -- the peers -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Peer:
    """One operator's math for the peers, arguments in C order (inputs, scalars, outputs); any
    tool may be missing (None: a Skip).

    torch(torch, *scalars) -> fn(*inputs) returning the result as eager torch code does (a tuple
    for several outputs). numpy(*inputs, *scalars, *outs): float32 numpy writing into outs (half
    types get widened inputs; the store casts). numba(loop) -> a loop over the elements or rows,
    (*inputs, *scalars, *outs), for @njit with `loop` = range or prange. ignore(*inputs,
    *scalars): the output elements where SPEC.md differs from the peers on purpose.
    error_scale(*inputs, *scalars): a per-element scale S of the allowed error (an array, or one
    per output), where a relative tolerance cannot work (see `agree`). prepare(rng, inputs,
    scalars) -> inputs: the row's data made sensible for the operator (a backward's saved
    tensors computed by the forward in float64)."""

    torch: Callable | None = None
    numpy: Callable | None = None
    numba: Callable | None = None
    ignore: Callable | None = None
    error_scale: Callable | None = None
    prepare: Callable | None = None


F32 = np.float32
ZERO, ONE, HALF, THREE, THIRD = F32(0), F32(1), F32(0.5), F32(3), F32(1 / 3)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
SCALE, SCALE_ALPHA = F32(SELU_SCALE), F32(SELU_SCALE * SELU_ALPHA)


def _aten(name: str) -> Callable:
    """The torch peer that calls torch's own backward kernel, `aten.<name>(g, x, *scalars)`."""

    def make(torch, *scalars):
        kernel = getattr(torch.ops.aten, name)
        return lambda g, x: kernel(g, x, *scalars)

    return make


def _f64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64)


# HardswishBackward (SPEC.md §4.1). SPEC's slope covers both ends, x = ±3 (torch: 0 at -3, g at
# 3); random fp16/bf16 data hits ±3 exactly, so those elements are not compared.

def _hardswish_numpy(g, x, out):
    out[...] = np.where(x < -THREE, ZERO, np.where(x <= THREE, g * (x * THIRD + HALF), g))


def _hardswish_numba(loop):
    def hardswish_backward(g, x, out):
        for i in loop(x.size):
            xi = x[i]
            out[i] = ZERO if xi < -THREE else (g[i] * (xi * THIRD + HALF) if xi <= THREE else g[i])

    return hardswish_backward


def _hardswish_ends(g, x):
    return np.abs(x.astype(np.float32)) == 3


# SeluBackward (SPEC.md §4.2): torch's is elu_backward with SELU's constants. Its `result` is
# selu(x) (prepare).

def _selu_numpy(g, y, out):
    out[...] = np.where(y <= 0, g * (y + SCALE_ALPHA), g * SCALE)


def _selu_torch(torch):
    aten = torch.ops.aten
    return lambda g, y: aten.elu_backward(g, SELU_ALPHA, SELU_SCALE, 1.0, True, y)


def _selu_numba(loop):
    def selu_backward(g, y, out):
        for i in loop(y.size):
            yi = y[i]
            out[i] = g[i] * (yi + SCALE_ALPHA) if yi <= ZERO else g[i] * SCALE

    return selu_backward


def _selu_prepare(rng, inputs, scalars):
    g, x = inputs
    x64 = _f64(x)
    y = SELU_SCALE * np.where(x64 > 0, x64, SELU_ALPHA * np.expm1(np.minimum(x64, 0)))
    return [g, y.astype(x.dtype)]


# SoftshrinkBackward (SPEC.md §4.3) and ThresholdBackward (§4.5).

def _softshrink_numpy(g, x, lambd, out):
    out[...] = np.where(np.abs(x) <= lambd, ZERO, g)


def _softshrink_numba(loop):
    def softshrink_backward(g, x, lambd, out):
        for i in loop(x.size):
            out[i] = ZERO if abs(x[i]) <= lambd else g[i]

    return softshrink_backward


def _threshold_numpy(g, x, t, out):
    out[...] = np.where(x <= t, ZERO, g)


def _threshold_numba(loop):
    def threshold_backward(g, x, t, out):
        for i in loop(x.size):
            out[i] = ZERO if x[i] <= t else g[i]

    return threshold_backward


# SwiGluGrad (SPEC.md §4.4), x split along the last dim (the bench's dim = -1) into A | B.

def _swiglu_numpy(g, x, dim, out):
    h = x.shape[-1] // 2
    a, b = x[..., :h], x[..., h:]
    with np.errstate(over="ignore"):
        s = ONE / (ONE + np.exp(-a))
    out[..., :h] = g * b * (s + s * (ONE - s) * a)
    out[..., h:] = g * s * a


def _swiglu_torch(torch, dim):
    silu, silu_backward = torch.nn.functional.silu, torch.ops.aten.silu_backward

    def swi_glu_grad(g, x):
        a, b = x.chunk(2, dim=dim)
        return torch.cat([silu_backward(g * b, a), g * silu(a)], dim=dim)

    return swi_glu_grad


def _swiglu_numba(loop):
    def swi_glu_grad(g, x, dim, out):
        n = g.size
        for i in loop(n):
            a, b, gi = x[i], x[n + i], g[i]
            s = ONE / (ONE + np.exp(-a))
            out[i] = gi * b * (s + s * (ONE - s) * a)
            out[n + i] = gi * s * a

    return swi_glu_grad


def _swiglu_error_scale(g, x, dim):
    """SPEC.md §4.4's error scale per output element, S_A = |g·B|·σ·(1+|A|), S_B = |g·σ·A|: out_A
    cancels where σ + σ(1-σ)·A ≈ 0, so a relative tolerance cannot work there."""
    g, x = g.astype(np.float64), x.astype(np.float64)
    a, b = np.split(x, 2, axis=dim)
    with np.errstate(over="ignore"):
        s = 1 / (1 + np.exp(-a))
    return np.concatenate([np.abs(g * b) * s * (1 + np.abs(a)), np.abs(g * s * a)], axis=dim)


def _family() -> dict[str, Peer]:
    """CANN's activation family: torch's own operator where torch has one (`aten.<op>`,
    torch.nn.functional), else the formula of torch ops (`fam.formula`: in float32 for half
    types); no numpy or numba peers. The scalars come in the operator's order (its aclScalars'
    samples, then its attributes' examples)."""
    F, formula = fam.F, fam.formula

    def aten(torch):
        return torch.ops.aten

    return {
        # aten._add_relu (the JIT's fusion) has no half-type kernel; relu of the sum rounds once
        "AddRelu": Peer(torch=lambda t, alpha: lambda x, y: t.relu(t.add(x, y, alpha=alpha))),
        "Celu": Peer(torch=lambda t, alpha: lambda x: F(t).celu(x, alpha)),
        "Elu": Peer(torch=lambda t, a, s, i: lambda x: aten(t).elu(x, a, s, i)),
        "EluBackward": Peer(torch=lambda t, a, s, i, is_result: lambda g, x: aten(t).elu_backward(
            g, a, s, i, is_result, x)),
        "Erfinv": Peer(torch=lambda t: t.erfinv, prepare=fam.erfinv_prepare),
        "FastGelu": Peer(torch=formula(lambda t: lambda x: x * t.sigmoid(1.702 * x))),
        "FastGeluBackward": Peer(torch=formula(fam.fast_gelu_backward_torch), error_scale=fam.gradient_scale),
        "FatreluMul": Peer(torch=formula(fam.fatrelu_mul_torch)),
        "GeGlu": Peer(torch=formula(fam.ge_glu_torch), error_scale=fam.ge_glu_scale),
        "GeGluV3": Peer(torch=formula(fam.ge_glu_torch), error_scale=fam.ge_glu_scale),
        "GeGluBackward": Peer(torch=formula(fam.ge_glu_backward_torch), prepare=fam.ge_glu_backward_prepare,
                              error_scale=fam.ge_glu_backward_scale),
        "GeGluV3Backward": Peer(torch=formula(fam.ge_glu_backward_torch), prepare=fam.ge_glu_backward_prepare,
                                error_scale=fam.ge_glu_backward_scale),
        # CANN's Gelu is the tanh form; GeluV2's approximate 0 is "none"
        "Gelu": Peer(torch=lambda t: lambda x: F(t).gelu(x, approximate="tanh"), error_scale=fam.gelu_scale),
        "GeluV2": Peer(torch=lambda t, ap: lambda x: F(t).gelu(x, approximate=fam.mode(ap)),
                       error_scale=fam.gelu_scale),
        "GeluBackward": Peer(torch=lambda t: aten(t).gelu_backward, error_scale=fam.gradient_scale),
        "GeluBackwardV2": Peer(torch=lambda t, ap: lambda g, x: aten(t).gelu_backward(g, x, approximate=fam.mode(ap)),
                               error_scale=fam.gradient_scale),
        "GeluMul": Peer(torch=formula(fam.gelu_mul_torch), error_scale=fam.gelu_mul_scale),
        "Glu": Peer(torch=lambda t, dim: lambda x: F(t).glu(x, dim)),
        "GluBackward": Peer(torch=lambda t, dim: lambda g, x: aten(t).glu_backward(g, x, dim),
                            error_scale=fam.glu_backward_scale),
        "Hardshrink": Peer(torch=lambda t, lambd: lambda x: F(t).hardshrink(x, lambd)),
        "HardshrinkBackward": Peer(torch=_aten("hardshrink_backward")),
        "Hardsigmoid": Peer(torch=lambda t: F(t).hardsigmoid),
        "HardsigmoidBackward": Peer(torch=_aten("hardsigmoid_backward")),
        "Hardswish": Peer(torch=lambda t: F(t).hardswish),
        "HardswishBackwardV2": Peer(torch=_aten("hardswish_backward")),
        "HardtanhBackward": Peer(torch=_aten("hardtanh_backward"), ignore=fam.hardtanh_ends),
        "Heaviside": Peer(torch=lambda t: t.heaviside),
        "LeakyRelu": Peer(torch=lambda t, slope: lambda x: F(t).leaky_relu(x, slope)),
        "LeakyReluBackward": Peer(torch=lambda t, slope, is_result: lambda g, x: aten(t).leaky_relu_backward(
            g, x, slope, is_result)),
        "LogSigmoid": Peer(torch=lambda t: F(t).logsigmoid),
        "LogSigmoidForward": Peer(torch=lambda t: aten(t).log_sigmoid_forward),
        "LogSigmoidBackward": Peer(torch=lambda t: aten(t).log_sigmoid_backward,
                                   prepare=fam.log_sigmoid_backward_prepare),
        "Mish": Peer(torch=lambda t: F(t).mish),
        "MishBackward": Peer(torch=lambda t: aten(t).mish_backward, error_scale=fam.gradient_scale),
        "Prelu": Peer(torch=lambda t: F(t).prelu, prepare=fam.prelu_prepare),
        "PreluBackward": Peer(torch=fam.prelu_backward_torch, prepare=fam.prelu_prepare,
                              error_scale=fam.reference_scale("prelu_backward")),
        "Relu": Peer(torch=lambda t: t.relu),
        "Selu": Peer(torch=lambda t: F(t).selu),
        "Shrink": Peer(torch=formula(fam.shrink_torch)),
        "Sigmoid": Peer(torch=lambda t: t.sigmoid),
        "SigmoidBackward": Peer(torch=lambda t: aten(t).sigmoid_backward, prepare=fam.sigmoid_prepare),
        "Silu": Peer(torch=lambda t: F(t).silu),
        "SiluBackward": Peer(torch=lambda t: aten(t).silu_backward, error_scale=fam.gradient_scale),
        "SituGlu": Peer(torch=formula(fam.situ_glu_torch)),
        "SoftmaxCrossEntropyWithLogits": Peer(torch=formula(fam.softmax_cross_entropy_torch),
                                              error_scale=fam.reference_scale("softmax_cross_entropy_with_logits")),
        "Softplus": Peer(torch=lambda t, beta, thr: lambda x: F(t).softplus(x, beta, thr)),
        "SoftplusBackward": Peer(torch=_aten("softplus_backward")),
        "Softshrink": Peer(torch=lambda t, lambd: lambda x: F(t).softshrink(x, lambd)),
        "SquaredRelu": Peer(torch=formula(lambda t: lambda x: t.relu(x).square())),
        "SwiGlu": Peer(torch=formula(fam.swi_glu_torch)),
        "Swish": Peer(torch=formula(fam.swish_torch)),
        "SwishBackward": Peer(torch=formula(fam.swish_backward_torch), error_scale=fam.gradient_scale),
        "Threshold": Peer(torch=lambda t, thr, value: lambda x: F(t).threshold(x, thr, value)),
    }


PEERS: dict[str, Peer] = {
    "HardswishBackward": Peer(_aten("hardswish_backward"), _hardswish_numpy, _hardswish_numba, ignore=_hardswish_ends),
    "SeluBackward": Peer(_selu_torch, _selu_numpy, _selu_numba, prepare=_selu_prepare),
    "SoftshrinkBackward": Peer(_aten("softshrink_backward"), _softshrink_numpy, _softshrink_numba),
    "ThresholdBackward": Peer(_aten("threshold_backward"), _threshold_numpy, _threshold_numba),
    "SwiGluGrad": Peer(_swiglu_torch, _swiglu_numpy, _swiglu_numba, error_scale=_swiglu_error_scale),
    # over an axis
    "Softmax": Peer(ax.softmax_torch, ax.softmax_numpy, ax.softmax_numba),
    "LogSoftmax": Peer(ax.log_softmax_torch, ax.log_softmax_numpy, ax.log_softmax_numba,
                       error_scale=ax.log_softmax_scale),
    "SoftmaxBackward": Peer(ax.softmax_backward_torch, ax.softmax_backward_numpy, ax.softmax_backward_numba,
                            error_scale=ax.softmax_backward_scale, prepare=ax.softmax_prepare),
    "LogSoftmaxBackward": Peer(ax.log_softmax_backward_torch, ax.log_softmax_backward_numpy,
                               ax.log_softmax_backward_numba, error_scale=ax.log_softmax_backward_scale,
                               prepare=ax.log_softmax_prepare),
    "RmsNorm": Peer(ax.rms_norm_torch, ax.rms_norm_numpy, ax.rms_norm_numba),
    "RmsNormGrad": Peer(ax.rms_norm_grad_torch, ax.rms_norm_grad_numpy, ax.rms_norm_grad_numba,
                        error_scale=ax.rms_norm_grad_scale, prepare=ax.rms_norm_grad_prepare),
    "LayerNorm": Peer(ax.layer_norm_torch, ax.layer_norm_numpy, ax.layer_norm_numba, error_scale=ax.layer_norm_scale),
    "LayerNormBackward": Peer(ax.layer_norm_backward_torch, ax.layer_norm_backward_numpy, ax.layer_norm_backward_numba,
                              error_scale=ax.layer_norm_backward_scale, prepare=ax.layer_norm_backward_prepare),
    **_family(),
}


# -- building a row's calls ----------------------------------------------------------------------


def build(tool: str, p: Problem, outs: list[np.ndarray]) -> Call:
    """`tool`'s call computing the row into `outs` (torch: into its own result, see `results`);
    raises Skip when the tool cannot run it."""
    if tool == "aclgen":
        fn = function_of(p.op)
        args = [*p.inputs, *p.scalars]
        out = outs[0] if len(outs) == 1 else tuple(outs)
        return lambda: fn(*args, out=out)
    peer = PEERS.get(p.op.name)
    if peer is None:
        raise Skip(f"no peer implementation of {p.op.name}")
    return _BUILDERS[tool](peer, p, outs)


def results(call: Call, outs: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs of a call that has run: `outs`, or what a torch call returned."""
    fetch = getattr(call, "fetch", None)
    return fetch() if fetch is not None else outs


def _numpy(peer: Peer, p: Problem, outs: list[np.ndarray]) -> Call:
    if peer.numpy is None:
        raise Skip(f"no numpy peer of {p.op.name}")
    fn, ins, scalars = peer.numpy, p.inputs, p.f32_scalars()
    if any(a.dtype != np.dtype(np.float32) for a in ins):  # computed in float32, cast on store
        return lambda: fn(*(a.astype(F32) for a in ins), *scalars, *outs)
    return lambda: fn(*ins, *scalars, *outs)


def _to_torch(torch, a: np.ndarray):
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _from_torch(torch, t) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().view(dt.bfloat16.np_dtype)
    return t.numpy()


class _TorchCall:
    """A torch peer: the functional call (torch allocates its result, as eager code does)."""

    def __init__(self, torch, fn: Callable, p: Problem):
        self.torch, self.fn = torch, fn
        self.args = [_to_torch(torch, a) for a in p.inputs]
        self.result = None

    def __call__(self) -> None:
        self.result = self.fn(*self.args)

    def fetch(self) -> list[np.ndarray]:
        self()
        result = self.result if isinstance(self.result, (tuple, list)) else [self.result]
        return [_from_torch(self.torch, t) for t in result]


def _torch_fn(peer: Peer, p: Problem):
    if peer.torch is None:
        raise Skip(f"no torch peer of {p.op.name}")
    torch = need("torch")
    return torch, peer.torch(torch, *p.scalars)


def _torch(peer: Peer, p: Problem, outs: list[np.ndarray]) -> Call:
    torch, fn = _torch_fn(peer, p)
    return _TorchCall(torch, fn, p)


def _torch_compile(peer: Peer, p: Problem, outs: list[np.ndarray]) -> Call:
    torch, fn = _torch_fn(peer, p)
    # The functions of every row share code objects, and dynamo stops recompiling one after
    # cache_size_limit variants (falling back to eager, silently): start each row afresh.
    torch._dynamo.reset()
    return _TorchCall(torch, torch.compile(lambda *args: fn(*args), dynamic=False), p)


_NUMBA: dict[tuple[str, bool], Callable] = {}


def numba_loop(op_name: str, parallel: bool) -> Callable:
    """The operator's numba loop, jitted once per process (serial, or parallel with prange)."""
    key = (op_name, parallel)
    if key not in _NUMBA:
        loop = PEERS[op_name].numba
        if loop is None:
            raise Skip(f"no numba peer of {op_name}")
        numba = need("numba")
        fn = loop(numba.prange if parallel else range)
        _NUMBA[key] = numba.njit(parallel=parallel, fastmath=False, cache=False)(fn)
    return _NUMBA[key]


def _numba(parallel: bool) -> Callable:
    def build_numba(peer: Peer, p: Problem, outs: list[np.ndarray]) -> Call:
        kernel = numba_loop(p.op.name, parallel)  # first: without numba, that is the one reason
        if p.dtype.name not in ("float32", "float16"):
            raise Skip(f"numba has no {p.dtype.name}")
        args = [*p.inputs, *p.f32_scalars(), *outs]
        try:
            kernel(*args)  # compile now: an unsupported dtype is a skip, not a crash
        except Exception as exc:
            raise Skip(f"numba cannot compile these loops for {p.dtype.name} ({type(exc).__name__})") from None
        return lambda: kernel(*args)

    return build_numba


_BUILDERS: dict[str, Callable[[Peer, Problem, list[np.ndarray]], Call]] = {
    "numpy": _numpy,
    "torch": _torch,
    "torch.compile": _torch_compile,
    "numba": _numba(False),
    "numba-prange": _numba(True),
}


# -- agreement -----------------------------------------------------------------------------------


def scale_factor(dtype_name: str) -> float:
    """The error allowed per unit of a peer's `error_scale`: 64 float32 ulps, or 4 half-type ulps
    (torch's half-type kernels round intermediates: LayerNormBackward's bfloat16 sums, GluBackward's
    a - a·σ(b))."""
    return {"float32": 64 * 2.0**-24, "float16": 4 * 2.0**-11}.get(dtype_name, 4 * 2.0**-8)


def tolerance(dtype_name: str) -> tuple[float, float]:
    """(rtol, atol) for peers that round differently (x/3 vs x·f32(1/3), another exp, another
    order of a sum): loose enough for that, tight enough to catch a peer that computes another
    formula."""
    if dtype_name == "float32":
        return 2e-5, 1e-6
    return 1e-2, 1e-3  # about one half-type ulp


def agree(p: Problem, ours: Sequence[np.ndarray], theirs: Sequence[np.ndarray]) -> str | None:
    """None when a peer computed aclgen's result for `p`, else a short description. Values are
    compared, not dtypes (torch's bfloat16 dgamma against aclgen's float32 one). Elements where
    SPEC.md differs on purpose (the peer's `ignore`) do not count, and a peer's `error_scale` S
    widens the tolerance by scale_factor·S (float32: 64·2⁻²⁴·S; SPEC allows 8·2⁻²⁴·S to aclgen, and
    a peer's exp or its sums' order may differ)."""
    if len(theirs) != len(ours):
        return f"{len(theirs)} outputs instead of {len(ours)}"
    for a, b in zip(ours, theirs):
        if np.size(a) != np.size(b):
            return f"shape {np.shape(b)} instead of {np.shape(a)}"
    a = np.concatenate([np.asarray(o, np.float32).ravel() for o in ours])
    b = np.concatenate([np.asarray(t).astype(np.float32).ravel() for t in theirs])
    rtol, atol = tolerance(p.dtype.name)
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    if p.error_scale is not None:
        with np.errstate(invalid="ignore"):
            close |= np.abs(a.astype(np.float64) - b) <= scale_factor(p.dtype.name) * p.error_scale
    if p.ignored is not None:
        close |= p.ignored
    bad = int((~close).sum())
    if bad == 0:
        return None
    i = int(np.argmax(~close))
    return f"{bad} of {a.size} elements differ from aclgen's (e.g. [{i}]: {b[i]!r} vs {a[i]!r})"
