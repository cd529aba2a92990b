"""expand-math's functions against float64 references, sampled over the whole float range.

benchmarks/math_sweep.py runs every function over all 2^32 floats (minutes each); this is its
sampled version for CI: every exponent with random mantissas, a stride over all bit patterns,
each function's interesting interval densely, the special values (+-0, +-inf, NaN, subnormals,
overflow and underflow thresholds), with fused and with unfused multiply-adds. Errors are
|got - ref| / ulp(ref) (see `ulp_error`); the bounds are the contracts of aclgen/frontend/dsl.py.
Half-type results are checked over every f16 and bf16 value (a function stored only in a half
type is computed to 2^-16: docs/math.md).
"""

import math
import re
import zlib
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import scipy.special as sp
from xdsl.dialects.builtin import f32

import aclgen
from aclgen.codegen.target import host as _host
from aclgen.dialects import ew
from aclgen.dialects.enums import Predicate
from aclgen.frontend.dsl import FUNCTIONS
from aclgen.knobs import overridden
from aclgen.passes.builder import Builder
from aclgen.passes.expansions.erf import EINV_TOP
from aclgen.passes.value_range import ANY, interval
from tests.reference import HALF_BOUND, half_ulps, same_bits, sigmoid64

INF, NAN = float("inf"), float("nan")
F32_MAX = float(np.finfo(np.float32).max)
TINY = 2.0**-126  # smallest normal
DENORM = 2.0**-149  # smallest subnormal


def _erfinv(x):
    """scipy's erfinv (double precision) where |x| < 1; it is slow outside, where the answer is known."""
    y = np.full_like(x, NAN)
    inside = np.abs(x) < 1
    y[inside] = np.copysign(sp.erfinv(x[inside]), x[inside])  # scipy gives erfinv(-0) = +0
    one = np.abs(x) == 1
    y[one] = np.copysign(INF, x[one])
    return y


# name: (float64 reference, bound in ulp, the interval where the function is neither flat nor special)
CASES = {
    "exp": (np.exp, 1.0, (-104.0, 89.0)),
    "exp2": (np.exp2, 1.0, (-151.0, 128.0)),
    "expm1": (np.expm1, 1.0, (-2.0, 2.0)),
    "log": (np.log, 1.0, (0.5, 2.0)),
    "log2": (np.log2, 1.0, (0.5, 2.0)),
    "log1p": (np.log1p, 1.0, (-1.0, 1.0)),
    "tanh": (np.tanh, 1.0, (-2.0, 2.0)),
    "erf": (sp.erf, 1.0, (-4.0, 4.0)),
    "erfc": (sp.erfc, 1.0, (-1.0, 10.1)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), 1.0, (0.25, 4.0)),
    "erfinv": (_erfinv, 2.0, (-1.0, 1.0)),
}
# Inputs where each function changes behaviour: branch boundaries, clamps, thresholds.
EDGES = {
    "exp": [88.72283, 88.72284, 89.0, -87.33654, -87.33655, -103.2789, -103.97208, -104.0, -150.0],
    "exp2": [127.99999, 128.0, -126.0, -149.0, -149.5, -150.0, -151.0, 0.5, -0.5],
    "expm1": [2.0**-25, -(2.0**-25), 2.0**-24, 1e-10, -1e-10, -17.0, -18.0, 88.72283, 88.72284, 0.3465736, -0.3465736],
    "log": [1.0, 0.70710677, 0.7071068, 1.4142135, 1.4142137, TINY, TINY * 0.99, F32_MAX],
    "log2": [1.0, 2.0, 0.5, 2.0**-149, 2.0**127, 0.70710677, 1.4142135],
    "log1p": [-1.0, -0.99999994, 2.0**-24, -(2.0**-24), 0.41421354, 0.41421357, 0.5, 1e-30, 2.0**24, F32_MAX],
    "tanh": [0.55, 0.54999995, -0.55, 9.5, 9.0, 2.0**-20, 1e-30],
    "erf": [0.5, 0.49999997, -0.5, 0.75, 3.9, 3.9192, 3.92, 3.921875, 3.9218752, 10.1, 1e-30],
    "erfc": [0.5, 0.49999997, -0.5, 10.05, 10.054, 10.06, 10.1, 9.19, -4.0],
    "rsqrt": [2.0**-126, 2.0**126, 2.0**127, 2.0**-127, 1.0, 4.0],
    "erfinv": [0.75, 0.74999994, -0.75, 0.99999994, -0.99999994, 0.9, 1e-30],
}


