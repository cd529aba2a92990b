"""Symbolic tracing of formulas into a `Graph`, without the compiler.

A formula is a plain Python function over symbolic elements:

    def hardswish_backward(g, x):
        d = select(x < -3.0, 0.0, select(x <= 3.0, x * f32(1 / 3) + 0.5, 1.0))
        return g * d

Calling it with `Value`s records one `Node` per operation. Python numbers are *weak* constants
(as in JAX): in arithmetic they are f32; next to a typed value in a compare or a select they take
that value's type when they are exactly representable in it, so `select(x <= t, 0, g)` stays an
exact integer select for int32 tensors. `f32(v)` is an explicit f32 constant.

Anything the language cannot express fails with a `FormulaError` naming the user's file and line,
and, where the user reached for a function of another library (`np.tanh`, `math.erf`, `max`,
`np.clip`, `torch.*`), the function to write instead.

This module imports neither xDSL nor the compiler: declaring an operator traces its formula
(aclgen/declaration.py), and a process whose kernels are in the disk cache never loads xDSL.
The compiler turns a graph into the `ew` dialect (aclgen/frontend/emit.py).
"""

from __future__ import annotations

import ast
import inspect
import linecache
import math
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from aclgen import dtypes
from aclgen.dialects.enums import Predicate
from aclgen.frontend.dsl import CALLS, FUNCTIONS, INSTEAD, Const, FormulaError, Function, instead

MASK = "mask"  # the element type of compares and mask functions (i1)
F32 = "float32"


@dataclass(eq=False, slots=True)
class Node:
    """One traced operation (or an argument or constant) of a formula.

    `op`: "input", "param", "const", "add", "sub", "mul", "div", "neg", "cmp", "select", "and",
    "or", "not", "unlikely", "reduce", or a function of aclgen.frontend.dsl.FUNCTIONS by name. `type`: the
    element type, a dtype name or MASK. `attr`: the argument's index, the constant's value, the
    compare's `Predicate` or the reduction's (kind, axes)."""

    op: str
    args: tuple[Node, ...]
    type: str
    attr: object = None
    name: str = ""
    where: str = ""
    text: str = ""  # the listing's text of the operation

    @property
    def function(self) -> Function | None:
        return FUNCTIONS.get(self.op)

    @property
    def axes(self) -> tuple:
        """A reduction's axes as written (negative from the end), ("input", k): the trailing
        dims input k spans, ("keep", k): every dim but those, or ("keep_last", n): every dim but
        the last n."""
        assert self.op == "reduce"
        return self.attr[1]  # type: ignore[index]


