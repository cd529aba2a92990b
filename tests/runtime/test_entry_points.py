"""The numpy entry points (aclgen.ops.*) are thin wrappers over aclnn: same codes and messages."""

from __future__ import annotations

import numpy as np
import pytest

import aclgen.ops as ops
from aclgen import OperatorError
from tests import reference as ref


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
    with pytest.raises(OperatorError, match="gradOutput: a list becomes float64; SeluBackward takes"):
        ops.selu_backward([1.0, 2.0], [1.0, -1.0])
    got = ops.selu_backward(np.float32([1.0, 2.0]), [np.float32(1.0), np.float32(-1.0)])
    assert ref.same_bits(got, ref.selu_backward(np.float32([1, 2]), np.float32([1, -1])))


def test_partial_overlap_through_entry_point():
    g = np.linspace(-4, 4, 101, dtype=np.float32)
    x = np.linspace(4, -4, 100, dtype=np.float32)
    want = ref.hardswish_backward(g[:-1], x)
    ops.hardswish_backward(g[:-1], x, out=g[1:])
    assert ref.same_bits(g[1:], want)


# -- arguments that are not what they seem: refused, naming the API and the parameter ----------

G = np.ones(4, np.float32)
RANK33 = (np.ones((2,) + (1,) * 32, np.float32), np.ones((1,) * 32 + (2,), np.float32))  # broadcast: rank 33
MASKED = np.ma.masked_array(np.ones(3, np.float32), mask=[0, 1, 0])
BIG_ENDIAN = np.ones(4, ">f4")


@pytest.mark.parametrize("call,kind,message", [
    (lambda: ops.softshrink_backward(*RANK33, 0.5), OperatorError,
     "aclnnSoftshrinkBackward: gradOutput has 33 dims, at most 8 are supported"),
    (lambda: ops.threshold_backward(*RANK33, 0.5), OperatorError, "aclnnThresholdBackward: gradOutput has 33 dims"),
    (lambda: ops.hardswish_backward([1.0, 2.0], [1.0, 2.0]), OperatorError,
     "aclnnHardswishBackward: gradOutput: a list becomes float64; HardswishBackward takes float32, float16, bfloat16"),
    (lambda: ops.hardswish_backward(1.0, G), OperatorError,
     "aclnnHardswishBackward: gradOutput: a Python float becomes float64; HardswishBackward takes float32"),
    (lambda: ops.softshrink_backward(G, G, "0.1"), TypeError,
     "aclnnSoftshrinkBackward: lambd must be a number, got the string '0.1'"),
    (lambda: ops.hardswish_backward("1", G), TypeError, "aclnnHardswishBackward: gradOutput must be an array, got the string"),
    (lambda: ops.hardswish_backward(MASKED, MASKED), TypeError, "aclnnHardswishBackward: gradOutput is a masked array"),
    (lambda: ops.hardswish_backward(G, G, G), TypeError,
     r"aclnnHardswishBackward: hardswish_backward\(\) takes 2 positional arguments \(grad_output, self\), got 3; "
     r"`out` is keyword-only"),
    (lambda: ops.softshrink_backward(G, G, np.array([0.1, 0.2])), OperatorError,
     r"aclnnSoftshrinkBackward: lambd must be one number, got an array of 2 elements"),
    (lambda: ops.hardswish_backward(BIG_ENDIAN, BIG_ENDIAN), OperatorError,
     "aclnnHardswishBackward: gradOutput is a float32 array in the other byte order"),
    (lambda: ops.hardswish_backward(G, G, out=BIG_ENDIAN), OperatorError, "aclnnHardswishBackward: out is a float32 array"),
])
def test_arguments_that_would_be_misread_are_refused(call, kind, message):
    with pytest.raises(kind, match=message) as info:
        call()
    assert isinstance(info.value, OperatorError) and info.value.status == 161002


def test_out_is_keyword_only():
    import inspect

    out = np.zeros(4, np.float32)
    assert str(inspect.signature(ops.hardswish_backward)) == "(grad_output, self, *, out=None)"
    assert ops.hardswish_backward(G, G, out=out) is out
    assert ops.softshrink_backward(G, G, 0.5, out=out) is out  # scalars stay positional


def test_torch_tensors_that_require_grad_or_have_rank_40():
    torch = pytest.importorskip("torch")
    t = torch.ones(4, requires_grad=True)
    with pytest.raises(OperatorError, match=r"aclnnHardswishBackward: gradOutput requires grad.*\.detach\(\)"):
        ops.hardswish_backward(t, t)
    a, b = torch.ones((2,) + (1,) * 39), torch.ones((1,) * 39 + (2,))
    with pytest.raises(OperatorError, match="aclnnSoftshrinkBackward: gradOutput has 40 dims") as info:
        ops.softshrink_backward(a, b, 0.5)
    assert info.value.status == 161002
