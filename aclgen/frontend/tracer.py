"""Symbolic tracing of formulas into an `ew.kernel`.

A formula is a plain Python function over symbolic elements:

    def hardswish_backward(g, x):
        d = select(x < -3.0, 0.0, select(x <= 3.0, x * f32(1 / 3) + 0.5, 1.0))
        return g * d

Calling it with `Value`s records one `ew` op per operation. Python numbers are *weak*
constants (as in JAX): in arithmetic they are f32; next to a typed value in a compare or a
select they take that value's type when they are exactly representable in it, so
`select(x <= t, 0, g)` stays an exact integer select for int32 tensors. `f32(v)` is an
explicit f32 constant.

Anything the DSL cannot express (`if x > 0:`, `x ** 2`, `math.exp(x)`, numpy ufuncs) fails
with a `FormulaError` naming the user's file and line.

This module imports xDSL; the names formulas use (`select`, `f32`, ...) live in
aclgen/frontend/dsl.py, which forwards here only while a formula is traced.
"""

from __future__ import annotations

import inspect
import linecache
import math
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, IntegerType, f32, i1
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from aclgen import dtypes
from aclgen.dialects import ew
from aclgen.frontend.dsl import Const, FormulaError, f32_const  # noqa: F401  (the light half)


@dataclass
class TraceLine:
    """One traced operation, for the `dsl` stage listing."""

    result: str
    text: str
    where: str


class Tracer:
    def __init__(self, fn: Callable):
        self.fn = fn
        self.code = inspect.unwrap(fn).__code__  # a wrapper's lines are not the user's
        self.block = Block()
        self.lines: list[TraceLine] = []
        self._names: dict[SSAValue, str] = {}

    # -- recording ------------------------------------------------------------------------

    def user_frame(self) -> tuple[str, int] | None:
        """(file, line) of the innermost frame inside the formula's own source file."""
        f = sys._getframe(1)
        while f is not None:
            if f.f_code.co_filename == self.code.co_filename:
                return f.f_code.co_filename, f.f_lineno
            f = f.f_back
        return None

    def where(self) -> str:
        loc = self.user_frame()
        if loc is None:
            return "?"
        return f"{loc[0]}:{loc[1]}"

    def emit(self, op: Operation, text: str) -> Value:
        self.block.add_op(op)
        name = f"v{len(self.lines)}"
        self._names[op.results[0]] = name
        self.lines.append(TraceLine(name, text, self.where()))
        return Value(self, op.results[0])

    def name(self, v: SSAValue) -> str:
        return self._names[v]

    def error(self, message: str) -> FormulaError:
        loc = self.user_frame()
        return FormulaError(_located(loc, message))

    def listing(self) -> str:
        out = [f"# formula {self.fn.__qualname__} from {self.code.co_filename}"]
        for ln in self.lines:
            out.append(f"{ln.result} = {ln.text}".ljust(48) + f"  # {ln.where.rsplit('/', 1)[-1]}")
        return "\n".join(out)


def _located(loc: tuple[str, int] | None, message: str) -> str:
    if loc is None:
        return message
    file, line = loc
    src = linecache.getline(file, line).strip()
    return f"{file}:{line}: {message}" + (f"\n    {src}" if src else "")


# ----------------------------------------------------------------------------- values


def _fits(value: float, t: Attribute) -> bool:
    """Is `value` exactly representable as an element of type `t`?"""
    if isinstance(t, IntegerType):
        if t.width.data == 1 or not float(value).is_integer():
            return False
        info = np.iinfo(dtypes.from_ir(t).np_dtype)
        return info.min <= value <= info.max
    try:
        d = dtypes.from_ir(t)
    except ValueError:
        return False
    if math.isnan(value):
        return True
    with np.errstate(over="ignore"):
        return float(np.array(value, dtype=d.np_dtype).astype(np.float64)) == value


def _constant(value: float, t: Attribute) -> ew.ConstantOp:
    if isinstance(t, IntegerType):
        return ew.ConstantOp(IntegerAttr(int(value), t))
    return ew.ConstantOp(FloatAttr(value, cast(AnyFloat, t)))  # not an integer: a float type