@dataclass
class Graph:
    """A traced formula: its arguments, every node in trace order, the values it returns, and
    the listing (one line per operation with the user's source line: the `dsl` stage)."""

    args: list[Node]
    nodes: list[Node]
    results: list[Node]
    listing: str
    # what `row_results` and `result_axes` found, by their arguments: every call's checks ask
    # (a third of a small call's full path walked the graph for them)
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def reductions(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "reduce"]

    def row_results(self) -> list[bool]:
        """Per result: whether it is the same along a reduced row (a reduction, or made from
        reductions, parameters and constants only): such an output has the reduced shape."""
        if "rows" not in self._memo:
            self._memo["rows"] = self._row_results()
        return list(self._memo["rows"])

    def _row_results(self) -> list[bool]:
        uniform: set[Node] = {a for a in self.args if a.op == "param"}
        for n in self.nodes:
            if n.op in ("const", "reduce") or (n.args and all(a in uniform for a in n.args)):
                uniform.add(n)
        return [r in uniform for r in self.results] if self.reductions() else [False] * len(self.results)

    def result_axes(self, rank: int, spans: Sequence[tuple[int, ...]] = ()) -> list[tuple[int, ...] | None]:
        """Per result, the dims (in [0, rank)) of the reductions it is made from, for an
        iteration space of `rank` dims whose inputs span the dims `spans` (None: it reduces
        nothing; a reduction over an input's dims reduces those, keep= an input the others).
        ValueError when an axis is outside the space, or a result is made from reductions over
        different dims."""
        key = ("axes", rank, tuple(spans))
        if key not in self._memo:
            self._memo[key] = self._result_axes(rank, spans)
        return list(self._memo[key])

    def _result_axes(self, rank: int, spans: Sequence[tuple[int, ...]]) -> list[tuple[int, ...] | None]:
        axes: dict[Node, tuple[int, ...] | None] = {}
        for n in self.nodes:
            found: set[tuple[int, ...]] = {a for a in (axes.get(x) for x in n.args) if a is not None}
            if n.op == "reduce":
                dims = []
                spec = n.axes
                if spec and spec[0] == "keep_last":  # all but the last n dims
                    if spec[1] > rank:
                        raise ValueError(f"the last {spec[1]} dims are kept, but there are {rank}")
                    spec = tuple(range(rank - spec[1]))
                elif spec and spec[0] in ("input", "keep"):  # the dims an input spans, or the others
                    if len(spans) <= spec[1]:
                        raise ValueError("a reduction over an input's dims needs the dims the inputs span")
                    span = spans[spec[1]]
                    spec = span if spec[0] == "input" else tuple(k for k in range(rank) if k not in span)
                for a in spec:
                    if not -rank <= a < rank:
                        raise ValueError(f"axis {a} is outside [{-rank}, {rank - 1}] for {rank} dims")
                    dims.append(a % rank)
                found.add(tuple(sorted(dims)))
            if len(found) > 1:
                raise ValueError(f"{n.text or n.op} combines reductions over different dims {sorted(found)}")
            axes[n] = found.pop() if found else None
        return [axes.get(r) for r in self.results]

    def groups(self, rank: int, spans: Sequence[tuple[int, ...]] = ()) -> list[tuple[tuple[int, ...] | None, tuple[int, ...]]]:
        """The kernels of the formula: (reduced dims, the results it computes) — one per set of
        reduced dims, the results that reduce nothing with the first (one kernel when the
        formula reduces one set of dims, or none)."""
        per = self.result_axes(rank, spans)
        order: list[tuple[int, ...] | None] = []
        for a in per:
            if a is not None and a not in order:
                order.append(a)
        if not order:
            return [(None, tuple(range(len(per))))]
        return [(a, tuple(k for k, b in enumerate(per) if b == a or (b is None and a == order[0]))) for a in order]

    def constants(self) -> list[float]:
        """The float constants the formula compares with (the boundaries worth testing)."""
        out: list[float] = []
        for n in self.nodes:
            if n.op == "cmp":
                out += [float(a.attr) for a in n.args if a.op == "const"]  # type: ignore[arg-type]
        return out


class Tracer:
    def __init__(self, fn: Callable):
        self.fn = fn
        self.code = inspect.unwrap(fn).__code__  # a wrapper's lines are not the user's
        self.nodes: list[Node] = []
        self.return_line: int | None = None

    # -- recording ------------------------------------------------------------------------

    def user_frame(self) -> tuple[str, int] | None:
        """(file, line) of the innermost frame inside the formula's own source file."""
        f = sys._getframe(1)
        while f is not None:
            if f.f_code.co_filename == self.code.co_filename:
                return f.f_code.co_filename, f.f_lineno
            f = f.f_back
        return None

    def emit(self, op: str, args: Sequence[Node], type: str, attr: object = None, text: str = "") -> Value:
        loc = self.user_frame()
        node = Node(op, tuple(args), type, attr, f"v{len(self.nodes)}", f"{loc[0]}:{loc[1]}" if loc else "?", text)
        self.nodes.append(node)
        return Value(self, node)

    def error(self, message: str) -> FormulaError:
        return FormulaError(_located(self.user_frame(), message))

    def listing(self) -> str:
        out = [f"# formula {self.fn.__qualname__} from {self.code.co_filename}"]
        for n in self.nodes:
            out.append(f"{n.name} = {n.text or n.op}".ljust(48) + f"  # {n.where.rsplit('/', 1)[-1]}")
        return "\n".join(out)


def _located(loc: tuple[str, int] | None, message: str) -> str:
    if loc is None:
        return message
    file, line = loc
    src = linecache.getline(file, line).strip()
    return f"{file}:{line}: {message}" + (f"\n    {src}" if src else "")


