"""The exact formula functions (rounding, sign, min/max/clamp, sqrt, masks) against numpy, on
edge values, in every float dtype, on this machine and on x86-64's SSE2 baseline (where the
rounding functions are expansions instead of instructions)."""

import contextlib

import ml_dtypes
import numpy as np
import pytest

import aclgen
from aclgen.knobs import overridden
from tests.reference import same_bits

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.float32, np.float16, BF16]
TARGETS = ["host", "generic"]


def edges() -> np.ndarray:
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1e-40, -1e-38, 0.5, -0.5, 1.5, -1.5,
               2.5, -2.5, 0.49999997, -0.49999997, 0.3, -0.3, 0.7, -0.7, 1.0, -1.0, 2.0**23 - 0.5, -(2.0**23 - 0.5),
               2.0**22 + 0.5, 2.0**23, 2.0**23 + 1, 2.0**24, 3.4028235e38, -3.4028235e38, 65504.0, 65520.0]
    rng = np.random.default_rng(7)
    scale = rng.choice([1e-3, 1.0, 10.0, 1e4, 1e8], 300)
    return np.concatenate([np.array(special, np.float32), (rng.standard_normal(300) * scale).astype(np.float32)])


def sign(x):
    return np.where(np.abs(x) > 0, np.copysign(np.float32(1), x), x)


def minimum(a, b):
    return np.where(np.isnan(b), b, np.where(b < a, b, a))


def maximum(a, b):
    return np.where(np.isnan(b), b, np.where(b > a, b, a))


UNARY = {
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.rint, "sqrt": np.sqrt, "sign": sign,
    "absolute": np.abs,
}
BINARY = {"minimum": minimum, "maximum": maximum, "copysign": np.copysign}


def on(target: str):
    """Compile for `target` ("host": this machine) while inside."""
    return contextlib.nullcontext() if target == "host" else overridden(ACLGEN_CPU_NAME=target)


def _unary(fn):
    return lambda x: fn(x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_exact(name, dtype, target):
    with np.errstate(over="ignore"):
        x = edges().astype(dtype)
    with on(target):
        got = aclgen.compile(_unary(getattr(aclgen, name)), dtypes=np.dtype(dtype).name)(x)
    with np.errstate(all="ignore"):
        want = UNARY[name](x.astype(np.float32)).astype(dtype)
    assert same_bits(got, want), (name, x[~np.equal(got, want)][:5])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_exact(name, dtype):
    x = edges()
    a, b = np.meshgrid(x[:40], x[:40])
    with np.errstate(over="ignore"):
        a, b = a.ravel().astype(dtype), b.ravel().astype(dtype)
    got = aclgen.compile(lambda a, b: getattr(aclgen, name)(a, b), dtypes=np.dtype(dtype).name)(a, b)
    want = BINARY[name](a.astype(np.float32), b.astype(np.float32)).astype(dtype)
    assert same_bits(got, want)


def test_minimum_maximum_keep_the_first_of_equal_zeros_and_propagate_nan():
    a = np.array([0.0, -0.0, np.nan, 1.0, np.nan], np.float32)
    b = np.array([-0.0, 0.0, 1.0, np.nan, np.nan], np.float32)
    lo, hi = aclgen.compile(lambda a, b: (aclgen.minimum(a, b), aclgen.maximum(a, b)))(a, b)
    assert np.signbit(lo[:2]).tolist() == [False, True] and np.signbit(hi[:2]).tolist() == [False, True]
    assert np.isnan(lo[2:]).all() and np.isnan(hi[2:]).all()


def test_clamp_is_torch_clamp():
    x = edges()
    got = aclgen.compile(lambda x: aclgen.clamp(x, -1.0, 2.0))(x)
    assert same_bits(got, minimum(maximum(x, np.float32(-1)), np.float32(2)))
    assert np.isnan(got[np.isnan(x)]).all()
    one_sided = aclgen.compile(lambda x: aclgen.clamp(x, hi=0.5))(x)
    assert same_bits(one_sided, minimum(x, np.float32(0.5)))
    swapped = aclgen.compile(lambda x: aclgen.clamp(x, 1.0, -1.0))(x)  # lo > hi: hi, as torch
    assert (swapped[~np.isnan(x)] == -1).all()
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(x)
    assert same_bits(got, torch.clamp(t, -1.0, 2.0).numpy())


def test_masks_isinf_isfinite_isnan():
    x = edges()
    f = aclgen.compile(lambda x: (aclgen.select(aclgen.isinf(x), 1.0, 0.0), aclgen.select(aclgen.isfinite(x), 1.0, 0.0),
                                  aclgen.select(aclgen.isnan(x), 1.0, 0.0)))
    inf, fin, nan = f(x)
    assert np.array_equal(inf, np.isinf(x)) and np.array_equal(fin, np.isfinite(x)) and np.array_equal(nan, np.isnan(x))


def test_python_rounding_protocol_and_powers():
    import math

    x = edges()
    f = aclgen.compile(lambda x: (math.floor(x), math.ceil(x), math.trunc(x), round(x), x**0.5))
    fl, ce, tr, ro, sq = f(x)
    with np.errstate(invalid="ignore"):
        assert same_bits(fl, np.floor(x)) and same_bits(ce, np.ceil(x)) and same_bits(tr, np.trunc(x))
        assert same_bits(ro, np.rint(x)) and same_bits(sq, np.sqrt(x))


def test_float_to_integer_outputs_round_half_to_even_and_saturate_on_every_target():
    x = np.array([2.5, 3.5, -2.5, -0.5, 0.5, 1e10, -1e10, np.nan, np.inf, -np.inf, 127.5, -128.5], np.float32)
    for target in TARGETS:
        with on(target):
            f = aclgen.compile(lambda x: x * 1.0, dtypes={"x": "float32"}, out_dtypes=["int8"])
            got = f(x)
        assert got.tolist() == [2, 4, -2, 0, 0, 127, -128, 0, 127, -128, 127, -128], target


def test_no_libcalls_without_rounding_instructions():
    import re

    with overridden(ACLGEN_CPU_NAME="generic"):
        f = aclgen.compile(lambda x: aclgen.floor(x) + aclgen.ceil(x) + aclgen.trunc(x) + aclgen.round(x))
        asm = f.kernel.ir["asm"]
    assert not re.search(r"call", asm)
