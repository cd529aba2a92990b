"""What each tool runs for one row: the data (`Problem`), aclgen's call, and the peers.

aclgen's row of any operator is its Python function (`function_of(op)`, `aclgen.ops.<name>` for
the built-ins) called as `fn(*inputs, *scalars, out=out)` on the data `make_problem` makes. The
peers are the operator's math written as numpy, torch and numba users would, one `Peer` per
operator in `PEERS`, keyed by its aclnn name: an operator without an entry (a user's
declaration) has no peers, and its rows time aclgen alone. A peer's output is compared with
aclgen's (`agree`) before anything is timed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from aclgen import dtypes as dt
from aclgen.declaration import Operator
from aclgen.runtime.function import function_of
from aclgen.tools import run

TOOLS = ("aclgen", "numpy", "torch", "torch.compile", "numba", "numba-prange")

Call = Callable[[], object]


class Skip(Exception):
    """A tool cannot run this row (not installed, dtype unsupported); the message says why."""


def need(module: str):
    """An optional peer's module, or Skip naming what is missing."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise Skip(f"{module} is not installed") from None


# -- the data of a row ---------------------------------------------------------------------------


def output_shape(op: Operator, n: int) -> tuple[int]:
    """The API output's shape for a row of size n: n elements per kernel output, so an output the
    kernel writes in parts (SwiGluGrad's out, as halves) holds a multiple of n."""
    return (n * len(op.kernel_outputs) // len(op.outputs),)


def scalar_values(op: Operator) -> list:
    """The Python call's arguments after the inputs, as `aclgen run` sets them: the aclScalars'
    samples (0.5), then the attributes' (their defaults: SwiGluGrad's dim = -1)."""
    return [*(s.sample for s in op.scalars), *(a.sample for a in op.attrs)]


@dataclass
class Problem:
    """One row's arguments in the row's dtype (1-D: the launcher merges dims anyway), and the
    shapes and dtypes of its outputs."""

    op: Operator
    dtype: dt.DType
    n: int  # elements per kernel output (SwiGluGrad: yGrad's; x and out hold 2n)
    inputs: list[np.ndarray]
    scalars: list  # the Python call's arguments after the inputs: aclScalars, then attributes
    outputs: list[tuple[tuple[int, ...], np.dtype]]

    @property
    def nbytes(self) -> int:
        """Inputs + outputs, each read or written once (STREAM's convention)."""
        return sum(a.nbytes for a in self.inputs) + sum(int(np.prod(s)) * d.itemsize for s, d in self.outputs)

    def empty_outs(self) -> list[np.ndarray]:
        outs = [np.empty(s, d) for s, d in self.outputs]
        for o in outs:
            o.fill(0)  # first touch outside the timing
        return outs

    def f32_scalars(self) -> list:
        """`scalars` as the numpy and numba peers take them: aclScalars as f32 constants."""
        n = len(self.op.scalars)
        return [*(np.float32(v) for v in self.scalars[:n]), *self.scalars[n:]]


def make_problem(op: Operator, dtype: dt.DType, n: int, seed: int = 0) -> Problem:
    """Inputs of the shapes the declaration gives for the row's output (run.input_shapes), normal
    values times 4: no edge values as `aclgen run` sprinkles in (NaN, inf and subnormals would
    time other paths, and there the peers differ from SPEC.md on purpose)."""
    rng = np.random.default_rng(seed)
    inputs = [(rng.standard_normal(int(np.prod(s)), dtype=np.float32) * 4).astype(dtype.np_dtype).reshape(s)
              for s in run.input_shapes(op, output_shape(op, n))]
    scalars = scalar_values(op)
    outs = function_of(op).empty_outputs(*inputs, *scalars)
    return Problem(op, dtype, n, inputs, scalars, [(o.shape, o.dtype) for o in outs])


# -- the peers of each built-in ------------------------------------------------------------------


@dataclass(frozen=True)
class Peer:
    """One operator's math for the peers, arguments in C order (inputs, scalars, outputs).

    numpy(*inputs, *scalars, *outs): float32 numpy writing into outs (half types get widened
    inputs; the store casts). torch(torch, *scalars) -> fn(*inputs) returning the result as
    eager torch code does. numba(loop) -> a loop over the elements, (*inputs, *scalars, *outs),
    for @njit with `loop` = range or prange. ignore(*inputs, *scalars): the output elements where
    SPEC.md differs from the peers on purpose. error_scale(*inputs, *scalars): a per-element scale
    S of the allowed error, where a relative tolerance cannot work (see `agree`)."""

    numpy: Callable
    torch: Callable
    numba: Callable
    ignore: Callable | None = None
    error_scale: Callable | None = None


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


# SeluBackward (SPEC.md §4.2): torch's is elu_backward with SELU's constants.

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


PEERS: dict[str, Peer] = {
    "HardswishBackward": Peer(_hardswish_numpy, _aten("hardswish_backward"), _hardswish_numba, ignore=_hardswish_ends),
    "SeluBackward": Peer(_selu_numpy, _selu_torch, _selu_numba),
    "SoftshrinkBackward": Peer(_softshrink_numpy, _aten("softshrink_backward"), _softshrink_numba),
    "ThresholdBackward": Peer(_threshold_numpy, _aten("threshold_backward"), _threshold_numba),
    "SwiGluGrad": Peer(_swiglu_numpy, _swiglu_torch, _swiglu_numba, error_scale=_swiglu_error_scale),
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
    fn, ins, scalars = peer.numpy, p.inputs, p.f32_scalars()
    if p.dtype.np_dtype != np.dtype(np.float32):  # computed in float32, cast on store
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


def _torch(peer: Peer, p: Problem, outs: list[np.ndarray]) -> Call:
    torch = need("torch")
    return _TorchCall(torch, peer.torch(torch, *p.scalars), p)


def _torch_compile(peer: Peer, p: Problem, outs: list[np.ndarray]) -> Call:
    torch = need("torch")
    # The functions of every row share code objects, and dynamo stops recompiling one after
    # cache_size_limit variants (falling back to eager, silently): start each row afresh.
    torch._dynamo.reset()
    return _TorchCall(torch, torch.compile(peer.torch(torch, *p.scalars), dynamic=False), p)


_NUMBA: dict[tuple[str, bool], Callable] = {}


def numba_loop(op_name: str, parallel: bool) -> Callable:
    """The operator's numba loop, jitted once per process (serial, or parallel with prange)."""
    key = (op_name, parallel)
    if key not in _NUMBA:
        numba = need("numba")
        fn = PEERS[op_name].numba(numba.prange if parallel else range)
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


def tolerance(dtype_name: str) -> tuple[float, float]:
    """(rtol, atol) for peers that round differently (x/3 vs x·f32(1/3), another exp): loose enough
    for that, tight enough to catch a peer that computes another formula."""
    if dtype_name == "float32":
        return 2e-5, 1e-6
    return 1e-2, 1e-3  # about one half-type ulp


def agree(p: Problem, ours: Sequence[np.ndarray], theirs: Sequence[np.ndarray]) -> str | None:
    """None when a peer computed aclgen's result for `p`, else a short description: elements
    where SPEC.md differs on purpose (the peer's `ignore`) do not count, and a peer's
    `error_scale` S widens the tolerance by 64·2⁻²⁴·S (SPEC allows 8·2⁻²⁴·S to aclgen, and a
    peer's exp may be less exact)."""
    if len(theirs) != len(ours):
        return f"{len(theirs)} outputs instead of {len(ours)}"
    for a, b in zip(ours, theirs):
        if np.size(a) != np.size(b):
            return f"shape {np.shape(b)} instead of {np.shape(a)}"
    a = np.concatenate([np.asarray(o, np.float32).ravel() for o in ours])
    b = np.concatenate([np.asarray(t).astype(np.float32).ravel() for t in theirs])
    rtol, atol = tolerance(p.dtype.name)
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    peer = PEERS.get(p.op.name)
    args = [*p.inputs, *p.scalars]
    if peer is not None and peer.error_scale is not None:
        with np.errstate(invalid="ignore"):
            close |= np.abs(a.astype(np.float64) - b) <= 64 * 2.0**-24 * peer.error_scale(*args).ravel()
    if peer is not None and peer.ignore is not None:
        close |= peer.ignore(*args).ravel()
    bad = int((~close).sum())
    if bad == 0:
        return None
    i = int(np.argmax(~close))
    return f"{bad} of {a.size} elements differ from aclgen's (e.g. [{i}]: {b[i]!r} vs {a[i]!r})"