# ----------------------------------------------------------------------------- values


def fits(value: float, type: str) -> bool:
    """Is `value` exactly representable as an element of `type`?"""
    if type == MASK:
        return False
    d = dtypes.dtype(type)
    if not d.is_float:
        if not float(value).is_integer():
            return False
        info = np.iinfo(d.np_dtype)
        return info.min <= value <= info.max
    if math.isnan(value):
        return True
    with np.errstate(over="ignore"):
        return float(np.array(value, dtype=d.np_dtype).astype(np.float64)) == value


def _foreign_call(loc: tuple[str, int] | None, names: Sequence[str]) -> str:
    """The dotted name of a call on the user's line whose last part is one of `names`
    (`np.tanh`, `math.erf`, `max`), or ""."""
    if loc is None:
        return ""
    src = linecache.getline(*loc).strip()
    try:
        tree = ast.parse(src if not src.endswith(":") else src + " pass")
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name.rsplit(".", 1)[-1] in names and not name.startswith(("aclgen.", "self.")):
                return name
    return ""


def _instead_message(name: str) -> str:
    short = name.rsplit(".", 1)[-1]
    ours = instead(short)
    if ours:
        return f"{name} is not a formula function: use {ours}"
    return f"{name} is not a formula function (the formula functions are aclgen's: " \
           f"{', '.join(sorted(CALLS))}, select, ...)"


class Value:
    """A symbolic element of a formula (one element of a tensor, or a scalar parameter)."""

    __slots__ = ("node", "tracer")
    dsl = sys.modules[__name__]  # what aclgen.frontend.dsl's functions forward to

    def __init__(self, tracer: Tracer, node: Node):
        self.tracer = tracer
        self.node = node

    @property
    def type(self) -> str:
        return self.node.type

    def __repr__(self) -> str:
        return f"<{self.node.name}: {self.type}>"

    # arithmetic (computed in f32)
    def __add__(self, o): return _binary("add", "+", self, o)
    def __radd__(self, o): return _binary("add", "+", o, self)
    def __sub__(self, o): return _binary("sub", "-", self, o)
    def __rsub__(self, o): return _binary("sub", "-", o, self)
    def __mul__(self, o): return _binary("mul", "*", self, o)
    def __rmul__(self, o): return _binary("mul", "*", o, self)
    def __truediv__(self, o): return _binary("div", "/", self, o)
    def __rtruediv__(self, o): return _binary("div", "/", o, self)
    def __neg__(self): return _unary("neg", "-", self)
    def __pos__(self): return self
    def __abs__(self): return function(FUNCTIONS["absolute"], (self,))

    # compares
    def __lt__(self, o): return _compare(Predicate.OLT, self, o)
    def __le__(self, o): return _compare(Predicate.OLE, self, o)
    def __gt__(self, o): return _compare(Predicate.OGT, self, o)
    def __ge__(self, o): return _compare(Predicate.OGE, self, o)
    def __eq__(self, o): return _compare(Predicate.OEQ, self, o)  # type: ignore[override]
    def __ne__(self, o): return _compare(Predicate.UNE, self, o)  # type: ignore[override]
    __hash__ = object.__hash__

    # logical (on masks)
    def __and__(self, o): return logical_and(self, o)
    def __rand__(self, o): return logical_and(o, self)
    def __or__(self, o): return logical_or(self, o)
    def __ror__(self, o): return logical_or(o, self)
    def __invert__(self): return logical_not(self)

    def __bool__(self):
        t = self.tracer
        foreign = _foreign_call(t.user_frame(), ("max", "min", "clip", "clamp", "sorted"))
        if foreign:
            raise t.error(_instead_message(foreign))
        raise t.error(
            "a traced value has no truth value: Python `if`, `and`, `or`, `not` and chained compares "
            "cannot see element values; use select(cond, a, b), logical_and/or/not or &, |, ~"
        )

    def __float__(self):
        t = self.tracer
        foreign = _foreign_call(t.user_frame(), tuple(INSTEAD))
        if foreign:
            raise t.error(_instead_message(foreign))
        raise t.error("a traced value is not a Python number: use the formula functions (aclgen.exp, "
                      "aclgen.tanh, ...), not math.*")

    __int__ = __index__ = __complex__ = __float__

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise self.tracer.error(_instead_message(f"np.{ufunc.__name__}"))

    def __array_function__(self, func, types, args, kwargs):
        raise self.tracer.error(_instead_message(f"np.{func.__name__}"))

    def __array__(self, *args, **kwargs):
        raise self.tracer.error("a traced value is not an array: numpy functions cannot see element values; "
                                "use the formula functions (aclgen.*)")

    # Python's own rounding protocol: math.floor/ceil/trunc and round() work on traced values
    def __floor__(self): return _call("floor", self)
    def __ceil__(self): return _call("ceil", self)
    def __trunc__(self): return _call("trunc", self)

    def __round__(self, ndigits=None):
        if ndigits is not None:
            raise self.tracer.error("round(x, ndigits) is not a formula function: use aclgen.round(x) "
                                    "(half to even, to an integer)")
        return _call("round", self)

    def __pow__(self, o): return power(self, o)
    def __rpow__(self, o): return power(o, self)


