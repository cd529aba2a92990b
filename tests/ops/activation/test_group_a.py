"""CANN activation operators of group A (elu, elu_grad_v2, celu_v2, selu, leaky_relu,
leaky_relu_grad, hard_sigmoid, hard_sigmoid_grad, hard_swish, hard_swish_grad_v2, hardtanh_grad,
heaviside, hard_shrink, hard_shrink_grad, shrink, softshrink, squared_relu, threshold) beyond the
generic family test: PyTorch as a second oracle (each with its bound and the points where the
doc or CANN's kernel decides otherwise), the doc pages' boundaries, check order and codes through
aclnn, the in-place variants, and the doc pages' worked examples."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import aclgen.acl as acl
import aclgen.aclnn as aclnn
import aclgen.ops as ops
from aclgen.runtime import constants as C
from aclgen.tools.accuracy import ulp_error
from aclgen.tools.demo import check_example
from tests.reference import same_or_nan

NULL, INVALID = 161001, 161002
F32, F16, BF16 = np.float32, np.float16, ml_dtypes.bfloat16


def sample(n: int = 3000, seed: int = 0) -> np.ndarray:
    """float32 values over the interesting range: a fine grid over [-5, 5], random values over
    many magnitudes, and the special values."""
    rng = np.random.default_rng(seed)
    rand = rng.standard_normal(n) * rng.choice([1e-6, 1e-2, 0.5, 3.0, 30.0], n)
    special = [0.0, -0.0, 3.0, -3.0, 1.5, -1.5, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3.4e38, -3.4e38]
    return np.concatenate([np.linspace(-5, 5, 1001), rand, special]).astype(F32)


X = sample()
G = (np.random.default_rng(1).standard_normal(X.size) * 3).astype(F32)


def ulps(got, want, dtype="float32", scale=None) -> np.ndarray:
    """ulp_error, measured at max(|want|, |scale|) where a scale is given (a result that cancels:
    the size of its terms)."""
    err = ulp_error(got, want, dtype)
    if scale is None:
        return err
    at = np.maximum(np.abs(np.asarray(want, np.float64)), np.abs(scale)).ravel()
    with np.errstate(all="ignore"):
        ulp = np.exp2(np.floor(np.log2(np.maximum(at, 2.0**-126))) - 23)
        rel = np.abs(np.asarray(got, np.float64).ravel() - np.asarray(want, np.float64).ravel()) / ulp
    return np.where(np.isfinite(rel), np.minimum(err, rel), err)


# ------------------------------------------------------------------------------ torch as oracle


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _t(torch, a):
    return torch.from_numpy(np.ascontiguousarray(a))


# (name, ours(x, g), theirs(torch, tx, tg), bound in ulp, points excluded from the comparison
# with why: the doc or CANN's kernel decides them, checked in the boundary tests below)
TORCH_CASES = [
    ("hardshrink", lambda x, g: ops.hardshrink(x, 0.7),
     lambda t, x, g: t.nn.functional.hardshrink(x, 0.7), 0, None),
    ("hardshrink_backward", lambda x, g: ops.hardshrink_backward(g, x, 0.7),
     lambda t, x, g: t.ops.aten.hardshrink_backward(g, x, 0.7), 0, None),
    ("softshrink", lambda x, g: ops.softshrink(x, 0.7),
     lambda t, x, g: t.nn.functional.softshrink(x, 0.7), 0, np.isnan),  # CANN's kernel: NaN -> 0
    ("squared_relu", lambda x, g: ops.squared_relu(x), lambda t, x, g: t.relu(x) ** 2, 0, None),
    ("heaviside", lambda x, g: ops.heaviside(x, g), lambda t, x, g: t.heaviside(x, g), 0, np.isnan),  # NaN -> 0
    ("hardtanh_backward", lambda x, g: ops.hardtanh_backward(g, x, -1.5, 2.0),
     lambda t, x, g: t.ops.aten.hardtanh_backward(g, x, -1.5, 2.0), 0,
     lambda x: (x == -1.5) | (x == 2.0)),  # the doc passes gradOutput at the bounds, torch does not
    ("hardswish", lambda x, g: ops.hardswish(x), lambda t, x, g: t.nn.functional.hardswish(x), 1,
     lambda x: np.isneginf(x) | (x > 1e37)),  # the doc: 0 for x <= -3, x for x >= 3; torch: -inf * 0 = NaN,
    # and x * 6 / 6 overflows
    ("hardswish_backward_v2", lambda x, g: ops.hardswish_backward_v2(g, x),
     lambda t, x, g: t.ops.aten.hardswish_backward(g, x), 2, None),
    ("hardsigmoid", lambda x, g: ops.hardsigmoid(x), lambda t, x, g: t.nn.functional.hardsigmoid(x), 0, None),
    ("hardsigmoid_backward", lambda x, g: ops.hardsigmoid_backward(g, x),
     lambda t, x, g: t.ops.aten.hardsigmoid_backward(g, x), 1, None),
    ("leaky_relu", lambda x, g: ops.leaky_relu(x, 0.2),
     lambda t, x, g: t.nn.functional.leaky_relu(x, 0.2), 0, None),
    ("leaky_relu_backward", lambda x, g: ops.leaky_relu_backward(g, x, 0.2, False),
     lambda t, x, g: t.ops.aten.leaky_relu_backward(g, x, 0.2, False), 0, None),
    ("threshold", lambda x, g: ops.threshold(x, 0.7, -2.0),
     lambda t, x, g: t.nn.functional.threshold(x, 0.7, -2.0), 0, None),
    ("elu", lambda x, g: ops.elu(x, 1.3, 1.1, 0.7), lambda t, x, g: t.ops.aten.elu(x, 1.3, 1.1, 0.7), 4, None),
    ("elu_backward", lambda x, g: ops.elu_backward(g, x, 1.3, 1.1, 0.7, False),
     lambda t, x, g: t.ops.aten.elu_backward(g, 1.3, 1.1, 0.7, False, x), 4, None),
    ("celu", lambda x, g: ops.celu(x, 1.7), lambda t, x, g: t.nn.functional.celu(x, 1.7), 3, None),
    ("selu", lambda x, g: ops.selu(x), lambda t, x, g: t.nn.functional.selu(x), 4, None),
]


@pytest.mark.parametrize("name,ours,theirs,bound,excluded", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_against_torch(torch, name, ours, theirs, bound, excluded):
    """float32 against torch within `bound` ulp (gradients: at the scale of |gradOutput|, where
    the result cancels in torch's own f32 order), except the points the doc decides."""
    got = np.asarray(ours(X, G))
    want = theirs(torch, _t(torch, X), _t(torch, G)).numpy().astype(np.float64)
    keep = np.ones(X.shape, bool) if excluded is None else ~excluded(X)
    scale = np.abs(G) / 2 if name.endswith("_backward") or name.endswith("_v2") else None
    err = ulps(got[keep], want[keep], "float32", None if scale is None else scale[keep])
    worst = int(np.argmax(err))
    assert err[worst] <= bound, f"{name}: {err[worst]} ulp at x = {X[keep][worst]!r}"


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_half_types_against_torch(torch, dtype):
    """fp16/bf16 compute in f32 and round once: within 1 ulp of torch's own half-type results."""
    tdt = {F16: torch.float16, BF16: torch.bfloat16}[dtype]
    x = X[np.abs(X) < 6e4].astype(dtype)
    tx = _t(torch, x.astype(F32)).to(tdt)
    for ours, theirs in ((ops.selu(x), torch.nn.functional.selu(tx)),
                         (ops.hardswish(x), torch.nn.functional.hardswish(tx)),
                         (ops.leaky_relu(x, 0.1), torch.nn.functional.leaky_relu(tx, 0.1))):
        want = theirs.float().numpy().astype(np.float64)
        assert ulps(ours, want, np.dtype(dtype).name).max() <= 1


def test_elu_backward_of_the_result_matches_torch(torch):
    """isResult = true: selfOrResult is ELU's output (torch's is_result)."""
    y = ops.elu(X, 1.3, 1.1, 0.7)
    got = ops.elu_backward(G, y, 1.3, 1.1, 0.7, True)
    want = torch.ops.aten.elu_backward(_t(torch, G), 1.3, 1.1, 0.7, True, _t(torch, y)).numpy()
    assert ulps(got, want.astype(np.float64), scale=np.abs(G)).max() <= 2


# ------------------------------------------------------------------------- the doc's boundaries


def test_hardtanh_backward_bounds_pass_gradient():
    """The doc: 0 only where self > max or self < min; self = min, self = max and NaN pass."""
    x = np.array([-1.5, -1.5000001, 2.0, 2.0000002, np.nan, 0.0], F32)
    g = np.full(6, 7.0, F32)
    np.testing.assert_array_equal(ops.hardtanh_backward(g, x, -1.5, 2.0), [7, 0, 7, 0, 7, 7])
    inf_g = np.full(6, np.inf, F32)  # a select, not a product: no NaN outside the bounds
    np.testing.assert_array_equal(ops.hardtanh_backward(inf_g, x, -1.5, 2.0), [np.inf, 0, np.inf, 0, np.inf, np.inf])


def test_hardswish_ends():
    x = np.array([-3, 3, -3.0000002, 2.9999998, np.nan, -np.inf, np.inf, -0.0], F32)
    got = ops.hardswish(x)
    assert got[0] == 0 and got[1] == 3 and got[2] == 0 and got[6] == np.inf and got[5] == 0
    assert np.isnan(got[4]) and np.signbit(got[7])
    assert abs(got[3] - 2.9999998 * 5.9999998 / 6) < 1e-6
    g = np.full(x.shape, 2.0, F32)  # V2: 0 at -3, gradOutput at 3, NaN self passes gradOutput
    np.testing.assert_array_equal(ops.hardswish_backward_v2(g, x)[[0, 1, 4, 5, 6]], [0, 2, 2, 0, 2])
    inf_g = np.full(x.shape, np.inf, F32)  # a product: inf * 0 is NaN where self <= -3
    assert np.isnan(ops.hardswish_backward_v2(inf_g, x)[0])


def test_hardsigmoid_ends_and_int32_truncates():
    np.testing.assert_array_equal(ops.hardsigmoid(np.array([-3, 3, np.nan], F32))[:2], [0, 1])
    assert np.isnan(ops.hardsigmoid(np.array([np.nan], F32))[0])
    x = np.arange(-4, 6, dtype=np.int32)
    np.testing.assert_array_equal(ops.hardsigmoid(x), (x >= 3).astype(np.int32))  # 1/6 + 1/2 etc. truncate
    g = np.ones(5, F32)
    np.testing.assert_array_equal(ops.hardsigmoid_backward(g, np.array([-3, 3, 2.9999998, -2.9999998, np.nan], F32)),
                                  np.array([0, 0, 1 / 6, 1 / 6, 0], F32))


def test_shrinks_at_lambd():
    above = np.nextafter(F32(0.5), F32(1))
    x = np.array([-0.5, 0.5, -above, above, np.nan, -0.0, 0.25], F32)
    np.testing.assert_array_equal(ops.hardshrink(x, 0.5)[[0, 1, 2, 3, 5, 6]], [0, 0, -above, above, 0, 0])
    assert np.isnan(ops.hardshrink(x, 0.5)[4])
    np.testing.assert_array_equal(ops.hardshrink(x, -1.0)[[0, 6]], [-0.5, 0.25])  # lambd < 0 counts as 0
    np.testing.assert_array_equal(ops.softshrink(x, 0.5)[[0, 1, 4]], [0, 0, 0])  # NaN -> 0 (the kernel)
    np.testing.assert_array_equal(ops.shrink(x, 0.5, 2.0)[[0, 1, 2, 3, 4]], [0, 0, -above + 2, above - 2, 0])
    g = np.full(x.shape, 3.0, F32)
    np.testing.assert_array_equal(ops.hardshrink_backward(g, x, 0.5), [0, 0, 3, 3, 3, 0, 0])


def test_squared_relu_and_heaviside_specials():
    got = ops.squared_relu(np.array([np.nan, np.inf, -np.inf, -0.0, -2, 3], F32))
    assert np.isnan(got[0]) and list(got[1:]) == [np.inf, 0, 0, 0, 9]
    x = np.array([-0.0, 0.0, -1e-45, 1e-45, np.nan], F32)
    np.testing.assert_array_equal(ops.heaviside(x, np.full(5, 0.25, F32)), [0.25, 0.25, 0, 1, 0])


def test_threshold_nan_stays():
    got = ops.threshold(np.array([np.nan, 1.0, 0.5], F32), 0.5, 7.0)
    assert np.isnan(got[0]) and list(got[1:]) == [1, 7]
    np.testing.assert_array_equal(ops.threshold(np.array([1.0, -1.0], F32), float("nan"), 7.0), [1, -1])


def test_threshold_integers_compare_with_trunc():
    x = np.array([-3, -2, -1, 0, 1, 2, 3], np.int32)
    np.testing.assert_array_equal(ops.threshold(x, -2.5, 9.9), [9, 9, -1, 0, 1, 2, 3])  # trunc(-2.5) = -2
    np.testing.assert_array_equal(ops.threshold(x.astype(np.int8), 1.0, -100.0), [-100] * 5 + [2, 3])


def test_selu_integers_truncate():
    x = np.array([-128, -1, 0, 1, 2, 59, 121, 122, 127], np.int8)
    np.testing.assert_array_equal(ops.selu(x), [-1, -1, 0, 1, 2, 61, 127, 127, 127])  # saturating store
    np.testing.assert_array_equal(ops.selu(np.array([1000, -5], np.int32)), [1050, -1])


def test_elu_infinite_alpha_or_input_scale():
    """op_api's Threshold path: x <= 0 (and NaN) give -alpha * scale."""
    x = np.array([-2, 0, 3, np.nan], F32)
    np.testing.assert_array_equal(ops.elu(x, 1.5, 2.0, float("inf")), [-3, -3, 6, -3])
    got = ops.elu(x, float("nan"), 2.0, 1.0)
    assert np.isnan(got[[0, 1, 3]]).all() and got[2] == 6


def test_expm1_keeps_small_negatives():
    """Elu, Celu, Selu near 0-: exp(x) - 1 in f32 would keep no digit of x = -1e-8."""
    x = np.array([-1e-8, -1e-4, -0.05], F32)
    want = np.expm1(x.astype(np.float64))
    for got, w in ((ops.elu(x, 1.0, 1.0, 1.0), want), (ops.celu(x, 1.0), want),
                   (ops.selu(x), 1.0507009873554805 * 1.6732632423543772 * want)):
        assert ulp_error(got, w, "float32").max() <= 3


def test_celu_negative_alpha():
    x = np.array([2.0, -2.0, -np.inf, np.inf], F32)
    got = ops.celu(x, -1.5)
    assert got[0] == 2 and got[2] == -np.inf and got[3] == np.inf
    assert abs(got[1] - (-1.5 * np.expm1(2 / 1.5))) < 1e-5


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("slope", [0.01, 1.0, 1e-45, 0.0, -0.0, -0.3, 1.0000001, 2.5, np.inf, -np.inf, np.nan])
def test_leaky_relu_every_slope(dtype, slope):
    """The kernel computes max(x, x * slope) for a slope in (0, 1] and `x > 0 ? x : x * slope`
    for any other: both give the doc's function bit for bit, at zeros, infinities, NaN,
    subnormals and the values where x * slope rounds to x or to 0."""
    x = np.concatenate([X, [1e-45, -1e-45, 1.1754942e-38, -1.1754942e-38, 3.3895314e38]]).astype(F32)
    with np.errstate(all="ignore"):
        x = x.astype(dtype)
        f = x.astype(F32)
        want = np.where(f > 0, f, f * F32(slope)).astype(dtype)
    got = ops.leaky_relu(x, slope)
    same = same_or_nan(got, want)
    assert same.all(), f"slope {slope}: x = {x[~same][:4]!r}, got {got[~same][:4]!r}, want {want[~same][:4]!r}"


# ------------------------------------------------------------------------- checks through aclnn


def t(shape=(2, 3), dtype: Any = F32, fmt=C.ACL_FORMAT_ND):
    return acl.from_numpy(np.zeros(shape, dtype), fmt)


def s(value=0.5, dtype=C.ACL_FLOAT):
    return acl.create_scalar(value, dtype)


def api(name: str) -> Any:
    """An aclnn function by name (aclgen.aclnn makes them on first use)."""
    return getattr(aclnn, name)


def phase1(name: str, *args, soc: str | None = None) -> tuple[int, str]:
    if soc is not None:
        acl.set_soc_version(soc)
    try:
        _, _, ret = api(f"aclnn{name}GetWorkspaceSize")(*args)
    finally:
        if soc is not None:
            acl.set_soc_version(None)
    return ret, acl.get_recent_err_msg() if ret else ""


# (case, api, args, SoC profile, code, a fragment of the message)
CHECKS = [
    ("hardshrink-null-lambd", "Hardshrink", lambda: (t(), None, t()), None, NULL, "lambd is nullptr"),
    ("hardshrink-out-dtype", "Hardshrink", lambda: (t(), s(), t(dtype=F16)), None, INVALID, "out dtype"),
    ("hardshrink-rank-9", "Hardshrink", lambda: (t((1,) * 9), s(), t((1,) * 9)), None, INVALID, "9 dims"),
    ("hardshrink-on-950", "Hardshrink", lambda: (t(), s(), t()), "Ascend950", INVALID, "self dtype"),
    ("hardshrink-bf16-on-910", "Hardshrink", lambda: (t(dtype=BF16), s(), t(dtype=BF16)), "Ascend910", INVALID,
     "self dtype"),
    ("hardshrink-grad-promotes", "HardshrinkBackward", lambda: (t(dtype=F16), t(dtype=BF16), s(), t(dtype=F16)),
     None, INVALID, "gradInput dtype"),
    ("hardshrink-grad-on-310p", "HardshrinkBackward", lambda: (t(), t(), s(), t()), "Ascend310P", INVALID, "dtype"),
    ("shrink-negative-lambd", "Shrink", lambda: (t(), s(-0.1), s(0.0), t()), None, INVALID, "lambd"),
    ("shrink-nan-lambd-ok", "Shrink", lambda: (t(), s(float("nan")), s(0.0), t()), None, 0, ""),
    ("shrink-format", "Shrink", lambda: (t(), s(), s(), t(fmt=C.ACL_FORMAT_NCHW)), None, INVALID, "format"),
    ("shrink-no-rank-limit", "Shrink", lambda: (t((1,) * 9), s(), s(), t((1,) * 9)), None, 0, ""),
    ("shrink-on-910", "Shrink", lambda: (t(), s(), s(), t()), "Ascend910", INVALID, "dtype"),
    ("softshrink-negative-lambd", "Softshrink", lambda: (t(), s(-0.5), t()), None, INVALID, "lambd"),
    ("softshrink-shape-before-lambd", "Softshrink", lambda: (t(), s(-0.5), t((3, 2))), None, INVALID, "shape"),
    ("squared-relu-rank-0", "SquaredRelu", lambda: (t(()), t(())), None, INVALID, "0 dims"),
    ("squared-relu-on-910", "SquaredRelu", lambda: (t(), t()), "Ascend910", INVALID, "dtype"),
    ("heaviside-broadcast", "Heaviside", lambda: (t((2, 3)), t((3,)), t((2, 3))), None, 0, ""),
    ("heaviside-out-shape", "Heaviside", lambda: (t((2, 3)), t((3,)), t((6,))), None, INVALID, "out shape"),
    ("heaviside-on-950", "Heaviside", lambda: (t(), t(), t()), "Ascend950", INVALID, "dtype"),
    ("hardtanh-grad-self-first", "HardtanhBackward", lambda: (None, None, s(), s(), t()), None, NULL,
     "self is nullptr"),
    ("hardtanh-grad-dtype", "HardtanhBackward", lambda: (t(dtype=F16), t(), s(), s(), t()), None, INVALID,
     "gradOutput dtype"),
    ("hardswish-no-rank-limit", "Hardswish", lambda: (t((1,) * 9), t((1,) * 9)), None, 0, ""),
    ("hardswish-on-310p", "Hardswish", lambda: (t(), t()), "Ascend310P", INVALID, "dtype"),
    ("hardswish-grad-v2-out", "HardswishBackwardV2", lambda: (t(), t(), t(dtype=F16)), None, INVALID, "out dtype"),
    ("hardsigmoid-int32", "Hardsigmoid", lambda: (t(dtype=np.int32), t(dtype=np.int32)), None, 0, ""),
    ("hardsigmoid-format", "Hardsigmoid", lambda: (t(), t(fmt=C.ACL_FORMAT_NCHW)), None, INVALID, "format"),
    ("hardsigmoid-grad-promotes", "HardsigmoidBackward", lambda: (t(dtype=F16), t(), t()), None, 0, ""),
    ("leaky-relu-out-shape", "LeakyRelu", lambda: (t(), s(), t((3, 2))), None, INVALID, "out shape"),
    ("leaky-grad-in-place-negative", "LeakyReluBackward", lambda: (t(), t(), s(-0.1), True, t()), None, INVALID,
     "selfIsResult"),
    ("leaky-grad-negative-ok", "LeakyReluBackward", lambda: (t(), t(), s(-0.1), False, t()), None, 0, ""),
    ("leaky-grad-uint16-slope", "LeakyReluBackward", lambda: (t(), t(), s(1, C.ACL_UINT16), False, t()), None,
     INVALID, "negativeSlope dtype"),
    ("leaky-grad-bf16-slope-on-910", "LeakyReluBackward", lambda: (t(), t(), s(0.5, C.ACL_BF16), False, t()),
     "Ascend910", INVALID, "negativeSlope dtype"),
    ("leaky-grad-bool-kind", "LeakyReluBackward", lambda: (t(), t(), s(), 1, t()), None, INVALID, "selfIsResult"),
    ("threshold-out-before-scalars", "Threshold", lambda: (t(), None, s(), None), None, NULL, "out is nullptr"),
    ("threshold-int64", "Threshold", lambda: (t(dtype=np.int64), s(1.0), s(2.0), t(dtype=np.int64)), None, 0, ""),
    ("threshold-int16", "Threshold", lambda: (t(dtype=np.int16), s(), s(), t(dtype=np.int16)), None, INVALID,
     "self dtype"),
    ("elu-out-dtype", "Elu", lambda: (t(), s(), s(), s(), t(dtype=BF16)), None, INVALID, "out dtype"),
    ("elu-grad-dtypes-first", "EluBackward", lambda: (t(dtype=F16), s(), s(), s(), False, t(), t((9,))), None,
     INVALID, "selfOrResult dtype"),
    ("elu-grad-in-place-negative-alpha", "EluBackward", lambda: (t(), s(-1.0), s(), s(), True, t(), t()), None,
     INVALID, "alpha"),
    ("elu-grad-negative-alpha-ok", "EluBackward", lambda: (t(), s(-1.0), s(), s(), False, t(), t()), None, 0, ""),
    ("celu-alpha-zero", "Celu", lambda: (t(), s(0.0), t()), None, INVALID, "alpha"),
    ("celu-alpha-nan", "Celu", lambda: (t(), s(float("nan")), t()), None, INVALID, "alpha"),
    ("celu-shape-before-alpha", "Celu", lambda: (t(), s(0.0), t((3, 2))), None, INVALID, "shape"),
    ("selu-no-rank-limit", "Selu", lambda: (t((1,) * 9, np.int8), t((1,) * 9, np.int8)), None, 0, ""),
    ("selu-on-950", "Selu", lambda: (t(), t()), "Ascend950", INVALID, "dtype"),
]


@pytest.mark.parametrize("case,name,args,soc,code,fragment", CHECKS, ids=[c[0] for c in CHECKS])
def test_checks(case, name, args, soc, code, fragment):
    ret, message = phase1(name, *args(), soc=soc)
    assert ret == code, message
    assert fragment in message, message
    assert not code or message.startswith(f"aclnn{name}")


# ------------------------------------------------------------------------------ in-place variants


def _in_place(name: str, x: np.ndarray, *extras) -> np.ndarray:
    buf = x.copy()
    ws, ex, ret = api(f"aclnnInplace{name}GetWorkspaceSize")(acl.from_numpy(buf), *extras)
    assert ret == 0, acl.get_recent_err_msg()
    assert api(f"aclnnInplace{name}")(None, ws, ex, None) == 0, acl.get_recent_err_msg()
    return buf


@pytest.mark.parametrize("name,python,scalars", [
    ("Elu", "elu", (1.3, 1.1, 0.7)), ("Celu", "celu", (1.7,)), ("Selu", "selu", ()),
    ("LeakyRelu", "leaky_relu", (0.2,)), ("Threshold", "threshold", (0.7, -2.0)), ("Hardswish", "hardswish", ()),
    ("Hardsigmoid", "hardsigmoid", ()),
])
def test_in_place_matches_out_of_place(name, python, scalars):
    x = X[:512].reshape(16, 32)
    got = _in_place(name, x, *(s(v) for v in scalars))
    np.testing.assert_array_equal(got, getattr(ops, python)(x, *scalars))


def test_in_place_names_self_ref():
    _, _, ret = api("aclnnInplaceCeluGetWorkspaceSize")(t(), s(0.0))
    assert ret == INVALID and acl.get_recent_err_msg().startswith("aclnnInplaceCelu")


def test_elu_backward_takes_cann_order():
    """gradOutput, alpha, scale, inputScale, isResult, selfOrResult, gradInput: the tensor after
    the scalars and the bool."""
    g, x = np.ones((2, 2), F32), np.array([[-2, -1], [0, 1]], F32)
    out = np.empty_like(g)
    ws, ex, ret = api("aclnnEluBackwardGetWorkspaceSize")(acl.from_numpy(g), s(1.0), s(1.0), s(1.0), False,
                                                          acl.from_numpy(x), acl.from_numpy(out))
    assert ret == 0 and api("aclnnEluBackward")(None, ws, ex, None) == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(out, ops.elu_backward(g, x, 1.0, 1.0, 1.0, False))


# ------------------------------------------------------------------------------ worked examples

EXAMPLES = [(name, op) for name, op in ops.OPERATORS.items()
            if op.examples and ops.family(op)[1] in (
                "elu", "elu_grad_v2", "celu_v2", "selu", "leaky_relu", "leaky_relu_grad", "hard_sigmoid",
                "hard_sigmoid_grad", "hard_swish", "hard_swish_grad_v2", "hardtanh_grad", "heaviside", "hard_shrink",
                "hard_shrink_grad", "shrink", "softshrink", "squared_relu", "threshold")]


@pytest.mark.parametrize("name,op", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_doc_page_examples(name, op):
    (example,) = op.examples
    assert check_example(getattr(ops, name)(*example.args), example.expected, example.rtol) is None
