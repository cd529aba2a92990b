"""`aclgen.compile`: the quick path to an operator, without an aclnn name or SoC lists.

    from aclgen import compile, select

    def leaky_backward(g, x, slope):
        return select(x > 0.0, g, g * slope)

    fn = compile(leaky_backward, dtypes="float16", params=("slope",))
    y = fn(g, x, slope=0.01)           # numpy in, numpy out; broadcasting, any strides
    print(fn.kernel.ir["llvm"])        # the default variant's stages (rank 1, contiguous)

It declares an operator (aclgen.declaration) that is not registered: arguments named in
`params` are f32 scalars, the others tensors of exactly the given dtypes, outputs of
`out_dtypes`. The result is the same kind of object `@aclgen.operator` returns (a
aclgen.runtime.function.Function: the same planner, native pool, replays). The formula is traced
here, so one the language cannot express fails at once, naming its line; kernels are compiled
on first use (`fn.kernel`, the first call).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence

from aclgen import dtypes as dt
from aclgen.declaration import Tensor, declare
from aclgen.frontend.dsl import FormulaError
from aclgen.frontend.tracer import Signature, trace
from aclgen.kernel import Options
from aclgen.runtime import constants as C
from aclgen.runtime.function import Function


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


def _exact_dtypes(in_dtypes, out_dtypes):
    """The check of a compiled formula: each tensor of exactly its compiled dtype, inputs
    broadcast, outputs of the broadcast shape (any rank)."""
    want = [C.code_of(d) for d in (*in_dtypes, *out_dtypes)]

    def check(call) -> None:
        call.present()
        op = call.op
        for name, code in zip((*op.inputs, *op.outputs), want):
            t = call.tensor(name)
            if t.dtype != code:
                raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"{name} dtype {C.dtype_name(t.dtype)} must be "
                                                            f"{C.dtype_name(code)} (the dtype it was compiled for)")
        call.out_shape(call.broadcast())

    return check


def compile(
    fn: Callable,
    dtypes="float32",
    *,
    params: Sequence[str] = (),
    out_dtypes=None,
    name: str | None = None,
    **options,
) -> Function:
    """Compile formula `fn` for tensor `dtypes` (one dtype, a list or a {name: dtype} dict).

    `out_dtypes` defaults to the first input's dtype for every output; `options` are
    `aclgen.kernel.Options` fields (tile_size, width, fma, opt_level, ...).
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
    types = dict(zip(tensors, (d.name for d in in_dtypes)))
    kinds = ["input" if a in types else "param" for a in args]
    graph = trace(fn, Signature(args, [types.get(a, "float32") for a in args], None, kinds))
    outs = [f"out{i}" for i in range(len(graph.results))]
    out_d = _per_arg(out_dtypes if out_dtypes is not None else in_dtypes[0].name, outs, "out_dtypes")
    python_name = name or fn.__name__.replace("<lambda>", "formula")
    op = declare(
        _camel(python_name),
        _reordered(fn, args, tensors, list(params)),
        inputs=tensors,
        outputs=[Tensor(o, dtype=d.name) for o, d in zip(outs, out_d)],
        scalars=params,
        dtypes=sorted({d.name for d in (*in_dtypes, *out_d)}),
        max_rank=None,
        check=_exact_dtypes(in_dtypes, out_d),
        options=Options.from_knobs(**options),
        python_name=python_name,
    )
    return Function(op, names=[*tensors, *params], dtypes=in_dtypes)


def _camel(name: str) -> str:
    """leaky_relu_backward -> LeakyReluBackward (the operator's aclnn-style name)."""
    words = re.split(r"[^0-9A-Za-z]+", name)
    return "".join(w[:1].upper() + w[1:] for w in words if w) or "Formula"


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
    call.__name__ = fn.__name__
    call.__module__ = fn.__module__
    return call