def _call(name: str, *args) -> Value:
    f = FUNCTIONS.get(name)
    if f is None:
        t = _tracer_of(*args)
        raise t.error(f"{name} is not a formula function yet")
    return function(f, args)


def _tracer_of(*xs) -> Tracer:
    for x in xs:
        if isinstance(x, Value):
            return x.tracer
    raise FormulaError("a DSL function needs at least one traced value")


def _lift(x, partner: str | None, t: Tracer) -> Value:
    """Turn a number into a constant value typed after `partner` where exact (weak typing)."""
    if isinstance(x, Value):
        if x.tracer is not t:
            raise t.error("a value of another formula's trace cannot be used here")
        return x
    if isinstance(x, (bool, np.bool_)):
        raise t.error("booleans are not formula values; compare values to make a mask")
    if isinstance(x, (int, float, np.floating, np.integer)):
        x = Const(float(x))
    if not isinstance(x, Const):
        raise t.error(f"unsupported value in a formula: {x!r} ({type(x).__name__})")
    elem = F32
    if not x.explicit and partner is not None and fits(x.value, partner):
        elem = partner
    value = x.value if dtypes.dtype(elem).is_float else int(x.value)
    return t.emit("const", (), elem, value, repr(x))


def _float_operand(x: Value, t: Tracer, what: str) -> Value:
    if x.type == MASK:
        raise t.error(f"{what} takes values, not a mask (select between values with the mask)")
    return x


def _binary(op: str, sym: str, a, b) -> Value:
    t = _tracer_of(a, b)
    va, vb = _lift(a, None, t), _lift(b, None, t)
    for v in (va, vb):
        _float_operand(v, t, sym)
    return t.emit(op, (va.node, vb.node), F32, None, f"{va.node.name} {sym} {vb.node.name}")


def _unary(op: str, sym: str, a) -> Value:
    t = _tracer_of(a)
    va = _float_operand(_lift(a, None, t), t, sym)
    return t.emit(op, (va.node,), F32, None, f"{sym}{va.node.name}")


def _compare(pred: Predicate, a, b) -> Value:
    t = _tracer_of(a, b)
    ta = a.type if isinstance(a, Value) else None
    tb = b.type if isinstance(b, Value) else None
    va, vb = _lift(a, tb, t), _lift(b, ta, t)
    sym = pred.symbol
    for v in (va, vb):
        _float_operand(v, t, sym)
    return t.emit("cmp", (va.node, vb.node), MASK, pred, f"{va.node.name} {sym} {vb.node.name}")


def _mask(x, t: Tracer, what: str) -> Value:
    if not isinstance(x, Value) or x.type != MASK:
        raise t.error(f"{what} needs a mask (a compare, isnan or logical result), got {x!r}")
    return x


# ----------------------------------------------------------------------------- DSL functions


def function(f: Function, args: Sequence) -> Value:
    """`f` applied to `args` (values or numbers), computed in f32."""
    t = _tracer_of(*args)
    vs = [_float_operand(_lift(a, None, t), t, f"aclgen.{f.name}") for a in args]
    text = f"{f.name}({', '.join(v.node.name for v in vs)})"
    return t.emit(f.name, tuple(v.node for v in vs), MASK if f.mask else F32, None, text)


