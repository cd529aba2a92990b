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
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, VectorType
from xdsl.ir import Attribute, Block, Operation, SSAValue

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
        case llvmx.AVX512Op():
            fn = llvmx.AVX512Function(op.function.data)
            table = None if op.table is None else op.table.value.data
            values[op.result] = _avx512(b, fn, [values[a] for a in op.args], table)
        case llvmx.LookupOp():
            values[op.result] = _lookup(b, op.values, values[op.key])
        case llvm.AllocaOp():
            # an opaque `ptr` like every other `!llvm.ptr` (llvmlite types the alloca's pointer,
            # and a vector store through a float* would not type-check)
            slot = b.alloca(convert_type(op.elem_type), size=values[op.size])
            slot.type = convert_type(op.res.type)
            if op.alignment:
                slot.align = op.alignment.value.data  # pyright: ignore[reportAttributeAccessIssue]
            values[op.res] = slot
        case llvm.ConstantOp() if isinstance(op.result.type, VectorType):
            values[op.result] = _vector_constant(op.result.type, op.value)
        case llvm.StoreOp() if op.nontemporal is not None:
            # xDSL's converter drops the flag: keep it as !nontemporal metadata
            align = op.alignment.value.data if op.alignment else None
            store = b.store(values[op.value], values[op.ptr], align)
            store.set_metadata("nontemporal", b.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
        case _:
            xdsl_convert_op(op, b, values, blocks)


_F32 = ir.FloatType()
_I32 = ir.IntType(32)


def _mask(indices: list[int]) -> ir.Constant:
    """A shufflevector mask."""
    return ir.Constant(ir.VectorType(_I32, len(indices)), [ir.Constant(_I32, k) for k in indices])


def _avx512(b: ir.IRBuilder, fn: llvmx.AVX512Function, args: list[ir.Value], table: int | None = None) -> ir.Value:
    """`llvmx.avx512ps`: the x86 intrinsic on chunks of 16, 8 or 4 lanes (the largest that divides
    the lanes, padded to a multiple of 4), the chunks' results concatenated; a scalar goes
    through the first lane of a 4-lane vector. fixupimm's `table` is a vector of it in every lane
    and its immediate 0 (no exception flags), with no pass-through operand (its first is)."""
    t = _type(args[0])
    if not isinstance(t, ir.VectorType):
        quad = ir.Constant(ir.VectorType(_F32, 4), None)
        return b.extract_element(
            _avx512(b, fn, [b.insert_element(quad, a, ir.Constant(_I32, 0)) for a in args], table),
            ir.Constant(_I32, 0))
    n = t.count
    padded = -(-n // 4) * 4
    if padded != n:  # lanes past n: the undef operand's first
        args = [_lanes(b, a, [min(i, n) for i in range(padded)]) for a in args]
    chunk = next(c for c in (16, 8, 4) if padded % c == 0)
    vt = ir.VectorType(_F32, chunk)
    mask_type = ir.IntType(max(chunk, 8))
    fixed: list[ir.Constant] = []
    passthrough = [ir.Constant(vt, None)]
    if fn is llvmx.AVX512Function.GETMANT:
        fixed = [ir.Constant(_I32, 0)]  # interval [1, 2), the source's sign
    elif fn is llvmx.AVX512Function.FIXUPIMM:
        assert table is not None
        fixed = [ir.Constant(ir.VectorType(_I32, chunk), [ir.Constant(_I32, table)] * chunk), ir.Constant(_I32, 0)]
        passthrough = []
    rounding = [ir.Constant(_I32, 4)] if chunk == 16 and fn.rounding_operand else []  # the current mode
    tail = [*passthrough, ir.Constant(mask_type, -1), *rounding]
    name = fn.intrinsic(32 * chunk)
    callee = b.module.globals.get(name) or ir.Function(
        b.module, ir.FunctionType(vt, [vt] * fn.arity + [c.type for c in fixed + tail]), name)
    out = None
    for c in range(0, padded, chunk):
        part = b.call(callee, [_lanes(b, a, list(range(c, c + chunk))) if chunk < padded else a for a in args]
                      + fixed + tail)
        if out is None:
            out = part
        else:  # append: the part widened to out's lanes (its first lane repeated), then both joined
            m = cast(ir.VectorType, _type(out)).count
            wide = part if m == chunk else _lanes(b, part, [min(i, chunk) for i in range(m)])
            out = b.shuffle_vector(out, wide, _mask(list(range(m)) + [m + k for k in range(chunk)]))
    assert out is not None
    return out if padded == n else _lanes(b, out, list(range(n)))


def _lookup(b: ir.IRBuilder, table: list[float], key: ir.Value) -> ir.Value:
    """`llvmx.lookup`: each lane's key, modulo the table's length, extracts from the constant
    table and inserts into the result. LLVM's x86 backend matches such a chain (a vector built
    from one vector's elements at variable indices) to `vpermps`; elsewhere it is a load per lane."""
    n = len(table)
    tab = ir.Constant(ir.VectorType(_F32, n), [ir.Constant(_F32, v) for v in table])
    t = _type(key)
    if not isinstance(t, ir.VectorType):
        return b.extract_element(tab, b.and_(key, ir.Constant(_I32, n - 1)))
    index = b.and_(key, ir.Constant(t, [ir.Constant(_I32, n - 1)] * t.count))
    out: ir.Value = ir.Constant(ir.VectorType(_F32, t.count), None)
    for i in range(t.count):
        lane = ir.Constant(_I32, i)
        out = b.insert_element(out, b.extract_element(tab, b.extract_element(index, lane)), lane)
    return out


def _lanes(b: ir.IRBuilder, v: ir.Value, indices: list[int]) -> ir.Value:
    """The lanes `indices` of `v` (an index past v's last lane reads the undef second operand)."""
    return b.shuffle_vector(v, ir.Constant(_type(v), None), _mask(indices))


def _type(v: ir.Value) -> ir.Type:
    return v.type  # pyright: ignore[reportAttributeAccessIssue]  (llvmlite's values all have one)


class _Splat(ir.Constant):
    """A vector constant of one value in every lane, printed `splat (T v)`."""

    def __init__(self, typ: ir.VectorType, lane: ir.Constant):
        # Constant.__init__ would make a tuple of lanes of any non-list value: set the fields
        self.type, self.constant = typ, f"splat ({lane})"

    def _get_reference(self) -> str:
        return self.constant


def _vector_constant(t: VectorType, value: Attribute) -> ir.Constant:
    """A vector constant whose lanes are one value as LLVM's `splat (T v)`, from the attribute's
    bytes: a kernel has a hundred 32-lane constants, and making every lane an llvmlite constant
    only to find them equal (then formatting and parsing each) took a fifth of a cold compile.
    Lanes of equal bits are equal values, NaNs included."""
    if isinstance(value, DenseIntOrFPElementsAttr):
        data = value.data.data
        n = len(value)
        size = len(data) // n if n else 0
        if n and data == data[:size] * n:
            return _Splat(cast(ir.VectorType, convert_type(t)), ir.Constant(convert_type(t.element_type),
                                                                            value.get_values()[0]))
    return create_constant(t, value)


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
