"""The sigmoid, swish, GELU, mish, log-sigmoid, softplus and erfinv members of CANN's activation
family against torch (float64, from the same float32 inputs), their checks and codes in CANN's
order through aclnn, the in-place APIs, and the boundaries the doc pages define.

Bounds: each operator's declared tolerance (ulps of float32 at the float64 value), measured
away from the zeros of the gradients (where a derivative crosses zero its result cancels and the
error is absolute: the points are listed in each declaration's docstring), and for the GELU
family above x = -5, below which torch's own float64 1 + tanh(k) and 1 + erf(x/√2) cancel."""

from __future__ import annotations

import math

import numpy as np
import pytest

import aclgen.acl as acl
import aclgen.aclnn as aclnn
import aclgen.ops as ops
from aclgen.tools.accuracy import ulp_error
from tests.ops import aclnn_checks as checks
from tests.ops.aclnn_checks import INVALID, NULL, status
from tests.oracle import needs_torch, torch

F = torch.nn.functional if torch else None
aten = torch.ops.aten if torch else None

F32 = np.float32
RNG = np.random.default_rng(7)
X = np.concatenate([np.linspace(-12, 12, 1537), [0.0, -0.0, 1e-30, -1e-30]]).astype(F32)
G = (RNG.standard_normal(X.size) * 3.0).astype(F32)


def t64(a):
    return torch.from_numpy(np.asarray(a, np.float64))


def far_from(x, *zeros, width=0.05):
    """The elements of x not within `width` of a zero of the gradient (where it cancels)."""
    keep = np.ones(x.shape, bool)
    for z in zeros:
        keep &= np.abs(x.astype(np.float64) - z) > width
    return keep


def assert_within(got, want, name, keep=None):
    op = ops.OPERATORS[name]
    if "gelu" in name and "fast" not in name:  # torch's float64 cancels in the left tail
        keep = (X > -5.0) if keep is None else keep & (X > -5.0)
    err = ulp_error(got, np.asarray(want, np.float64), "float32")
    if keep is not None:
        err = np.where(keep, err, 0.0)
    worst = int(np.argmax(err))
    assert err.max() <= op.tolerance, f"{op.api}: {err.max()} ulp > {op.tolerance} at x = {X[worst]!r}"


# -- against torch ---------------------------------------------------------------------------------

FORWARD = [
    ("sigmoid", lambda x: ops.sigmoid(x), lambda x: torch.sigmoid(x)),
    ("silu", lambda x: ops.silu(x), lambda x: F.silu(x)),
    ("swish", lambda x: ops.swish(x, 1.0), lambda x: F.silu(x)),
    ("swish", lambda x: ops.swish(x, 0.5), lambda x: x * torch.sigmoid(0.5 * x)),
    ("fast_gelu", lambda x: ops.fast_gelu(x), lambda x: x * torch.sigmoid(1.702 * x)),
    ("gelu", lambda x: ops.gelu(x), lambda x: F.gelu(x, approximate="tanh")),
    ("gelu_v2", lambda x: ops.gelu_v2(x, 0), lambda x: F.gelu(x)),
    ("gelu_v2", lambda x: ops.gelu_v2(x, 1), lambda x: F.gelu(x, approximate="tanh")),
    ("mish", lambda x: ops.mish(x), lambda x: F.mish(x)),
    ("log_sigmoid", lambda x: ops.log_sigmoid(x), lambda x: F.logsigmoid(x)),
    ("softplus", lambda x: ops.softplus(x, 1.0, 20.0), lambda x: F.softplus(x, 1.0, 20.0)),
    ("softplus", lambda x: ops.softplus(x, 2.0, 3.0), lambda x: F.softplus(x, 2.0, 3.0)),
]


@needs_torch
def test_erfinv_matches_torch():
    x = np.concatenate([np.linspace(-1, 1, 2049), 1 - np.logspace(-7, -1, 64), [-0.0, 1e-40, 1.5, -1.0]]).astype(F32)
    assert_within(ops.erfinv(x), torch.special.erfinv(t64(x)).numpy(), "erfinv")
    ints = np.array([-2, -1, 0, 1, 2], np.int32)
    got = ops.erfinv(ints)  # an integer self: computed in FLOAT, out FLOAT
    assert got.dtype == F32 and np.isnan(got[[0, 4]]).all() and list(got[1:4]) == [-np.inf, 0.0, np.inf]