def power(x, y) -> Value:
    """`x ** y`, as torch.pow does for constant exponents: 2 is x * x, 3 is x * x * x, -1 is
    1 / x, 0.5 is sqrt(x), 1 is x and 0 is 1 (even for NaN, as C99's pow); any other exponent
    is aclgen.pow."""
    if isinstance(x, Value) and isinstance(y, (int, float, np.integer, np.floating)) and not isinstance(y, bool):
        y = float(y)
        if y == 2:
            return x * x
        if y == 3:
            return x * x * x
        if y == -1:
            return 1.0 / x
        if y == 1:
            return x
        if y == 0:
            return _lift(Const(1.0, explicit=True), None, x.tracer)
        if y == 0.5:
            return _call("sqrt", x)
    return _call("pow", x, y)


def reduction(kind: str, x, axis, keep=None) -> Value:
    """`kind` (sum, mean, amax, amin) of `x` over `axis`: a value per reduced slice, which
    broadcasts back over it (the reduced axes are kept). `axis` may be an input tensor: the
    trailing dims it spans (RmsNorm's gamma: x_shape[n:]); `keep=` an input tensor instead: every
    dim but those (RmsNormGrad's dgamma), or a count n: every dim but the last n."""
    t = _tracer_of(x)
    v = _float_operand(_lift(x, None, t), t, f"aclgen.{kind}")
    if (axis is None) == (keep is None):
        raise t.error(f"aclgen.{kind}: give axis or keep=, one of them")
    if isinstance(keep, (int, np.integer)) and not isinstance(keep, bool) and keep >= 0:
        return t.emit("reduce", (v.node,), F32, (kind, ("keep_last", int(keep))),
                      f"{kind}({v.node.name}, axis=all but the last {int(keep)})")
    for form, tensor in (("input", axis), ("keep", keep)):
        if isinstance(tensor, Value) or (form == "keep" and tensor is not None):
            if not isinstance(tensor, Value) or tensor.node.op != "input":
                what = "axis may be an input tensor" if form == "input" else \
                    "keep= is an input tensor or a count of trailing dims"
                raise t.error(f"aclgen.{kind}: {what} (its trailing dims), not {tensor!r}")
            shown = ("dims of " if form == "input" else "all but the dims of ") + tensor.node.name
            return t.emit("reduce", (v.node,), F32, (kind, (form, tensor.node.attr)),
                          f"{kind}({v.node.name}, axis={shown})")
    given = [axis] if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) else axis
    if isinstance(given, Value) or not isinstance(given, (tuple, list)) or not given \
            or not all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in given):
        raise t.error(f"aclgen.{kind}: axis must be an int or a tuple of ints known when the kernel is compiled "
                      f"(a constant or an attribute), got {axis!r}")
    axes: tuple[int, ...] = tuple(int(a) for a in given)
    if len(set(axes)) != len(axes):
        raise t.error(f"aclgen.{kind}: axis {axes} names a dim twice")
    shown = axes[0] if len(axes) == 1 else axes
    return t.emit("reduce", (v.node,), F32, (kind, axes), f"{kind}({v.node.name}, axis={shown})")


def select(cond, a, b) -> Value:
    """`a` where `cond` holds, else `b`, element by element; exact (no arithmetic)."""
    t = _tracer_of(cond, a, b)
    c = _mask(cond, t, "select")
    ta = a.type if isinstance(a, Value) else None
    tb = b.type if isinstance(b, Value) else None
    va, vb = _lift(a, tb, t), _lift(b, ta, t)
    if MASK in (va.type, vb.type):
        raise t.error("select chooses between values, not masks (combine masks with &, |, ~)")
    out = va.type if va.type == vb.type else F32
    return t.emit("select", (c.node, va.node, vb.node), out, None,
                  f"select({c.node.name}, {va.node.name}, {vb.node.name})")


where = select


