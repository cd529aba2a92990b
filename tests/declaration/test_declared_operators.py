"""Operators declared outside the package (tests/declared_ops.py) get every face the built-ins
have: the Python call (numpy and DLPack), the aclnn API with SPEC §6's default checks, streams
and repeatable executors, the CLI, errors that name the user's code. The bad-input matrix runs
them too (tests/runtime/bad_inputs.py)."""

from __future__ import annotations

import os
import textwrap

import ml_dtypes
import numpy as np
import pytest

import aclgen
import aclgen.acl as acl
import aclgen.aclnn as aclnn
from aclgen import OperatorError, select
from aclgen.declaration import DeclarationError, registered
from tests import ROOT, declared_ops, runners
from tests.edges import float_specials
from tests.reference import same_bits

FILE = os.path.join("tests", "declared_ops.py")
leaky = declared_ops.suite_leaky_relu_backward
mul_add = declared_ops.suite_mul_add_backward
BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(np.float32), np.dtype(np.float16), BF16]


# ------------------------------------------------------------------------------ the references


def leaky_ref(g, x, slope):
    """g where x > 0 else g * f32(slope), in f32, rounded once into g's dtype."""
    g32, x32 = np.asarray(g).astype(np.float32), np.asarray(x).astype(np.float32)
    with np.errstate(all="ignore"):  # (the rounding into fp16 overflows where it should)
        r = np.where(x32 > np.float32(0), g32, g32 * np.float32(slope))
        return r.astype(np.asarray(g).dtype)


def mul_add_ref(g, a, b):
    g32, a32, b32 = (np.asarray(v).astype(np.float32) for v in (g, a, b))
    with np.errstate(all="ignore"):
        return (g32 * b32).astype(g.dtype), (g32 * a32 + g32).astype(g.dtype)


def data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    v = (rng.standard_normal(n) * 4).astype(np.float32)
    specials = float_specials(dtype, (0.01,)).astype(np.float32)
    k = min(n, len(specials))
    v[:k] = specials[:k]
    with np.errstate(over="ignore", invalid="ignore"):  # (specials: inf, NaN into every dtype)
        return rng.permutation(v).astype(dtype).reshape(shape)


# ------------------------------------------------------------------------------ 1. Python call


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shapes", [((1001,), (1001,)), ((7, 1, 33), (5, 1)), ((), (4, 3)), ((0, 3), (3,))])
def test_python_call_is_bit_exact_with_broadcasting(dtype, shapes):
    g, x = data(shapes[0], dtype, 1), data(shapes[1], dtype, 2)
    for slope in (0.01, -2.5, 0.0):
        assert same_bits(leaky(g, x, slope), leaky_ref(g, x, slope))


def test_python_call_on_views_in_place_and_keywords():
    g = data((64, 48), np.dtype(np.float32), 3)[::2, 5:37]  # strided
    x = data((48, 64), np.dtype(np.float32), 4).T[:32, :32]  # transposed
    want = leaky_ref(g, x, 0.3)
    assert same_bits(leaky(grad_output=g, self=x, negative_slope=0.3), want)
    gc = g.copy()
    assert leaky(gc, x, 0.3, out=gc) is gc and same_bits(gc, want)  # in place
    rev = np.empty_like(want)
    leaky(g, x, 0.3, out=rev[::-1])
    assert same_bits(rev[::-1], want)


def test_repeat_calls_replay_natively():
    g, x = data((1000,), np.dtype(np.float32), 5), data((1000,), np.dtype(np.float32), 6)
    out = np.empty_like(g)
    leaky(g, x, 0.2, out=out)
    assert leaky.replay(g, x, 0.2, out=out) is out  # recorded: the guards hold
    assert leaky.replay(g, x, 0.25, out=out) is None  # another slope: the full path
    g2 = data((1000,), np.dtype(np.float32), 7)
    assert same_bits(leaky(g2, x, 0.2), leaky_ref(g2, x, 0.2))


def test_two_outputs():
    a, b = data((3, 40), np.dtype(np.float32), 8), data((3, 40), np.dtype(np.float32), 9)
    g = data((3, 40), np.dtype(np.float32), 10)
    got = mul_add(g, a, b)
    assert isinstance(got, tuple) and len(got) == 2
    for o, w in zip(got, mul_add_ref(g, a, b)):
        assert same_bits(o, w)
    outs = (np.empty_like(g), np.empty_like(g))
    assert all(o is p for o, p in zip(mul_add(g, a, b, out=outs), outs))
    assert mul_add.replay(g, a, b, out=outs) is not None  # several outputs replay too
    with pytest.raises(OperatorError) as info:
        mul_add(g, a, b[:, :39])
    assert info.value.status == 161002 and "must equal gradOutput shape" in str(info.value)


