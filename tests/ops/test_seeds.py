"""Operators against the numpy reference: bit-identical for the four exact operators, within
SPEC.md §4.4's bound for SwiGluGrad — every dtype, edge values, odd sizes and layouts."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import aclgen.ops as ops
from tests import reference as ref
from tests.edges import values
from tests.reference import same_bits
from tests.registry import function, seeds, union_dtypes

FLOATS = ["float32", "float16", "bfloat16"]
SIZES = [0, 1, 7, 8, 9, 1000003]


def np_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def mismatch_report(out, want, *inputs) -> str:
    o32, w32 = out.astype(np.float64), want.astype(np.float64)
    bad = np.flatnonzero(~((out.view(np.uint8).reshape(out.size, -1) == want.view(np.uint8).reshape(want.size, -1)).all(1)
                           | (np.isnan(o32) & np.isnan(w32)).ravel()))
    i = bad[:5]
    cols = [f"got {o32.ravel()[i]}", f"want {w32.ravel()[i]}"] + [
        f"in{k} {np.broadcast_to(x, out.shape).ravel()[i]}" for k, x in enumerate(inputs)
    ]
    return f"{len(bad)} mismatches, first at {i}: " + "; ".join(cols)


# ----------------------------------------------------------------------------- layouts


def layouts(n: int, rng):
    """(name, make(values) -> view) pairs producing views with `n` elements."""

    def contiguous(v):
        return v.copy()

    def reversed_(v):
        return v[::-1]

    def step(v):
        big = np.empty(v.size * 3 + 1, v.dtype)
        big[1::3] = v
        return big[1::3]

    def offset(v):
        big = np.empty(v.size + 5, v.dtype)
        big[5:] = v
        return big[5:]

    def transposed(v):
        a = 7 if n % 7 == 0 else 1
        return v.reshape(a, n // a).T.copy().T

    return [("contiguous", contiguous), ("reversed", reversed_), ("step3", step), ("offset", offset),
            ("transposed", transposed)]


# The exact operators (tests/reference.py computes them bit for bit; SwiGluGrad is held to a bound
# by `<name>_violations`) with two tensors and one output; aclScalars at 1.2 (1.0 for a
# threshold-like scalar that integer tensors truncate). int64 is left to Ascend950's own tests.
SCALAR = {"float": 1.2, "like-input": 1.0}
EXACT = [op for op in seeds()
         if hasattr(ref, op.python_name) and ref.exact(op.python_name)
         and len(op.inputs) == 2 and len(op.outputs) == 1]


def runner(op):
    """(g, x) -> (aclgen's result, the reference's)."""
    scalars = [SCALAR[s.kind] for s in op.scalars]
    fn, reference = function(op.python_name), getattr(ref, op.python_name)
    return lambda g, x: (fn(g, x, *scalars), reference(g, x, *scalars))


SIMPLE = {op.python_name: runner(op) for op in EXACT}
CASES = [(op.python_name, d) for op in EXACT for d in union_dtypes(op) if d != "int64"]


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{o}-{d}" for o, d in CASES])
@pytest.mark.parametrize("n", SIZES)
def test_exact_ops_contiguous_and_views(op, dtype, n):
    rng = np.random.default_rng(hash((op, dtype, n)) % 2**32)
    dt = np_dtype(dtype)
    run = SIMPLE[op]
    g0, x0 = values(dt, n, rng), values(dt, n, rng)
    for name, make in layouts(n, rng) if n < 100000 else layouts(n, rng)[:1]:
        g, x = make(g0), make(x0)
        out, want = run(g, x)
        assert same_bits(out, want), f"{op} {dtype} n={n} {name}: " + mismatch_report(out, want, g, x)


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_exact_ops_2d_views_and_broadcast(op, dtype):
    rng = np.random.default_rng(7)
    dt = np_dtype(dtype)
    run = SIMPLE[op]
    base_g, base_x = values(dt, 37 * 41, rng).reshape(37, 41), values(dt, 37 * 41, rng).reshape(37, 41)
    views = {
        "transposed": (base_g.T, base_x.T),
        "sliced": (base_g[1:-2, 3:-5], base_x[2:-1, 4:-4]),
        "stepped": (base_g[:-1:2, ::3], base_x[1::2, ::3]),
        "broadcast-row": (np.broadcast_to(base_g[0], (37, 41)), base_x),
        "broadcast-col": (base_g, np.broadcast_to(base_x[:, :1], (37, 41))),
        "rank0": (base_g[0, 0].reshape(()), base_x[1, 1].reshape(())),
        "rank5": (base_g.reshape(37, 1, 41, 1, 1), base_x.reshape(37, 1, 41, 1, 1)),
    }
    for name, (g, x) in views.items():
        out, want = run(g, x)
        assert same_bits(out, want), f"{op} {dtype} {name}: " + mismatch_report(out, want, g, x)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("lambd", [0.0, 0.5, 1.2, 3.0, np.inf, np.nan])
def test_softshrink_lambdas_and_true_broadcast(dtype, lambd):
    rng = np.random.default_rng(3)
    dt = np_dtype(dtype)
    g = values(dt, 5 * 6, rng).reshape(5, 1, 6)
    x = values(dt, 4 * 6, rng).reshape(4, 6)
    x[0, :4] = np.array([lambd, -lambd, np.nan, 0.0]).astype(dt)
    out = ops.softshrink_backward(g, x, lambd)
    want = ref.softshrink_backward(g, x, lambd)
    assert out.shape == (5, 4, 6)
    assert same_bits(out, want), mismatch_report(out, want, g, x)


@pytest.mark.parametrize("gd,xd", [("float16", "float32"), ("bfloat16", "float16"), ("float32", "bfloat16")])
def test_softshrink_mixed_dtypes_promote_to_float32(gd, xd):
    rng = np.random.default_rng(4)
    g, x = values(np_dtype(gd), 999, rng), values(np_dtype(xd), 999, rng)
    out = ops.softshrink_backward(g, x, 0.7)
    assert out.dtype == np.float32
    assert same_bits(out, ref.softshrink_backward(g, x, 0.7))


@pytest.mark.parametrize("dtype", FLOATS + ["int32", "int8", "uint8"])
@pytest.mark.parametrize("t", [1.0, -0.5, 0.0, 2.7, -2.7, 3.0, 300.0, -300.0, 3e9, -3e9, np.inf, -np.inf, np.nan])
def test_threshold_values(dtype, t):
    rng = np.random.default_rng(5)
    dt = np_dtype(dtype)
    g, x = values(dt, 1003, rng), values(dt, 1003, rng)
    out = ops.threshold_backward(g, x, t)
    want = ref.threshold_backward(g, x, t)
    assert same_bits(out, want), mismatch_report(out, want, g, x)


def test_threshold_is_a_select_not_a_multiply():
    g = np.array([np.inf, -np.inf, np.nan, -1.0, 5.0], np.float32)
    x = np.array([0.0, -1.0, 0.5, 1.0, 2.0], np.float32)
    out = ops.threshold_backward(g, x, 1.0)
    assert out.view(np.uint32).tolist()[:4] == [0, 0, 0, 0]  # +0.0, never -0.0 or NaN
    assert out[4] == 5.0


def test_in_place_and_partial_overlap():
    rng = np.random.default_rng(6)
    g, x = values(np.dtype(np.float32), 1000, rng), values(np.dtype(np.float32), 1000, rng)
    want = ref.hardswish_backward(g, x)
    g2 = g.copy()
    out = ops.hardswish_backward(g2, x, out=g2)  # exact in-place
    assert out is g2 and same_bits(g2, want)
    buf = np.concatenate([g, np.zeros(1, np.float32)])
    ops.hardswish_backward(buf[:-1], x, out=buf[1:])  # out overlaps gradOutput shifted by one
    assert same_bits(buf[1:], want)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("shape,dim", [((2, 32), -1), ((3, 10, 7), 1), ((4, 1), 0), ((1, 2), -1), ((6, 2, 1000), -1)])
def test_swi_glu_grad_within_bound(dtype, shape, dim):
    rng = np.random.default_rng(8)
    dt = np_dtype(dtype)
    x = values(dt, int(np.prod(shape)), rng).reshape(shape)
    half = list(shape)
    half[dim] //= 2
    g = values(dt, int(np.prod(half)), rng).reshape(half)
    out = ops.swi_glu_grad(g, x, dim)
    bad = ref.swi_glu_grad_violations(out, g, x, dim)
    assert not bad.any(), f"{bad.sum()} elements outside the bound, e.g. {np.asarray(out)[bad][:5]}"


def test_swi_glu_grad_large_random_f32():
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((1000, 2 * 513)) * 6).astype(np.float32)
    g = rng.standard_normal((1000, 513)).astype(np.float32)
    out = ops.swi_glu_grad(g, x)
    assert not ref.swi_glu_grad_violations(out, g, x).any()


# SPEC §4.4's edges, every combination: A across NaN, +-inf, +-0, the subnormals, sigmoid's
# underflow (-103.97), float64's (-709.78) and the zero of d (-1.2785), B and g across NaN,
# +-inf, 0, subnormals, FLT_MAX and values whose products overflow or underflow.
EDGE_A = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, -1.2785, 2.4, 15.0, -15.0, 88.0, 1e30, -87.0,
          -90.0, -103.9, -103.98, -104.0, -200.0, -709.7, -709.79, -710.0, -1e30]
EDGE_B = [np.nan, np.inf, -np.inf, 0.0, 1e-40, 2.0**-130, 0.5, -3.0, 1e38, 3.4028235e38, -3.4028235e38]
EDGE_G = [np.nan, np.inf, -np.inf, 0.0, 1e-40, 1e-30, 3e-6, 1.0, 3.2e38, 3.4028235e38, -3.4028235e38]


@pytest.mark.parametrize("dtype", FLOATS)
def test_swi_glu_grad_edge_grid(dtype):
    dt = np_dtype(dtype)
    grid = np.array(np.meshgrid(EDGE_A, EDGE_B, EDGE_G, indexing="ij")).reshape(3, -1)
    with np.errstate(over="ignore"):
        x = grid[:2].T.astype(np.float32).astype(dt)
        g = grid[2:].T.astype(np.float32).astype(dt)
    out = ops.swi_glu_grad(g, x, -1)
    bad = ref.swi_glu_grad_violations(out, g, x, -1)
    assert not bad.any(), (x[bad.any(axis=1)][:5], g[bad.any(axis=1)][:5], out[bad.any(axis=1)][:5])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_swi_glu_grad_products_overflow_only_with_the_result(dtype):
    """g * B * d where one order of the products overflows (g * d with d > 1, g * B with |d| < 1)
    or underflows into an infinite B, while the result does not (or is +-inf)."""
    rng = np.random.default_rng(10)
    n, big = 20000, 3.4028235e38
    a = np.concatenate([rng.uniform(0.5, 6, n), rng.uniform(-6, 0.5, n), rng.uniform(-120, -90, n)])
    g = np.concatenate([rng.uniform(0.85, 1, n) * big, rng.uniform(0.1, 1, n) * big, rng.uniform(1e-40, 1e-30, n)])
    b = np.concatenate([rng.uniform(0.3, 0.99, n), 10.0 ** rng.uniform(0, 3, n), np.full(n, np.inf)])
    sign = np.where(rng.random((2, 3 * n)) < 0.5, -1.0, 1.0)
    dt = np_dtype(dtype)
    x = np.stack([a, b * sign[0]], axis=1).astype(np.float32).astype(dt)
    g = (g * sign[1]).astype(np.float32).astype(dt).reshape(-1, 1)
    out = ops.swi_glu_grad(g, x, -1)
    bad = ref.swi_glu_grad_violations(out, g, x, -1)
    assert not bad.any(), (x[bad.any(axis=1)][:5], g[bad.any(axis=1)][:5], out[bad.any(axis=1)][:5])
    assert np.isfinite(out[:, 0].astype(np.float32)).mean() > 0.3 and not np.isnan(out[:, 0].astype(np.float32)).any()


def test_swi_glu_grad_spec_example():
    yg = np.arange(-2, 30, dtype=np.float32).reshape(2, 16)
    x = np.arange(-2, 62, dtype=np.float32).reshape(2, 32)
    out = ops.swi_glu_grad(yg, x, -1)
    np.testing.assert_allclose(out[0, :4], [2.541959, -1.0849423, 0, 15.770399], rtol=2e-7)
    np.testing.assert_allclose(out[0, 16:20], [0.47681168, 0.26894143, 0, 0.7310586], rtol=2e-7)
    np.testing.assert_array_equal(out[1, :16], 644 + np.cumsum(np.r_[0, np.arange(61, 61 + 2 * 15, 2)]))
    np.testing.assert_array_equal(out[1, 16:], 420 + np.cumsum(np.r_[0, np.arange(45, 45 + 2 * 15, 2)]))


# SPEC.md §4's examples, as the exact operators declare them (SwiGluGrad's is checked above)
SPEC_EXAMPLES = [(op, ex) for op in EXACT for ex in op.examples]


@pytest.mark.parametrize("op,example", SPEC_EXAMPLES, ids=[op.python_name for op, _ in SPEC_EXAMPLES])
def test_spec_examples(op, example):
    got = function(op.python_name)(*example.args)
    # SPEC.md prints 7-8 significant digits
    np.testing.assert_allclose(got.ravel(), np.array(example.expected, np.float32), rtol=2e-7, atol=0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_swi_glu_grad_inf_times_underflowed_sigmoid_is_inf(dtype):
    """sigmoid(-477.5) underflows f32, yet g * B * sigma with B = -inf is -inf * tiny = +-inf."""
    dt = np_dtype(dtype)
    x = np.array([[-477.5, -200.0, -np.inf, -477.5], [-np.inf, 1.0, np.inf, 2.0]], np.float32).astype(dt)
    x = np.concatenate([x[:, :2], x[:, 2:]], axis=1)  # A = first two columns, B = last two
    g = np.array([[7.707, np.inf], [2.0, 3.0]], np.float32).astype(dt)
    out = ops.swi_glu_grad(g, x, -1)
    bad = ref.swi_glu_grad_violations(out, g, x, -1)
    assert not bad.any(), (out, ref.swi_glu_grad_f64(g, x, -1)[0])