def logical_and(a, b) -> Value:
    t = _tracer_of(a, b)
    a, b = _mask(a, t, "logical_and"), _mask(b, t, "logical_and")
    return t.emit("and", (a.node, b.node), MASK, None, f"{a.node.name} & {b.node.name}")


def logical_or(a, b) -> Value:
    t = _tracer_of(a, b)
    a, b = _mask(a, t, "logical_or"), _mask(b, t, "logical_or")
    return t.emit("or", (a.node, b.node), MASK, None, f"{a.node.name} | {b.node.name}")


def logical_not(a) -> Value:
    t = _tracer_of(a)
    a = _mask(a, t, "logical_not")
    return t.emit("not", (a.node,), MASK, None, f"~{a.node.name}")


def unlikely(*masks):
    """One promise on `masks`: a mask, or a tuple of them each the promise and'ed with the mask
    (false in every lane where their `or`, the promise, is: version-unlikely's copy)."""
    t = _tracer_of(*masks)
    ms = [_mask(m, t, "unlikely") for m in masks]
    either = ms[0]
    for m in ms[1:]:
        either = logical_or(either, m)
    promise = t.emit("unlikely", (either.node,), MASK, None, f"unlikely({either.node.name})")
    return promise if len(ms) == 1 else tuple(logical_and(promise, m) for m in ms)


# ----------------------------------------------------------------------------- tracing


def _unsupported(t: Tracer, exc: Exception) -> FormulaError:
    """A FormulaError for a Python construct the DSL cannot trace, at the user's line."""
    loc = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == t.code.co_filename:
            loc = (frame.f_code.co_filename, lineno)
    foreign = _foreign_call(loc, tuple(INSTEAD))
    if foreign and not foreign.startswith("aclgen"):
        return FormulaError(_located(loc, _instead_message(foreign)))
    return FormulaError(_located(loc, f"unsupported in a formula: {type(exc).__name__}: {exc}"))


@dataclass
class Signature:
    """What a formula is traced with: its arguments' names and element types (tensors' dtypes,
    then the parameters': "float32", or "int64" for a like-input scalar next to integers)."""

    names: Sequence[str]
    types: Sequence[str]
    outputs: int | None = None  # the number of values it must return (None: any)
    kinds: Sequence[str] = field(default_factory=tuple)  # "input" or "param" per argument
    attrs: Sequence = ()  # Python values passed after the traced arguments (an operator's attributes)


def trace(fn: Callable, sig: Signature) -> Graph:
    """Call `fn` on symbolic elements and return the graph it describes."""
    t = Tracer(fn)
    args = []
    kinds = list(sig.kinds) or ["input"] * len(sig.names)
    for k, (name, type_, kind) in enumerate(zip(sig.names, sig.types, kinds)):
        node = Node(kind, (), type_, k, name, "")
        args.append(node)
    values = [Value(t, n) for n in args]

    def watch(frame, event, arg):  # the line of the formula's own `return`
        if event == "return" and frame.f_code is t.code:
            t.return_line = frame.f_lineno

    old = sys.getprofile()
    sys.setprofile(watch)
    try:
        result = fn(*values, *sig.attrs)
    except FormulaError:
        raise
    except Exception as exc:  # an unsupported Python construct: point at the user's line
        raise _unsupported(t, exc) from None
    finally:
        sys.setprofile(old)
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    where = (t.code.co_filename, t.return_line or t.code.co_firstlineno)
    if sig.outputs is not None and len(results) != sig.outputs:
        raise FormulaError(_located(where, f"formula {fn.__qualname__} returns {len(results)} "
                                           f"value{'s' * (len(results) != 1)} but the operator has "
                                           f"{sig.outputs} output{'s' * (sig.outputs != 1)}"))
    out = []
    for r in results:
        if isinstance(r, Value) and r.type == MASK:
            raise FormulaError(_located(where, f"formula {fn.__qualname__} returns a mask: select values "
                                               "with it (select(mask, 1.0, 0.0))"))
        if not isinstance(r, Value):
            try:
                r = _lift(r, None, t)
            except FormulaError as exc:
                raise FormulaError(_located(where, str(exc).split(": ", 1)[-1])) from None
        out.append(r.node)
    return Graph(args, t.nodes, out, t.listing())
