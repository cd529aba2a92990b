"""Which formula functions only a half type stores: expand-math builds those to 2^-16 instead of
f32's ulp (docs/math.md, "Half-type results").

A function's result qualifies when every path from it to the kernel's outputs goes through
operations that carry a relative error through without growing it, and ends in a conversion to
float16 or bfloat16:

- multiplies, divisions and negations (`THROUGH`), the chosen values of selects;
- sums of two values of one sign and differences of two of opposite signs (`_signs`: no
  cancellation, |a + b| = |a| + |b|), and log1p of a value that cannot be negative
  (x / ((1 + x) log1p x) <= 1 there);
- moves that do not compute: lane shuffles, extracts and splats, a loop's carried value (into
  the loop's next iteration and its result: a sum accumulated over a row), and a store into a
  `tile.alloca` buffer (into every load of that buffer, through the offsets and selects of a
  vector loop's pieces: softmax's row of exps, and a tail's copy in its scratch vector).

Anything else (an add of unknown sign, a compare, a reduction into an output, another function,
a store to memory the kernel does not own, an f32 output) keeps the f32 form.

Both questions — what sign has this value, is it stored only in a half type — are greatest
fixed points over the function's values: every value starts out yes, and the rules take yes away
until nothing changes. A loop's carried value is then nonnegative when its start is and what the
body yields is (induction), and stored only in a half type when every use reachable from it is
one of the above, around the loop or after it.

A chain around a loop (a carried value, or a buffer stored and loaded again) must not multiply:
a product of N approximate factors has N times their error, a sum of N nonnegative ones no more
than each. The loops and buffers tile-rows makes carry reductions' accumulators (sums, maxima,
minima: no products) and rows of values, so a carried value or a stored one is taken on only
where it is a sum, another loop's result or a function's own result (`_carries`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from xdsl.dialects import arith, scf
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from aclgen import dtypes as dt
from aclgen.dialects import ew, tile
from aclgen.dialects.ew import element

K = TypeVar("K", bound=Hashable)
Signs = dict[tuple[SSAValue, int], bool]  # (value, 1): never negative; (value, -1): never positive
HALF_TYPES = tuple(d.short for d in dt.HALF)  # their IR element types' names
#: Operations that carry a relative error from an operand to their result unchanged.
THROUGH = (ew.MulOp, ew.DivOp, ew.NegOp)
#: Operations that move a value between lanes or registers without computing.
MOVES = (tile.ShuffleOp, tile.ExtractOp, tile.SplatOp)
#: Functions whose result is never negative (NaN aside).
NONNEGATIVE = tuple(ew.function_op(name) for name in ("exp", "exp2", "sigmoid", "erfc", "absolute", "sqrt"))
#: Functions whose result has their argument's sign (where defined: log1p above -1).
ODD = tuple(ew.function_op(name) for name in ("log1p", "expm1", "tanh", "erf"))
MAXIMUM, MINIMUM, LOG1P = ew.function_op("maximum"), ew.function_op("minimum"), ew.function_op("log1p")


def half_functions(module: Operation) -> frozenset[Operation]:
    """The function ops of `module` whose results only a half type stores: none where no value
    is converted to a half type (a float32 kernel skips the fixed points, a third of expand-math's
    time for GELU's two forms)."""
    ops = list(module.walk())
    if not any(isinstance(op, ew.ConvertOp) and element(op.result.type).name in HALF_TYPES for op in ops):
        return frozenset()
    values: list[SSAValue] = [v for op in ops
                              for v in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args))]
    signs = _greatest([(v, sign) for v in values for sign in (1, -1)], _has_sign)
    half = _greatest(values, lambda v, yes: _stored_in_half(v, yes, signs))
    return frozenset(op for op in ops if isinstance(op, ew.FunctionOp) and half[op.results[0]])


def _greatest(values: list[K], rule: Callable[[K, dict[K, bool]], bool]) -> dict[K, bool]:
    """The greatest fixed point of `rule` over `values` (those not listed are no)."""
    yes = dict.fromkeys(values, True)
    changed = True
    while changed:
        changed = False
        for v in values:
            if yes[v] and not rule(v, yes):
                yes[v] = False
                changed = True
    return yes


def _carried(v: SSAValue) -> tuple[SSAValue, SSAValue] | None:
    """(start, yielded) of a loop's carried value (its block argument or its result), else None."""
    if isinstance(v, BlockArgument):
        block = v.owner
        loop = block.parent_op() if isinstance(block, Block) else None
        if not isinstance(loop, scf.ForOp) or v.index == 0:
            return None
        i = v.index - 1
    elif isinstance(v, OpResult) and isinstance(v.owner, scf.ForOp):
        loop, i = v.owner, v.index
    else:
        return None
    yield_op = loop.body.block.last_op
    return loop.iter_args[i], yield_op.operands[i]  # type: ignore[union-attr]


def _buffers(ptr: SSAValue) -> list[SSAValue] | None:
    """The `tile.alloca` buffers `ptr` points into (through offsets and selects: a vector loop's
    rows, moved to a piece's first column or to its scratch vector), if it points into no other
    memory."""
    op = ptr.owner
    if isinstance(op, tile.AllocaOp):
        return [ptr]
    if isinstance(op, tile.OffsetOp):
        return _buffers(op.base)
    if isinstance(op, arith.SelectOp):
        a, b = _buffers(op.lhs), _buffers(op.rhs)
        return None if a is None or b is None else a + b
    return None


