"""xDSL `llvm` dialect -> llvmlite IR, with our `llvmx` extensions.

`xdsl.backend.llvm.convert_module` translates a fixed set of ops; its per-function loop calls
its own `convert_op`. We keep its function declaration and op converters and route the
function bodies through `convert_op` below, which handles `llvmx` first.
"""

from __future__ import annotations

from typing import cast

import llvmlite.ir as ir
from xdsl.backend.llvm import convert as xconvert
from xdsl.backend.llvm.convert_op import convert_op as xdsl_convert_op
from xdsl.backend.llvm.convert_op import create_constant
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp, VectorType
from xdsl.ir import Block, Operation, SSAValue

from aclgen.dialects import llvmx


def convert_op(op: Operation, b: ir.IRBuilder, values: dict[SSAValue, ir.Value], blocks: dict[Block, ir.Block]) -> None:
    match op:
        case llvmx.FCmpOp():
            pred = llvmx.FCmpPredicate(op.predicate.data)
            fn = b.fcmp_ordered if pred.ordered else b.fcmp_unordered
            values[op.result] = fn(pred.symbol, values[op.lhs], values[op.rhs])
        case llvmx.SelectOp():
            values[op.result] = b.select(values[op.cond], values[op.lhs], values[op.rhs])
        case llvmx.ExtractElementOp():
            values[op.result] = b.extract_element(values[op.vector], values[op.index])
        case llvmx.FPToSIOp():
            # pyright reads llvmlite's @_castop-wrapped fptosi as returning None: it returns the cast
            values[op.result] = cast(ir.Value, b.fptosi(values[op.input], convert_type(op.result.type)))
        case llvm.AllocaOp():
            # an opaque `ptr` like every other `!llvm.ptr` (llvmlite types the alloca's pointer,
            # and a vector store through a float* would not type-check)
            slot = b.alloca(convert_type(op.elem_type), size=values[op.size])
            slot.type = convert_type(op.res.type)
            if op.alignment:
                slot.align = op.alignment.value.data  # pyright: ignore[reportAttributeAccessIssue]
            values[op.res] = slot
        case llvm.ConstantOp() if isinstance(op.result.type, VectorType):
            values[op.result] = _vector_constant(create_constant(op.result.type, op.value))
        case llvm.StoreOp() if op.nontemporal is not None:
            # xDSL's converter drops the flag: keep it as !nontemporal metadata
            align = op.alignment.value.data if op.alignment else None
            store = b.store(values[op.value], values[op.ptr], align)
            store.set_metadata("nontemporal", b.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
        case _:
            xdsl_convert_op(op, b, values, blocks)


class _Splat(ir.Constant):
    """A vector constant of one value in every lane, printed `splat (T v)`."""

    def __init__(self, typ: ir.VectorType, lane: ir.Constant):
        # Constant.__init__ would make a tuple of lanes of any non-list value: set the fields
        self.type, self.constant = typ, f"splat ({lane})"

    def _get_reference(self) -> str:
        return self.constant


def _vector_constant(c: ir.Constant) -> ir.Constant:
    """A vector constant whose lanes are one value as LLVM's `splat (T v)`: a 64-lane kernel has
    dozens of them, and formatting (then parsing) every lane took a fifth of a cold compile. A
    NaN lane never counts as equal, so its vector keeps the lanes' list."""
    lanes = c.constant
    if not isinstance(c.type, ir.VectorType) or not isinstance(lanes, list) or not lanes:
        return c
    first = lanes[0].constant
    if all(lane.constant == first and repr(lane.constant) == repr(first) for lane in lanes):
        return _Splat(c.type, lanes[0])
    return c


def _convert_func(op: llvm.FuncOp, module: ir.Module) -> None:
    fn = module.get_global(op.sym_name.data)
    blocks: dict[Block, ir.Block] = {}
    values: dict[SSAValue, ir.Value] = {}
    for i, block in enumerate(op.body.blocks):
        blocks[block] = fn.append_basic_block(name=block.name_hint or "")
        if i == 0:
            values.update(zip(block.args, fn.args))
    for i, block in enumerate(op.body.blocks):
        if i and block.args:
            b = ir.IRBuilder(blocks[block])
            for arg in block.args:
                values[arg] = b.phi(convert_type(arg.type))
    for block in op.body.blocks:
        b = ir.IRBuilder(blocks[block])
        if blocks[block].instructions:
            b.position_after(blocks[block].instructions[-1])
        for inner in block.ops:
            convert_op(inner, b, values, blocks)


# A kernel's own frame is aligned to a cache line: its vector spill slots then never straddle
# two lines, whatever the caller's stack pointer was.
STACK_ALIGN = 64


def convert_module(module: ModuleOp, triple: str) -> ir.Module:
    out = ir.Module()
    out.triple = triple
    funcs = []
    for op in module.ops:
        if not isinstance(op, llvm.FuncOp):
            raise ValueError(f"only llvm.func can be translated to LLVM IR, found {op.name}")
        xconvert._declare_func(op, out)
        funcs.append(op)
    for op in funcs:
        if op.body.blocks:
            _convert_func(op, out)
            fn = out.get_global(op.sym_name.data)
            fn.attributes.add("nounwind")  # (llvmlite prints alignstack only beside another attribute)
            fn.attributes.alignstack = STACK_ALIGN
    return out