@pytest.mark.parametrize("name,ours,theirs", FORWARD, ids=[f"{n}-{k}" for k, (n, _, _) in enumerate(FORWARD)])
@needs_torch
def test_forward_matches_torch(name, ours, theirs):
    assert_within(ours(X), theirs(t64(X)).numpy(), name)


BACKWARD = [
    ("sigmoid_backward", lambda g, x: ops.sigmoid_backward(g, ops.sigmoid(x)),
     lambda g, x: aten.sigmoid_backward(g, t64(ops.sigmoid(x.numpy().astype(F32)))), ()),
    ("silu_backward", lambda g, x: ops.silu_backward(g, x), lambda g, x: aten.silu_backward(g, x), (-1.2785,)),
    ("swish_backward", lambda g, x: ops.swish_backward(g, x, 1.0), lambda g, x: aten.silu_backward(g, x), (-1.2785,)),
    ("fast_gelu_backward", lambda g, x: ops.fast_gelu_backward(g, x), None, (-0.7512,)),
    ("gelu_backward", lambda g, x: ops.gelu_backward(g, x), lambda g, x: aten.gelu_backward(g, x), (-0.7518,)),
    ("gelu_backward_v2", lambda g, x: ops.gelu_backward_v2(g, x, "none"), lambda g, x: aten.gelu_backward(g, x),
     (-0.7518,)),
    ("gelu_backward_v2", lambda g, x: ops.gelu_backward_v2(g, x, "tanh"),
     lambda g, x: aten.gelu_backward(g, x, approximate="tanh"), (-0.7528,)),
    ("mish_backward", lambda g, x: ops.mish_backward(g, x), lambda g, x: aten.mish_backward(g, x), (-1.1924,)),
    ("log_sigmoid_backward", lambda g, x: ops.log_sigmoid_backward(g, x, x),
     lambda g, x: aten.log_sigmoid_backward(g, x, aten.log_sigmoid_forward(x)[1]), ()),
    ("softplus_backward", lambda g, x: ops.softplus_backward(g, x, 1.0, 20.0),
     lambda g, x: aten.softplus_backward(g, x, 1.0, 20.0), ()),
]


def _autograd(f):
    def grad(g, x):
        x = x.clone().requires_grad_(True)
        f(x).backward(g)
        return x.grad
    return grad


@pytest.mark.parametrize("name,ours,theirs,zeros", BACKWARD, ids=[f"{n}-{k}" for k, (n, *_) in enumerate(BACKWARD)])
@needs_torch
def test_backward_matches_torch(name, ours, theirs, zeros):
    if theirs is None:  # torch has no fast_gelu: autograd of its formula
        theirs = _autograd(lambda x: x * torch.sigmoid(1.702 * x))
    want = theirs(t64(G), t64(X)).numpy()
    assert_within(ours(G, X), want, name, far_from(X, *zeros))


@needs_torch
def test_log_sigmoid_forward_writes_torchs_buffer():
    out, buffer = ops.log_sigmoid_forward(X)
    want_out, want_buffer = aten.log_sigmoid_forward(t64(X))
    assert_within(out, want_out.numpy(), "log_sigmoid_forward")
    assert_within(buffer, want_buffer.numpy(), "log_sigmoid_forward")


@needs_torch
def test_large_gradients_keep_their_bits_below_flt_min():
    """g near FLT_MAX times a sigmoid that underflows f32 (x = -100): the scaled form keeps the
    product's bits (CANN's kernels and torch give a few bits or 0)."""
    x = np.array([-95.0, -100.0, -120.0], F32)
    g = np.full(3, 3e38, F32)
    want = aten.silu_backward(t64(g), t64(x)).numpy()
    assert_within(ops.silu_backward(g, x), want, "silu_backward")
    assert_within(ops.log_sigmoid_backward(g, -x, x), g.astype(np.float64) / (1 + np.exp(-x.astype(np.float64))),
                  "log_sigmoid_backward")


# -- checks and codes through aclnn ---------------------------------------------------------------


def tensor(shape=(2, 3), dtype: object = F32, fill=0.0, fmt=acl.ACL_FORMAT_ND):
    return checks.tensor(shape, dtype, fill, fmt)


