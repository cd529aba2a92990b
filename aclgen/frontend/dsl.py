"""The formula language's names, importable without the compiler.

Operator files call `f32(...)` and name `select`, `tanh`, ... at import time, and a declaration
traces its formula at once (aclgen/frontend/tracer.py) — a process that finds its kernels in the
compile cache must load xDSL for neither. So this module holds the light part: constants, the
error type, and the table of formula functions.

`FUNCTIONS` is the one definition of each math function of the language. A `Function` record
gives its name (`aclgen.tanh`), arity, result kind (a value or a mask), its weight in the width
model and its contract; from it come the DSL function itself, `aclgen.<name>` and
`aclgen.frontend.<name>`, and the `ew.<op>` operation (aclgen/dialects/ew.py makes one op class
per record). Its code is elsewhere, once: an expansion into simpler ops or an LLVM intrinsic
that becomes one instruction (aclgen/passes/expansions/). Adding a function to the language is
a record here, its expansion there, and its tests.

Each DSL function forwards to the tracer its traced arguments carry: a tracer's `Value` class
names its module as `dsl` (aclgen/frontend/tracer.py), so this module never imports the tracer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class Function:
    """One math function of the formula language (see the module docstring).

    `op` is the `ew` operation's name (`ew.<op>`, class `<Op>Op`); `mask` functions give masks
    (like compares); `heavy` ones expand into long dependent chains with many live temporaries,
    which the width model gives fewer registers per value (vectorize_elementwise.model_width).
    Operands are computed in f32 (the formula's arithmetic); `contract` says what the function
    promises: special values and the error bound the tests hold it to."""

    name: str
    arity: int
    contract: str
    op: str = ""
    mask: bool = False
    heavy: bool = False

    @property
    def op_name(self) -> str:
        return self.op or self.name


FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        Function("absolute", 1, "|x| (clears the sign bit; exact). Also the builtin abs(x).", op="abs"),
        Function("exp", 1, "e ** x; exp(-inf) = +0, exp(+inf) = +inf, +inf exactly where e ** x rounds "
                           "to it, gradual underflow. <= 1 ulp.", heavy=True),
        Function("exp2", 1, "2 ** x; exp2(-inf) = +0, exp2(+inf) = +inf (x >= 128), gradual underflow. "
                            "<= 1 ulp.", heavy=True),
        Function("expm1", 1, "e ** x - 1, accurate near 0: expm1(+-0) = +-0, subnormals kept, expm1(-inf) = -1, "
                             "expm1(+inf) = +inf. <= 1 ulp.", heavy=True),
        Function("sigmoid", 1, "1 / (1 + exp(-x)), accurate down to subnormal results; sigmoid(+inf) = 1, "
                               "sigmoid(-inf) = +0. <= 2 ulp of the correctly rounded value (2.4 of the exact).",
                 heavy=True),
        Function("tanh", 1, "The hyperbolic tangent; tanh(+-0) = +-0, tanh(+-inf) = +-1. <= 1 ulp.", heavy=True),
        Function("erf", 1, "The error function; erf(+-0) = +-0, erf(+-inf) = +-1. <= 1 ulp.", heavy=True),
        Function("erfc", 1, "1 - erf(x), accurate where it is small: erfc(+inf) = +0 (gradual underflow), "
                            "erfc(-inf) = 2. <= 1 ulp.", heavy=True),
        Function("erfinv", 1, "The inverse error function; erfinv(+-0) = +-0, erfinv(+-1) = +-inf, NaN for "
                              "|x| > 1. <= 2 ulp.", heavy=True),
        Function("log", 1, "The natural logarithm; log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, "
                           "log(1) = +0. <= 1 ulp.", heavy=True),
        Function("log2", 1, "The base-2 logarithm; log2(+-0) = -inf, log2(x < 0) = NaN, log2(+inf) = +inf, "
                            "exact at powers of 2. <= 1 ulp.", heavy=True),
        Function("log1p", 1, "log(1 + x), accurate near 0: log1p(+-0) = +-0, log1p(-1) = -inf, "
                             "log1p(x < -1) = NaN, log1p(+inf) = +inf. <= 1 ulp.", heavy=True),
        Function("sqrt", 1, "The square root; x < 0 -> NaN, -0 -> -0. Correctly rounded."),
        Function("rsqrt", 1, "1 / sqrt(x); rsqrt(+-0) = +-inf, rsqrt(x < 0) = NaN (-inf included), "
                             "rsqrt(+inf) = +0. <= 1 ulp (1 / sqrt(x) rounds twice: 1.5 ulp)."),
        Function("pow", 2, "x ** y, C99 Annex F's special cases as torch.pow: pow(x, +-0) = 1 and pow(1, y) = 1 "
                           "(even for NaN), negative x with an odd integer y is negative, with a non-integer "
                           "y NaN, +-0 and +-inf x and +-inf y as powf. <= 1 ulp (on dense grids of (x, y)).", heavy=True),
        Function("minimum", 2, "The smaller of a and b; NaN if either is NaN; a where they compare equal "
                               "(+-0), as torch.minimum. Exact."),
        Function("maximum", 2, "The larger of a and b; NaN if either is NaN; a where they compare equal "
                               "(+-0), as torch.maximum. Exact."),
        Function("floor", 1, "The largest integer <= x (-0 stays -0). Exact. Also math.floor(x)."),
        Function("ceil", 1, "The smallest integer >= x (ceil(-0.5) = -0). Exact. Also math.ceil(x)."),
        Function("trunc", 1, "x rounded toward zero, keeping its sign. Exact. Also math.trunc(x)."),
        Function("round", 1, "x rounded to the nearest integer, halves to even (as torch.round and Python's "
                             "round(x)), keeping its sign. Exact.", op="roundeven"),
        Function("sign", 1, "-1 for x < 0, +1 for x > 0, x itself for +-0 and NaN (torch gives 0 for NaN). Exact."),
        Function("copysign", 2, "|a| with the sign of b. Exact."),
        Function("muladd", 3, "a * b + c: one fused multiply-add (rounded once) where the target has FMA, "
                              "else a multiply and an add (rounded twice; docs/math.md). A formula's own `a * b + c` "
                              "always rounds twice."),
        Function("isnan", 1, "A mask: x is NaN (never for integers).", mask=True),
        Function("isinf", 1, "A mask: x is +inf or -inf.", mask=True),
        Function("isfinite", 1, "A mask: x is neither infinite nor NaN.", mask=True),
    )
}

# Foreign functions a formula may reach for, and what to write instead (FormulaError messages).
INSTEAD = {
    "exp": "exp", "tanh": "tanh", "erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "log": "log",
    "log2": "log2", "log1p": "log1p", "exp2": "exp2", "expm1": "expm1", "sqrt": "sqrt", "rsqrt": "rsqrt",
    "pow": "pow", "power": "pow", "float_power": "pow", "maximum": "maximum", "fmax": "maximum",
    "max": "maximum", "minimum": "minimum", "fmin": "minimum", "min": "minimum", "clip": "clamp",
    "clamp": "clamp", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "fix": "trunc", "round": "round",
    "rint": "round", "sign": "sign", "copysign": "copysign", "isinf": "isinf", "isfinite": "isfinite",
    "isnan": "isnan", "abs": "absolute", "fabs": "absolute", "absolute": "absolute", "where": "select",
    "sigmoid": "sigmoid", "expit": "sigmoid", "logical_and": "logical_and", "logical_or": "logical_or",
    "logical_not": "logical_not", "square": "x * x", "reciprocal": "1 / x", "fma": "muladd",
}


def instead(name: str) -> str:
    """What to write instead of foreign function `name` (`aclgen.tanh`), or "" when unknown."""
    ours = INSTEAD.get(name, "")
    if not ours or " " in ours:
        return ours
    return f"aclgen.{ours}"


def _traced(*xs):
    """The DSL implementation of the first traced value among `xs`."""
    for x in xs:
        impl = getattr(type(x), "dsl", None)
        if impl is not None:
            return impl
    raise FormulaError("a DSL function needs at least one traced value")


def _dsl_function(f: Function) -> Callable:
    def call(*args):
        if len(args) != f.arity:
            raise FormulaError(f"aclgen.{f.name} takes {f.arity} argument{'s' * (f.arity > 1)}, got {len(args)}")
        return _traced(*args).function(f, args)

    call.__name__ = call.__qualname__ = f.name
    call.__module__ = __name__
    call.__doc__ = f.contract
    return call


#: The DSL function of every record, by name (what `aclgen.<name>` returns).
CALLS: dict[str, Callable] = {name: _dsl_function(f) for name, f in FUNCTIONS.items()}


def select(cond, a, b):
    """`a` where `cond` holds, else `b`, element by element; exact (no arithmetic)."""
    return _traced(cond, a, b).select(cond, a, b)


where = select


def logical_and(a, b):
    """Both masks hold (also `a & b`)."""
    return _traced(a, b).logical_and(a, b)


def logical_or(a, b):
    """Either mask holds (also `a | b`)."""
    return _traced(a, b).logical_or(a, b)


def logical_not(a):
    """The mask does not hold (also `~a`)."""
    return _traced(a).logical_not(a)


def unlikely(*masks):
    """The mask itself, with a promise that it rarely holds: where one range of the inputs needs
    costly care (sigmoid's tail below -80, where exp(-x) overflows), `select(unlikely(x < -80),
    care, common)` lets the compiler run each vector step in a second version made for the mask
    being false in every lane (the selects on it take their other side, and what only the rare
    side needs is gone), after one test of the step's lanes. Several masks under one promise
    (one test of their `or`) come back as a tuple: `tail, overflow = unlikely(u > 80, ~finite)`.
    Every lane's result is the same either way, so the bits never depend on the vector width or
    on a lane's neighbours; where the promise does not hold, a step costs the test more."""
    return _traced(*masks).unlikely(*masks)


def clamp(x, lo=None, hi=None):
    """minimum(maximum(x, lo), hi), either bound optional; NaN x (or a NaN bound) gives NaN, as
    torch.clamp; lo > hi gives hi."""
    if lo is None and hi is None:
        raise FormulaError("aclgen.clamp needs lo, hi or both")
    y = x if lo is None else CALLS["maximum"](x, lo)
    return y if hi is None else CALLS["minimum"](y, hi)


REDUCTIONS = ("sum", "mean", "amax", "amin")


def _reduction(kind: str) -> Callable:
    def reduce(x, axis=None, *, keep=None):
        return _traced(x).reduction(kind, x, axis, keep)

    reduce.__name__ = reduce.__qualname__ = kind
    reduce.__module__ = __name__
    reduce.__doc__ = (
        f"{kind}(x, axis): the {kind} of x over `axis` (an int or a tuple of ints, negative from the end, "
        "known when the kernel is compiled; or an input tensor: the trailing dims it spans, or the dim a "
        "Tensor(along=k) lies along), or over every dim but an input tensor's with keep=tensor (but the last "
        "n with keep=n); accumulated in f32 in an "
        "order fixed by the shape alone; the result keeps the reduced axes (size 1) and broadcasts back. amax/amin propagate NaN; an empty axis "
        "gives sum 0, mean NaN, amax -inf, amin +inf.")
    return reduce


#: The language's names other than the functions of `FUNCTIONS` (the core of `aclgen.__all__`).
CORE = {
    **{kind: _reduction(kind) for kind in REDUCTIONS},
    "clamp": clamp,
    "f32": f32_const,
    "select": select,
    "where": where,
    "logical_and": logical_and,
    "logical_or": logical_or,
    "logical_not": logical_not,
    "unlikely": unlikely,
}


def names() -> dict[str, Callable]:
    """Every name a formula can use, by its name in `aclgen`."""
    return {**CORE, **CALLS}
