"""Declared operators as torch custom ops (aclgen/runtime/torch_library.py): registered only once
torch is imported, traced by torch.compile(fullgraph=True) through either face, and
differentiable through the operator a declaration names as its backward."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import aclgen
import aclgen.ops as ops
from aclgen.declaration import unregister
from tests import reference as ref

torch = pytest.importorskip("torch")
# torch.compile's own machinery still calls a deprecated torch.jit API (torch 2.13)
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")


@pytest.fixture(scope="module")
def cube():
    """A forward operator and its backward, as CANN pairs them (XxxBackward(gradOutput, self))."""

    @aclgen.operator("SuiteCubeBackward", inputs=("gradOutput", "self"), outputs=("gradInput",))
    def suite_cube_backward(g, x):
        return g * (x * x * 3.0)

    @aclgen.operator("SuiteCube", inputs=("self",), outputs=("out",), backward="SuiteCubeBackward")
    def suite_cube(x):
        return x * x * x

    yield suite_cube
    unregister("SuiteCube")
    unregister("SuiteCubeBackward")


def test_registered_only_once_torch_is_imported():
    code = """
import importlib.util, json, sys
import aclgen.ops
before = "torch" in sys.modules
assert importlib.util.find_spec("torch") is not None  # a probe, as libraries make: imports nothing
import torch
g, x = torch.tensor([-1.0, -0.5, 0.25, 1.0, 2.0]), torch.tensor([-4.0, -3.0, 0.5, 3.0, 5.0])
print(json.dumps({"before": before, "result": torch.ops.aclgen.hardswish_backward(g, x).tolist()}))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       cwd=tempfile.gettempdir())
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["before"] is False  # aclgen never imports torch
    g, x = np.float32([-1.0, -0.5, 0.25, 1.0, 2.0]), np.float32([-4.0, -3.0, 0.5, 3.0, 5.0])
    assert np.array_equal(np.float32(out["result"]), ref.hardswish_backward(g, x))


def test_torch_op_matches_the_python_call():
    g, x = torch.randn(3, 5), torch.randn(3, 5) * 4
    assert torch.equal(torch.ops.aclgen.softshrink_backward(g, x, 0.5), ops.softshrink_backward(g, x, 0.5))
    assert torch.ops.aclgen.swi_glu_grad(torch.ones(2, 4), torch.ones(2, 8), -1).shape == (2, 8)


@pytest.mark.parametrize("face", ["python", "torch.ops"])
def test_compiled_fullgraph(face):
    torch._dynamo.reset()
    if face == "python":
        def fn(g, x):
            return ops.hardswish_backward(g, x) * 2 + ops.swi_glu_grad(g[:, :2], x[:, :4], -1).sum()
    else:
        def fn(g, x):
            return torch.ops.aclgen.hardswish_backward(g, x) * 2 + torch.ops.aclgen.swi_glu_grad(
                g[:, :2], x[:, :4], -1).sum()
    g, x = torch.randn(4, 8), torch.randn(4, 8) * 4
    compiled = torch.compile(fn, fullgraph=True)
    torch.testing.assert_close(compiled(g, x), fn(g, x))


def test_compiled_with_out():
    torch._dynamo.reset()

    def fn(g, x, out):
        ops.threshold_backward(g, x, 0.5, out=out)
        return out + 1

    g, x = torch.randn(16), torch.randn(16)
    out = torch.empty(16)
    got = torch.compile(fn, fullgraph=True)(g, x, out)
    torch.testing.assert_close(got, torch.where(x <= 0.5, 0.0, g) + 1)


def test_backward_runs_the_declared_backward_operator(cube):
    """torch knows nothing of the custom op's derivative: the gradient can only come from the
    declared SuiteCubeBackward's kernel."""
    x = torch.linspace(-2, 2, 9, requires_grad=True)
    (cube(x) * torch.arange(9.0)).sum().backward()  # the Python call: routed to the torch op
    torch.testing.assert_close(x.grad, 3 * x.detach() ** 2 * torch.arange(9.0))
    x.grad = None
    torch.ops.aclgen.suite_cube(x).sum().backward()
    torch.testing.assert_close(x.grad, 3 * x.detach() ** 2)


def test_backward_through_a_compiled_graph(cube):
    torch._dynamo.reset()

    def loss(x):
        return (torch.ops.aclgen.suite_cube(x) * x).sum()

    x = torch.linspace(-2, 2, 9, requires_grad=True)
    torch.compile(loss, fullgraph=True)(x).backward()
    torch.testing.assert_close(x.grad, 4 * x.detach() ** 3)


def test_requires_grad_without_a_backward_is_refused():
    t = torch.ones(4, requires_grad=True)
    with pytest.raises(aclgen.OperatorError, match=r"HardswishBackward declares no backward operator.*\.detach\(\)"):
        ops.hardswish_backward(t, t)


def test_plain_torch_tensors_replay_as_numpy_views(monkeypatch):
    """A call of plain CPU torch tensors runs on numpy views of their memory: it is recorded
    and replayed like a numpy call (the second call never reaches the full path), its results
    are torch tensors over the result's memory (bfloat16 included), `out=` tensors are written
    in place and returned, strided views and mixed numpy inputs work, and a multi-output
    operator returns a tuple of tensors."""
    from aclgen.codegen import native
    from aclgen.runtime.function import Function

    native.clear_replays()
    g = torch.randn(6, 40)
    x = torch.randn(6, 80)[:, ::2]  # strided
    want = ops.hardswish_backward(g.numpy(), x.numpy())
    got = ops.hardswish_backward(g, x)
    assert type(got) is torch.Tensor and got.dtype is torch.float32
    np.testing.assert_array_equal(got.numpy(), want)

    def no_full_path(self, args, out):
        raise AssertionError("the second call took the full path")

    g2 = g * -2.0
    with monkeypatch.context() as m:
        m.setattr(Function, "_call", no_full_path)
        again = ops.hardswish_backward(g2, x)
    np.testing.assert_array_equal(again.numpy(), ops.hardswish_backward(g2.numpy(), x.numpy()))

    out = torch.empty(6, 40)
    assert ops.hardswish_backward(g, x, out=out) is out
    np.testing.assert_array_equal(out.numpy(), want)
    mixed = ops.hardswish_backward(g.numpy(), x)
    assert type(mixed) is torch.Tensor
    np.testing.assert_array_equal(mixed.numpy(), want)

    b = x.contiguous().bfloat16()
    y = ops.hardswish(b)
    assert type(y) is torch.Tensor and y.dtype is torch.bfloat16
    assert torch.equal(y, torch.from_numpy(ops.hardswish(b.float().numpy().astype(ref.BF16)).view(np.int16)).view(torch.bfloat16))

    w = torch.randn(40)
    y, rstd = ops.rms_norm(g, w, 1e-6)
    assert type(y) is torch.Tensor and type(rstd) is torch.Tensor and tuple(rstd.shape) == (6, 1)
    y_np, rstd_np = ops.rms_norm(g.numpy(), w.numpy(), 1e-6)
    np.testing.assert_array_equal(y.numpy(), y_np)
    np.testing.assert_array_equal(rstd.numpy(), rstd_np)
