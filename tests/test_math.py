"""expand-math's exp and sigmoid against float64, over the whole float range."""

import re

import numpy as np
import pytest

import aclgen
from aclgen import exp, sigmoid


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in representable f32 values (0 for equal, 1 for neighbours, -0 == +0)."""
    def ordered(x):
        i = x.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    return np.abs(ordered(a) - ordered(b))


@pytest.fixture(scope="module")
def samples() -> np.ndarray:
    every = np.arange(0, 2**32, 509, dtype=np.uint64).astype(np.uint32).view(np.float32)  # all exponents
    dense = np.linspace(-104, 89, 1_000_001, dtype=np.float32)  # where exp is neither 0 nor inf
    return np.concatenate([every, dense])


@pytest.mark.parametrize("fma", ["on", "off"])
def test_exp_within_2_ulp_everywhere(samples, fma):
    f = aclgen.compile(lambda x: exp(x), fma=fma)
    got = f(samples)
    finite = ~np.isnan(samples)
    with np.errstate(all="ignore"):
        want = np.exp(samples[finite].astype(np.float64)).astype(np.float32)
    d = ulp_distance(got[finite], want)
    assert d.max() <= 2, f"max {d.max()} ulp at x = {samples[finite][d.argmax()]!r}"
    assert np.isnan(got[~finite]).all()


def test_exp_special_values():
    f = aclgen.compile(lambda x: exp(x))
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 88.72283, 88.72284, -87.33655, -103.0, -104.0, 1e-45], np.float32)
    got = f(x)
    assert got[0] == np.inf and got[1] == 0.0 and np.isnan(got[2])
    assert got[3] == 1.0 and got[4] == 1.0
    assert np.isfinite(got[5]) and got[6] == np.inf  # overflow threshold: ln(FLT_MAX) = 88.7228394
    assert 0 < got[7] < 1.2e-38 and 0 < got[8] < 1.2e-38  # gradual underflow into subnormals
    assert got[9] == 0.0 and got[10] == 1.0


@pytest.mark.parametrize("fma", ["on", "off"])
def test_sigmoid_within_2_ulp_everywhere(samples, fma):
    f = aclgen.compile(lambda x: sigmoid(x), fma=fma)
    got = f(samples)
    finite = ~np.isnan(samples)
    with np.errstate(all="ignore"):
        x64 = samples[finite].astype(np.float64)
        want = (1 / (1 + np.exp(-x64))).astype(np.float32)
    d = ulp_distance(got[finite], want)
    assert d.max() <= 2, f"max {d.max()} ulp at x = {samples[finite][d.argmax()]!r}"
    assert np.isnan(got[~finite]).all()


def test_sigmoid_special_values():
    f = aclgen.compile(lambda x: sigmoid(x))
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4028235e38, -3.4028235e38, 1e-45, -1e-45,
                  -100.0, -103.27893, -103.97, -103.98, -104.0, -1e4, 17.0, 88.8], np.float32)
    got = f(x)
    assert np.isnan(got[:2]).all()
    assert got[2:].tolist()[:8] == [1.0, 0.0, 0.5, 0.5, 1.0, 0.0, 0.5, 0.5]
    assert 0 < got[10] < 1e-43  # subnormal, not flushed to 0
    assert got[11] == got[12] == 2.0**-149 and got[13] == got[14] == got[15] == 0.0
    assert got[16] == got[17] == 1.0


def test_sigmoid_every_float_where_it_underflows():
    """Every f32 in (-128, -32]: expand-math's one scale 2^(n + 25) for n in [-150, -46], the
    clamp at -104, the quotient rounded once into the subnormals, and the exact zeros."""
    f = aclgen.compile(lambda x: sigmoid(x))
    lo, hi = np.float32(-32.0).view(np.uint32), np.float32(-128.0).view(np.uint32)
    x = np.arange(lo, hi, dtype=np.uint32).view(np.float32)
    got = f(x)
    want = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    d = ulp_distance(got, want)
    assert d.max() <= 1, f"max {d.max()} ulp at x = {x[d.argmax()]!r}"
    assert np.array_equal(got == 0, want == 0)


def test_vector_loop_uses_no_libcall():
    f = aclgen.compile(lambda x: sigmoid(x))
    body = f.ir["llvm"].split("define", 1)[1]
    assert not re.search(r"call [^@]*@(?!llvm\.)", body), "a libcall survived"