def host_has(feature: str) -> bool:
    return _host().is_x86 and _host().has(feature)


def ulp_error(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| / ulp(ref), ulp(ref) = 2^(e - 23) for ref in [2^e, 2^(e+1)) (2^-149 below 2^-126),
    with +inf and references beyond 2^128 counted as 2^128 (so an overflow that rounds to inf is
    no error)."""
    g = got.astype(np.float64)
    g = np.where(np.isinf(g), np.copysign(2.0**128, g), g)
    r = np.clip(ref, -(2.0**128), 2.0**128)
    _, e = np.frexp(r)
    return np.abs(g - r) / np.ldexp(1.0, np.clip(e - 1, -126, 127) - 23)


def specials() -> np.ndarray:
    return np.array([0.0, -0.0, INF, -INF, NAN, DENORM, -DENORM, TINY - DENORM, -(TINY - DENORM), TINY, -TINY,
                     F32_MAX, -F32_MAX, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5], np.float32)


def samples(name: str) -> np.ndarray:
    """About 0.9M f32 inputs for `name`."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    stride = np.arange(0, 2**32, 8191, dtype=np.uint64).astype(np.uint32)  # every exponent, all of the range
    exponents = np.repeat(np.arange(512, dtype=np.uint32) << 23, 256)  # each sign and exponent, random mantissas
    random = exponents | rng.integers(0, 2**23, exponents.size, dtype=np.uint32)
    lo, hi = CASES[name][2]
    dense = rng.uniform(lo, hi, 200_000).astype(np.float32)
    edges = np.array(EDGES[name], np.float32)
    near = (edges.view(np.uint32)[:, None] + np.arange(-64, 65, dtype=np.int64).astype(np.uint32)).ravel()
    return np.concatenate([specials(), edges, -edges, stride.view(np.float32), random.view(np.float32), dense,
                           near.view(np.float32)])


def faults(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Where what must be exact is not: NaN exactly where the reference is NaN, infinite
    references met exactly, zero results of the reference's sign."""
    bad = np.isnan(got) != np.isnan(ref)
    inf = np.isinf(ref)
    bad[inf] |= got[inf].astype(np.float64) != ref[inf]
    zero = (ref == 0) & (got == 0)
    bad[zero] |= np.signbit(got[zero]) != np.signbit(ref[zero])
    return bad


def _unary(name: str):
    fn = getattr(aclgen, name)
    return lambda x: fn(x)


@pytest.mark.parametrize("fma", ["on", "off"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_within_bound_and_exact_specials(name, fma):
    ref_fn, bound, _ = CASES[name]
    x = samples(name)
    got = aclgen.compile(_unary(name), fma=fma, name=f"{name}_{fma}")(x)
    with np.errstate(all="ignore"):
        ref = ref_fn(x.astype(np.float64))
        bad = faults(got, ref)
        assert not bad.any(), f"{name}: not exact at x = {x[bad][:8]!r}: {got[bad][:8]!r}, want {ref[bad][:8]!r}"
        ok = ~np.isnan(ref)
        err = ulp_error(got[ok], ref[ok])
    k = int(err.argmax())
    assert err[k] <= bound, f"{name}: {err[k]:.3f} ulp at x = {float(x[ok][k]).hex()}"


@pytest.mark.parametrize("fma", ["on", "off"])
@pytest.mark.parametrize("name", ["erf", "exp", "exp2", "log", "log1p", "log2", "rsqrt"])
def test_half_forms_within_2_to_the_minus_16(name, fma):
    """The half-type forms (half="all") on the same samples: within 128 ulp (2^-16 of the value;
    docs/math.md measures 2-73 over every float), the same exactness. rsqrt's form needs AVX-512F
    and FMA (elsewhere this checks its one form again)."""
    x = samples(name)
    got = aclgen.compile(_unary(name), fma=fma, half="all", name=f"{name}_{fma}_half")(x)
    with np.errstate(all="ignore"):
        ref = CASES[name][0](x.astype(np.float64))
        bad = faults(got, ref)
        assert not bad.any(), f"{name}: not exact at x = {x[bad][:8]!r}: {got[bad][:8]!r}, want {ref[bad][:8]!r}"
        ok = ~np.isnan(ref)
        err = ulp_error(got[ok], ref[ok])
    k = int(err.argmax())
    assert err[k] <= 128, f"{name}: {err[k]:.3f} ulp at x = {float(x[ok][k]).hex()}"


# The exact values each function's contract names.
EXACT = {
    "exp": [(INF, INF), (-INF, 0.0), (NAN, NAN), (0.0, 1.0), (-0.0, 1.0), (88.72284, INF), (-104.0, 0.0)],
    "exp2": [(INF, INF), (-INF, 0.0), (NAN, NAN), (0.0, 1.0), (-0.0, 1.0), (128.0, INF), (-149.0, DENORM),
             (-151.0, 0.0), (10.0, 1024.0), (-3.0, 0.125)],
    "expm1": [(INF, INF), (-INF, -1.0), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (DENORM, DENORM),
              (-DENORM, -DENORM), (-18.0, -1.0), (88.72284, INF)],
    "log": [(0.0, -INF), (-0.0, -INF), (INF, INF), (-INF, NAN), (NAN, NAN), (-1.0, NAN), (-DENORM, NAN),
            (1.0, 0.0)],
    "log2": [(0.0, -INF), (-0.0, -INF), (INF, INF), (-INF, NAN), (NAN, NAN), (-1.0, NAN), (1.0, 0.0), (2.0, 1.0),
             (0.125, -3.0), (DENORM, -149.0), (2.0**127, 127.0)],
    "log1p": [(0.0, 0.0), (-0.0, -0.0), (-1.0, -INF), (-1.5, NAN), (-INF, NAN), (INF, INF), (NAN, NAN),
              (DENORM, DENORM), (-DENORM, -DENORM)],
    "tanh": [(0.0, 0.0), (-0.0, -0.0), (INF, 1.0), (-INF, -1.0), (NAN, NAN), (20.0, 1.0), (-20.0, -1.0),
             (DENORM, DENORM), (-DENORM, -DENORM)],
    "erf": [(0.0, 0.0), (-0.0, -0.0), (INF, 1.0), (-INF, -1.0), (NAN, NAN), (4.0, 1.0), (-4.0, -1.0),
            (DENORM, DENORM), (-DENORM, -DENORM)],
    "erfc": [(0.0, 1.0), (-0.0, 1.0), (INF, 0.0), (-INF, 2.0), (NAN, NAN), (11.0, 0.0), (-11.0, 2.0)],
    "rsqrt": [(0.0, INF), (-0.0, -INF), (INF, 0.0), (-INF, NAN), (-1.0, NAN), (NAN, NAN), (4.0, 0.5),
              (0.25, 2.0), (2.0**-148, 2.0**74)],
    "erfinv": [(0.0, 0.0), (-0.0, -0.0), (1.0, INF), (-1.0, -INF), (1.0000001, NAN), (-2.0, NAN), (INF, NAN),
               (NAN, NAN)],
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact_values(name):
    x, want = (np.array(v, np.float32) for v in zip(*EXACT[name]))
    for fma in ("on", "off"):
        got = aclgen.compile(_unary(name), fma=fma, name=f"{name}_{fma}")(x)
        assert same_bits(got, want), (name, fma, x[got.view(np.uint32) != want.view(np.uint32)])


def test_muladd_rounds_once_where_fused():
    """(1 + 2^-12)^2 - 1 = 2^-11 + 2^-24: fused, exactly; unfused the square rounds (a tie, to
    even) to 1 + 2^-11 first. A formula's own a * b + c rounds twice on every target."""
    a = np.array([1 + 2.0**-12, 3.0, -0.0, INF, NAN], np.float32)
    c = np.array([-1.0, 1.0, 0.0, -INF, 1.0], np.float32)
    fused = [2.0**-11 + 2.0**-24, 10.0, 0.0, NAN, NAN]
    for fma, first in (("on", fused[0]), ("off", 2.0**-11)):
        got = aclgen.compile(lambda a, c: aclgen.muladd(a, a, c), fma=fma, name=f"muladd_{fma}")(a, c)
        assert same_bits(got, np.array([first, *fused[1:]], np.float32)), (fma, got)
    plain = aclgen.compile(lambda a, c: a * a + c, name="mul_add")(a, c)
    assert plain[0] == 2.0**-11


def test_exp2_polynomials_and_table_hold_their_bounds():
    """exp2's constants: 1 + r P(r) (EXP2_P, every target with FMA) is 2^r to a relative 2^-28 for
    |r| <= 1/2; without FMA each table pair is 2^(j/8) to 2^-48 (float64 holds 2^(j/8) to 2^-52),
    and r Q(r) is 2^r - 1 to 2^-30 for |r| <= 1/16: the claims their 0.79- and 0.56-ulp bounds in
    the normal range rest on."""
    from aclgen.passes.expansions.exp import EXP2_P, EXP2_Q, POW2_8_HI, POW2_8_LO

    r = np.linspace(-1 / 2, 1 / 2, 100_001)
    assert all(np.float32(c) == c for c in EXP2_P)
    assert np.max(np.abs(np.polynomial.polynomial.polyval(r, EXP2_P) / np.exp2(r) - 1)) <= 2.0**-28
    for j, (hi, lo) in enumerate(zip(POW2_8_HI, POW2_8_LO)):
        assert np.float32(hi) == hi and np.float32(lo) == lo
        assert abs(hi + lo - 2.0 ** (j / 8)) <= 2.0**-48, j
    r = np.linspace(-1 / 16, 1 / 16, 100_001)
    err = r * np.polynomial.polynomial.polyval(r, EXP2_Q) - np.expm1(r * np.log(2.0))
    assert np.max(np.abs(err)) <= 2.0**-30


def test_exp_subnormal_results_and_overflow_threshold():
    """exp rounds once into the subnormals and reaches +inf exactly where e^x rounds to it."""
    f = aclgen.compile(lambda x: aclgen.exp(x))
    lo, hi = np.float32(-87.0).view(np.uint32), np.float32(-104.0).view(np.uint32)
    x = np.arange(lo, hi, 7, dtype=np.uint32).view(np.float32)
    err = ulp_error(f(x), np.exp(x.astype(np.float64)))
    assert err.max() < 1
    edge = np.float32(np.log(np.float64(np.finfo(np.float32).max) * (1 + 2.0**-25)))  # where e^x rounds to inf
    around = np.nextafter(edge, np.array([-INF, INF], np.float32))
    assert np.isfinite(f(around[:1]))[0] and f(around[1:])[0] == INF


@pytest.mark.parametrize("fma, half", [("on", "off"), ("off", "off"), ("on", "all"), ("off", "all")])
def test_exp_of_a_clamped_argument_is_shorter_with_the_same_bits(fma, half):
    """exp of an argument the formula clamps to [-87, 88] (n in [-126, 127]) is built without its
    own clamp and with one power of two for the scale (value_range sees the clamp): the same bits
    as the general form, which `+ 0.0` (an add the interval does not follow) keeps, over the
    sampled inputs and the interval's ends (benchmarks: all 2^32, in every mode)."""
    args = {"fma": fma, "half": half}
    bounded = aclgen.compile(lambda x: aclgen.exp(aclgen.clamp(x, -87.0, 88.0)), name=f"exp_bounded_{fma}_{half}", **args)
    general = aclgen.compile(lambda x: aclgen.exp(aclgen.clamp(x, -87.0, 88.0) + 0.0), name=f"exp_general_{fma}_{half}",
                             **args)
    x = np.concatenate([samples("exp"), np.float32([-87.0, 88.0, -86.99999, 87.99999, -87.33655, 88.72284])])
    assert same_bits(bounded(x), general(x))
    shifts = [len(re.findall(r"arith\.shrsi", f.ir["expand-math"])) for f in (bounded, general)]
    assert shifts == [0, 0 if host_has("avx512f") else 1]


def test_intervals_follow_constants_clamps_negations_and_selects():
    """value_range.interval reads the ops that make a value; anything else (an add) is unbounded,
    and a NaN constant bounds nothing."""
    b = Builder(lambda op: None, f32)
    arg = b.add(b.f32(1.0), b.f32(2.0))
    assert interval(arg) == ANY and interval(b.f32(NAN)) == ANY
    clamped = b(ew.function_op("minimum")(b(ew.function_op("maximum")(arg, b.f32(-3.0))), b.f32(5.0)))
    assert interval(clamped) == (-3.0, 5.0)
    assert interval(b.neg(clamped)) == (-5.0, 3.0)
    mask = b.cmp(Predicate.OLT, arg, b.f32(0.0))
    assert interval(b.select(mask, clamped, b.f32(7.0))) == (-3.0, 7.0)
    assert interval(b.select(mask, clamped, arg)) == ANY
    shared = clamped  # a DAG that doubles at each level: visited once per value (memo)
    for _ in range(40):
        shared = b(ew.function_op("minimum")(shared, shared))
    assert interval(shared) == (-3.0, 5.0)
    for _ in range(500):  # a chain past DEPTH counts as unbounded, far from Python's recursion limit
        shared = b.neg(shared)
    assert interval(shared) == ANY


def test_erfinv_against_mpmath_near_one():
    """erfinv's tail, where its slope makes a reference's own error matter, against mpmath; and
    the floats around where the form with FMA leaves its polynomial in w for the tail (w = 6.5,
    |x| = 0.999247) and where the low part of |x| s underflows (2^-125)."""
    mpmath = pytest.importorskip("mpmath")
    switch = np.float32(math.sqrt(-math.expm1(-EINV_TOP))).view(np.int32) + np.arange(-40, 41, dtype=np.int32)
    tiny = np.float32(2.0**-125).view(np.int32) + np.arange(-40, 41, dtype=np.int32) * 4099
    x = np.concatenate([np.float32(1) - np.arange(1, 200, dtype=np.float32) * np.float32(2.0**-24),
                        np.array([0.75, 0.74999994, 0.9, 0.99, 0.999], np.float32),
                        switch.view(np.float32), tiny.view(np.float32)])
    x = np.concatenate([x, -x])
    ref = np.array([float(mpmath.erfinv(mpmath.mpf(float(v)))) for v in x])
    for fma in ("on", "off"):
        got = aclgen.compile(lambda x: aclgen.erfinv(x), fma=fma)(x)
        assert ulp_error(got, ref).max() <= 2


# sigmoid keeps its 2-ulp form (see aclgen/passes/expansions/exp.py's sigmoid): held to 2 ulp of
# the correctly rounded value.


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in representable f32 values (0 for equal, 1 for neighbours, -0 == +0)."""
    def ordered(x):
        i = x.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    return np.abs(ordered(a) - ordered(b))


@pytest.mark.parametrize("fma", ["on", "off"])
def test_sigmoid_within_2_ulp_everywhere(fma):
    x = np.concatenate([np.arange(0, 2**32, 509, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        np.linspace(-104, 89, 1_000_001, dtype=np.float32)])
    got = aclgen.compile(lambda x: aclgen.sigmoid(x), fma=fma)(x)
    finite = ~np.isnan(x)
    with np.errstate(all="ignore"):
        want = sigmoid64(x[finite].astype(np.float64)).astype(np.float32)
    d = ulp_distance(got[finite], want)
    assert d.max() <= 2, f"max {d.max()} ulp at x = {x[finite][d.argmax()]!r}"
    assert np.isnan(got[~finite]).all()


def test_sigmoid_special_values():
    f = aclgen.compile(lambda x: aclgen.sigmoid(x))
    x = np.array([NAN, -NAN, INF, -INF, 0.0, -0.0, 3.4028235e38, -3.4028235e38, 1e-45, -1e-45,
                  -100.0, -103.27893, -103.97, -103.98, -104.0, -1e4, 17.0, 88.8], np.float32)
    got = f(x)
    assert np.isnan(got[:2]).all()
    assert got[2:].tolist()[:8] == [1.0, 0.0, 0.5, 0.5, 1.0, 0.0, 0.5, 0.5]
    assert 0 < got[10] < 1e-43  # subnormal, not flushed to 0
    assert got[11] == got[12] == 2.0**-149 and got[13] == got[14] == got[15] == 0.0
    assert got[16] == got[17] == 1.0


def test_sigmoid_every_float_where_it_underflows():
    """Every f32 in (-128, -32]: the one scale 2^(n + 25) for n in [-150, -46], the clamp at
    -104, the quotient rounded once into the subnormals, and the exact zeros."""
    f = aclgen.compile(lambda x: aclgen.sigmoid(x))
    lo, hi = np.float32(-32.0).view(np.uint32), np.float32(-128.0).view(np.uint32)
    x = np.arange(lo, hi, dtype=np.uint32).view(np.float32)
    got = f(x)
    want = sigmoid64(x.astype(np.float64)).astype(np.float32)
    d = ulp_distance(got, want)
    assert d.max() <= 1, f"max {d.max()} ulp at x = {x[d.argmax()]!r}"
    assert np.array_equal(got == 0, want == 0)


# -- every dtype, width, tile and thread count ---------------------------------------------------

UNARY = sorted([*CASES, "sigmoid"])
HALF_FORMS = ("erf", "exp", "exp2", "log", "log1p", "log2", "sigmoid")  # and pow (rsqrt's needs AVX-512F)


def all_functions(x):
    return tuple(getattr(aclgen, name)(x) for name in UNARY)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_results_over_every_half_value(dtype):
    """Every f16 (bf16) value, each function stored in the half type: computed in f32 to 2^-16
    where the expansion has a half-type form (HALF_FORMS), to f32's bound
    elsewhere, rounded once: within HALF_BOUND of the exact value (0.5 ulp plus 2^-5 of an f16
    ulp, 2^-8 of a bf16 one), the zeros, infinities and NaNs exact."""
    np_dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(np.float16)
    x = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np_dtype)
    got = aclgen.compile(all_functions, dtypes=dtype, name=f"all_{dtype}")(x)
    for name, g in zip(UNARY, got):
        with np.errstate(all="ignore"):
            x64 = x.astype(np.float64)
            want = sigmoid64(x64) if name == "sigmoid" else CASES[name][0](x64)
        err = half_ulps(g, want)
        assert err.max() <= HALF_BOUND[np_dtype], f"{name}: {err.max()} ulp at x = {x[err.argmax()]!r}"


def test_half_forms_only_where_a_half_type_stores_the_result():
    """exp(x) * 2 stored as f16 takes exp's half-type form (it differs from the f32 result rounded
    for some f16 x); exp(x) - 1 stored as f16 (a subtraction may cancel) and exp(x) * 2 stored as
    f32 keep the f32 expansion: the f32 result rounded once, bit for bit."""
    x = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    f32 = aclgen.compile(lambda v: (aclgen.exp(v) * 2.0, aclgen.exp(v) - 1.0), name="half_use_f32")
    twice, minus = aclgen.compile(lambda v: (aclgen.exp(v) * 2.0, aclgen.exp(v) - 1.0), dtypes="float16",
                                  name="half_use_f16")(x)
    wide_twice, wide_minus = f32(x.astype(np.float32))
    with np.errstate(over="ignore", invalid="ignore"):
        assert same_bits(minus, wide_minus.astype(np.float16))
        assert not same_bits(twice, wide_twice.astype(np.float16))
    wide = aclgen.compile(lambda v: aclgen.exp(v) * 2.0, dtypes="float16", out_dtypes="float32",
                          name="half_use_wide")(x)
    assert same_bits(wide, wide_twice)


@pytest.mark.parametrize("option, value", [("half", "on"), ("fma", "yes")])
def test_an_unknown_form_is_refused_when_declared(option, value):
    """`half` and `fma` choose forms of the math functions; a value that names none is a
    ValueError when the formula is compiled (declared), listing the choices."""
    with pytest.raises(ValueError, match=f"compile option {option} must be one of .*not '{value}'"):
        aclgen.compile(lambda x: aclgen.exp(x), name=f"bad_{option}", **{option: value})


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_results_do_not_depend_on_the_schedule(dtype):
    """Every vector width (1: scalar code), tile size and thread count gives the same bits (sizes
    that are not multiples of any width: the masked remainder steps run the same code), for the
    float32 forms and the half-type ones (float16 in and out)."""
    rng = np.random.default_rng(3)
    x = np.concatenate([specials(), (rng.standard_normal(50_001) * rng.choice([0.1, 1, 10, 100], 50_001))
                        .astype(np.float32)])
    with np.errstate(over="ignore"):  # FLT_MAX becomes float16's inf
        x = x.astype(dtype)
    f = aclgen.compile(all_functions, dtypes=dtype, name=f"sched_base_{dtype}")
    base = f(x)
    schedules: list[dict[str, Any]] = [{"width": 1}, {"width": 4}, {"width": 32}, {"tile_size": 96}]
    for options in schedules:
        got = aclgen.compile(all_functions, dtypes=dtype,
                             name=f"sched_{dtype}_" + "_".join(f"{k}{v}" for k, v in options.items()), **options)(x)
        for name, g, w in zip(UNARY, got, base):
            assert same_bits(g, w), (name, options)
    with overridden(ACLGEN_THREADS="1"):
        one = f(x)
    assert all(same_bits(g, w) for g, w in zip(one, base))


def _one_odd_lane_a_step(ordinary: tuple[float, float], odd: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Steps of 32 lanes drawn from `ordinary`, each with one value of `odd`, every value at
    every position."""
    steps = rng.uniform(*ordinary, (odd.size * 32, 32)).astype(np.float32)
    steps[np.arange(steps.shape[0]), np.arange(steps.shape[0]) % 32] = np.repeat(odd, 32)
    return steps.ravel()


@pytest.mark.parametrize("fma", ["on", "off"])
def test_a_promised_care_never_changes_a_lanes_bits(fma):
    """log, log2, pow and erfinv (with FMA) promise that their care is rare (`ew.unlikely`: an
    argument that is not a positive normal float, pow's negative x and infinite or NaN y,
    erfinv's tail beyond |x| = 0.999247 and |x| >= 1): a vector step where no lane needs it runs
    a version without it. Each such value alone among ordinary lanes, at every position of a
    32-lane step, gives the bits of the scalar code (width 1: no versions)."""
    rng = np.random.default_rng(21)
    x = _one_odd_lane_a_step((0.01, 100.0), np.concatenate([specials(), np.float32([1e-40, -3.5, 0.75])]), rng)
    y = np.concatenate([rng.uniform(-8.0, 8.0, x.size // 2), rng.permutation(x)[:x.size - x.size // 2]]).astype(np.float32)
    z = _one_odd_lane_a_step((-0.99, 0.99), np.concatenate([specials(), np.float32([0.99925, -0.9999, 1 - 2**-24, 1.5])]),
                             rng)[:x.size]
    forms = (lambda v, w, u: (aclgen.log(v), aclgen.log2(v), aclgen.pow(v, w), aclgen.pow(w, v), aclgen.erfinv(u)))
    vector = aclgen.compile(forms, name=f"care_vector_{fma}", fma=fma, width=32)
    logs = 0 if host_has("avx512f") else 2  # with AVX-512F, one vfixupimmps sets log's specials
    assert vector.ir["version-unlikely"].count("tile.any") == logs + 2 + (fma == "on")
    scalar = aclgen.compile(forms, name=f"care_scalar_{fma}", fma=fma, width=1)
    for name, got, want in zip(("log", "log2", "pow", "pow swapped", "erfinv"), vector(x, y, z), scalar(x, y, z)):
        assert same_bits(got, want), name


@pytest.mark.parametrize("cpu, fma", [("haswell", "on"), ("generic", "off")])
def test_every_isa_gives_the_same_bits(cpu, fma):
    """AVX2 code (haswell: 8 lanes) gives the host's fused results bit for bit, and SSE2 code
    (generic: 4 lanes, no FMA, rounding by expansions) the host's unfused ones: the exhaustive
    sweep on one machine holds for every x86 target of either kind. On an AVX-512 host, exp,
    exp2 and erfc scale by 2^n in one vscalefps, and log and log2 take x apart with vgetexpps and
    vgetmantps (`llvmx.avx512ps`); AVX2 code does both with integer work, to the same bits.
    rsqrt is the exception: with AVX-512 and FMA it polishes vrsqrt14ps's estimate (0.58 ulp)
    instead of dividing and taking a square root (0.85 ulp); the two differ by one ulp at most,
    and agree on every special value."""
    rng = np.random.default_rng(11)
    x = np.concatenate([specials(), np.arange(0, 2**32, 65537, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        (rng.standard_normal(20_001) * 8).astype(np.float32)])
    f = aclgen.compile(all_functions, name=f"isa_host_{fma}", fma=fma)
    host = f(x)
    for insn in ("vscalefps", "vgetexpps", "vgetmantps"):
        assert (insn in f.asm) == host_has("avx512f"), insn
    with overridden(ACLGEN_CPU_NAME=cpu):
        g = aclgen.compile(all_functions, name=f"isa_{cpu}", fma=fma)
        other = g(x)
        assert "avx512" not in g.ir["llvm"]
    estimated = host_has("avx512f") and fma == "on"
    assert ("vrsqrt14ps" in f.asm) == estimated
    for name, got, want in zip(UNARY, other, host):
        if name == "rsqrt" and estimated:
            nan = np.isnan(want)
            assert same_bits(got[nan], want[nan]) and ulp_distance(got[~nan], want[~nan]).max() == 1
            assert same_bits(got[:len(specials())], want[:len(specials())])
        else:
            assert same_bits(got, want), (name, cpu)


@pytest.mark.parametrize("cpu, fma", [("haswell", "on"), ("generic", "off")])
def test_half_forms_give_the_same_bits_on_every_isa(cpu, fma):
    """The half-type forms (compiled everywhere with half="all", on f32 values) also give the
    host's bits on AVX2 with FMA and on SSE2 without: vscalefps and the split scale, vgetexpps
    and the integer reduction agree there too (pow without FMA keeps t in f64)."""
    rng = np.random.default_rng(12)
    x = np.concatenate([specials(), np.arange(0, 2**32, 131071, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        (rng.standard_normal(20_001) * 8).astype(np.float32)])
    y = rng.permutation(x)
    forms = (lambda v, w: (*(getattr(aclgen, n)(v) for n in HALF_FORMS), aclgen.pow(v, w)))
    host = aclgen.compile(forms, name=f"half_isa_host_{fma}", fma=fma, half="all")(x, y)
    with overridden(ACLGEN_CPU_NAME=cpu):
        other = aclgen.compile(forms, name=f"half_isa_{cpu}", fma=fma, half="all")(x, y)
    for name, got, want in zip((*HALF_FORMS, "pow"), other, host):
        assert same_bits(got, want), (name, cpu)


# -- every function has code, and no libcall -----------------------------------------------------


def test_every_function_has_an_expansion_or_an_intrinsic():
    from aclgen.passes.expansions import EXPANSIONS, INTRINSICS

    assert not [name for name in FUNCTIONS if name not in EXPANSIONS and name not in INTRINSICS]


def every_function(x, y):
    """Each formula function once (masks through a select)."""
    outs = []
    for f in FUNCTIONS.values():
        v = getattr(aclgen, f.name)(*(x, y, x)[: f.arity])
        outs.append(aclgen.select(v, x, y) if f.mask else v)
    total = outs[0]
    for v in outs[1:]:
        total = total + v
    return total


@pytest.mark.parametrize("target", ["host", "generic"])
def test_vector_loop_uses_no_libcall(target):
    """On this machine and on x86-64's SSE2 baseline (no rounding instructions, no FMA)."""
    env = {} if target == "host" else {"ACLGEN_CPU_NAME": "generic"}
    with overridden(**env):
        f = aclgen.compile(every_function, name=f"every_function_{target}")
        body = f.ir["llvm"].split("define", 1)[1]
    assert not re.search(r"call [^@]*@(?!llvm\.)", body), "a libcall survived"
