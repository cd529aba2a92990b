"""aclTensor / aclScalar creation, numpy and DLPack views, destroy semantics."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import aclgen.acl as acl
from tests.runtime.aclnn_calls import gws


def test_create_tensor_fields_and_repr():
    buf = np.zeros(16, np.float32)
    t = acl.create_tensor([2, 3], acl.ACL_FLOAT, [4, 1], 2, acl.ACL_FORMAT_NCHW, [16], buf.ctypes.data)
    assert t.view_dims == (2, 3) and t.strides == (4, 1) and t.offset == 2 and t.storage_dims == (16,)
    assert t.format == acl.ACL_FORMAT_NCHW and t.dtype == acl.ACL_FLOAT and t.data == buf.ctypes.data
    assert "ACL_FORMAT_NCHW" in repr(t) and "ACL_FLOAT" in repr(t)
    buf[:] = np.arange(16)
    assert np.array_equal(acl.to_numpy(t), [[2, 3, 4], [6, 7, 8]])


@pytest.mark.parametrize("args,fragment", [
    (([2, "x"], 0, None, 0, 2, None, 0), "view_dims must be a sequence of ints"),
    (([2, 3], 0, [1], 0, 2, None, 0), "1 strides for 2 view dims"),
    (([2], 99, None, 0, 2, None, 0), "data_type 99 is not an aclDataType"),
    (([2], 0, None, 0, 5, None, 0), "format 5 is not an aclFormat"),
    (([2], 0, None, 0.5, 2, None, 0), "offset must be an int"),
    (([2], 0, None, 0, 2, None, -8), "is not an address"),
    (([2], 0, None, 0, 2, None, "p"), "data must be an int"),
])
def test_create_tensor_malformed_gives_none(args, fragment):
    assert acl.create_tensor(*args) is None
    assert fragment in acl.get_recent_err_msg()


def test_every_listed_dtype_can_be_created():
    for code in (-1, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 27, 29, 30, 33, 34, 35, 36, 37, 38, 39, 40, 41):
        assert acl.create_tensor([2], code, [1], 0, acl.ACL_FORMAT_ND, [2], 4096) is not None, code


def test_null_tensor_from_create_is_161001():
    bad = acl.create_tensor("oops", 0, None, 0, 2, None, 0)
    assert bad is None
    _, _, ret = gws("hardswish")(bad, bad, bad)
    assert ret == 161001


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.int32, np.int64,
                                   np.uint8, np.float64, np.bool_, np.int16])
def test_from_numpy_to_numpy_zero_copy(dtype):
    a = np.arange(24).astype(dtype).reshape(2, 3, 4)
    view = a[:, 1:, ::2]
    t = acl.from_numpy(view)
    assert t.view_dims == (2, 2, 2) and t.strides == (12, 4, 2) and t.problem is None
    back = acl.to_numpy(t)
    assert back.dtype == a.dtype and np.array_equal(back, view)
    back[...] = 0  # writes land in `a`
    assert not view.any()


def test_from_numpy_negative_strides_and_lifetime():
    a = np.arange(10, dtype=np.float32)
    t = acl.from_numpy(a[::-3])
    assert t.strides == (-3,) and t.problem == "strides [-3] contain a negative stride"
    one = acl.from_numpy(a[::-1][:1])  # a size-1 dim never steps: usable
    assert one.problem is None
    t2 = acl.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    import gc

    gc.collect()
    assert np.array_equal(acl.to_numpy(t2), np.arange(6).reshape(2, 3))  # the tensor keeps the array


def test_from_numpy_rejects_what_it_cannot_view():
    with pytest.raises(TypeError):
        acl.from_numpy(np.array(["a"]))
    with pytest.raises(TypeError):
        acl.from_numpy([1.0, 2.0])
    rec = np.zeros(4, dtype=[("a", np.float32), ("b", np.int8)])
    with pytest.raises((TypeError, ValueError)):
        acl.from_numpy(rec["a"])


def test_from_numpy_read_only_stays_read_only():
    a = np.zeros(4, np.float32)
    a.flags.writeable = False
    assert not acl.to_numpy(acl.from_numpy(a)).flags.writeable


def test_dlpack_from_numpy():
    a = np.arange(12, dtype=np.int32).reshape(3, 4).T
    t = acl.from_dlpack(a)
    assert t.dtype == acl.ACL_INT32 and np.array_equal(acl.to_numpy(t), a)


def test_dlpack_from_torch_incl_bfloat16():
    torch = pytest.importorskip("torch")
    x = torch.arange(24, dtype=torch.bfloat16).reshape(4, 6)[1:, ::2]
    t = acl.from_dlpack(x)
    assert t.dtype == acl.ACL_BF16 and t.strides == (6, 2) and t.view_dims == (3, 3)
    assert np.array_equal(acl.to_numpy(t).astype(np.float32), x.float().numpy())
    g = torch.linspace(-5, 5, 16)
    out = torch.zeros(16)
    ws, ex, ret = gws("threshold")(acl.from_dlpack(g), acl.from_dlpack(g), acl.create_scalar(0.0, acl.ACL_FLOAT),
                                   acl.from_dlpack(out))
    assert ret == 0
    import aclgen.aclnn as aclnn

    assert aclnn.aclnnThresholdBackward(None, ws, ex, None) == 0
    assert torch.equal(out, torch.where(g <= 0, torch.zeros(()), g))  # written through the DLPack view


def test_dlpack_rejects_non_cpu_and_junk():
    with pytest.raises(TypeError):
        acl.from_dlpack(object())


@pytest.mark.parametrize("value,dtype,stored,f32", [
    (1.1, acl.ACL_FLOAT, np.float32(1.1), float(np.float32(1.1))),
    (1.1, acl.ACL_FLOAT16, np.float16(1.1), float(np.float16(1.1))),
    (1.1, acl.ACL_BF16, ml_dtypes.bfloat16(1.1), float(ml_dtypes.bfloat16(1.1))),
    (1.1, acl.ACL_DOUBLE, 1.1, float(np.float32(1.1))),
    (2.9, acl.ACL_INT32, 2, 2.0),
    (-2.9, acl.ACL_INT32, -2, -2.0),
    (300, acl.ACL_INT8, 44, 44.0),
    (-1, acl.ACL_UINT8, 255, 255.0),
    (2**40 + 1, acl.ACL_INT64, 2**40 + 1, float(np.float32(2**40))),
    (1e39, acl.ACL_FLOAT, np.float32(np.inf), np.inf),
    (True, acl.ACL_BOOL, True, 1.0),
])
def test_create_scalar_stores_in_its_dtype(value, dtype, stored, f32):
    sc = acl.create_scalar(value, dtype)
    assert sc.value == stored and type(sc.value) is type(stored)
    assert sc.f32 == f32


@pytest.mark.parametrize("value,dtype", [(np.nan, acl.ACL_INT32), (np.inf, acl.ACL_INT8), ("x", acl.ACL_FLOAT),
                                         (1.0, acl.ACL_STRING), (1.0, acl.ACL_COMPLEX64)])
def test_create_scalar_rejects(value, dtype):
    assert acl.create_scalar(value, dtype) is None
    assert acl.get_recent_err_msg().startswith("create_scalar: ")


def test_destroy_semantics():
    t = acl.from_numpy(np.zeros(2, np.float32))
    assert acl.destroy_tensor(None) == 0
    assert acl.destroy_tensor(t) == 0
    assert acl.destroy_tensor(t) == 161002
    assert acl.destroy_tensor(acl.create_scalar(1, 0)) == 161002
    sc = acl.create_scalar(1.0, acl.ACL_FLOAT)
    assert acl.destroy_scalar(sc) == 0 and acl.destroy_scalar(sc) == 161002
    with pytest.raises(ValueError):
        acl.to_numpy(t)
