"""`legalize-dtypes`: make every `ew` op work on one type, computing in f32, rounding once.

A traced formula may mix storage types (`ew.mul %g, %d : f16, f32 -> f32`). This pass inserts
the conversions that SPEC.md prescribes, so that later passes see homogeneous ops:

- arithmetic: every operand widened to f32 (fp16/bf16 exactly, integers rounded to nearest);
- compares: two integers compare exactly (both sign/zero-extended to i64 when their types
  differ), anything else compares in f32;
- selects of two different types select in f32; selects of one type stay exact in that type;
- formula functions compute in f32: every operand widened (`isnan` of an integer is then
  `false`, which LLVM folds);
- `ew.yield` converts each value to its output's element type: the single rounding of the
  result (nearest-even: `ew.round` then a saturating `ew.convert` for integers).

Before:
    %m = ew.mul %g, %d : f16, f32 -> f32
    ew.yield %m : f32                       // output !ew.view<1xf16, contiguous>
After:
    %g32 = ew.convert %g : f16 to f32
    %m = ew.mul %g32, %d : f32, f32 -> f32
    %h = ew.convert %m : f32 to f16
    ew.yield %h : f16
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, f32, i64
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass

from aclgen.dialects import ew


def _convert_operand(op: Operation, index: int, elem: Attribute) -> None:
    value = op.operands[index]
    if ew.element(value.type) == elem:
        return
    block = op.parent_block()
    assert block is not None
    if _is_int(elem) and not _is_int(value.type):  # to an integer: round to nearest even first
        rounded = ew.function_op("round")(value)
        block.insert_op_before(rounded, op)
        value = rounded.results[0]
    conv = ew.ConvertOp(value, elem)
    block.insert_op_before(conv, op)
    op.operands[index] = conv.result


def _is_int(t: Attribute) -> bool:
    e = ew.element(t)
    return isinstance(e, IntegerType) and e.width.data > 1


def legalize_op(op: Operation, outputs: list[Attribute]) -> None:
    match op:
        case ew.BinaryOp() | ew.UnaryOp() | ew.FunctionOp() | ew.ReduceOp():
            for i in range(len(op.operands)):
                _convert_operand(op, i, f32)
        case ew.CmpOp():
            a, b = op.lhs.type, op.rhs.type
            if _is_int(a) and _is_int(b):
                if a != b:
                    _convert_operand(op, 0, i64)
                    _convert_operand(op, 1, i64)
            else:
                _convert_operand(op, 0, f32)
                _convert_operand(op, 1, f32)
        case ew.SelectOp():
            if op.lhs.type != op.rhs.type:
                _convert_operand(op, 1, f32)
                _convert_operand(op, 2, f32)
        case ew.YieldOp():
            for i, elem in enumerate(outputs):
                _convert_operand(op, i, elem)
        case _:
            pass


def _is_legal(op: Operation) -> bool:
    match op:
        case ew.BinaryOp() | ew.UnaryOp() | ew.FunctionOp() | ew.ReduceOp():
            return all(ew.element(v.type) == f32 for v in op.operands)
        case ew.CmpOp() | ew.SelectOp():
            return op.operands[-1].type == op.operands[-2].type
        case _:
            return True


@dataclass(frozen=True)
class LegalizeDtypesPass(ModulePass):
    name = "legalize-dtypes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.walk():
            if not isinstance(kernel, ew.KernelOp):
                continue
            outputs = [v.element_type for v in kernel.outputs.data]
            for inner in list(kernel.block.ops):
                legalize_op(inner, outputs)
            bad = [o for o in kernel.block.ops if not _is_legal(o)]
            assert not bad, f"in pass {self.name}: ops left mixed-typed: {bad[0]}"


def is_legal(op: Operation) -> bool:
    """True when `op` is in the homogeneous form `legalize-dtypes` produces."""
    return _is_legal(op)

