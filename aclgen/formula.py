"""`aclgen.compile`: user-defined elementwise operators, compiled like the built-in five.

    from aclgen import compile, select

    def leaky_backward(g, x, slope):
        return select(x > 0.0, g, g * slope)

    op = compile(leaky_backward, dtypes="float16", params=("slope",))
    y = op(g, x, slope=0.01)           # numpy in, numpy out; broadcasting, any strides
    print(op.kernel.ir["llvm"])        # the default variant's stages (rank 1, contiguous)

Arguments of the formula named in `params` are f32 scalars; the others are tensors.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from aclgen import dtypes as dt
from aclgen.frontend.dsl import FormulaError
from aclgen.kernel import Kernel, Options, Param, Variant
from aclgen.ops.operator import Operator, launch


class Formula:
    """A compiled user formula: callable on numpy arrays; variants compile on first use."""

    def __init__(self, fn: Callable, op: Operator, in_dtypes, out_dtypes, options: Options):
        self.fn = fn
        self.op = op
        self.in_dtypes: tuple[dt.DType, ...] = in_dtypes
        self.out_dtypes: tuple[dt.DType, ...] = out_dtypes
        self.options = options
        n = len(in_dtypes) + len(out_dtypes)
        self.kernel: Kernel = op.kernel(Variant(in_dtypes, out_dtypes, 1, ("contiguous",) * n), options)
        self._param_names = tuple(p.name for p in op.params)

    @property
    def ir(self) -> dict[str, str]:
        return self.kernel.ir

    @property
    def asm(self) -> str:
        return self.kernel.asm

    def __call__(self, *arrays, out=None, **params):
        if len(arrays) != len(self.op.inputs):
            raise TypeError(f"{self.op.name} takes {len(self.op.inputs)} tensors {self.op.inputs}, got {len(arrays)}")
        names = self._param_names
        if len(params) != len(names) or any(n not in params for n in names):
            raise TypeError(f"{self.op.name} takes parameters {list(names)}, got {sorted(params)}")
        ins = []
        for name, a, want in zip(self.op.inputs, arrays, self.in_dtypes):
            a = a if type(a) is np.ndarray else np.asarray(a)
            if a.dtype != want.np_dtype:
                raise TypeError(f"{self.op.name}: {name} must be {want.name}, got {a.dtype}")
            ins.append(a)
        shape = ins[0].shape
        if any(a.shape != shape for a in ins):
            shape = np.broadcast_shapes(*(a.shape for a in ins))
        outs = out if isinstance(out, (tuple, list)) else [out] * len(self.out_dtypes) if out is None else [out]
        outs = [np.empty(shape, d.np_dtype) if o is None else o for o, d in zip(outs, self.out_dtypes)]
        for o, d in zip(outs, self.out_dtypes):
            if not isinstance(o, np.ndarray):
                raise TypeError(f"{self.op.name}: out must be a numpy array, got {type(o).__name__}")
            if o.shape != shape or o.dtype != d.np_dtype:
                raise ValueError(f"{self.op.name}: out must be {d.name} of shape {shape}, got {o.dtype} {o.shape}")
        launch(self.op, ins, outs, [float(params[n]) for n in names], self.options)
        return outs[0] if len(outs) == 1 else tuple(outs)


def _per_arg(spec, names: Sequence[str], what: str) -> tuple[dt.DType, ...]:
    if isinstance(spec, Mapping):
        unknown = set(spec) - set(names)
        if unknown:
            raise ValueError(f"{what} names unknown arguments {sorted(unknown)}; tensors are {list(names)}")
        missing = [n for n in names if n not in spec]
        if missing:
            raise ValueError(f"{what} lacks a dtype for {missing}")
        return tuple(dt.dtype(spec[n]) for n in names)
    if isinstance(spec, (list, tuple)):
        if len(spec) != len(names):
            raise ValueError(f"{what} gives {len(spec)} dtypes for {len(names)} tensors {list(names)}")
        return tuple(dt.dtype(s) for s in spec)
    return tuple(dt.dtype(spec) for _ in names)


def compile(
    fn: Callable,
    dtypes="float32",
    *,
    params: Sequence[str] = (),
    out_dtypes=None,
    name: str | None = None,
    **options,
) -> Formula:
    """Compile formula `fn` for tensor `dtypes` (one dtype, a list or a {name: dtype} dict).

    `out_dtypes` defaults to the first input's dtype for every output; `options` are
    `aclgen.compiler.Options` fields (tile_size, width, fma, opt_level, ...).
    """
    sig = inspect.signature(fn)
    args = [p.name for p in sig.parameters.values()]
    unknown = [p for p in params if p not in args]
    if unknown:
        raise FormulaError(f"params {unknown} are not arguments of {fn.__qualname__}{sig}")
    tensors = [a for a in args if a not in params]
    if not tensors:
        raise FormulaError(f"{fn.__qualname__} needs at least one tensor argument")
    in_dtypes = _per_arg(dtypes, tensors, "dtypes")
    from xdsl.dialects.builtin import f32

    from aclgen.frontend.tracer import count_outputs  # counting outputs traces the formula

    prms = tuple(Param(p) for p in params)
    types = dict(zip(tensors, (d.ir_type for d in in_dtypes)))
    n_out = count_outputs(fn, [types.get(a, f32) for a in args])
    outs = tuple(f"out{i}" for i in range(n_out))
    out_d = _per_arg(out_dtypes if out_dtypes is not None else in_dtypes[0].name, outs, "out_dtypes")
    op = Operator(
        name=name or fn.__name__.replace("<lambda>", "formula"),
        aclnn="",
        formula=_reordered(fn, args, tensors, list(params)),
        inputs=tuple(tensors),
        outputs=outs,
        params=prms,
        dtypes={"any": tuple(d.name for d in dt.ALL)},
    )
    return Formula(fn, op, in_dtypes, out_d, Options.from_knobs(**options))


def _reordered(fn: Callable, args: list[str], tensors: list[str], params: list[str]) -> Callable:
    """`fn` taking (tensors..., params...) — the kernel's argument order — whatever its own order."""
    if args == tensors + params:
        return fn
    order = [args.index(a) for a in tensors + params]

    def call(*xs):
        by_pos = [None] * len(xs)
        for x, i in zip(xs, order):
            by_pos[i] = x
        return fn(*by_pos)

    call.__wrapped__ = fn  # type: ignore[attr-defined]  # the tracer reports fn's own lines
    return call
