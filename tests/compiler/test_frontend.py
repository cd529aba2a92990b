"""The DSL: tracing, weak constants, errors that point at the user's line, user operators."""

import math
import re
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

import aclgen
from aclgen import FormulaError, absolute, f32, isnan, logical_and, logical_not, logical_or, select
from tests import runners

HERE = __file__


def line_of(fn, text: str) -> int:
    import inspect

    src, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(src) if text in line)


def bad_if(x):
    if x > 0:  # BAD-IF
        return x
    return -x


def bad_math(x):
    return math.erf(x)  # BAD-MATH


def bad_numpy(x):
    return np.tanh(x) * 2.0  # BAD-NUMPY


def bad_max(x):
    return max(x, 0.0)  # BAD-MAX


def bad_clip(x):
    return np.clip(x, -1.0, 1.0)  # BAD-CLIP


def bad_chain(x):
    return select(0 < x < 1, x, 0.0)  # BAD-CHAIN


def bad_select(x):
    return select(x, x, 0.0)  # BAD-SELECT


def bad_round(x):
    return round(x, 2)  # BAD-ROUND


def bad_count(x):
    y = x * 2.0
    return y, y  # BAD-COUNT


@pytest.mark.parametrize(
    "fn,marker,words",
    [
        (bad_if, "BAD-IF", "truth value"),
        (bad_math, "BAD-MATH", "math.erf is not a formula function: use aclgen.erf"),
        (bad_numpy, "BAD-NUMPY", "np.tanh is not a formula function: use aclgen.tanh"),
        (bad_max, "BAD-MAX", "max is not a formula function: use aclgen.maximum"),
        (bad_clip, "BAD-CLIP", "np.clip is not a formula function: use aclgen.clamp"),
        (bad_chain, "BAD-CHAIN", "truth value"),
        (bad_select, "BAD-SELECT", "needs a mask"),
        (bad_round, "BAD-ROUND", "use aclgen.round(x)"),
    ],
)
def test_errors_name_the_users_line_and_what_to_write(fn, marker, words):
    with pytest.raises(FormulaError) as info:
        aclgen.compile(fn)  # traced at once: nothing compiles, the error is the declaration's
    msg = str(info.value)
    assert f"{HERE}:{line_of(fn, marker)}:" in msg, msg
    assert words in msg, msg
    assert marker in msg  # the source line is quoted


def test_torch_functions_are_named_too():
    torch = pytest.importorskip("torch")

    def bad_torch(x):
        return torch.tanh(x)  # BAD-TORCH

    with pytest.raises(FormulaError, match=re.escape("torch.tanh is not a formula function: use aclgen.tanh")) as info:
        aclgen.compile(bad_torch)
    assert f"{HERE}:{line_of(bad_torch, 'BAD-TORCH')}:" in str(info.value)


def test_a_wrong_number_of_results_points_at_the_return():
    with pytest.raises(FormulaError, match="returns 2 values but the operator has 1 output") as info:
        aclgen.operator("SuiteBadCount", inputs=("self",), outputs=("out",))(bad_count)
    assert f"{HERE}:{line_of(bad_count, 'BAD-COUNT')}:" in str(info.value)
    assert aclgen.declaration.lookup("SuiteBadCount") is None  # not registered


def test_a_broken_operator_is_never_registered():
    with pytest.raises(FormulaError, match=re.escape("use aclgen.tanh")):
        aclgen.operator("SuiteBadNumpy", inputs=("self",), outputs=("out",))(bad_numpy)
    assert aclgen.declaration.lookup("SuiteBadNumpy") is None


