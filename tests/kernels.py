"""Kernels compiled directly for a test, without the runtime's planner: a built-in operator's for
one dtype and layout (what the codegen tests read), a bare formula's (what the native entry points,
the thread pool and the replays run), and the launch record a call of one needs."""

from __future__ import annotations

import numpy as np

from aclgen import dtypes as dt
from aclgen.compiler import Options, Variant, compile_variant
from aclgen.ops import OPERATORS


def kernel(op: str, dtype: str = "float32", layouts: tuple[str, ...] | None = None, rank: int = 1, **options):
    """The kernel of the built-in `op` (by Python name) with every operand of `dtype`, contiguous
    unless `layouts` says otherwise, its attributes at their samples; `options` are knobs."""
    o, d = OPERATORS[op], dt.dtype(dtype)
    n_in, n_out = len(o.kernel_inputs), len(o.kernel_outputs)
    variant = Variant((d,) * n_in, (d,) * n_out, rank, layouts or ("contiguous",) * (n_in + n_out), o.attr_samples)
    return o.kernel(variant, Options.from_knobs(**options))


def formula_kernel(formula, name: str, n_in: int = 1, n_out: int = 1, rank: int = 1, params=()):
    """`formula` compiled as a float32 kernel of `rank` over strided operands."""
    variant = Variant((dt.float32,) * n_in, (dt.float32,) * n_out, rank, ("strided",) * (n_in + n_out))
    return compile_variant(formula, name, variant, params, None, Options())


def meta_for(kernel, arrays, params=()) -> np.ndarray:
    """The launch record of a call over `arrays` (inputs then outputs): the (last array's) dims,
    each operand's element strides, the parameters (an f32 in its slot's low 4 bytes)."""
    layout, shape = kernel.meta_layout, arrays[-1].shape
    meta = np.zeros(layout.size, np.int64)
    for k, n in enumerate(shape):
        meta[layout.dim(k)] = n
    for o, a in enumerate(arrays):
        for k in range(layout.rank):
            meta[layout.stride(o, k)] = a.strides[k] // a.itemsize
    for j, p in enumerate(params):
        meta[layout.param(j)] = int(np.array(p, np.float32).view(np.uint32))
    return meta
