"""The formula DSL's public names, importable without the compiler.

Operator files call `f32(...)` and name `select`, `exp`, ... at import time; a process that
finds its kernels in the compile cache must not load xDSL for that. So this module holds the
light part (constants, the error type), and each DSL function forwards to the implementation
its traced arguments carry: a tracer's `Value` class names its module as `dsl`
(aclgen/frontend/tracer.py), so this module never imports the tracer.
"""

from __future__ import annotations

import numpy as np


class FormulaError(Exception):
    """A formula uses something the DSL cannot compile; the message names the user's line."""


class Const:
    """A constant in a formula: weak (a Python number) or explicitly f32 (`f32(v)`)."""

    def __init__(self, value: float, explicit: bool = False):
        self.value = float(value)
        self.explicit = explicit

    def __repr__(self) -> str:
        return f"f32({self.value!r})" if self.explicit else repr(self.value)


def f32_const(value: float) -> Const:
    """An explicit f32 constant: the float32 rounding of `value`."""
    return Const(float(np.float32(value)), explicit=True)


def _traced(*xs):
    """The DSL implementation of the first traced value among `xs`."""
    for x in xs:
        impl = getattr(type(x), "dsl", None)
        if impl is not None:
            return impl
    raise FormulaError("a DSL function needs at least one traced value")


def select(cond, a, b):
    """`a` where `cond` holds, else `b`, element by element; exact (no arithmetic)."""
    return _traced(cond, a, b).select(cond, a, b)


where = select


def exp(x):
    """e ** x in f32 (a vectorized polynomial, <= 2 ulp)."""
    return _traced(x).exp(x)


def sigmoid(x):
    """1 / (1 + exp(-x)) in f32."""
    return _traced(x).sigmoid(x)


def absolute(x):
    """|x| in f32 (also reachable as the builtin `abs(x)`)."""
    return _traced(x).absolute(x)


def isnan(x):
    """A mask: x is NaN."""
    return _traced(x).isnan(x)


def logical_and(a, b):
    """Both masks hold (also `a & b`)."""
    return _traced(a, b).logical_and(a, b)


def logical_or(a, b):
    """Either mask holds (also `a | b`)."""
    return _traced(a, b).logical_or(a, b)


def logical_not(a):
    """The mask does not hold (also `~a`)."""
    return _traced(a).logical_not(a)