def test_errors_carry_the_aclnn_status():
    g = np.zeros(4, np.int8)
    with pytest.raises(OperatorError) as info:
        leaky(g, g, 0.1)
    assert info.value.status == 161002
    assert str(info.value) == ("aclnnSuiteLeakyReluBackward: gradOutput dtype ACL_INT8 is not in "
                               "[ACL_FLOAT, ACL_FLOAT16, ACL_BF16]")
    with pytest.raises(OperatorError) as info:
        leaky(np.zeros(4, np.float32), np.zeros(3, np.float32), 0.1)
    assert "are not broadcastable" in str(info.value)
    with pytest.raises(TypeError):
        leaky(np.zeros(4, np.float32))  # a missing argument is Python's TypeError


@pytest.mark.parametrize("name", ["float32", "bfloat16"])
def test_dlpack_tensors_in_and_out(name):
    torch = pytest.importorskip("torch")
    tdt = getattr(torch, name)
    g = torch.linspace(-3, 3, 101).to(tdt)
    x = torch.linspace(2, -2, 101).to(tdt)
    got = leaky(g, x, 0.125)
    assert isinstance(got, torch.Tensor) and got.dtype == tdt
    want = leaky_ref(g.float().numpy().astype(DTYPES[0 if name == "float32" else 2]),
                     x.float().numpy().astype(DTYPES[0 if name == "float32" else 2]), 0.125)
    assert same_bits(got.float().numpy().astype(want.dtype), want)
    out = torch.empty(101, dtype=tdt)
    ptr = out.data_ptr()
    assert leaky(g, x, 0.125, out=out) is out and out.data_ptr() == ptr  # written in place, no copy
    assert torch.equal(out, got)


def test_builtins_take_torch_bf16_too():
    """`aclgen.ops` entry points go through the same DLPack path (numpy cannot hold torch bf16)."""
    torch = pytest.importorskip("torch")
    import aclgen.ops as ops
    from tests import reference as ref

    g = torch.linspace(-5, 5, 77).to(torch.bfloat16)
    got = ops.hardswish_backward(g, g)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bfloat16
    gn = g.float().numpy().astype(BF16)
    assert same_bits(got.float().numpy().astype(BF16), ref.hardswish_backward(gn, gn))
    t = ops.threshold_backward(g, g, 0.5)
    assert same_bits(t.float().numpy().astype(BF16), ref.threshold_backward(gn, gn, 0.5))


# ------------------------------------------------------------------------------ 2. the aclnn API


