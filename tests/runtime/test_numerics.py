"""Results through the aclnn API against tests/reference.py: every dtype of every SoC
profile, strided/offset/broadcast/zero-stride views, in-place and overlapping outputs, rank 0..8,
and the multi-threaded path. Bit-exact except SwiGluGrad (SPEC §4.4's error bound)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import aclgen.acl as acl
from aclgen.declaration import SOCS
from aclgen.tools.run import input_shapes
from tests import reference as ref
from tests.edges import values
from tests.registry import extras, resolve, seeds
from tests.runtime.aclnn_calls import call

EXACT = [op.python_name for op in seeds() if ref.exact(op.python_name)]
BROADCASTING = [op.python_name for op in seeds() if ref.exact(op.python_name) and op.broadcast]


def op_dtypes():
    return [(op.python_name, soc, d) for op in seeds() for soc in SOCS for d in op.dtypes[soc]]


def run_op(key, g, x, out, param=None, dim=-1):
    """Two-phase call on numpy-backed tensors; returns the status."""
    tg, tx, to = acl.from_numpy(g), acl.from_numpy(x), acl.from_numpy(out)
    scalars = [dim if s.kind == "int64" else acl.create_scalar(param, acl.ACL_DOUBLE) for s in extras(resolve(key))]
    return call(key, tg, tx, *scalars, to)


def reference(key, g, x, param=None):
    op = resolve(key)
    return getattr(ref, op.python_name)(g, x, *([param] if extras(op) else []))


def check(key, out, g, x, param=None, dim=-1):
    op = resolve(key)
    if not ref.exact(op.python_name):
        assert not getattr(ref, f"{op.python_name}_violations")(out, g, x, dim).any()
    else:
        want = reference(key, g, x, param)
        assert ref.same_bits(out, want), f"{key}: got {out.ravel()[:8]} want {want.ravel()[:8]}"


@pytest.mark.parametrize("key,soc_name,dtype", op_dtypes(), ids=[f"{k}-{s}-{d}" for k, s, d in op_dtypes()])
def test_every_dtype_of_every_profile(key, soc_name, dtype, soc):
    soc(soc_name)
    rng = np.random.default_rng(abs(hash((key, dtype))) % 2**32)
    npd = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    n = 67  # not a multiple of any vector width
    param = 0.0 if dtype == "int64" else 1.2
    op = resolve(key)
    if op.input_shapes is not None:  # SwiGluGrad: x [3, 2n], yGrad [3, n]
        sg, sx = input_shapes(op, (3, 2 * n))
        g, x = values(npd, int(np.prod(sg)), rng).reshape(sg), values(npd, int(np.prod(sx)), rng).reshape(sx)
        x = np.where(np.isnan(x.astype(np.float32)) | np.isinf(x.astype(np.float32)), 1, x).astype(npd)
    else:
        g, x = values(npd, n, rng), rng.permutation(values(npd, n, rng))
    out = np.zeros(np.broadcast_shapes(x.shape, g.shape) if op.broadcast else x.shape, npd)
    assert run_op(key, g, x, out, param) == 0, acl.get_recent_err_msg()
    check(key, out, g, x, param)


LAYOUTS = {
    "transposed": lambda a: a.reshape(6, 10).T,
    "stepped": lambda a: a.reshape(6, 10)[::2, 1::3],
    "sliced": lambda a: a.reshape(6, 10)[1:5, 2:9],
    "rank0": lambda a: a[7:8].reshape(()),
    "rank8": lambda a: a[:32].reshape(2, 2, 2, 1, 1, 1, 2, 2),
    "size1-dims": lambda a: a[:12].reshape(1, 3, 1, 4),
}


@pytest.mark.parametrize("key", EXACT)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_non_contiguous_views(key, layout):
    rng = np.random.default_rng(5)
    make = LAYOUTS[layout]
    g, x = make(values(np.dtype(np.float32), 60, rng)), make(rng.permutation(values(np.dtype(np.float32), 60, rng)))
    base = np.zeros((g.size * 3,), np.float32)
    out = base[::3][: g.size].reshape(g.shape) if g.ndim else base[:1].reshape(())  # strided output too
    assert run_op(key, g, x, out, 0.5) == 0, acl.get_recent_err_msg()
    check(key, out, g, x, 0.5)
    if g.ndim:
        assert not base.reshape(-1, 3)[:, 1:].any()  # nothing written between the output's elements


def test_offset_and_zero_stride_views_in_runtime_memory():
    """aclTensors built by hand: a storage offset, a zero-stride (repeated) input, a gap stride."""
    host = np.arange(-20, 20, dtype=np.float32) / 4
    ptr, _ = acl.rt.malloc(host.nbytes, 0)
    acl.rt.memcpy(ptr, host.nbytes, host.ctypes.data, host.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    g = acl.create_tensor([3, 5], acl.ACL_FLOAT, [7, 1], 4, acl.ACL_FORMAT_ND, [40], ptr)
    x = acl.create_tensor([3, 5], acl.ACL_FLOAT, [0, 2], 9, acl.ACL_FORMAT_ND, [40], ptr)
    out_ptr, _ = acl.rt.malloc(4 * 64, 0)
    acl.rt.memset(out_ptr, 256, 0, 256)
    o = acl.create_tensor([3, 5], acl.ACL_FLOAT, [16, 2], 3, acl.ACL_FORMAT_ND, [64], out_ptr)
    assert call("hardswish", g, x, o) == 0, acl.get_recent_err_msg()
    gv = np.lib.stride_tricks.as_strided(host[4:], (3, 5), (28, 4))
    xv = np.lib.stride_tricks.as_strided(host[9:], (3, 5), (0, 8))
    got = np.zeros(64, np.float32)
    acl.rt.memcpy(got, 256, out_ptr, 256, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    ov = np.lib.stride_tricks.as_strided(got[3:], (3, 5), (64, 8))
    assert ref.same_bits(ov, ref.hardswish_backward(gv, xv))
    mask = np.ones(64, bool)
    mask[[3 + 16 * i + 2 * j for i in range(3) for j in range(5)]] = False
    assert not got[mask].any()
    acl.rt.free(ptr)
    acl.rt.free(out_ptr)


@pytest.mark.parametrize("key", BROADCASTING)
@pytest.mark.parametrize("shapes", [((5, 1, 6), (4, 6)), ((6,), (3, 1)), ((), (2, 3)), ((1, 1), (1,))])
def test_broadcast(key, shapes):
    rng = np.random.default_rng(9)
    gs, xs = shapes
    g = values(np.dtype(np.float32), int(np.prod(gs)), rng).reshape(gs)
    x = values(np.dtype(np.float32), int(np.prod(xs)), rng).reshape(xs)
    out = np.zeros(np.broadcast_shapes(gs, xs), np.float32)
    assert run_op(key, g, x, out, 1.2) == 0, acl.get_recent_err_msg()
    check(key, out, np.broadcast_to(g, out.shape), np.broadcast_to(x, out.shape), 1.2)


@pytest.mark.parametrize("gd,xd", [("float16", "float32"), ("bfloat16", "float16"), ("float32", "bfloat16")])
def test_softshrink_mixed_dtypes_promote_to_float(gd, xd):
    rng = np.random.default_rng(2)
    to = lambda d: np.dtype(ml_dtypes.bfloat16) if d == "bfloat16" else np.dtype(d)
    g, x = values(to(gd), 50, rng), values(to(xd), 50, rng)
    out = np.zeros(50, np.float32)
    assert run_op("softshrink", g, x, out, 0.5) == 0, acl.get_recent_err_msg()
    check("softshrink", out, g, x, 0.5)


@pytest.mark.parametrize("lambd", [0.0, 3.0, np.inf, np.nan])
def test_softshrink_lambdas(lambd):
    x = np.array([np.nan, 3.0, -3.0, 3.0000002, np.inf, -np.inf, 0.0, -0.0], np.float32)
    g = np.arange(1, 9, dtype=np.float32)
    out = np.zeros(8, np.float32)
    assert run_op("softshrink", g, x, out, lambd) == 0
    check("softshrink", out, g, x, lambd)


@pytest.mark.parametrize("dtype,t", [("int8", 2.9), ("int8", -0.5), ("int8", 1000.0), ("int8", -1000.0),
                                     ("uint8", -0.5), ("uint8", 254.99), ("int32", -7.7), ("int32", 3e9),
                                     ("int32", np.nan), ("float16", 1.0009765625), ("bfloat16", -0.1)])
def test_threshold_integer_truncation_and_ranges(dtype, t):
    rng = np.random.default_rng(4)
    npd = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    g, x = values(npd, 100, rng), values(npd, 100, rng)
    out = np.zeros(100, npd)
    assert run_op("threshold", g, x, out, t) == 0
    check("threshold", out, g, x, t)


def test_threshold_int64_on_ascend950(soc):
    soc("Ascend950")
    x = np.array([-2**63, -1, 0, 1, 2**63 - 1], np.int64)
    g = np.array([5, 6, 7, 8, 9], np.int64)
    out = np.zeros(5, np.int64)
    assert run_op("threshold", g, x, out, 1e-7) == 0
    assert np.array_equal(out, [0, 0, 0, 8, 9])


def test_selu_integer_saturation():
    g = np.array([127, -128, 100, 1, 3, -3, 0, 127], np.int8)
    y = np.array([-100, -100, 50, 1, -1, 0, 5, 2], np.int8)
    out = np.zeros(8, np.int8)
    assert run_op("selu", g, y, out) == 0
    check("selu", out, g, y)
    g32 = np.array([2**31 - 1, -2**31, 7, 3], np.int32)
    y32 = np.array([5, 5, -1, 0], np.int32)
    out32 = np.zeros(4, np.int32)
    assert run_op("selu", g32, y32, out32) == 0
    check("selu", out32, g32, y32)


@pytest.mark.parametrize("key", EXACT)
def test_in_place(key):
    rng = np.random.default_rng(11)
    g0, x = values(np.dtype(np.float32), 100, rng), values(np.dtype(np.float32), 100, rng)
    want = reference(key, g0, x, 0.7)
    for target in ("g", "x"):
        g, xx = g0.copy(), x.copy()
        out = g if target == "g" else xx
        assert run_op(key, g, xx, out, 0.7) == 0
        assert ref.same_bits(out, want)


def test_swiglu_in_place_and_overlap():
    rng = np.random.default_rng(12)
    x0 = rng.standard_normal((4, 3, 10)).astype(np.float32)
    g = rng.standard_normal((4, 3, 5)).astype(np.float32)
    x = x0.copy()
    tx = acl.from_numpy(x)
    ws, ex, ret = acl_gws_swiglu(acl.from_numpy(g), tx, -1, tx)
    assert ret == 0 and ws == 0  # out = x exactly: each half updates in place
    assert call("swiglu", acl.from_numpy(g), tx, -1, tx) == 0
    assert not ref.swi_glu_grad_violations(x, g, x0, -1).any()
    buf = np.zeros(4 * 3 * 10 + 7, np.float32)
    buf[: g.size] = g.ravel()
    gv = buf[: g.size].reshape(g.shape)
    ov = buf[7:].reshape(x0.shape)  # out overlaps yGrad partially: staged through the workspace
    ws, ex, ret = acl_gws_swiglu(acl.from_numpy(gv), acl.from_numpy(x0), -1, acl.from_numpy(ov))
    assert ret == 0 and ws >= ov.nbytes
    assert call("swiglu", acl.from_numpy(gv), acl.from_numpy(x0), -1, acl.from_numpy(ov)) == 0
    assert not ref.swi_glu_grad_violations(ov, g, x0, -1).any()


def acl_gws_swiglu(*args):
    import aclgen.aclnn as aclnn

    return aclnn.aclnnSwiGluGradGetWorkspaceSize(*args)


@pytest.mark.parametrize("dim", [0, 1, -1, -3])
def test_swiglu_dims_and_views(dim):
    rng = np.random.default_rng(13)
    shape = [4, 6, 8]
    x = rng.standard_normal([s * 2 for s in shape]).astype(np.float32)[::2, 1::2, ::2]  # strided x
    half = list(x.shape)
    half[dim] //= 2
    g = rng.standard_normal(half).astype(np.float32)
    out = np.zeros(x.shape, np.float32).T.copy().T  # column-major out
    assert run_op("swiglu", g, x, out, dim=dim) == 0, acl.get_recent_err_msg()
    assert not ref.swi_glu_grad_violations(out, g, x, dim).any()


def test_multithreaded_split_is_exact():
    rng = np.random.default_rng(14)
    n = (1 << 19) + 123
    g, x = values(np.dtype(np.float32), n, rng), values(np.dtype(np.float32), n, rng)
    out = np.zeros(n, np.float32)
    assert run_op("hardswish", g, x, out) == 0
    check("hardswish", out, g, x)
