"""Operators the test suite declares itself, as a user's module would (SPEC.md §6): one output
with a scalar and broadcasting, and two outputs. The bad-input matrix (tests/runtime/bad_inputs.py)
runs them through the same rows as the built-ins; tests/declaration/test_declared_operators.py checks every
face. Their names are the suite's own, so a user's LeakyReluBackward never collides with them."""

import aclgen
from aclgen import select

OPERATORS = []


@aclgen.operator(
    "SuiteLeakyReluBackward",
    inputs=("gradOutput", "self"),
    outputs=("gradInput",),
    scalars=("negativeSlope",),
    dtypes=("float32", "float16", "bfloat16"),
    broadcast=True,
)
def suite_leaky_relu_backward(g, x, negative_slope):
    """g where x > 0, else g * negativeSlope."""
    return select(x > 0.0, g, g * negative_slope)


@aclgen.operator(
    "SuiteMulAddBackward",
    inputs=("gradOutput", "self", "other"),
    outputs=("gradSelf", "gradOther"),
    dtypes={"Ascend910B": ("float32", "bfloat16"), "Ascend910": ("float32",)},
    broadcast=False,
)
def suite_mul_add_backward(g, a, b):
    """The gradients of a * b + b: (g * b, g * a + g)."""
    return g * b, g * a + g


OPERATORS += [suite_leaky_relu_backward.op, suite_mul_add_backward.op]
