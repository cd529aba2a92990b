"""The split (GLU) members of CANN's activation family and Prelu against torch (float64, from the
same float32 inputs), their checks and codes in CANN's order through aclnn, and the boundaries
the doc pages define.

Bounds: each operator's declared tolerance, in ulps of float32 at the float64 value, or at the
size of the terms where a derivative crosses zero (the declaration's reference.scale). Torch has
glu, silu, gelu and prelu; SituGlu and FatreluMul are torch formulas of the doc pages (SituGlu's
gradient through torch's autograd, independent of the hand-derived form aclgen computes). The
GELU ones are compared above x = -5, below which torch's own float64 1 + erf(x/√2) cancels."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import aclgen.acl as acl
import aclgen.aclnn as aclnn
import aclgen.ops as ops
from aclgen.knobs import overridden
from aclgen.tools.accuracy import ulp_error
from tests.ops import aclnn_checks as checks
from tests.ops.aclnn_checks import INVALID, NULL, TILING, status
from tests.oracle import needs_torch, torch

F = torch.nn.functional if torch else None

F32, BF16 = np.float32, np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(11)


def values(shape, scale=4.0):
    """float32 values over a few magnitudes, with ±0 and some large ones."""
    x = RNG.standard_normal(shape) * RNG.choice([0.01, 1.0, scale, 30.0], shape)
    flat = x.reshape(-1)
    flat[:4] = [0.0, -0.0, 90.0, -100.0]
    return x.astype(F32)


def t64(a):
    return torch.from_numpy(np.asarray(a, np.float64))


def assert_within(name, got, want, scale=None, keep=None):
    op = ops.OPERATORS[name]
    err = ulp_error(got, np.asarray(want, np.float64), np.dtype(got.dtype).name, scale)
    if keep is not None:
        err = np.where(np.broadcast_to(keep, got.shape).ravel(), err, 0.0)
    worst = int(np.argmax(err))
    assert err.max() <= op.tolerance, f"{op.api}: {err.max()} ulp > {op.tolerance} at element {worst}"


def reference_scale(name, *args):
    """The declaration's size of the terms (reference.scale) for these arguments (arrays in float64)."""
    reference = ops.OPERATORS[name].reference
    assert reference is not None
    scale = reference.scale  # type: ignore[attr-defined]
    with np.errstate(all="ignore"):
        return scale(*[a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args])


