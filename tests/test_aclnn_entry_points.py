"""The numpy entry points (aclgen.ops.*) are thin wrappers over aclnn: same codes and messages."""

from __future__ import annotations

import numpy as np
import pytest

import aclgen.ops as ops
from aclgen import OperatorError
from tests import aclnn_reference as ref


def test_signatures_and_results():
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    assert ref.same_bits(ops.hardswish_backward(x, x), ref.hardswish_backward(x, x))
    assert ref.same_bits(ops.selu_backward(grad_output=x, result=-x), ref.selu_backward(x, -x))
    assert ref.same_bits(ops.softshrink_backward(x, x, lambd=2.0), ref.softshrink_backward(x, x, 2.0))
    assert ref.same_bits(ops.threshold_backward(x, x, threshold=3), ref.threshold_backward(x, x, 3))
    g = np.ones((4, 1), np.float32)
    assert ops.swi_glu_grad(g, x, dim=-1).shape == (4, 2)
    out = np.empty((4, 2), np.float32)
    assert ops.hardswish_backward(x, x, out=out) is out


@pytest.mark.parametrize("fn,args,status,message", [
    (ops.hardswish_backward, (np.zeros(2, np.int8), np.zeros(2, np.int8)), 161002,
     "aclnnHardswishBackward: gradOutput dtype ACL_INT8 is not in [ACL_FLOAT, ACL_FLOAT16, ACL_BF16]"),
    (ops.hardswish_backward, (None, np.zeros(2, np.float32)), 161001, "aclnnHardswishBackward: gradOutput is nullptr"),
    (ops.hardswish_backward, (np.zeros(2), np.zeros(2)), 161002, "gradOutput dtype ACL_DOUBLE is not in"),
    (ops.selu_backward, (np.zeros(2, np.uint8), np.zeros(2, np.uint8)), 161002, "ACL_UINT8 is not in"),
    (ops.softshrink_backward, (np.zeros(2, np.float32), np.zeros(2, np.float32), -1.0), 161002,
     "lambd must be >= 0, got -1.0"),
    (ops.softshrink_backward, (np.zeros(2, np.float32), np.zeros(3, np.float32), 1.0), 161002, "not broadcastable"),
    (ops.swi_glu_grad, (np.zeros((2, 2), np.float32), np.zeros((2, 5), np.float32)), 561002, "odd size 5"),
    (ops.swi_glu_grad, (np.zeros((2, 2), np.float32), np.zeros((2, 4), np.float32), 3), 561002, "dim 3 is outside"),
    (ops.threshold_backward, (np.zeros(2, np.int64), np.zeros(2, np.int64), 0.0), 161002, "ACL_INT64 is not in"),
])
def test_errors_carry_status_and_message(fn, args, status, message):
    with pytest.raises(OperatorError) as e:
        fn(*args)
    assert e.value.status == status
    assert message in str(e.value)


def test_out_checks():
    x = np.zeros((4, 2), np.float32)
    with pytest.raises(OperatorError, match="out shape \\[2, 4\\] must equal gradOutput shape \\[4, 2\\]"):
        ops.hardswish_backward(x, x, out=np.zeros((2, 4), np.float32))
    ro = np.zeros((4, 2), np.float32)
    ro.flags.writeable = False
    with pytest.raises(OperatorError, match="out is read-only"):
        ops.hardswish_backward(x, x, out=ro)
    with pytest.raises(OperatorError, match="must be a numpy array"):
        ops.hardswish_backward(x, x, out=[0.0])


def test_negative_strides_and_lists():
    a = np.linspace(-5, 5, 11, dtype=np.float32)
    out = np.zeros(11, np.float32)
    ops.threshold_backward(a[::-1], a, 0.0, out=out[::-1])  # reversed views are copied in and out
    assert ref.same_bits(out[::-1], ref.threshold_backward(a[::-1], a, 0.0))
    with pytest.raises(OperatorError, match="ACL_DOUBLE"):  # lists become float64 arrays: rejected
        ops.selu_backward([1.0, 2.0], [1.0, -1.0])
    got = ops.selu_backward(np.float32([1.0, 2.0]), [np.float32(1.0), np.float32(-1.0)])
    assert ref.same_bits(got, ref.selu_backward(np.float32([1, 2]), np.float32([1, -1])))


def test_partial_overlap_through_entry_point():
    g = np.linspace(-4, 4, 101, dtype=np.float32)
    x = np.linspace(4, -4, 100, dtype=np.float32)
    want = ref.hardswish_backward(g[:-1], x)
    ops.hardswish_backward(g[:-1], x, out=g[1:])
    assert ref.same_bits(g[1:], want)