@pytest.mark.parametrize("api,args,code,says", [
    ("aclnnSigmoid", (None, tensor()), NULL, "self is nullptr"),
    ("aclnnSigmoid", (tensor(), None), NULL, "out is nullptr"),
    ("aclnnSigmoid", (tensor(dtype=np.int32), tensor()), INVALID, "self dtype ACL_INT32"),
    ("aclnnSigmoid", (tensor(), tensor(dtype=np.float16)), INVALID, "out dtype ACL_FLOAT16 must equal"),
    ("aclnnSigmoid", (tensor(), tensor((3, 2))), INVALID, "out shape [3, 2]"),
    ("aclnnSigmoid", (tensor((1,) * 9), tensor((1,) * 9)), INVALID, "9 dims"),
    ("aclnnSilu", (tensor((1,) * 9), tensor((1,) * 9)), 0, ""),  # no dims limit: CANN flattens
    ("aclnnSwish", (tensor((1,) * 9), None, tensor((1,) * 9)), INVALID, "9 dims"),
    ("aclnnSwishBackward", (tensor(), tensor(), None, tensor((3, 2))), INVALID, "gradOutput shape [2, 3]"),
    ("aclnnFastGelu", (tensor(), tensor(fmt=acl.ACL_FORMAT_NCHW)), INVALID, "out format ACL_FORMAT_NCHW"),
    ("aclnnFastGelu", (tensor(), tensor(dtype=np.float16)), INVALID, "out dtype ACL_FLOAT16"),
    ("aclnnGelu", (tensor(fmt=acl.ACL_FORMAT_NC1HWC0), tensor()), INVALID, "self format ACL_FORMAT_NC1HWC0"),
    ("aclnnGeluBackward", (tensor(dtype=np.float16), tensor(), tensor(dtype=np.float16)), INVALID,
     "result dtype ACL_FLOAT"),
    ("aclnnGeluBackward", (tensor((3, 1)), tensor((1, 4)), tensor((3, 4))), 0, ""),  # broadcasting
    ("aclnnGeluBackwardV2", (tensor(), tensor(), None, tensor()), NULL, "approximate is nullptr"),
    ("aclnnGeluBackwardV2", (tensor(), tensor(), "erf", tensor((3, 2))), INVALID, "gradInput shape [3, 2]"),
    ("aclnnGeluBackwardV2", (tensor(), tensor(), "erf", tensor()), INVALID, "approximate 'erf' is not one of"),
    ("aclnnMishBackward", (tensor((2, 1)), tensor((1, 3)), tensor((2, 3))), 0, ""),
    ("aclnnLogSigmoidBackward", (tensor(), tensor(), tensor(dtype=np.float16), tensor()), INVALID,
     "buffer dtype ACL_FLOAT16"),
    ("aclnnLogSigmoidBackward", (tensor(), tensor(), None, tensor()), NULL, "buffer is nullptr"),
    ("aclnnLogSigmoidForward", (tensor(), tensor(), None), 0, ""),  # buffer: NULL or any tensor
    ("aclnnLogSigmoidForward", (tensor(), tensor(), tensor((0,), np.float16)), 0, ""),
    ("aclnnSoftplusBackward", (tensor(), tensor(), None, acl.create_scalar(20.0, acl.ACL_FLOAT), tensor()), NULL,
     "beta is nullptr"),
    ("aclnnSoftplusBackward", (tensor(), tensor(dtype=np.int8), acl.create_scalar(1.0, acl.ACL_FLOAT),
                               acl.create_scalar(20.0, acl.ACL_FLOAT), tensor()), 0, ""),  # integer self
    ("aclnnSoftplus", (tensor(), acl.create_scalar(1.0, acl.ACL_FLOAT), None, tensor()), NULL,
     "threshold is nullptr"),
    ("aclnnErfinv", (tensor(dtype=np.int8), tensor(dtype=np.float16)), INVALID, "result dtype ACL_FLOAT"),
    ("aclnnErfinv", (tensor((1,) * 9), tensor((1,) * 9)), INVALID, "9 dims"),
    ("aclnnInplaceErfinv", (tensor(dtype=np.int32),), INVALID, "selfRef dtype ACL_INT32"),
])
def test_checks_and_codes(api, args, code, says):
    ret, message = status(api, *args)
    assert ret == code, message
    assert says in message, message


def test_silu_backward_mixes_dtypes_and_broadcasts_on_ascend950_only(soc):
    args = (tensor((2, 1), np.float16), tensor((1, 3)), tensor((2, 3)))
    soc("Ascend950")
    assert status("aclnnSiluBackward", *args)[0] == 0
    soc("Ascend910B")
    ret, message = status("aclnnSiluBackward", *args)
    assert ret == INVALID and "gradInput dtype ACL_FLOAT must equal gradOutput dtype ACL_FLOAT16" in message