def autograd(f, grads, *inputs):
    """torch float64 gradients of f(*inputs) for the output gradients `grads`."""
    xs = [t64(x).requires_grad_(True) for x in inputs]
    outs = f(*xs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    torch.autograd.backward(outs, [t64(g) for g in grads])
    return [x.grad.numpy() for x in xs]


# -- against torch ---------------------------------------------------------------------------------

X = values((6, 130))  # halves of 65: not a multiple of any vector width
# the gradients against torch: torch's float64 formulas cancel in the tails (1 - sigmoid(b) for
# b > 37, 1 - tanh^2 beyond |x| = 10): moderate values there; the tails are held to the accurate
# float64 references by tests/ops/test_family.py
XM = np.clip(X, -4.0, 4.0)
G = values((6, 65))


@needs_torch
def test_glu_and_its_gradient_match_torch():
    assert_within("glu", ops.glu(X), F.glu(t64(X)).numpy())
    x = values((3, 4, 10))[:, :, ::2]  # a strided view, split along dim 1
    assert_within("glu", ops.glu(x, 1), F.glu(t64(x), 1).numpy())
    (want,) = autograd(F.glu, [G], XM)
    assert_within("glu_backward", ops.glu_backward(G, XM), want)


@needs_torch
def test_glu_keeps_a_large_half_times_an_underflowed_sigmoid():
    """a near FLT_MAX times sigmoid(b) below FLT_MIN (torch's and CANN's f32 give 3 bits or 0)."""
    x = np.array([[3e38, 1e30, 3e38, -2e38, -100.0, -95.0, -150.0, -90.0]], F32)
    assert_within("glu", ops.glu(x), F.glu(t64(x)).numpy())


@needs_torch
def test_glu_writes_an_out_of_another_float_dtype():
    x = X.astype(np.float16)
    out = np.zeros((6, 65), F32)
    ops.glu(x, out=out)
    assert_within("glu", out, F.glu(t64(x)).numpy())


@needs_torch
def test_glu_through_torch_autograd_runs_glu_backward():
    x = torch.from_numpy(XM).requires_grad_(True)
    torch.ops.aclgen.glu(x, -1).backward(torch.from_numpy(G))
    assert x.grad is not None and np.array_equal(x.grad.numpy(), ops.glu_backward(G, XM))


@needs_torch
def test_swi_glu_matches_torch():
    a, b = t64(X).chunk(2, -1)
    assert_within("swi_glu", ops.swi_glu(X), (F.silu(a) * b).numpy())


@pytest.mark.parametrize("beta,linear_beta,left", [(1.0, 0.0, True), (0.5, 2.0, False)])
@needs_torch
def test_situ_glu_and_its_gradient_match_torch(beta, linear_beta, left):
    def situ(x):
        first, second = x.chunk(2, -1)
        gate, up = (first, second) if left else (second, first)
        if linear_beta > 0:
            up = linear_beta * torch.tanh(up / linear_beta)
        return beta * torch.tanh(gate / beta) * torch.sigmoid(gate) * up

    assert_within("situ_glu", ops.situ_glu(XM, -1, beta, linear_beta, left), situ(t64(XM)).detach().numpy())
    (want,) = autograd(situ, [G], XM)
    scale = reference_scale("situ_glu_grad", G, XM, -1, beta, linear_beta, left)
    assert_within("situ_glu_grad", ops.situ_glu_grad(G, XM, -1, beta, linear_beta, left), want, scale)


@pytest.mark.parametrize("approximate", [0, 1])
@needs_torch
def test_ge_glu_and_its_gradient_match_torch(approximate):
    mode = "tanh" if approximate else "none"
    x = np.clip(X, -5.0, 5.0)  # torch's float64 gelu cancels below -5
    a, b = t64(x).chunk(2, -1)
    out, gelu = ops.ge_glu_v3(x, -1, approximate, True)  # Gelu on the first half
    assert_within("ge_glu_v3", out, (F.gelu(a, approximate=mode) * b).numpy())
    assert_within("ge_glu_v3", gelu, F.gelu(a, approximate=mode).numpy())
    gelu = F.gelu(b, approximate=mode).numpy().astype(F32)  # GeGlu's outGelu
    want = np.concatenate(autograd(lambda p, q: p * F.gelu(q, approximate=mode), [G], a.numpy(), b.numpy()), -1)
    scale = reference_scale("ge_glu_backward", G, x, gelu, -1, approximate)
    assert_within("ge_glu_backward", ops.ge_glu_backward(G, x, gelu, -1, approximate), want, scale)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@needs_torch
def test_gelu_mul_matches_torch(approximate):
    x = np.clip(X, -5.0, None)
    x1, x2 = t64(x).chunk(2, -1)
    want = (F.gelu(x1, approximate=approximate) * x2).numpy()
    assert_within("gelu_mul", ops.gelu_mul(x, approximate), want)
    if approximate == "none":
        assert np.array_equal(ops.gelu_mul(x, None), ops.gelu_mul(x))  # NULL is "none"


@needs_torch
def test_prelu_matches_torch():
    x = values((2, 3, 4, 5))
    for w in (np.array([0.1, -0.2, 0.3], F32), np.array([0.25], F32)):
        assert_within("prelu", ops.prelu(x, w), F.prelu(t64(x), t64(w)).numpy())
    x1 = values((7,))  # a 1-d self: one channel
    assert_within("prelu", ops.prelu(x1, np.array([0.5], F32)), F.prelu(t64(x1), t64([0.5])).numpy())
    assert ops.prelu(np.array(-4.0, F32), np.array(0.5, F32)) == -2.0  # 0-d self and weight


@needs_torch
def test_prelu_promotes_mixed_dtypes():
    x, w = values((2, 3)).astype(np.float16), np.array([0.5, -1.5, 2.0], F32).astype(BF16)
    got = ops.prelu(x, w)
    assert got.dtype == F32
    assert_within("prelu", got, F.prelu(t64(x), t64(w.astype(F32))).numpy())


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_prelu_backward_matches_autograd(dtype):
    """gradInput and gradWeight against torch's prelu differentiated in float64: a weight per
    channel and one weight, a gradOutput broadcast to self, a 1-d self (one channel); self read
    through a strided view gives the same bits, and column-major (whose reduced dims do not merge
    as a contiguous self's do, so its sums run in other runs) the same gradInput and a gradWeight
    within the bound."""
    d = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    cases = [((5, 3, 7, 2), (5, 3, 7, 2), (3,)), ((5, 3, 7, 2), (7, 2), (1,)), ((4, 33), (4, 33), ()),
             ((9,), (9,), (1,)), ((2, 1000, 3), (1, 1000, 3), (1000,))]
    for xs, gs, ws in cases:
        x, g = values(xs).astype(d), values(gs).astype(d)
        w = np.asarray(RNG.standard_normal(ws) * 0.5).astype(d)
        dx, dw = ops.prelu_backward(g, x, w)
        assert dx.shape == xs and dw.shape == (ws if w.size == 1 else (xs[1],)) and dx.dtype == dw.dtype == d
        want = autograd(F.prelu, [np.broadcast_to(g, xs)], x, w.reshape(-1) if w.ndim else w.reshape(1))
        assert_within("prelu_backward", dx, want[0])
        assert_within("prelu_backward", dw, want[1].reshape(dw.shape),
                      reference_scale("prelu_backward", g, x, w)[1])
        wide = np.zeros((*xs[:-1], 2 * xs[-1]), d)
        wide[..., ::2] = x
        got = ops.prelu_backward(g, wide[..., ::2], w)
        assert np.array_equal(got[0], dx) and np.array_equal(got[1], dw)
        got = ops.prelu_backward(g, np.asfortranarray(x), w)
        assert np.array_equal(got[0], dx)
        assert_within("prelu_backward", got[1], want[1].reshape(dw.shape), reference_scale("prelu_backward", g, x, w)[1])


def test_prelu_backward_nan_and_the_sides():
    """self > 0 takes gradOutput, self <= 0 (and NaN, as in CANN's kernel) gradOutput times the
    weight; gradWeight sums self * gradOutput over self <= 0 only; the same bits for any thread
    count."""
    x = np.float32([[2.0, 0.0, -0.0, -3.0], [np.nan, 1.0, -1.0, np.inf]]).reshape(2, 4, 1)
    g = np.float32([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]).reshape(2, 4, 1)
    w = np.float32([0.5, -1.0, 2.0, 0.25])
    dx, dw = ops.prelu_backward(g, x, w)
    assert dx.ravel().tolist() == [1.0, -2.0, 6.0, 1.0, 2.5, 6.0, 14.0, 8.0]
    assert np.isnan(dw[0]) and dw[1:].tolist() == [0.0, -7.0, -12.0]
    x = values((64, 8, 513))
    g = values((64, 8, 513))
    w = np.float32([0.1, 0.2, -0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    with overridden(ACLGEN_THREADS="1"):
        base = ops.prelu_backward(g, x, w)
    with overridden(ACLGEN_THREADS="2"):
        assert all(a.tobytes() == b.tobytes() for a, b in zip(ops.prelu_backward(g, x, w), base))



def test_prelu_backward_sums_channels_beside_gradinput_in_one_pass():
    """A contiguous [N, C] self of many rows: gradInput a row at a time, the weight's sums added
    per block of rows into the workspace (phase 1 reports it) and the blocks added up after,
    as RmsNormGrad's dgamma: within the bound, the same bits for any thread count."""
    x, g = values((2048, 256)), values((2048, 256))
    w = np.asarray(RNG.standard_normal(256) * 0.5, F32)
    ws, ex, ret = aclnn.aclnnPreluBackwardGetWorkspaceSize(
        *(acl.from_numpy(a) for a in (g, x, w, np.empty_like(x), np.empty_like(w))))
    assert ret == 0 and ws > 0
    with overridden(ACLGEN_THREADS="1"):
        base = ops.prelu_backward(g, x, w)
    with overridden(ACLGEN_THREADS="2"):
        assert all(a.tobytes() == b.tobytes() for a, b in zip(ops.prelu_backward(g, x, w), base))
    want = ops.OPERATORS["prelu_backward"].reference(*(a.astype(np.float64) for a in (g, x, w)))
    assert np.array_equal(base[0], want[0].astype(F32))
    assert_within("prelu_backward", base[1], want[1], reference_scale("prelu_backward", g, x, w)[1])



@pytest.mark.parametrize("shape", [(5, 3, 7), (300, 4, 100), (2048, 256)])
def test_prelu_backward_in_place_over_its_inputs(shape):
    """Gradient buffers reused in place: gradInput over gradOutput or self, gradWeight over weight.
    A row kernel stores gradWeight when its row's sum ends, before gradInput's pass reads the
    weight, so an output made of reductions over an input goes through the workspace: the same
    results as separate buffers (a columns kernel, [5, 3, 7] and [300, 4, 100], and the partial
    rows of [2048, 256])."""
    x, g = values(shape), values(shape)
    w = np.asarray(RNG.standard_normal(shape[1]), F32)
    want = ops.prelu_backward(g, x, w)
    g2, w2 = g.copy(), w.copy()
    ops.prelu_backward(g2, x, w2, out=(g2, w2))
    assert np.array_equal(g2, want[0]) and np.array_equal(w2, want[1])
    x3, w3 = x.copy(), w.copy()
    ops.prelu_backward(g, x3, w3, out=(x3, w3))
    assert np.array_equal(x3, want[0]) and np.array_equal(w3, want[1])


# -- the doc pages' boundaries ---------------------------------------------------------------------


@needs_torch
def test_fatrelu_mul_keeps_x1_at_the_threshold():
    """x1 >= threshold keeps x1 (the doc; the kernel's GT would give 0 at equality); a NaN x1 is
    0, and 0 times an infinite x2 is NaN (the product is a multiply)."""
    x = np.array([[1.0, 2.0, np.nan, 0.5, 3.0, 4.0, 5.0, np.inf]], F32)
    got = ops.fatrelu_mul(x, np.array([1.0], F32))
    assert got.tolist()[0][:3] == [3.0, 8.0, 0.0] and np.isnan(got[0, 3])
    t = np.array([0.3], F32)
    x1, x2 = t64(X).chunk(2, -1)
    assert_within("fatrelu_mul", ops.fatrelu_mul(X, t), (torch.where(x1 >= 0.3, x1, 0.0) * x2).numpy())


def test_fatrelu_and_gelu_mul_tiling_limits():
    """The last dim even and at most 1024, the rows (the other dims' product) at most 200000, a
    threshold of one element: else the tiling's 561002."""
    one = tensor((1,))
    assert status("aclnnFatreluMul", tensor((2, 1024)), one, tensor((2, 512)))[0] == 0
    assert status("aclnnFatreluMul", tensor((2, 1026)), one, tensor((2, 513)))[0] == TILING
    assert status("aclnnGeluMul", tensor((200000, 2)), "tanh", tensor((200000, 1)))[0] == 0
    assert status("aclnnGeluMul", tensor((200001, 2)), "tanh", tensor((200001, 1)))[0] == TILING
    assert status("aclnnFatreluMul", tensor((2, 6)), tensor((1, 2)), tensor((2, 3)))[0] == TILING
    assert status("aclnnFatreluMul", tensor((2, 6)), tensor((1, 1, 1)), tensor((2, 3)))[0] == INVALID  # aclgen's


def test_situ_glu_linear_beta_is_decided_on_its_float():
    """linearBeta = 1e-50 is 0 as the f32 attribute CANN keeps: up is used as it is."""
    assert np.array_equal(ops.situ_glu(X, -1, 1.0, 1e-50), ops.situ_glu(X))


# -- checks and codes through aclnn ----------------------------------------------------------------


def tensor(shape=(2, 4), dtype: object = F32, fill=0.0, fmt=acl.ACL_FORMAT_ND):
    return checks.tensor(shape, dtype, fill, fmt)


H = (2, 2)  # (2, 4) split along its last dim


@pytest.mark.parametrize("api,args,code,says", [
    ("aclnnGlu", (None, -1, tensor(H)), NULL, "self is nullptr"),
    ("aclnnGlu", (tensor(dtype=np.int32), -1, tensor(H)), INVALID, "self dtype ACL_INT32"),
    ("aclnnGlu", (tensor(), -1, tensor(H, np.float16)), 0, ""),  # out castable from self
    ("aclnnGlu", (tensor(()), 0, tensor(())), INVALID, "self has 0 dims, at least 1"),
    ("aclnnGlu", (tensor(), 2, tensor(H)), INVALID, "dim 2 is outside [-2, 1]"),
    ("aclnnGlu", (tensor((2, 3)), -1, tensor(H)), INVALID, "odd size 3"),
    ("aclnnGlu", (tensor(), 0, tensor(H)), INVALID, "out shape [2, 2] must equal self shape with dim 0 halved"),
    ("aclnnGlu", (tensor((2,) * 9), 0, tensor((1,) + (2,) * 8)), INVALID, "9 dims"),
    ("aclnnGluBackward", (tensor(H, np.float16), tensor(), -1, tensor((3, 3))), INVALID, "gradOut dtype"),
    ("aclnnGluBackward", (tensor((2, 4)), tensor(), -1, tensor()), INVALID, "gradOut shape [2, 4]"),
    ("aclnnGluBackward", (tensor(H), tensor(), -1, tensor(H)), INVALID, "out shape [2, 2] must equal self shape"),
    ("aclnnSwiGlu", (tensor(), 2, tensor(H)), INVALID, "dim 2 is outside"),  # the doc's 161002
    ("aclnnSwiGlu", (tensor(), -1, tensor(H, BF16)), INVALID, "out dtype ACL_BF16 must equal"),
    ("aclnnFatreluMul", (tensor(), tensor((1,), np.float16), tensor(H)), INVALID, "threshold dtype"),
    ("aclnnFatreluMul", (tensor((2, 5)), tensor((1,)), tensor((2, 3))), INVALID, "out shape [2, 3]"),
    ("aclnnFatreluMul", (tensor((2, 5)), tensor((1,)), tensor(H)), TILING, "last dim 5 must be even"),
    ("aclnnFatreluMul", (tensor((4,)), tensor((1,)), tensor((2,))), TILING, "at least 2"),
    ("aclnnFatreluMul", (tensor((0, 4)), tensor((3,)), tensor((0, 2))), 0, ""),  # empty: no tiling
    ("aclnnGeluMul", (tensor(), None, tensor(H)), 0, ""),  # NULL is "none"
    ("aclnnGeluMul", (tensor(), "erf", tensor(H)), TILING, "must be 'none' or 'tanh'"),
    ("aclnnGeGlu", (tensor(), -1, 2, tensor(H), tensor(H)), INVALID, "approximate must be 0 (none) or 1"),
    ("aclnnGeGlu", (tensor(), -1, 2, tensor(H), tensor((2, 4))), INVALID, "outGelu shape"),  # shapes first
    ("aclnnGeGlu", (tensor(), -1, 1, tensor(H), tensor(H, np.float16)), INVALID, "outGelu dtype"),
    ("aclnnGeGlu", (tensor((0, 4)), -1, 1, tensor(H), tensor(H, np.float16)), INVALID, "out shape"),
    ("aclnnGeGlu", (tensor(()), 0, 1, tensor(()), tensor(())), INVALID, "no dim to split"),
    ("aclnnGeGlu", (tensor(()), 1, 1, tensor(()), tensor(())), INVALID, "dim 1 is outside [-1, 0]"),
    ("aclnnGeGluV3Backward", (tensor(H), tensor(), tensor((2, 4)), -1, 1, True, tensor()), INVALID,
     "gelu shape [2, 4] must equal gradOutput shape"),
    ("aclnnGeGluV3Backward", (tensor(H), tensor(), tensor(H), -1, 7, True, tensor()), INVALID, "approximate"),
    ("aclnnGeGluBackward", (tensor((1,) * 9), tensor((1,) * 8 + (2,)), tensor((1,) * 9), -1, 1,
                            tensor((1,) * 8 + (2,))), 0, ""),  # no dims limit
    ("aclnnSituGlu", (tensor(), -1, 1.0, 0.0, True, tensor(H, np.float16)), INVALID, "out dtype ACL_FLOAT16"),
    ("aclnnSituGlu", (tensor(), -1, 1.0, 0.0, 1, tensor(H)), INVALID, "activateLeft must be a bool"),
    ("aclnnSituGluGrad", (tensor((2, 3)), tensor(), -1, 1.0, 0.0, True, tensor()), INVALID, "gradY shape [2, 3]"),
    ("aclnnPrelu", (tensor((2, 3)), None, tensor((2, 3))), NULL, "weight is nullptr"),
    ("aclnnPrelu", (tensor((2, 3)), tensor((2,)), tensor((2, 3))), INVALID, "one per channel (3"),
    ("aclnnPrelu", (tensor((2, 3)), tensor((3,)), tensor((3, 2))), INVALID, "out shape [3, 2]"),
    ("aclnnPrelu", (tensor((2, 3)), tensor((3,)), tensor((2, 3), fmt=acl.ACL_FORMAT_NCHW)), INVALID,
     "out format ACL_FORMAT_NCHW must equal self format ACL_FORMAT_ND"),
    ("aclnnPrelu", (tensor((2, 3)), tensor((1, 3)), tensor((2, 3))), INVALID, "a weight of 0 or 1 dims"),
    ("aclnnPrelu", (tensor((5,)), tensor((5,)), tensor((5,))), INVALID, "one per channel (1"),
    ("aclnnPrelu", (tensor((2, 3), np.float16), tensor((3,), BF16), tensor((2, 3), BF16)), 0, ""),  # castable
    ("aclnnPreluBackward", (tensor((2, 3)), tensor((2, 3)), tensor((3,)), tensor((2, 3)), None), NULL,
     "gradWeight is nullptr"),
    ("aclnnPreluBackward", (tensor((2, 3)), tensor((2, 3), np.int32), tensor((3,)), tensor((2, 3)), tensor((3,))),
     INVALID, "self dtype ACL_INT32"),
    ("aclnnPreluBackward", (tensor((2, 3), np.float16), tensor((2, 3)), tensor((3,)), tensor((2, 3)), tensor((3,))),
     INVALID, "gradOutput dtype ACL_FLOAT16 must equal self"),
    ("aclnnPreluBackward", (tensor((2, 3)), tensor((2, 3)), tensor((3,)), tensor((3, 2)), tensor((3,))), INVALID,
     "gradInput shape [3, 2] must equal self shape"),
    ("aclnnPreluBackward", (tensor((2, 3)), tensor((2, 3)), tensor((2,)), tensor((2, 3)), tensor((2,))), INVALID,
     "one per channel (3"),
    ("aclnnPreluBackward", (tensor((2, 3)), tensor((2, 3)), tensor((3,)), tensor((2, 3)), tensor((1, 3))), INVALID,
     "gradWeight shape [1, 3] must be [3]"),
    ("aclnnPreluBackward", (tensor((2, 3)), tensor((2, 3)), tensor((1,)), tensor((2, 3)), tensor(())), INVALID,
     "gradWeight shape [] must equal weight shape [1]"),
    ("aclnnPreluBackward", (tensor(()), tensor(()), tensor((2,)), tensor(()), tensor((2,))), INVALID, "0 dims"),
    ("aclnnPreluBackward", (tensor((2, 3)), tensor((2, 3)), tensor((1, 3)), tensor((2, 3)), tensor((3,))), INVALID,
     "a weight of 0 or 1 dims"),
    ("aclnnPreluBackward", (tensor((4, 3)), tensor((2, 3)), tensor((3,)), tensor((2, 3)), tensor((3,))), INVALID,
     "are not broadcastable"),
    ("aclnnPreluBackward", (tensor((3, 2, 3)), tensor((2, 3)), tensor((3,)), tensor((2, 3)), tensor((3,))), INVALID,
     "gradOutput shape [3, 2, 3] must broadcast to self shape [2, 3]"),
    ("aclnnPreluBackward", (tensor((3,)), tensor((2, 3)), tensor((1,)), tensor((2, 3)), tensor((1,))), 0, ""),
    ("aclnnPreluBackward", (tensor((0, 3)), tensor((0, 3)), tensor((3,)), tensor((0, 3)), tensor((3,))), 0, ""),
])
def test_checks_and_codes(api, args, code, says):
    ret, message = status(api, *args)
    assert ret == code, message
    assert says in message, message


@pytest.mark.parametrize("api,soc_name,args", [
    ("aclnnSwiGlu", "Ascend910", (tensor(), -1, tensor(H))),  # 不支持
    ("aclnnFatreluMul", "Ascend950", (tensor(), tensor((1,)), tensor(H))),
    ("aclnnSituGlu", "Ascend310P", (tensor(), -1, 1.0, 0.0, True, tensor(H))),
    ("aclnnGlu", "Ascend910", (tensor(dtype=BF16), -1, tensor(H, BF16))),  # FLOAT and FLOAT16 only
    ("aclnnPrelu", "Ascend310P", (tensor(dtype=BF16), tensor((4,), BF16), tensor(dtype=BF16))),
])
def test_unsupported_chips_and_dtypes(api, soc_name, args, soc):
    soc(soc_name)
    assert status(api, *args)[0] == INVALID