def _buffer_accesses(ptr: SSAValue) -> tuple[list[tile.StoreOp], list[tile.LoadOp]] | None:
    """The stores and loads of the buffers `ptr` points into, if those are all their uses (as
    their row, directly or through offsets and selects)."""
    buffers = _buffers(ptr)
    if buffers is None:
        return None
    stores, loads = [], []
    views, seen = list(buffers), set()
    while views:
        view = views.pop()
        if view in seen:
            continue
        seen.add(view)
        for use in view.uses:
            op = use.operation
            if isinstance(op, tile.StoreOp) and use.index == 1:
                stores.append(op)
            elif isinstance(op, tile.LoadOp) and use.index == 0:
                loads.append(op)
            elif (isinstance(op, tile.OffsetOp) and use.index == 0) or (isinstance(op, arith.SelectOp) and use.index > 0):
                if _buffers(op.results[0]) is None:  # a select of a buffer and other memory
                    return None
                views.append(op.results[0])
            else:
                return None
    return stores, loads


def _has_sign(key: tuple[SSAValue, int], yes: Signs) -> bool:
    """Whether `v` has sign `s` by construction (>= 0 for 1, <= 0 for -1; NaN aside): a constant
    of that sign, a `NONNEGATIVE` function (for 1), an `ODD` one of such an argument, a maximum or
    minimum of such operands, a sum, difference, product, quotient, selection, negation or move
    whose operands' signs make it so, a loop's carried value that starts and stays so, or a load
    of a buffer whose every store is (and whose masked lanes fill with a value of that sign)."""
    v, s = key

    def has(x: SSAValue, sign: int) -> bool:
        return yes.get((x, sign), False)

    carried = _carried(v)
    if carried is not None:
        return all(has(c, s) for c in carried)
    op = v.owner
    if isinstance(op, ew.ConstantOp):
        return op.value.value.data * s >= 0
    if isinstance(op, NONNEGATIVE):
        return s == 1
    if isinstance(op, MAXIMUM | MINIMUM):  # maximum: >= 0 if either is, <= 0 if both are
        either = s == (1 if isinstance(op, MAXIMUM) else -1)
        return (any if either else all)(has(o, s) for o in op.operands)
    if isinstance(op, (*ODD, *MOVES)):
        return has(op.operands[0], s)
    if isinstance(op, ew.NegOp):
        return has(op.operands[0], -s)
    if isinstance(op, ew.AddOp):
        return has(op.lhs, s) and has(op.rhs, s)
    if isinstance(op, ew.SubOp):
        return has(op.lhs, s) and has(op.rhs, -s)
    if isinstance(op, ew.MulOp | ew.DivOp):
        return any(has(op.lhs, t) and has(op.rhs, s * t) for t in (1, -1))
    if isinstance(op, ew.SelectOp):
        return has(op.lhs, s) and has(op.rhs, s)
    if isinstance(op, tile.LoadOp):
        accesses = _buffer_accesses(op.row)
        return (accesses is not None and (op.fill is None or op.fill.value.data * s >= 0)
                and all(has(store.value, s) for store in accesses[0]))
    return False


def _one_sign(a: SSAValue, b: SSAValue, signs: Signs, flip: int = 1) -> bool:
    """Whether a and flip * b have one sign (their sum cannot cancel)."""
    return any(signs.get((a, s), False) and signs.get((b, s * flip), False) for s in (1, -1))


def _stored_in_half(v: SSAValue, yes: dict[SSAValue, bool], signs: Signs) -> bool:
    """Whether every use of `v` is a conversion to a half type or carries `v` on (module
    docstring) to values that are themselves stored only in a half type."""
    return bool(v.uses) and all(_half_use(use.operation, use.index, yes, signs) for use in v.uses)


def _half_use(op: Operation, index: int, yes: dict[SSAValue, bool], signs: Signs) -> bool:
    if isinstance(op, ew.ConvertOp):
        return element(op.result.type).name in HALF_TYPES
    if (isinstance(op, (*THROUGH, *MOVES)) or (isinstance(op, ew.SelectOp) and index > 0)
            or (isinstance(op, ew.AddOp) and _one_sign(op.lhs, op.rhs, signs))
            or (isinstance(op, ew.SubOp) and _one_sign(op.lhs, op.rhs, signs, -1))
            or (isinstance(op, LOG1P) and signs.get((op.operands[0], 1), False))):
        return yes.get(op.results[0], False)
    if isinstance(op, scf.YieldOp) and isinstance(loop := op.parent_op(), scf.ForOp) and _carries(op.operands[index]):
        return yes.get(loop.results[index], False) and yes.get(loop.body.block.args[index + 1], False)
    if isinstance(op, scf.ForOp) and index >= 3:  # a carried value's start
        i = index - 3
        return yes.get(op.results[i], False) and yes.get(op.body.block.args[i + 1], False)
    if isinstance(op, tile.StoreOp) and index == 0 and _carries(op.value):
        accesses = _buffer_accesses(op.row)
        return accesses is not None and all(yes.get(load.result, False) for load in accesses[1])
    return False


def _carries(v: SSAValue) -> bool:
    """Whether a value a loop carries or a buffer keeps may be taken on: a sum, a loop's result, a
    function's own result or a load (moved unchanged: a head or tail into its scratch vector),
    never a product (module docstring)."""
    return isinstance(v.owner, ew.AddOp | scf.ForOp | ew.FunctionOp | tile.LoadOp)