class Value:
    """A symbolic element of a formula (one element of a tensor, or a scalar parameter)."""

    __array_ufunc__ = None  # numpy ufuncs on a Value raise TypeError -> FormulaError
    dsl = sys.modules[__name__]  # what aclgen.frontend.dsl's functions forward to

    def __init__(self, tracer: Tracer, ssa: SSAValue):
        self.tracer = tracer
        self.ssa = ssa

    @property
    def type(self) -> Attribute:
        return self.ssa.type

    def __repr__(self) -> str:
        return f"<{self.tracer.name(self.ssa)}: {self.type}>"

    # arithmetic (computed in f32)
    def __add__(self, o): return _binary(ew.AddOp, "+", self, o)
    def __radd__(self, o): return _binary(ew.AddOp, "+", o, self)
    def __sub__(self, o): return _binary(ew.SubOp, "-", self, o)
    def __rsub__(self, o): return _binary(ew.SubOp, "-", o, self)
    def __mul__(self, o): return _binary(ew.MulOp, "*", self, o)
    def __rmul__(self, o): return _binary(ew.MulOp, "*", o, self)
    def __truediv__(self, o): return _binary(ew.DivOp, "/", self, o)
    def __rtruediv__(self, o): return _binary(ew.DivOp, "/", o, self)
    def __neg__(self): return _unary(ew.NegOp, "neg", self)
    def __pos__(self): return self
    def __abs__(self): return _unary(ew.AbsOp, "abs", self)

    # compares
    def __lt__(self, o): return _compare("olt", self, o)
    def __le__(self, o): return _compare("ole", self, o)
    def __gt__(self, o): return _compare("ogt", self, o)
    def __ge__(self, o): return _compare("oge", self, o)
    def __eq__(self, o): return _compare("oeq", self, o)  # type: ignore[override]
    def __ne__(self, o): return _compare("une", self, o)  # type: ignore[override]
    __hash__ = object.__hash__

    # logical (on masks)
    def __and__(self, o): return logical_and(self, o)
    def __or__(self, o): return logical_or(self, o)
    def __invert__(self): return logical_not(self)

    def __bool__(self):
        raise self.tracer.error(
            "a traced value has no truth value: Python `if`, `and`, `or`, `not` and chained compares "
            "cannot see element values; use select(cond, a, b), logical_and/or/not or &, |, ~"
        )

    def __float__(self):
        raise self.tracer.error("a traced value is not a Python number (use the DSL's exp/abs/select, not math.*)")

    __int__ = __index__ = __float__


def _tracer_of(*xs) -> Tracer:
    for x in xs:
        if isinstance(x, Value):
            return x.tracer
    raise FormulaError("a DSL function needs at least one traced value")


def _lift(x, partner: Attribute | None, t: Tracer) -> Value:
    """Turn a number into a constant value typed after `partner` where exact (weak typing)."""
    if isinstance(x, Value):
        return x
    if isinstance(x, (bool, np.bool_)):
        raise t.error("booleans are not formula values; compare values to make a mask")
    if isinstance(x, (int, float, np.floating, np.integer)):
        x = Const(float(x))
    if not isinstance(x, Const):
        raise t.error(f"unsupported value in a formula: {x!r} ({type(x).__name__})")
    elem = f32
    if not x.explicit and partner is not None and _fits(x.value, partner):
        elem = partner
    return t.emit(_constant(x.value if not isinstance(elem, IntegerType) else int(x.value), elem), repr(x))


def _binary(cls: type[ew.BinaryOp], sym: str, a, b) -> Value:
    t = _tracer_of(a, b)
    va, vb = _lift(a, None, t), _lift(b, None, t)
    return t.emit(cls(va.ssa, vb.ssa), f"{t.name(va.ssa)} {sym} {t.name(vb.ssa)}")


def _unary(cls: type[ew.UnaryOp], fname: str, a) -> Value:
    t = _tracer_of(a)
    va = _lift(a, None, t)
    return t.emit(cls(va.ssa), f"{fname}({t.name(va.ssa)})")


def _compare(pred: str, a, b) -> Value:
    t = _tracer_of(a, b)
    ta = a.type if isinstance(a, Value) else None
    tb = b.type if isinstance(b, Value) else None
    va, vb = _lift(a, tb, t), _lift(b, ta, t)
    sym = {"olt": "<", "ole": "<=", "ogt": ">", "oge": ">=", "oeq": "==", "une": "!="}[pred]
    return t.emit(ew.CmpOp(pred, va.ssa, vb.ssa), f"{t.name(va.ssa)} {sym} {t.name(vb.ssa)}")


def _mask(x, t: Tracer, what: str) -> Value:
    if not isinstance(x, Value) or ew.element(x.type) != i1:
        raise t.error(f"{what} needs a mask (a compare, isnan or logical result), got {x!r}")
    return x


# ----------------------------------------------------------------------------- DSL functions


