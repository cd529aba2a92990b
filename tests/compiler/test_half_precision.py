"""aclgen/passes/half_precision.py through the operators over an axis: which of their exps take the
half-type form (the forms' accuracy is tests/compiler/test_math.py's; the operators' bounds are
tests/ops/)."""

import pytest

import aclgen
from aclgen import dtypes as dt
from aclgen.compiler import Options, compile_variant
from aclgen.ops import OPERATORS
from aclgen.passes.expansions.log import Q_HALF, Q

HALF_LN2 = "-0.6931471824645996"  # exp's half form reduces by ln 2 as one f32
C1 = "-0.693145751953125"  # the f32 form by Cody-Waite's C1


def expanded(name: str, dtype: str, cols: int = 0) -> str:
    """The IR after expand-math of operator `name`'s rank-2 variant in `dtype`."""
    op = OPERATORS[name]
    variant = op.variant((dt.dtype(dtype),) * len(op.kernel_inputs), 2)
    return compile_variant(op.formula, op.python_name, variant, op.params, op.kernel_arg_names, Options()).ir["expand-math"]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_softmax_sums_its_exps_in_the_half_form(dtype):
    """Softmax's exps feed the row's sum (an accumulator carried through the loops, then lane
    shuffles and adds: nonnegative throughout), the f32 row buffer the last pass reads, and the
    division by the sum before the half-type store: every exp takes the half form."""
    ir = expanded("softmax", dtype)
    assert ir.count(HALF_LN2) >= 2 and C1 not in ir


def test_softmax_stored_as_float32_keeps_the_f32_form():
    ir = expanded("softmax", "float32")
    assert HALF_LN2 not in ir and C1 in ir


def test_a_log_of_the_sum_keeps_the_f32_form():
    """LogSoftmax stores x - max - log(sum): the sum goes through a log, whose relative error is
    not bounded by its argument's, and the subtraction may cancel; its exps keep the f32 form."""
    ir = expanded("log_softmax", "bfloat16")
    assert HALF_LN2 not in ir and C1 in ir


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_difference_of_opposite_signs_takes_the_half_forms(dtype):
    """LogSigmoid stores min(x, 0) - log1p(exp(-|x|)): a value <= 0 minus one >= 0 (log1p of a
    nonnegative exp), which cannot cancel, so both exp and log1p take their half forms."""
    ir = expanded("log_sigmoid", dtype)
    assert HALF_LN2 in ir and C1 not in ir
    assert repr(Q_HALF[0]) in ir and repr(Q[0]) not in ir


def test_a_difference_of_one_sign_keeps_the_f32_forms():
    """exp(x) - 1 and log1p(exp(x)) - exp(x) can cancel (the operands share a sign): f32 forms."""
    for formula in (lambda x: aclgen.exp(x) - 1.0, lambda x: aclgen.log1p(aclgen.exp(x)) - aclgen.exp(x)):
        ir = aclgen.compile(formula, "bfloat16", name="one_sign").kernel.ir["expand-math"]
        assert HALF_LN2 not in ir and C1 in ir
    ir = aclgen.compile(lambda x: aclgen.exp(x) + 1.0, "bfloat16", name="sum_of_one_sign").kernel.ir["expand-math"]
    assert HALF_LN2 in ir and C1 not in ir