@pytest.mark.parametrize("api,soc_name,args", [
    ("aclnnFastGelu", "Ascend910", (tensor(), tensor())),  # 不支持: every dtype refused
    ("aclnnSoftplus", "Ascend950", (tensor(), acl.create_scalar(1.0, acl.ACL_FLOAT),
                                    acl.create_scalar(20.0, acl.ACL_FLOAT), tensor())),
    ("aclnnMish", "Ascend310P", (tensor(), tensor())),
    ("aclnnGelu", "Ascend910", (tensor(dtype="bfloat16"), tensor(dtype="bfloat16"))),
])
def test_unsupported_chips_and_dtypes(api, soc_name, args, soc):
    soc(soc_name)
    assert status(api, *args)[0] == INVALID


# -- in-place APIs, optional arguments, boundaries ---------------------------------------------------


@pytest.mark.parametrize("name", ["Sigmoid", "Mish", "Erfinv"])
def test_in_place(name):
    x = X.copy()
    want = getattr(ops, name.lower())(X)
    ws, ex, ret = getattr(aclnn, f"aclnnInplace{name}GetWorkspaceSize")(acl.from_numpy(x))
    assert ret == 0 and getattr(aclnn, f"aclnnInplace{name}")(None, ws, ex, None) == 0
    np.testing.assert_array_equal(x, want)
    ret = getattr(aclnn, f"aclnnInplace{name}GetWorkspaceSize")(None)[2]
    assert ret == NULL and acl.get_recent_err_msg() == f"aclnnInplace{name}: selfRef is nullptr"


def test_swish_beta_null_is_one():
    out = np.zeros_like(X)
    ws, ex, ret = aclnn.aclnnSwishGetWorkspaceSize(acl.from_numpy(X), None, acl.from_numpy(out))
    assert ret == 0 and aclnn.aclnnSwish(None, ws, ex, None) == 0
    np.testing.assert_array_equal(out, ops.silu(X))


def test_log_sigmoid_forward_leaves_another_buffer_as_it_is():
    out, buffer = np.zeros(4, F32), np.full(3, 7.0, F32)
    x = np.array([-2.0, 0.0, 1.0, 30.0], F32)
    ws, ex, ret = aclnn.aclnnLogSigmoidForwardGetWorkspaceSize(acl.from_numpy(x), acl.from_numpy(out),
                                                             acl.from_numpy(buffer))
    assert ret == 0 and aclnn.aclnnLogSigmoidForward(None, ws, ex, None) == 0
    np.testing.assert_array_equal(buffer, 7.0)
    np.testing.assert_array_equal(out, ops.log_sigmoid(x))


def test_gelu_v2_approximate_other_than_one_is_none():
    np.testing.assert_array_equal(ops.gelu_v2(X, 7), ops.gelu_v2(X, 0))
    assert not np.array_equal(ops.gelu_v2(X, 1), ops.gelu_v2(X, 0))


def test_softplus_threshold_is_strict():
    """β x > threshold gives x; β x = threshold takes log(1 + e^(βx)) / β (doc: <= and >)."""
    x = np.array([1.5, np.nextafter(F32(1.5), F32(2)), np.inf, -np.inf, np.nan], F32)
    got = ops.softplus(x, 2.0, 3.0)
    assert got[0] == F32(math.log1p(math.exp(3.0)) / 2) and got[1] == x[1]
    assert got[2] == np.inf and got[3] == 0.0 and np.isnan(got[4])
    g = np.full(x.size, 2.0, F32)
    grad = ops.softplus_backward(g, x, 2.0, 3.0)
    assert grad[0] == F32(2.0 / (1.0 + math.exp(-3.0))) and grad[1] == 2.0 and grad[2] == 2.0
    assert grad[3] == 0.0 and np.isnan(grad[4])


def test_gelu_backward_v2_tanh_takes_the_limits_at_infinity():
    """CANN's kernel replaces a NaN second term by 0: d(+inf) = 1, d(-inf) = 0 for "tanh"; the
    erf formula gives NaN there (inf * 0), as the doc's formula does."""
    x = np.array([np.inf, -np.inf, np.nan], F32)
    g = np.full(3, 3.0, F32)
    tanh = ops.gelu_backward_v2(g, x, "tanh")
    assert tanh[0] == 3.0 and tanh[1] == 0.0 and np.isnan(tanh[2])
    assert np.isnan(ops.gelu_backward_v2(g, x, "none")).all()
