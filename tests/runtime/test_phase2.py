"""Phase 2 (aclnnXxx) checks, executor life cycle, workspace, and views outside storage."""

from __future__ import annotations

import numpy as np
import pytest

import aclgen.acl as acl
import aclgen.aclnn as aclnn
from tests.registry import builtins
from tests.runtime.aclnn_calls import gws, run, s, t

HS = "aclnnHardswishBackward"


def hs_executor(n=8):
    g = acl.from_numpy(np.arange(n, dtype=np.float32))
    out = np.zeros(n, np.float32)
    ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(g, g, acl.from_numpy(out))
    assert ret == 0
    return ex, out


def test_constants():
    assert aclnn.ACLNN_SUCCESS == 0 and aclnn.ACLNN_ERR_PARAM_NULLPTR == 161001
    assert aclnn.ACLNN_ERR_PARAM_INVALID == 161002 and aclnn.ACLNN_ERR_RUNTIME_ERROR == 361001
    assert aclnn.ACLNN_ERR_INNER == 561000 and aclnn.ACLNN_ERR_INNER_TILING_ERROR == 561002
    assert aclnn.ACLNN_ERR_INNER_CREATE_EXECUTOR == 561101 and aclnn.ACLNN_ERR_INNER_NULLPTR == 561103
    assert (acl.ACL_FLOAT, acl.ACL_FLOAT16, acl.ACL_INT8, acl.ACL_INT32, acl.ACL_UINT8) == (0, 1, 2, 3, 4)
    assert (acl.ACL_INT16, acl.ACL_UINT16, acl.ACL_UINT32, acl.ACL_INT64, acl.ACL_UINT64) == (6, 7, 8, 9, 10)
    assert (acl.ACL_DOUBLE, acl.ACL_BOOL, acl.ACL_STRING, acl.ACL_COMPLEX64, acl.ACL_COMPLEX128) == (11, 12, 13, 16, 17)
    assert (acl.ACL_BF16, acl.ACL_INT4, acl.ACL_UINT1, acl.ACL_COMPLEX32, acl.ACL_HIFLOAT8) == (27, 29, 30, 33, 34)
    assert (acl.ACL_FLOAT8_E5M2, acl.ACL_FLOAT8_E4M3FN, acl.ACL_FLOAT8_E8M0) == (35, 36, 37)
    assert (acl.ACL_FLOAT6_E3M2, acl.ACL_FLOAT6_E2M3, acl.ACL_FLOAT4_E2M1, acl.ACL_FLOAT4_E1M2) == (38, 39, 40, 41)
    assert acl.ACL_DT_UNDEFINED == -1 and acl.ACL_FORMAT_UNDEFINED == -1
    assert (acl.ACL_FORMAT_NCHW, acl.ACL_FORMAT_NHWC, acl.ACL_FORMAT_ND, acl.ACL_FORMAT_NC1HWC0) == (0, 1, 2, 3)
    assert (acl.ACL_FORMAT_FRACTAL_Z, acl.ACL_FORMAT_NC1HWC0_C04, acl.ACL_FORMAT_HWCN) == (4, 12, 16)
    assert (acl.ACL_FORMAT_NDHWC, acl.ACL_FORMAT_FRACTAL_NZ, acl.ACL_FORMAT_NCDHW) == (27, 29, 30)
    assert (acl.ACL_FORMAT_NDC1HWC0, acl.ACL_FRACTAL_Z_3D, acl.ACL_FORMAT_NC, acl.ACL_FORMAT_NCL) == (32, 33, 35, 47)
    assert (acl.ACL_MEMCPY_HOST_TO_HOST, acl.ACL_MEMCPY_HOST_TO_DEVICE) == (0, 1)
    assert (acl.ACL_MEMCPY_DEVICE_TO_HOST, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == (2, 3)
    assert (acl.ACL_MEM_MALLOC_HUGE_FIRST, acl.ACL_MEM_MALLOC_HUGE_ONLY, acl.ACL_MEM_MALLOC_NORMAL_ONLY) == (0, 1, 2)
    assert (acl.ACL_SUCCESS, acl.ACL_ERROR_INVALID_PARAM, acl.ACL_ERROR_BAD_ALLOC) == (0, 100000, 200000)
    assert acl.ACLNN_ERR_PARAM_INVALID == 161002  # also on acl


@pytest.mark.parametrize("op", [op.python_name for op in builtins()])
def test_phase2_null_executor(op):
    assert run(op)(None, 0, None, None) == 161001
    assert acl.get_recent_err_msg().endswith("executor is nullptr")


def test_phase2_checks_in_order():
    ex, out = hs_executor()
    assert aclnn.aclnnHardswishBackward(None, 16, ex, None) == 161001
    assert acl.get_recent_err_msg() == f"{HS}: workspace is nullptr but workspaceSize is 16"
    assert aclnn.aclnnHardswishBackward(None, -1, ex, None) == 161002
    assert aclnn.aclnnHardswishBackward(None, 0, "executor", None) == 161002
    assert acl.get_recent_err_msg() == f"{HS}: executor must be an aclOpExecutor, got str"
    assert aclnn.aclnnSeluBackward(None, 0, ex, None) == 161002
    assert "executor was made by aclnnHardswishBackwardGetWorkspaceSize" in acl.get_recent_err_msg()
    assert aclnn.aclnnHardswishBackward(None, 0, ex, "stream") == 161002
    assert "stream must be an aclrtStream" in acl.get_recent_err_msg()
    assert not out.any()  # none of the failures ran it
    assert aclnn.aclnnHardswishBackward(None, 0, ex, None) == 0
    assert out[3] == 4.5


def test_executor_consumed_by_a_run():
    ex, out = hs_executor()
    assert aclnn.aclnnHardswishBackward(None, 0, ex, None) == 0
    assert aclnn.aclnnHardswishBackward(None, 0, ex, None) == 161002
    assert acl.get_recent_err_msg() == f"{HS}: executor was already run and is not repeatable"
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 161002
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_repeatable_executor_runs_until_destroyed():
    g = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(acl.from_numpy(g), acl.from_numpy(g), acl.from_numpy(out))
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    for k in range(3):
        g[:] = k  # the executor reads the buffers at run time
        assert aclnn.aclnnHardswishBackward(None, 0, ex, None) == 0
        want = np.float32(k) * (np.float32(k) * np.float32(1 / 3) + np.float32(0.5)) if k <= 3 else k
        assert out[0] == np.float32(want)
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
    assert aclnn.aclnnHardswishBackward(None, 0, ex, None) == 161002
    assert acl.get_recent_err_msg() == f"{HS}: executor was destroyed"
    assert aclnn.aclDestroyAclOpExecutor(ex) == 161002
    assert aclnn.aclDestroyAclOpExecutor(None) == 161001
    assert aclnn.aclSetAclOpExecutorRepeatable(None) == 161001
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 161002
    assert aclnn.aclDestroyAclOpExecutor(42) == 161002


def test_destroyed_tensors_do_not_break_a_planned_executor():
    """The executor keeps the memory it was planned on, even after destroy/free (no crash)."""
    ptr, _ = acl.rt.malloc(32, 0)
    g = acl.create_tensor([8], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [8], ptr)
    ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(g, g, g)
    assert ret == 0
    acl.destroy_tensor(g)
    assert acl.rt.free(ptr) == 0
    assert aclnn.aclnnHardswishBackward(None, 0, ex, None) == 361001
    assert "was freed before the call ran" in acl.get_recent_err_msg()


def partial_overlap_case():
    """out = buf[1:] overlaps gradOutput = buf[:-1]: the plan must stage through a workspace."""
    buf_ptr, _ = acl.rt.malloc(4 * 65, 0)
    host = np.arange(-32, 33, dtype=np.float32)
    acl.rt.memcpy(buf_ptr, 4 * 65, host.ctypes.data, 4 * 65, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    g = acl.create_tensor([64], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [65], buf_ptr)
    o = acl.create_tensor([64], acl.ACL_FLOAT, [1], 1, acl.ACL_FORMAT_ND, [65], buf_ptr)
    x = acl.from_numpy(np.linspace(-4, 4, 64, dtype=np.float32))
    return buf_ptr, host, g, x, o


def test_partial_overlap_is_staged_and_workspace_checked():
    from tests.reference import hardswish_backward, same_bits

    buf_ptr, host, g, x, o = partial_overlap_case()
    ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(g, x, o)
    assert ret == 0 and ws >= 64 * 4
    assert aclnn.aclnnHardswishBackward(None, ws, ex, None) == 161001
    assert aclnn.aclnnHardswishBackward(None, 0, ex, None) == 161002
    assert "workspaceSize 0 is smaller than the" in acl.get_recent_err_msg()
    small, _ = acl.rt.malloc(ws - 1, 0)
    assert aclnn.aclnnHardswishBackward(small, ws, ex, None) == 161002  # claims more than it has
    assert "does not hold" in acl.get_recent_err_msg()
    fake = np.zeros(ws, np.uint8)
    assert aclnn.aclnnHardswishBackward(fake.ctypes.data, ws, ex, None) == 161002  # not runtime memory
    wsp, _ = acl.rt.malloc(ws, 0)
    assert aclnn.aclnnHardswishBackward(wsp, ws, ex, None) == 0
    got = np.empty(65, np.float32)
    acl.rt.memcpy(got.ctypes.data, got.nbytes, buf_ptr, got.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert same_bits(got[1:], hardswish_backward(host[:-1], acl.to_numpy(x)))
    assert got[0] == host[0]
    for p in (buf_ptr, small, wsp):
        assert acl.rt.free(p) == 0


def test_exact_in_place_needs_no_workspace():
    a = np.linspace(-5, 5, 100, dtype=np.float32)
    want = a.copy()
    ta = acl.from_numpy(a)
    ws, ex, ret = aclnn.aclnnThresholdBackwardGetWorkspaceSize(ta, ta, s(0.5), ta)
    assert (ws, ret) == (0, 0)
    assert aclnn.aclnnThresholdBackward(None, 0, ex, None) == 0
    assert np.array_equal(a, np.where(want <= 0.5, 0, want).astype(np.float32))


def test_empty_tensors_write_nothing():
    out = np.full(0, 7, np.float32)
    guard = np.full(4, 7, np.float32)
    o = acl.create_tensor([0, 4], acl.ACL_FLOAT, [4, 1], 0, acl.ACL_FORMAT_ND, [4], guard.ctypes.data)
    g = acl.create_tensor([0, 4], acl.ACL_FLOAT, [4, 1], 0, acl.ACL_FORMAT_ND, [0], None)
    ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(g, g, o)
    assert (ws, ret) == (0, 0), acl.get_recent_err_msg()
    assert aclnn.aclnnHardswishBackward(None, 0, ex, None) == 0
    assert (guard == 7).all() and out.size == 0


VIEW_CASES = [
    ("storage too small", dict(dims=[4, 2], strides=[2, 1], offset=0, storage=[7]),
     "out view (dims [4, 2], strides [2, 1], offset 0) reaches element 7, outside its storage of 7 elements [7]"),
    ("offset past storage", dict(dims=[4, 2], strides=[2, 1], offset=1, storage=[8]), "reaches element 8"),
    ("stride too big", dict(dims=[4, 2], strides=[3, 1], offset=0, storage=[8]), "reaches element 10"),
    ("negative stride", dict(dims=[4, 2], strides=[-2, 1], offset=6, storage=[8]),
     "out strides [-2, 1] contain a negative stride"),
    ("negative offset", dict(dims=[4, 2], strides=[2, 1], offset=-1, storage=[8]), "storage offset -1 is negative"),
    ("negative storage", dict(dims=[4, 2], strides=[2, 1], offset=0, storage=[-8]), "storage dims [-8] contain"),
    ("past allocation", dict(dims=[4, 2], strides=[2, 1], offset=0, storage=[8], alloc=28),
     "out view ends 4 bytes past its allocation of 28 bytes"),
    ("null data", dict(dims=[4, 2], strides=[2, 1], offset=0, storage=[8], null=True),
     "out data is nullptr but the view has 8 elements"),
]


@pytest.mark.parametrize("name,spec,message", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_outside_storage_is_161002(name, spec, message):
    size = spec.get("alloc", 64)
    ptr, ret = acl.rt.malloc(size, 0)
    data = None if spec.get("null") else ptr
    o = acl.create_tensor(spec["dims"], acl.ACL_FLOAT, spec["strides"], spec["offset"], acl.ACL_FORMAT_ND,
                          spec["storage"], data)
    assert o is not None
    for op, args in (("hardswish", lambda: (t(), t(), o)), ("threshold", lambda: (t(), t(), s(), o))):
        ws, ex, ret = gws(op)(*args())
        assert (ex, ret) == (None, 161002)
        assert message in acl.get_recent_err_msg()
    acl.rt.free(ptr)


def test_negative_dims_are_161002():
    neg = acl.create_tensor([-4, 2], acl.ACL_FLOAT, [2, 1], 0, acl.ACL_FORMAT_ND, [8], np.zeros(8).ctypes.data)
    _, _, ret = gws("hardswish")(neg, neg, neg)
    assert ret == 161002
    assert acl.get_recent_err_msg() == f"{HS}: gradOutput view dims [-4, 2] contain a negative dim"


def test_view_check_comes_after_the_op_checks_and_before_empty():
    bad = acl.create_tensor([4, 2], acl.ACL_FLOAT, [2, 1], 0, acl.ACL_FORMAT_ND, [1], np.zeros(1).ctypes.data)
    _, _, ret = gws("hardswish")(t(), t(), bad)
    assert ret == 161002 and "reaches element 7" in acl.get_recent_err_msg()
    _, _, ret = gws("hardswish")(t(dtype=acl.ACL_INT8), t(), bad)
    assert "dtype ACL_INT8" in acl.get_recent_err_msg()
    empty_bad = acl.create_tensor([0, 2], acl.ACL_FLOAT, [-2, 1], 0, acl.ACL_FORMAT_ND, [0], None)
    _, _, ret = gws("hardswish")(t((0, 2)), t((0, 2)), empty_bad)
    assert ret == 161002 and "negative stride" in acl.get_recent_err_msg()


def test_freed_memory_and_read_only_outputs_rejected():
    ptr, _ = acl.rt.malloc(32, 0)
    o = acl.create_tensor([4, 2], acl.ACL_FLOAT, [2, 1], 0, acl.ACL_FORMAT_ND, [8], ptr)
    acl.rt.free(ptr)
    _, _, ret = gws("hardswish")(t(), t(), o)
    assert ret == 161002 and "out memory at" in acl.get_recent_err_msg() and "was freed" in acl.get_recent_err_msg()
    ro = np.zeros((4, 2), np.float32)
    ro.flags.writeable = False
    _, _, ret = gws("hardswish")(t(), t(), acl.from_numpy(ro))
    assert ret == 161002 and acl.get_recent_err_msg() == f"{HS}: out is read-only"
    _, _, ret = gws("hardswish")(acl.from_numpy(ro), t(), t())  # read-only inputs are fine
    assert ret == 0


def test_errors_are_per_thread():
    import threading

    gws("hardswish")(None, t(), t())
    seen = []
    th = threading.Thread(target=lambda: seen.append(acl.get_recent_err_msg()))
    th.start()
    th.join()
    assert seen == [""]
    assert acl.get_recent_err_msg() == f"{HS}: gradOutput is nullptr"


def test_two_kernel_calls_are_remembered_but_staged_ones_are_not():
    """RmsNormGrad (dx, then dgamma) checked and planned once per set of objects: a second
    two-phase call with the same tensors runs the remembered kernels on their current data; dx
    written over dy needs the workspace (the dgamma kernel reads dy afterwards), which is planned
    again every time and stays right."""
    from aclgen.ops import rms_norm_grad

    rng = np.random.default_rng(2)
    dy, x = (rng.standard_normal((6, 40)).astype(np.float32) for _ in range(2))
    rstd = rng.random((6, 1)).astype(np.float32) + 0.5
    g = rng.standard_normal(40).astype(np.float32)
    dx, dg = np.empty_like(x), np.empty(40, np.float32)
    tensors = [acl.from_numpy(a) for a in (dy, x, rstd, g, dx, dg)]
    for scale in (1.0, -3.0):
        dy *= np.float32(scale)
        ws, ex, ret = aclnn.aclnnRmsNormGradGetWorkspaceSize(*tensors)
        assert (ws, ret) == (0, 0)
        assert aclnn.aclnnRmsNormGrad(None, 0, ex, None) == 0
        want_dx, want_dg = rms_norm_grad(dy, x, rstd, g)
        assert np.array_equal(dx, want_dx) and np.array_equal(dg, want_dg)
    inplace = [tensors[0], *tensors[1:4], tensors[0], tensors[5]]  # dxOut is dy
    for _ in range(2):
        want_dx, want_dg = rms_norm_grad(dy, x, rstd, g)
        ws, ex, ret = aclnn.aclnnRmsNormGradGetWorkspaceSize(*inplace)
        assert ret == 0 and ws >= dy.nbytes
        wsp, _ = acl.rt.malloc(ws, 0)
        assert aclnn.aclnnRmsNormGrad(wsp, ws, ex, None) == 0
        assert acl.rt.free(wsp) == 0
        assert np.array_equal(dy, want_dx) and np.array_equal(dg, want_dg)
        dy[...] = rng.standard_normal(dy.shape).astype(np.float32)
    assert acl.destroy_tensor(tensors[2]) == 0
    assert aclnn.aclnnRmsNormGradGetWorkspaceSize(*tensors)[2] == 161002
    assert "rstd was destroyed" in acl.get_recent_err_msg()