def test_declaring_traces_without_the_compiler(tmp_path):
    """A declaration traces its formula (so errors surface at import) but imports no xDSL."""
    code = textwrap.dedent("""
        import sys
        import aclgen

        @aclgen.operator("SuiteLight", inputs=("self",), outputs=("out",))
        def light(x):
            return aclgen.select(x > 0.0, aclgen.exp(x), x * x)

        try:
            @aclgen.operator("SuiteHeavy", inputs=("self",), outputs=("out",))
            def heavy(x):
                return max(x, 0.0)
        except aclgen.FormulaError as exc:
            print("error:", str(exc).splitlines()[0].split(": ", 1)[1])
        print("xdsl" in sys.modules, aclgen.declaration.lookup("SuiteHeavy"))
    """)
    (tmp_path / "declares.py").write_text(code)
    out = subprocess.run([sys.executable, str(tmp_path / "declares.py")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["error: max is not a formula function: use aclgen.maximum", "False None"]


def test_cli_ops_names_every_broken_operator(tmp_path):
    module = tmp_path / "broken_ops.py"
    module.write_text(textwrap.dedent("""
        import math
        import numpy as np
        import aclgen

        @aclgen.operator("SuiteUsesMath", inputs=("self",), outputs=("out",))
        def uses_math(x):
            return math.erf(x)

        @aclgen.operator("SuiteFine", inputs=("self",), outputs=("out",))
        def fine(x):
            return x * 2.0

        @aclgen.operator("SuiteUsesNumpy", inputs=("self",), outputs=("out",))
        def uses_numpy(x):
            return np.tanh(x)
    """))
    r = runners.aclgen("ops", str(module), timeout=120)
    assert r.returncode == 1
    assert "2 operators cannot be compiled" in r.stderr
    assert f"SuiteUsesMath: {module}:8: math.erf is not a formula function: use aclgen.erf" in r.stderr
    assert f"SuiteUsesNumpy: {module}:16: np.tanh is not a formula function: use aclgen.tanh" in r.stderr


def test_power_with_constant_exponents_is_what_torch_computes():
    x = np.array([-3.0, -0.5, 0.0, -0.0, 0.5, 2.0, np.inf, -np.inf, np.nan, 1e20], np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(aclgen.compile(lambda x: x**2)(x), x * x)
        np.testing.assert_array_equal(aclgen.compile(lambda x: x**3)(x), x * x * x)
        np.testing.assert_array_equal(aclgen.compile(lambda x: x**-1)(x), np.float32(1) / x)
        np.testing.assert_array_equal(aclgen.compile(lambda x: x**1.0)(x), x)
        np.testing.assert_array_equal(aclgen.compile(lambda x: x**0)(x), np.ones_like(x))  # even NaN (C99 pow)


def test_unknown_param_is_reported():
    with pytest.raises(FormulaError, match="nope"):
        aclgen.compile(lambda x: x, params=("nope",))


def test_user_operator_with_params_and_broadcast():
    def leaky_backward(g, x, slope):
        return select(x > 0.0, g, g * slope)

    op = aclgen.compile(leaky_backward, dtypes="float32", params=("slope",))
    g = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    x = np.array([-1.0, 0.0, 1.0, np.nan], np.float32)
    got = op(g, x, slope=0.25)
    slope = np.float32(0.25)
    want = np.where(x > 0, g, g * slope)
    np.testing.assert_array_equal(got, want)
    assert "ew.select" in op.ir["ew"] and "leaky_backward" in op.ir["dsl"]


def test_user_operator_multiple_outputs_and_mixed_dtypes():
    def two(a, b):
        return a + b, absolute(a - b)

    op = aclgen.compile(two, dtypes={"a": "float16", "b": "bfloat16"}, out_dtypes=["float32", "bfloat16"])
    a = np.array([1.5, -2.0, np.inf], np.float16)
    b = np.array([0.25, 3.0, 1.0], ml_dtypes.bfloat16)
    s, d = op(a, b)
    assert s.dtype == np.float32 and d.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(s, a.astype(np.float32) + b.astype(np.float32))
    np.testing.assert_array_equal(d, np.abs(a.astype(np.float32) - b.astype(np.float32)).astype(ml_dtypes.bfloat16))


def test_params_in_any_argument_position():
    op = aclgen.compile(lambda t, x: select(x <= t, 0.0, x), params=("t",))
    np.testing.assert_array_equal(op(np.array([1.0, 2.0, 3.0], np.float32), t=2.0), [0.0, 0.0, 3.0])


def test_weak_integer_literals_keep_integer_selects_exact():
    op = aclgen.compile(lambda g, x: select(x <= 0, 0, g), dtypes="int32")
    g = np.array([2**31 - 1, -(2**31), 16777217, 5], np.int32)
    x = np.array([1, 1, 1, 0], np.int32)
    np.testing.assert_array_equal(op(g, x), [2**31 - 1, -(2**31), 16777217, 0])  # no trip through f32
    assert "ew.convert" not in op.ir["legalize-dtypes"]


def test_logical_ops_and_isnan():
    def f(x):
        inside = logical_and(x >= -1.0, x <= 1.0)
        return select(logical_or(logical_not(inside), isnan(x)), 1.0, 0.0)

    op = aclgen.compile(f)
    x = np.array([-2, -1, 0, 1, 2, np.nan], np.float32)
    np.testing.assert_array_equal(op(x), [1, 0, 0, 0, 1, 1])
    op2 = aclgen.compile(lambda x: select(~((x >= -1.0) & (x <= 1.0)) | (x != x), 1.0, 0.0))
    np.testing.assert_array_equal(op2(x), [1, 0, 0, 0, 1, 1])


def test_explicit_f32_constant_and_dsl_listing():
    op = aclgen.compile(lambda x: x * f32(1 / 3))
    assert "f32(0.3333333432674408)" in op.ir["dsl"]
    assert "test_frontend.py" in op.ir["dsl"]


def test_stages_are_all_kept():
    op = aclgen.compile(lambda x: absolute(x))
    from aclgen.compiler import STAGES

    assert list(op.ir) == list(STAGES)
    assert "llvm.func" in op.ir["llvm-dialect"] and "define void" in op.ir["llvm"]