def test_aclnn_two_phases_streams_and_repeatable_executors():
    g, x = data((5, 8), np.dtype(np.float32), 11), data((8,), np.dtype(np.float32), 12)
    out = np.zeros((5, 8), np.float32)
    tg, tx, to = acl.from_numpy(g), acl.from_numpy(x), acl.from_numpy(out)
    slope = acl.create_scalar(0.05, acl.ACL_FLOAT)
    ws, ex, ret = aclnn.aclnnSuiteLeakyReluBackwardGetWorkspaceSize(tg, tx, slope, to)
    assert (ws, ret) == (0, 0), acl.get_recent_err_msg()
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    stream, ret = acl.rt.create_stream()
    for _ in range(3):
        assert aclnn.aclnnSuiteLeakyReluBackward(None, 0, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert same_bits(out, leaky_ref(np.broadcast_to(g, (5, 8)), np.broadcast_to(x, (5, 8)), 0.05))
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
    assert aclnn.aclnnSuiteLeakyReluBackward(None, 0, ex, stream) == 161002
    assert acl.rt.destroy_stream(stream) == 0


def test_aclnn_default_checks_in_order():
    f, b = np.zeros((4, 2), np.float32), np.zeros((4, 2), ml_dtypes.bfloat16)
    t = acl.from_numpy
    gws = aclnn.aclnnSuiteLeakyReluBackwardGetWorkspaceSize
    s = acl.create_scalar(0.1, acl.ACL_FLOAT)
    cases = [
        ((None, t(f), s, t(f)), 161001, "gradOutput is nullptr"),
        ((t(f), t(f), None, t(f)), 161001, "negativeSlope is nullptr"),
        ((t(f), t(f), s, "out"), 161002, "gradInput must be an aclTensor, got str"),
        ((t(np.zeros((4, 2), np.int32)), t(f), s, t(f)), 161002, "gradOutput dtype ACL_INT32 is not in"),
        ((t(f), t(b), s, t(f)), 161002, "self dtype ACL_BF16 must equal gradOutput dtype ACL_FLOAT"),
        ((t(np.zeros((1,) * 9, np.float32)), t(f), s, t(f)), 161002, "gradOutput has 9 dims"),
        ((t(f), t(np.zeros((3, 2), np.float32)), s, t(f)), 161002, "are not broadcastable"),
        ((t(f), t(f), s, t(np.zeros((4, 1), np.float32))), 161002, "must equal the broadcast shape [4, 2]"),
    ]
    for args, status, text in cases:
        ws, ex, ret = gws(*args)
        assert (ret, ex) == (status, None), (text, acl.get_recent_err_msg())
        assert text in acl.get_recent_err_msg()
    ws, ex, ret = aclnn.aclnnSuiteMulAddBackwardGetWorkspaceSize(t(f), t(f), t(f), t(f), t(f))
    assert ret == 0 and aclnn.aclnnSuiteMulAddBackward(None, ws, ex, None) == 0


def test_dtype_lists_follow_the_soc_profile():
    b = acl.from_numpy(np.zeros(4, ml_dtypes.bfloat16))
    gws = aclnn.aclnnSuiteMulAddBackwardGetWorkspaceSize
    try:
        assert acl.set_soc_version("Ascend910") == 0
        assert gws(b, b, b, b, b)[2] == 161002
        assert "is not in [ACL_FLOAT]" in acl.get_recent_err_msg()
        assert acl.set_soc_version("Ascend910B") == 0
        assert gws(b, b, b, b, b)[2] == 0
    finally:
        acl.set_soc_version(None)


def test_aclnn_lists_declared_functions():
    names = dir(aclnn)
    assert "aclnnSuiteLeakyReluBackwardGetWorkspaceSize" in names and "aclnnSuiteMulAddBackward" in names
    with pytest.raises(AttributeError):
        aclnn.aclnnNoSuchOperatorGetWorkspaceSize  # noqa: B018


# ------------------------------------------------------------------------------ 3. the CLI


def test_cli_ops_compile_and_run_a_modules_operators():
    r = runners.aclgen("ops", FILE, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "hardswish_backward" in r.stdout  # next to the built-ins
    assert "aclnnSuiteLeakyReluBackward(gradOutput, self, negativeSlope, gradInput)" in r.stdout
    assert "suite_mul_add_backward(grad_output, self, other, *, out=None)" in r.stdout
    r = runners.aclgen("compile", f"{FILE}:SuiteLeakyReluBackward", "--dtype", "float16", "--emit", "ew", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "ew.kernel" in r.stdout and "f16" in r.stdout
    r = runners.aclgen("run", f"{FILE}:suite_leaky_relu_backward", "--shape", "33x17", "--dtype", "bfloat16",
                           "--param", "negativeSlope=0.25", "--seconds", "0.01", cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "max error   0  (0 of 561 elements differ" in r.stdout
    r = runners.aclgen("run", f"{FILE}:suite_mul_add_backward", "--shape", "10x3", "--seconds", "0.01", cwd=ROOT)
    assert r.returncode == 0 and "(0 of 60 elements differ" in r.stdout, r.stdout + r.stderr
    r = runners.aclgen("run", f"{FILE}:NoSuchOp", cwd=ROOT)
    assert r.returncode == 1 and "declares no operator 'NoSuchOp'" in r.stderr


# ------------------------------------------------------------------------------ 4. errors


def test_declaring_a_name_twice_is_an_error_naming_it():
    with pytest.raises(DeclarationError, match=r"'SuiteLeakyReluBackward' is declared twice: first at .*declared_ops\.py"):
        @aclgen.operator("SuiteLeakyReluBackward", inputs=("g",), outputs=("y",))
        def other(g):
            return g


def test_untraceable_formula_is_refused_where_it_is_declared(tmp_path):
    with pytest.raises(aclgen.FormulaError) as info:
        @aclgen.operator("SuiteBadBranch", inputs=("gradOutput", "self"), outputs=("out",))
        def bad(g, x):
            if x > 0:  # Python control flow on traced values cannot be compiled
                return g
            return x
    assert "test_declared_operators.py:" in str(info.value) and "truth value" in str(info.value)
    assert "SuiteBadBranch" not in registered()
    module = tmp_path / "user_ops.py"
    module.write_text(textwrap.dedent('''
        import math
        import aclgen

        @aclgen.operator("SuiteUsesMath", inputs=("gradOutput",), outputs=("out",))
        def uses_math(g):
            return math.exp(g)
    '''))
    r = runners.aclgen("compile", f"{module}:SuiteUsesMath", "--dtype", "float32", cwd=ROOT)
    assert r.returncode == 1
    assert f"SuiteUsesMath: {module}:7: math.exp is not a formula function: use aclgen.exp" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_a_formula_of_the_wrong_arity_is_refused_at_declaration():
    with pytest.raises(DeclarationError, match="must take 3 arguments"):
        @aclgen.operator("SuiteArity", inputs=("a", "b"), scalars=("s",), outputs=("y",))
        def arity(a, b):
            return select(a > b, a, b)
    assert "SuiteArity" not in registered()


# ------------------------------------------------------------------------------ 5. the matrix


def test_the_bad_input_matrix_runs_the_declared_operators():
    from tests.runtime.bad_inputs import ROWS

    for op in declared_ops.OPERATORS:
        rows = [name for name in ROWS if name.startswith(op.python_name + "-")]
        assert any("-default-" in name for name in rows), op.name
        assert any(name.endswith("-none") for name in rows), op.name
