"""Every built-in operator that declares a reference gives the same bits on views as on contiguous
copies of them: inputs stepped with gaps in a larger buffer (every dim strided) and inputs
transposed in memory (a reduced last axis read down a column), into an output that is itself a
stepped view, whose gaps stay untouched; and outputs written over inputs of their shape and
dtype (buffers reused in place) give the results of separate buffers. The schedule never changes
a bit (docs/contract.md), so the contiguous call is the reference; test_family checks that one
against float64.

One dtype per operator, rotating through its dtypes by the operator's place in the registry, and
its first attribute case: a sample that reaches every kernel kind (elementwise, split, channel,
reductions with their strided-row path) without multiplying the suite by the dtypes."""

import numpy as np
import pytest

import aclgen.ops
from aclgen.runtime.function import function_of
from aclgen.tools.accuracy import attr_cases, dtype_cases, inputs_for
from tests.reference import same_bits

REFERENCED = sorted((op for op in aclgen.ops.OPERATORS.values() if op.reference is not None),
                    key=lambda op: op.python_name)
CASES = [(op.python_name, dtypes[k % len(dtypes)]) for k, op in enumerate(REFERENCED) for dtypes in [dtype_cases(op)]]


def stepped(a: np.ndarray, step: int) -> np.ndarray:
    """`a`'s values in a view taking every `step`-th element of each dim, one element past the
    start of a zeroed buffer (`.base`)."""
    if a.ndim == 0:
        return a
    big = np.zeros([step * d + 1 for d in a.shape], a.dtype)
    v = big[tuple(slice(1, 1 + step * d, step) for d in a.shape)]
    v[...] = a
    return v


def transposed(a: np.ndarray) -> np.ndarray:
    """`a`'s values in a view whose last two dims are swapped in memory."""
    if a.ndim < 2:
        return a
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)


def _contiguous_call(name: str, dtype: str):
    """(operator, its function, inputs, scalars, attributes, outputs as a tuple) of the operator's
    call on contiguous inputs in `dtype` (a "+"-joined dtype per input), its first attribute case."""
    op = aclgen.ops.OPERATORS[name]
    fn = function_of(op)
    ins = inputs_for(op, dtype if "+" not in dtype else tuple(dtype.split("+")))
    scalars = [s.sample for s in op.scalars]
    attrs = attr_cases(op, ins[0].shape if ins and ins[0] is not None else ())[0]
    want = fn(*ins, *scalars, *attrs)
    return op, fn, ins, scalars, attrs, want if isinstance(want, tuple) else (want,)


@pytest.mark.parametrize("name,dtype", CASES)
def test_views_give_the_contiguous_bits(name, dtype):
    op, fn, ins, scalars, attrs, want = _contiguous_call(name, dtype)
    for how in ("stepped", "transposed"):
        views = [None if a is None else stepped(a, 2) if how == "stepped" else transposed(a) for a in ins]
        outs = tuple(None if w is None else stepped(np.zeros_like(w), 3) for w in want)
        got = fn(*views, *scalars, *attrs, out=outs if len(outs) > 1 else outs[0])
        got = got if isinstance(got, tuple) else (got,)
        for out_name, g, o, w in zip(op.outputs, got, outs, want):
            if w is None or o is None:
                continue
            assert g is o, f"{op.api} {how}: {out_name} is not the out= view"
            assert same_bits(g, w), f"{op.api} {dtype} {how}: {out_name} differs from the contiguous call"
            if o.ndim:
                rest = o.base.copy()
                rest[tuple(slice(1, 1 + 3 * d, 3) for d in o.shape)] = 0
                assert not rest.view(np.uint8).any(), f"{op.api} {how}: {out_name} wrote outside its view"


@pytest.mark.parametrize("name,dtype", CASES)
def test_outputs_written_over_inputs_give_the_same_bits(name, dtype):
    """Gradient and activation buffers reused in place: each output of an input's shape and dtype
    written over (a copy of) that input gives the results of separate buffers, every output at
    once. The runtime stages what a kernel would read after writing (a reduced output over an
    input a later pass reads, an output over an input of a later kernel)."""
    op, fn, ins, scalars, attrs, want = _contiguous_call(name, dtype)
    for k, a in enumerate(ins):
        if a is None:
            continue
        for j, w in enumerate(want):
            if w is None or w.shape != a.shape or w.dtype != a.dtype:
                continue
            args = [None if x is None else x.copy() for x in ins]
            outs = [None if x is None else np.empty_like(x) for x in want]
            outs[j] = args[k]
            fn(*args, *scalars, *attrs, out=tuple(outs) if len(outs) > 1 else outs[0])
            for out_name, o, x in zip(op.outputs, outs, want):
                if x is not None:
                    assert same_bits(o, x), f"{op.api} {dtype}: {out_name} written over {op.inputs[k]} differs"
