"""An operator against its `reference=`: edge-value data (±0, ±inf, NaN, subnormals, the largest
values, the boundaries its formula compares with), inputs for any declaration, its attributes'
values worth running, and the error of each result in ulps of its dtype against the float64
reference (at the reference's `.scale` where it cancels). `aclgen demo --ops FILE.py` runs
`check` on a user's operators; the suite on every built-in (tests/ops/test_family.py)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from aclgen.declaration import REQUIRED, AttrKind, Operator
from aclgen.runtime.function import function_of

BF16 = np.dtype(ml_dtypes.bfloat16)
NUMPY = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16), "bfloat16": BF16,
         "int8": np.dtype(np.int8), "int32": np.dtype(np.int32), "int64": np.dtype(np.int64),
         "uint8": np.dtype(np.uint8)}
MANTISSA = {"float32": 23, "float16": 10, "bfloat16": 7}


def edge_values(dtype: str, boundaries=(), n_random: int = 200, seed: int = 0) -> np.ndarray:
    """±0, ±inf, NaN, subnormals, the largest finite values, ±1, the `boundaries` a formula
    compares with and their neighbours, then random values over many magnitudes — in `dtype`."""
    d = NUMPY[dtype]
    rng = np.random.default_rng(seed)
    if d.kind in "iu":  # within f32's exact integers (formulas compute in f32): the extremes of 8-bit types only
        info = np.iinfo(d)
        lo, hi = max(int(info.min), -(2**20)), min(int(info.max), 2**20)
        return np.concatenate([np.array([0, 1, lo, hi] + ([-1] if d.kind == "i" else [2]), d),
                               rng.integers(lo, hi, n_random, dtype=d, endpoint=True)])
    info = ml_dtypes.finfo(d)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, float(info.smallest_subnormal), -float(info.smallest_subnormal),
               float(info.smallest_normal), -float(info.smallest_normal), float(info.max), -float(info.max),
               1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 10.0, -10.0, 100.0, -100.0]
    near = []
    for b in boundaries:
        v = np.array(b, np.float64).astype(d)
        for s in (v, -v):
            near += [s, np.nextafter(s, np.array(np.inf, d)), np.nextafter(s, np.array(-np.inf, d))]
    scale = rng.choice([1e-4, 1e-2, 0.3, 1.0, 3.0, 10.0, 80.0], n_random)
    with np.errstate(over="ignore"):
        rand = (rng.standard_normal(n_random) * scale).astype(d)
    return np.concatenate([np.array(special, np.float64).astype(d), np.array(near, d).reshape(-1), rand])


def ulp_error(got: np.ndarray, want: np.ndarray, dtype: str, scale=None) -> np.ndarray:
    """|got - want| in ulps of `dtype` at `want` (float64), or at `scale` where it is larger (the
    size of the terms a result is made of, where it cancels: a reference's `.scale`): 0 where
    both are NaN or equal infinities, inf where one is NaN or infinite and the other is not."""
    g = np.asarray(got).astype(np.float64).ravel()
    w = np.asarray(want, np.float64).ravel()
    at = np.abs(w) if scale is None else np.maximum(np.abs(w), np.abs(np.asarray(scale, np.float64).ravel()))
    d = NUMPY[dtype]
    if d.kind in "iu":  # the reference rounded and saturated into the dtype, as outputs are
        info = np.iinfo(d)
        return np.abs(g - np.clip(np.rint(np.nan_to_num(w)), info.min, info.max))
    info = ml_dtypes.finfo(d)
    with np.errstate(all="ignore"):
        w_rounded = w.astype(d).astype(np.float64)  # where the reference itself overflows the dtype
        exp = np.floor(np.log2(np.maximum(at, float(info.smallest_normal))))
        ulp = np.exp2(exp - MANTISSA[dtype])
        err = np.abs(g - w) / ulp
    both_nan = np.isnan(g) & np.isnan(w)
    inf_ok = np.isinf(w_rounded) & (g == w_rounded)
    err = np.where(both_nan | inf_ok, 0.0, err)
    bad = (np.isnan(g) != np.isnan(w)) | ((np.isinf(g) | np.isinf(w)) & ~inf_ok & ~both_nan)
    return np.where(bad, np.inf, err)


def attr_cases(op: Operator, shape: tuple[int, ...], cap: int = 4) -> list[tuple]:
    """Values of the operator's attributes worth running on inputs of `shape`: every choice of a
    str, both bools, the default (or -1 and 0 for an int64 without one, else its example for
    `shape`), up to `cap` combinations."""
    values = []
    for a in op.attrs:
        kind = AttrKind(a.kind)
        if kind is AttrKind.STR and a.choices:
            values.append(list(a.choices))
        elif kind is AttrKind.BOOL:
            values.append([False, True])
        elif a.default is not REQUIRED:
            values.append([a.default])
        elif kind is AttrKind.INT64:
            values.append([-1, 0])
        else:
            values.append([a.example_for(shape)])
    return list(itertools.islice(itertools.product(*values), cap))


def inputs_for(op: Operator, dtype: str | tuple[str, ...], seed: int = 0) -> list[np.ndarray | None]:
    """Edge-value inputs of `op` in `dtype` (or one dtype per input: a row of its combinations):
    every input over an iteration space of [3, n] (the boundaries its compares name included), a
    split input twice as long on its last dim, a 1-D input `along` a dim as long as that dim;
    each input shuffled differently."""
    dtypes = (dtype,) * len(op.inputs) if isinstance(dtype, str) else tuple(dtype)
    dtype = dtypes[0]
    edges = edge_values(dtype, op.graph.constants(), seed=seed)
    if op.graph.reductions():  # sums of the largest floats overflow f32 by design: moderate values
        with np.errstate(invalid="ignore"):
            edges = edges[~(np.abs(edges.astype(np.float64)) > 1e4) | np.isinf(edges.astype(np.float64))]
    n = len(edges) + len(edges) % 2
    rng = np.random.default_rng(seed)
    shapes = op.input_shapes((3, 2 * n)) if op.input_shapes else None
    out = []
    for k, name in enumerate(op.inputs):
        spec = op.tensor(name)
        if shapes is not None:
            shape = tuple(shapes[k])
        elif spec.along is not None:
            shape = ((3, n)[spec.along],)
        else:
            shape = (3, n)
        count = int(np.prod(shape))
        values = np.resize(rng.permutation(edges), count).reshape(shape)
        with np.errstate(over="ignore"):
            out.append(values.astype(NUMPY[dtypes[k]]))
    return out


def dtype_cases(op: Operator) -> list[str]:
    """The dtypes `op` is tested in: each dtype it takes, or each row of its combinations (their
    inputs' dtypes joined by '+')."""
    if op.combinations:
        rows = (row[:len(op.inputs)] for rows in op.combinations.values() for row in rows)
        return list(dict.fromkeys("+".join(r) for r in rows))
    return [d.name for d in op.all_dtypes()]


@dataclass
class Finding:
    """The worst element of one output for one set of attribute values."""

    output: str
    attrs: tuple
    ulp: float  # the largest error, in ulp of the output's dtype (inf: NaN or inf where the reference is not)
    index: int
    got: float
    want: float

    def __str__(self) -> str:
        at = f" attrs {self.attrs}" if self.attrs else ""
        return (f"{self.output}{at}: {self.ulp:.3g} ulp at element {self.index}: got {self.got!r}, "
                f"want {self.want!r}")


def widened(a: np.ndarray) -> np.ndarray:
    """An input as a reference receives it: float64 for the floating types, int64 for the integer
    ones (exact either way), so that a reference can tell an integer tensor from a float one."""
    return a.astype(np.int64 if a.dtype.kind in "iu" else np.float64)


def check(op: Operator, dtype: str | tuple[str, ...], seed: int = 0) -> list[Finding]:
    """`op` on edge values in `dtype` (a dtype, or one per input: a row of its combinations) for
    each of its attribute cases, against `op.reference` in float64: the worst element of each
    output (compare `ulp` with `op.tolerance`)."""
    assert op.reference is not None
    fn = function_of(op)
    ins = inputs_for(op, dtype, seed)
    scalars = [s.sample for s in op.scalars]
    found = []
    for attrs in attr_cases(op, ins[0].shape if ins and ins[0] is not None else ()):
        got = fn(*ins, *scalars, *attrs)
        args = [None if a is None else widened(a) for a in ins]
        with np.errstate(all="ignore"):
            want = op.reference(*args, *scalars, *attrs)
            scale = getattr(op.reference, "scale", None)
            scales = scale(*args, *scalars, *attrs) if scale is not None else None
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        scales = scales if isinstance(scales, tuple) else (scales,) * len(want)
        for name, g, w, sc in zip(op.outputs, got, want, scales):
            if g is None:
                continue
            sc = None if sc is None else np.broadcast_to(sc, g.shape)
            w = np.broadcast_to(w, g.shape)
            err = ulp_error(g, w, np.dtype(g.dtype).name, sc)
            worst = int(np.argmax(err)) if err.size else 0
            found.append(Finding(name, attrs, float(err.max()) if err.size else 0.0, worst,
                                 float(np.ravel(g)[worst]) if err.size else 0.0,
                                 float(np.ravel(w)[worst]) if err.size else 0.0))
    return found