def select(cond, a, b) -> Value:
    """`a` where `cond` holds, else `b`, element by element; exact (no arithmetic)."""
    t = _tracer_of(cond, a, b)
    c = _mask(cond, t, "select")
    ta = a.type if isinstance(a, Value) else None
    tb = b.type if isinstance(b, Value) else None
    va, vb = _lift(a, tb, t), _lift(b, ta, t)
    return t.emit(ew.SelectOp(c.ssa, va.ssa, vb.ssa), f"select({t.name(c.ssa)}, {t.name(va.ssa)}, {t.name(vb.ssa)})")


where = select


def exp(x) -> Value:
    """e ** x in f32 (a vectorized polynomial, <= 2 ulp)."""
    return _unary(ew.ExpOp, "exp", x)


def sigmoid(x) -> Value:
    """1 / (1 + exp(-x)) in f32."""
    return _unary(ew.SigmoidOp, "sigmoid", x)


def absolute(x) -> Value:
    """|x| in f32 (also reachable as the builtin `abs(x)`)."""
    return _unary(ew.AbsOp, "abs", x)


def isnan(x) -> Value:
    t = _tracer_of(x)
    return t.emit(ew.IsNanOp(x.ssa), f"isnan({t.name(x.ssa)})")


def logical_and(a, b) -> Value:
    t = _tracer_of(a, b)
    a, b = _mask(a, t, "logical_and"), _mask(b, t, "logical_and")
    return t.emit(ew.AndOp(a.ssa, b.ssa), f"{t.name(a.ssa)} & {t.name(b.ssa)}")


def logical_or(a, b) -> Value:
    t = _tracer_of(a, b)
    a, b = _mask(a, t, "logical_or"), _mask(b, t, "logical_or")
    return t.emit(ew.OrOp(a.ssa, b.ssa), f"{t.name(a.ssa)} | {t.name(b.ssa)}")


def logical_not(a) -> Value:
    t = _tracer_of(a)
    a = _mask(a, t, "logical_not")
    return t.emit(ew.NotOp(a.ssa), f"~{t.name(a.ssa)}")


# ----------------------------------------------------------------------------- tracing


def count_outputs(fn: Callable, types: Sequence[Attribute]) -> int:
    """How many values `fn` returns, by tracing it once into a scratch block."""
    t = Tracer(fn)
    t.block = Block(arg_types=list(types))
    for i, arg in enumerate(t.block.args):
        t._names[arg] = f"a{i}"
    try:
        result = fn(*(Value(t, a) for a in t.block.args))
    except FormulaError:
        raise
    except Exception as exc:
        raise _unsupported(t, exc) from None
    return len(result) if isinstance(result, (tuple, list)) else 1


def _unsupported(t: Tracer, exc: Exception) -> FormulaError:
    """A FormulaError for a Python construct the DSL cannot trace, at the user's line."""
    loc = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == t.code.co_filename:
            loc = (frame.f_code.co_filename, lineno)
    return FormulaError(_located(loc, f"unsupported in a formula: {type(exc).__name__}: {exc}"))


@dataclass
class Traced:
    kernel: ew.KernelOp
    listing: str


def trace(
    fn: Callable,
    name: str,
    inputs: Sequence[ew.ViewType],
    params: Sequence[Attribute],
    outputs: Sequence[ew.ViewType],
    arg_names: Sequence[str],
) -> Traced:
    """Call `fn` on symbolic elements and return the `ew.kernel` it describes."""
    t = Tracer(fn)
    types = ew.KernelOp.block_types(inputs, params)
    block = Block(arg_types=types)
    t.block = block
    args = []
    for arg, n in zip(block.args, arg_names):
        arg.name_hint = n
        t._names[arg] = n
        args.append(Value(t, arg))
    try:
        result = fn(*args)
    except FormulaError:
        raise
    except Exception as exc:  # an unsupported Python construct: point at the user's line
        raise _unsupported(t, exc) from None
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(results) != len(outputs):
        raise FormulaError(
            _located((t.code.co_filename, t.code.co_firstlineno), f"formula {fn.__qualname__} returns "
                     f"{len(results)} values but the operator has {len(outputs)} outputs")
        )
    values = []
    for r, out in zip(results, outputs):
        v = _lift(r, out.element_type, t)
        values.append(v.ssa)
    block.add_op(ew.YieldOp(*values))
    kernel = ew.KernelOp(name, inputs, outputs, params, arg_names, Region(block))
    kernel.verify()
    return Traced(kernel, t.listing())
