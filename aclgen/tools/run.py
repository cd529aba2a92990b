"""`aclgen run`'s harness: random cases of any declared operator, the reference build, timing.

A `Case` is one call of an operator's Python function on random data (edge values sprinkled
in). Its reference is the same formula compiled as a scalar, unoptimized kernel (vector width
1, one tile, LLVM -O0): comparing the two checks tiling, vectorization, tails and LLVM's
optimizer, not the formula itself (the test suite checks that against an independent numpy).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from aclgen import dtypes as dt
from aclgen.declaration import Operator
from aclgen.knobs import overridden
from aclgen.runtime.function import function_of

# The reference build: the same formula with no vectorization, no LLVM optimization and one tile,
# so it shares nothing with the fast build but the traced formula and dtype legalization.
REFERENCE_ENV = {"ACLGEN_VECTOR_WIDTH": "1", "ACLGEN_OPT_LEVEL": "0", "ACLGEN_TILE_SIZE": str(1 << 40)}


@dataclass
class Case:
    """One call of an operator's Python function, into preallocated outputs."""

    op: Operator
    args: list  # positional arguments: tensors, scalars, attributes
    outs: list[np.ndarray]

    def call(self):
        return function_of(self.op)(*self.args, out=self.out_arg)

    @property
    def out_arg(self):
        """The `out=` argument of the call: the output, or a tuple of them."""
        return self.outs[0] if len(self.outs) == 1 else tuple(self.outs)

    @property
    def out(self) -> np.ndarray:
        return self.outs[0]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (*self.args, *self.outs) if isinstance(a, np.ndarray))


def random_array(shape: tuple[int, ...], dtype: dt.DType, rng: np.random.Generator,
                 specials: Sequence[float] = ()) -> np.ndarray:
    """Random values around the operators' interesting range, with edge values sprinkled in."""
    n = int(np.prod(shape))
    if dtype.is_float:
        a = (rng.standard_normal(n) * 4).astype(np.float32)
        if n:
            edges = np.array(
                [0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, -3.0, 1e-40, -1e-40, *specials, *(-s for s in specials)],
                dtype=np.float32,
            )
            k = min(n, max(len(edges), n // 100))
            a[rng.choice(n, k, replace=False)] = rng.choice(edges, k)
        return a.astype(dtype.np_dtype).reshape(shape)
    info = np.iinfo(dtype.np_dtype)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    a = rng.integers(lo, hi, n, endpoint=True, dtype=np.int64)
    if n >= 2:
        a[:2] = info.min, info.max
    return a.astype(dtype.np_dtype).reshape(shape)


def input_shapes(op: Operator, shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The inputs' shapes for outputs of `shape` (ValueError when the operator cannot make it)."""
    if op.input_shapes is not None:
        return [tuple(s) for s in op.input_shapes(tuple(shape))]
    along = [op.tensor(n).along for n in op.inputs]  # an input along one dim (Prelu's weight): that dim
    return [tuple(shape) if a is None or not shape else (shape[a % len(shape)],) for a in along]


def make_case(op: Operator, shape: tuple[int, ...], dtype: dt.DType, rng: np.random.Generator,
              params: dict | None = None) -> Case:
    """Random inputs of `op` in `dtype` (the first row of its dtype combinations that starts with
    `dtype`, where it has a table) for outputs of `shape`; scalars from `params` or their
    `Scalar.sample` (0.5), attributes at their examples for `shape` (their defaults)."""
    params = params or {}
    values = [params.get(s.name, s.sample) for s in op.scalars]
    row = op.combination(dtype.name)  # an operator with a table of combinations: dtype's first row
    dtypes = [dt.dtype(d) for d in row[: len(op.inputs)]] if row else [dtype] * len(op.inputs)
    tensors = [random_array(s, d, rng, values) for s, d in zip(input_shapes(op, shape), dtypes)]
    args = [*tensors, *values, *(a.example_for(shape) for a in op.attrs)]
    return Case(op, args, function_of(op).every_output(*args))


def compare(out: np.ndarray, ref: np.ndarray) -> tuple[float, int]:
    """(max |out - ref|, number of elements whose value differs); NaN = NaN, +0 != -0."""
    a, b = out.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    both_nan = np.isnan(a) & np.isnan(b)
    same = ((a == b) & (np.signbit(a) == np.signbit(b))) | both_nan
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - b)  # inf - inf is NaN: counted as inf below
    diff[both_nan | (a == b)] = 0.0
    diff[np.isnan(diff)] = np.inf  # NaN on one side only
    return (float(diff.max()) if diff.size else 0.0), int((~same).sum())


def compare_all(outs: Sequence[np.ndarray], refs: Sequence[np.ndarray]) -> tuple[float, int]:
    """`compare` over every output: the largest error and the total of differing elements."""
    results = [compare(o, r) for o, r in zip(outs, refs)]
    return max((e for e, _ in results), default=0.0), sum(b for _, b in results)


def reference(case: Case) -> list[np.ndarray]:
    """The case computed by the scalar, unoptimized build of the same formula (REFERENCE_ENV)."""
    ref = Case(case.op, case.args, [np.empty_like(o) for o in case.outs])
    with overridden(**REFERENCE_ENV):
        ref.call()
    return ref.outs


def time_calls(fn: Callable[[], object], budget_s: float = 0.25, min_calls: int = 5, max_calls: int = 200) -> float:
    """Median seconds per call of `fn` (already warmed up)."""
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < min_calls or (len(times) < max_calls and time.perf_counter() - start < budget_s):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)
