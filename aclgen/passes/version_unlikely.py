"""`version-unlikely`: a vector step in two versions where the formula promised a mask rarely holds.

`aclgen.unlikely(m)` (`ew.unlikely`) marks a mask the formula expects to be false nearly
everywhere: the care one operand range needs (sigmoid's tail, where exp(-x) overflows) is chosen
by a select on it. In each vector loop (`tile.vector`), the ops from the first `ew.unlikely` to
the end of the step, with the ops before it that only they use, move into

    scf.if (tile.any %m) { the ops as they were } else { a copy made for %m false in every lane }

and the copy is folded: the promise is false, and so are the masks it is made of (`a | b` false:
a and b false; `~a` false: a true, as `aclgen.unlikely(a, b)` combines them); a select on a known
mask is one of its sides, `and`, `or` and `not` of known masks fold, and what then has no use
is erased (the care's own arithmetic, its compares, its selects). Each lane's result is the same
in both versions (the copy only leaves out work whose result no lane takes), so the bits never
depend on the vector width or on a lane's neighbours: the pass runs after expand-math, so both
versions have the same expansions (a half-type form chosen from the copy's fewer uses would not
be the rare version's), and each conversion to a half type is marked (`TWIN`) so that
lower-to-llvm narrows its copies as it narrows it. A later promise in the step versions the
common copy again (each promise one more copy of the rest of the step, never a product of
them); in the rare version it is a mask only. A step that carries values to the next (a row
kernel's accumulating loop) keeps its one version, and outside vector steps there is none: once
the versions are made, every `ew.unlikely` left is replaced by its mask.

Before:
    scf.for %c = %0 to %n step %w {
      %x = tile.load %in[%c] ...
      %m = ew.cmp "olt" %x, %lo
      %t = ew.unlikely %m
      %care = ew.mul %x, %big
      %common = ew.add %x, %one
      %y = ew.select %t, %care, %common
      tile.store %y, %out[%c] ...
    } {tile.vector}
After:
    scf.for %c = %0 to %n step %w {
      %x = tile.load %in[%c] ...
      %m = ew.cmp "olt" %x, %lo
      %any = tile.any %m : vector<8xi1> -> i1
      scf.if %any {
        %care = ew.mul %x, %big
        %common = ew.add %x, %one
        %y = ew.select %m, %care, %common
        tile.store %y, %out[%c] ...
      } else {
        %common_1 = ew.add %x, %one
        tile.store %common_1, %out[%c] ...
      }
    } {tile.vector}
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i1, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free
from xdsl.transforms.dead_code_elimination import region_dce

from aclgen.dialects import ew, tile

#: The attribute an `ew.convert` of the versions and its copies share: lower-to-llvm narrows them
#: to bf16 with the same fix-ups (the rare version's), since the copy's folded operand may prove
#: fewer needed (a NaN guard left out would keep a signaling NaN input signaling in the copy and
#: quiet it in the rare version: a lane's bits would depend on its neighbours).
TWIN = "tile.twin"


def _moved(body: Block, first: ew.UnlikelyOp) -> list[Operation]:
    """The ops of `body` that go into the versions: `first` and every op after it but the
    terminator, and before it those whose every use is among them (the care's operands, where
    the formula computed them first)."""
    ops = list(body.ops)
    at = ops.index(first)
    moved = set(ops[at:-1])
    for op in reversed(ops[:at]):
        users = [u.operation for r in op.results for u in r.uses]
        if is_side_effect_free(op) and users and all(u in moved for u in users):
            moved.add(op)
    return [op for op in ops if op in moved]


def _facts(value: SSAValue, holds: bool, facts: dict[SSAValue, bool]) -> dict[SSAValue, bool]:
    """`facts` with `value` known to be `holds` in every lane, and what follows for the masks it is
    made of: an `or` that is false has false operands, an `and` that is true true ones, a `not`
    the other value (so `unlikely(a | ~b)` makes a false and b true)."""
    facts[value] = holds
    op = value.owner
    if isinstance(op, ew.UnlikelyOp) or (isinstance(op, ew.OrOp) and not holds) or (isinstance(op, ew.AndOp) and holds):
        for v in op.operands:
            _facts(v, holds, facts)
    elif isinstance(op, ew.NotOp):
        _facts(op.input, not holds, facts)
    return facts


def _constant(holds: bool, like: SSAValue) -> ew.ConstantOp:
    return ew.ConstantOp(IntegerAttr(int(holds), i1), like.type)


def _known_false(ops: list[Operation], promise: SSAValue) -> list[Operation]:
    """`ops` copied with `promise` (and the masks it is made of) false in every lane, folded."""
    copy: list[Operation] = []
    mapping: dict[SSAValue, SSAValue] = {}
    known: dict[SSAValue, bool] = {}
    for value, holds in _facts(promise, False, {}).items():
        const = _constant(holds, value)
        copy.append(const)
        mapping[value] = const.result
        known[const.result] = holds
    for op in ops:
        if op.results and op.results[0] in mapping:  # the promise itself, and masks it decides
            continue
        new = op.clone(value_mapper=mapping)
        args = [known.get(v) for v in new.operands]
        folded: SSAValue | bool | None = None
        match new:
            case ew.SelectOp() if args[0] is not None:
                folded = new.lhs if args[0] else new.rhs
            case ew.UnlikelyOp() if args[0] is not None:
                folded = args[0]
            case ew.NotOp() if args[0] is not None:
                folded = not args[0]
            case ew.AndOp() | ew.OrOp() if args != [None, None]:
                absorbing = isinstance(new, ew.OrOp)  # true absorbs an or, false an and
                if absorbing in args:
                    folded = absorbing
                else:  # the known operand is the identity
                    folded = new.operands[args.index(None)] if None in args else not absorbing
        if folded is None:
            copy.append(new)
            mapping.update(zip(op.results, new.results))
            continue
        if isinstance(folded, bool):
            const = _constant(folded, op.results[0])
            copy.append(const)
            known[const.result] = folded
            folded = const.result
        mapping[op.results[0]] = folded
        new.erase(safe_erase=False)
    return copy


def version(body: Block, twins: Iterator[int]) -> None:
    """`body` (a vector step, ending in its terminator) in two versions on its first
    `ew.unlikely`, if it has one; the version without the rare lanes again on its next one.
    `twins` numbers the conversions the versions share (a count per module, so that the IR
    printed depends on the input alone)."""
    first = next((op for op in body.ops if isinstance(op, ew.UnlikelyOp)), None)
    if first is None or body.last_op is None or body.last_op.operands:
        return  # no promise, or a step that carries values (a row's accumulators): as it is
    test = tile.AnyOp(first.input)
    body.insert_op_before(test, first)
    ops = _moved(body, first)
    terminator = body.last_op
    assert terminator is not None
    for op in ops:
        op.detach()
        if isinstance(op, ew.ConvertOp) and TWIN not in op.attributes:  # its copies carry it too
            op.attributes[TWIN] = IntegerAttr(next(twins), i64)
    common = Block([*_known_false(ops, first.result), scf.YieldOp()])
    rest = Region(common)
    region_dce(rest)  # what only the rare side needed
    body.insert_op_before(scf.IfOp(test.result, [], [*ops, scf.YieldOp()], rest), terminator)
    version(common, twins)


@dataclass(frozen=True)
class VersionUnlikelyPass(ModulePass):
    name = "version-unlikely"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        marks = [o for o in op.walk() if isinstance(o, ew.UnlikelyOp)]
        if not marks:
            return
        twins = itertools.count()
        for loop in [o for o in op.walk() if isinstance(o, scf.ForOp) and "tile.vector" in o.attributes]:
            version(loop.body.block, twins)
        for mark in [o for o in op.walk() if isinstance(o, ew.UnlikelyOp)]:
            mark.result.replace_all_uses_with(mark.input)
            mark.detach()
            mark.erase()
