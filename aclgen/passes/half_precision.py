"""Which formula functions only a half type stores: expand-math builds those to 2^-16 instead of
f32's ulp (docs/math.md, "Half-type results").

A function's result qualifies when every path from it to the kernel's outputs goes through
operations that carry a relative error through without growing it, and ends in a conversion to
float16 or bfloat16:

- multiplies, divisions and negations (`THROUGH`), the chosen values of selects;
- sums of two values that cannot be negative (`nonnegative`), and log1p of such a value
  (x / ((1 + x) log1p x) <= 1 there);
- moves that do not compute: lane shuffles, extracts and splats, a loop's carried value (into
  the loop's next iteration and its result: a sum accumulated over a row), and a store into a
  `tile.alloca` buffer (into every load of that buffer: softmax's row of exps).

Anything else (an add of unknown sign, a compare, a reduction into an output, another function,
a store to memory the kernel does not own, an f32 output) keeps the f32 form.

Both questions — is this value nonnegative, is it stored only in a half type — are greatest
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

from collections.abc import Callable

from xdsl.dialects import scf
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from aclgen.dialects import ew, tile
from aclgen.dialects.ew import element

HALF_TYPES = ("f16", "bf16")
#: Operations that carry a relative error from an operand to their result unchanged.
THROUGH = (ew.MulOp, ew.DivOp, ew.NegOp)
#: Operations that move a value between lanes or registers without computing.
MOVES = (tile.ShuffleOp, tile.ExtractOp, tile.SplatOp)
#: Functions whose result is never negative (NaN aside); maximum's is where either operand's is,
#: log1p's where its argument's is.
NONNEGATIVE = tuple(ew.function_op(name) for name in ("exp", "exp2", "sigmoid", "erfc", "absolute", "sqrt"))
MAXIMUM, LOG1P = ew.function_op("maximum"), ew.function_op("log1p")


def half_functions(module: Operation) -> frozenset[Operation]:
    """The function ops of `module` whose results only a half type stores."""
    values: list[SSAValue] = [v for op in module.walk()
                              for v in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args))]
    nonneg = _greatest(values, _nonnegative)
    half = _greatest(values, lambda v, yes: _stored_in_half(v, yes, nonneg))
    return frozenset(op for op in module.walk() if isinstance(op, ew.FunctionOp) and half[op.results[0]])


def _greatest(values: list[SSAValue], rule: Callable[[SSAValue, dict[SSAValue, bool]], bool]) -> dict[SSAValue, bool]:
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


def _buffer_accesses(buffer: SSAValue) -> tuple[list[tile.StoreOp], list[tile.LoadOp]] | None:
    """The stores and loads of a `tile.alloca` buffer, if those are all its uses (as their row)."""
    if not isinstance(buffer.owner, tile.AllocaOp):
        return None
    stores, loads = [], []
    for use in buffer.uses:
        op = use.operation
        if isinstance(op, tile.StoreOp) and use.index == 1:
            stores.append(op)
        elif isinstance(op, tile.LoadOp) and use.index == 0:
            loads.append(op)
        else:
            return None
    return stores, loads


def _nonnegative(v: SSAValue, yes: dict[SSAValue, bool]) -> bool:
    """Whether `v` is >= 0 (or NaN) by construction: a constant, a `NONNEGATIVE` function, a sum,
    product, quotient, selection or move of such values, a loop's carried value that starts and
    stays so, or a load of a buffer whose every store is (and whose masked lanes fill with 0)."""
    carried = _carried(v)
    if carried is not None:
        return all(yes.get(c, False) for c in carried)
    op = v.owner
    if isinstance(op, ew.ConstantOp):
        return op.value.value.data >= 0
    if isinstance(op, NONNEGATIVE):
        return True
    if isinstance(op, MAXIMUM):
        return any(yes.get(o, False) for o in op.operands)
    if isinstance(op, (LOG1P, *MOVES)):
        return yes.get(op.operands[0], False)
    if isinstance(op, ew.AddOp | ew.MulOp | ew.DivOp):
        return all(yes.get(o, False) for o in op.operands)
    if isinstance(op, ew.SelectOp):
        return yes.get(op.lhs, False) and yes.get(op.rhs, False)
    if isinstance(op, tile.LoadOp):
        accesses = _buffer_accesses(op.row)
        return (accesses is not None and (op.fill is None or op.fill.value.data >= 0)
                and all(yes.get(s.value, False) for s in accesses[0]))
    return False


def _stored_in_half(v: SSAValue, yes: dict[SSAValue, bool], nonneg: dict[SSAValue, bool]) -> bool:
    """Whether every use of `v` is a conversion to a half type or carries `v` on (module
    docstring) to values that are themselves stored only in a half type."""
    return bool(v.uses) and all(_half_use(use.operation, use.index, yes, nonneg) for use in v.uses)


def _half_use(op: Operation, index: int, yes: dict[SSAValue, bool], nonneg: dict[SSAValue, bool]) -> bool:
    if isinstance(op, ew.ConvertOp):
        return element(op.result.type).name in HALF_TYPES
    if (isinstance(op, (*THROUGH, *MOVES)) or (isinstance(op, ew.SelectOp) and index > 0)
            or (isinstance(op, ew.AddOp | LOG1P) and all(nonneg.get(o, False) for o in op.operands))):
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
    """Whether a value a loop carries or a buffer keeps may be taken on: a sum, a loop's result or
    a function's own result, never a product (module docstring)."""
    return isinstance(v.owner, ew.AddOp | scf.ForOp | ew.FunctionOp)
