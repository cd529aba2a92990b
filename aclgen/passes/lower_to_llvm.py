"""`lower-to-llvm`: our dialects (plus func/cf/arith/math) to xDSL's `llvm` dialect.

xDSL has no pure-Python conversion of these dialects to `llvm` (its JIT shells out to
mlir-opt), so this is ours. It runs after `convert-scf-to-cf` and rebuilds each `func.func`
as an external `llvm.func`, block by block:

- `tile.param` / `tile.offset` / `tile.load` / `tile.store` become GEPs and loads/stores with an
  explicit alignment equal to the element size (numpy buffers are only element-aligned);
  strided vector accesses become per-lane loads + `insertelement` (stores: `extractelement`);
- `ew` arithmetic becomes `llvm.fadd`/... (never fused: no fast-math flags), compares become
  `llvmx.fcmp` / `llvm.icmp` masks, selects `llvmx.select`;
- `ew.convert`: fp16 by `fpext`/`fptrunc` (F16C), bf16 by integer ops so no libcall is needed,
  float -> int by `llvm.roundeven` + `llvm.fptosi.sat` (nearest-even, saturating, NaN -> 0);
- bf16 values live in the upper half of an `i32` (their f32 bit pattern, low half zero): widening
  is a bitcast, a load shifts the 16 bits up and a store shifts them down; narrowing rounds to
  nearest-even on the bit pattern, keeping NaNs quiet — both steps dropped where `low_bits`
  proves them unneeded. AVX512_BF16's `vcvtneps2bf16` is not used: it treats input denormals as
  zero (Intel SDM), and over all 2^32 f32 patterns it differs from this rounding on 16,711,678
  (every subnormal that does not round to ±0; NaNs agree: both truncate and set the quiet bit).
  `ui8` lives in `i8`;
- a `deinterleaved` access of W bf16 lanes is one load of W/2 `i32` words, whose lower halves
  (the even columns, one shift) and upper halves (the odd ones, one `and`) are the two halves
  of the vector (stores the reverse): no cross-lane packing at all.

With `noalias = true` every pointer argument is `noalias` (the runtime only picks such a
variant when it has proved that the outputs overlap no input).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, cf, func, llvm, math
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    UnitAttr,
    VectorType,
    f32,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from aclgen import dtypes
from aclgen.codegen.target import host
from aclgen.dialects import ew, llvmx, tile
from aclgen.dialects.ew import element, lanes, like
from aclgen.passes import low_bits


def llvm_type(t: Attribute) -> Attribute:
    """The LLVM-level type of an aclgen IR value (bf16 -> i32, ui8 -> i8, vectors likewise)."""
    if isinstance(t, VectorType):
        return VectorType(llvm_type(t.element_type), t.get_shape())
    if isinstance(t, BFloat16Type):
        return i32
    if isinstance(t, IntegerType):
        return IntegerType(t.width.data)
    return t


def memory_type(t: Attribute) -> Attribute:
    """The LLVM type of `t` in memory (bf16 -> i16; otherwise as in registers)."""
    return like(t, i16) if isinstance(element(t), BFloat16Type) else llvm_type(t)


HIGH_HALF = -0x10000  # 0xFFFF0000 as an i32


def _suffix(t: Attribute) -> str:
    e = element(t)
    s = f"i{e.width.data}" if isinstance(e, IntegerType) else {"f32": "f32", "f16": "f16"}[e.name]
    n = lanes(t)
    return s if n is None else f"v{n}{s}"


def _itemsize(elem: Attribute) -> int:
    return dtypes.from_ir(elem).itemsize


class FuncLowering:
    """Rebuilds one cf-level `func.func` as an `llvm.func`."""

    def __init__(self, f: func.FuncOp):
        self.f = f
        self.values: dict[SSAValue, SSAValue] = {}
        self.blocks: dict[Block, Block] = {}
        self.block: Block | None = None
        self.has_nontemporal = False
        self.facts: dict = {}  # low_bits memo

    # -- helpers ----------------------------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue:
        assert self.block is not None
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def v(self, old: SSAValue) -> SSAValue:
        return self.values[old]

    def const(self, value: float | int, t: Attribute) -> SSAValue:
        """A constant of LLVM-level type `t` (scalar or splat vector)."""
        e = element(t)
        if isinstance(t, VectorType):
            attr = DenseIntOrFPElementsAttr.from_list(t, [value] * t.get_shape()[0])
        elif isinstance(e, IntegerType):
            attr = IntegerAttr(int(value), e)
        else:
            attr = FloatAttr(float(value), cast(AnyFloat, e))  # not an integer: a float type
        return self.emit(llvm.ConstantOp(attr, t))

    def intrinsic(self, name: str, args: list[SSAValue], result: Attribute) -> SSAValue:
        return self.emit(llvm.CallIntrinsicOp(name, args, [result]))

    def gep(self, base: SSAValue, index: SSAValue | int, elem: Attribute) -> SSAValue:
        if isinstance(index, int):
            return self.emit(llvm.GEPOp(base, [index], elem))
        return self.emit(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], elem, ssa_indices=[index]))

    def splat(self, x: SSAValue, t: VectorType) -> SSAValue:
        undef = self.emit(llvm.UndefOp(t))
        one = self.emit(llvm.InsertElementOp(undef, x, self.const(0, i32)))
        mask = DenseArrayBase.from_list(i32, [0] * t.get_shape()[0])
        return self.emit(llvm.ShuffleVectorOp(one, undef, mask, t))

    # -- conversions (types are aclgen IR types; values are LLVM-level) -----------------------

    def to_f32(self, x: SSAValue, src: Attribute) -> SSAValue:
        s = element(src)
        if isinstance(s, Float32Type):
            return x
        if isinstance(s, Float16Type):
            # fenced: else InstCombine folds `fcmp (fpext x), C` into an f16 compare, which x86
            # promotes back with the mask narrowed to i16 lanes and widened again (4 extra
            # shuffles per compare in the vector loop)
            wide = self.emit(llvm.FPExtOp(x, like(src, f32)))
            return self.intrinsic(f"llvm.arithmetic.fence.{_suffix(wide.type)}", [wide], wide.type)
        if isinstance(s, BFloat16Type):
            return self.emit(llvm.BitcastOp(x, like(src, f32)))
        assert isinstance(s, IntegerType)
        if dtypes.is_unsigned(s):
            x = self.emit(llvm.ZExtOp(x, like(src, i32)))
        return self.emit(llvm.SIToFPOp(x, like(src, f32)))

    def from_f32(self, x: SSAValue, dst: Attribute, source: SSAValue | None = None) -> SSAValue:
        """`x` (LLVM-level f32) rounded to `dst`; `source` is the IR value it lowers, whose
        provenance may spare the bf16 rounding steps (see `low_bits`)."""
        d = element(dst)
        if isinstance(d, Float32Type):
            return x
        if isinstance(d, Float16Type):
            return self.emit(llvm.FPTruncOp(x, dst))
        if isinstance(d, BFloat16Type):
            t32 = like(dst, i32)
            bits = self.emit(llvm.BitcastOp(x, t32))
            if source is not None and low_bits.exact_in_bf16(source, self.facts):
                return bits
            lsb = self.emit(llvm.AndOp(self.emit(llvm.LShrOp(bits, self.const(16, t32))), self.const(1, t32)))
            rounded = self.emit(llvm.AddOp(bits, self.emit(llvm.AddOp(lsb, self.const(0x7FFF, t32)))))
            if source is None or not low_bits.nan_payload_high(source, self.facts):
                nan = self.emit(llvmx.FCmpOp("uno", x, x))
                quiet = self.emit(llvm.OrOp(bits, self.const(0x400000, t32)))
                rounded = self.emit(llvmx.SelectOp(nan, quiet, rounded))
            return self.emit(llvm.AndOp(rounded, self.const(HIGH_HALF, t32)))
        assert isinstance(d, IntegerType)
        return self.f32_to_int(x, d, like(dst, llvm_type(d)))

    def f32_to_int(self, x: SSAValue, d: IntegerType, out: Attribute) -> SSAValue:
        """Round to nearest even, saturate to `d`'s range, NaN -> 0 — with vector-friendly
        compares and selects (LLVM's fptosi.sat is scalarized with branches on x86)."""
        info = dtypes.from_ir(d).np_dtype
        import numpy as np

        lo, hi = int(np.iinfo(info).min), int(np.iinfo(info).max)
        hi_f = float(np.nextafter(np.float32(hi + 1), np.float32(0)))  # largest f32 <= hi
        t32, f = like(x.type, i32 if d.width.data <= 32 else i64), x.type
        r = self.intrinsic(f"llvm.roundeven.{_suffix(f)}", [x], f)
        nan = self.emit(llvmx.FCmpOp("uno", r, r))
        big = self.emit(llvmx.FCmpOp("oge", r, self.const(float(hi) + 1.0, f)))
        r = self.emit(llvmx.SelectOp(self.emit(llvmx.FCmpOp("olt", r, self.const(float(lo), f))), self.const(float(lo), f), r))
        r = self.emit(llvmx.SelectOp(big, self.const(hi_f, f), r))
        r = self.emit(llvmx.SelectOp(nan, self.const(0.0, f), r))
        n = self.emit(llvmx.FPToSIOp(r, t32))
        n = self.emit(llvmx.SelectOp(big, self.const(hi, t32), n))
        if element(out) != element(t32):
            n = self.emit(llvm.TruncOp(n, out))
        return n

    def convert(self, x: SSAValue, src: Attribute, dst: Attribute, source: SSAValue | None = None) -> SSAValue:
        s, d = element(src), element(dst)
        if s == d:
            return x
        if isinstance(s, IntegerType) and isinstance(d, IntegerType):
            if d.width.data < s.width.data:
                raise NotImplementedError(f"narrowing integer conversion {src} -> {dst}")
            ext = llvm.ZExtOp if dtypes.is_unsigned(s) else llvm.SExtOp
            return self.emit(ext(x, llvm_type(dst)))
        return self.from_f32(self.to_f32(x, src), dst, source if isinstance(s, Float32Type) else None)

    # -- ops ----------------------------------------------------------------------------------

    def lower(self, op: Operation) -> None:
        match op:
            case arith.ConstantOp():
                attr = cast("IntegerAttr | FloatAttr", op.value)  # the passes make scalar constants only
                self.values[op.result] = self.const(attr.value.data, op.result.type)
            case ew.ConstantOp():
                t = op.result.type
                value = op.value.value.data
                e = element(t)
                if isinstance(e, BFloat16Type):  # the bit pattern in the upper half of an i32
                    value = int(dtypes.bfloat16.np_dtype.type(value).view("uint16")) << 16
                    value = value - 0x100000000 if value >= 0x80000000 else value
                elif dtypes.is_unsigned(e) and value > 127:
                    value -= 256
                self.values[op.result] = self.const(value, llvm_type(t))
            case ew.AddOp() | ew.SubOp() | ew.MulOp() | ew.DivOp():
                cls = {ew.AddOp: llvm.FAddOp, ew.SubOp: llvm.FSubOp, ew.MulOp: llvm.FMulOp, ew.DivOp: llvm.FDivOp}
                self.values[op.result] = self.emit(cls[type(op)](self.v(op.lhs), self.v(op.rhs)))
            case ew.NegOp():
                self.values[op.result] = self.emit(llvm.FNegOp(self.v(op.input)))
            case ew.AbsOp():
                x = self.v(op.input)  # a mangled intrinsic: xDSL's FAbsOp declares one unmangled name
                self.values[op.result] = self.intrinsic(f"llvm.fabs.{_suffix(x.type)}", [x], x.type)
            case ew.CmpOp():
                self.values[op.result] = self.compare(op)
            case ew.IsNanOp():
                x = self.v(op.input)
                self.values[op.result] = self.emit(llvmx.FCmpOp("uno", x, x))
            case ew.AndOp() | ew.OrOp():
                cls = llvm.AndOp if isinstance(op, ew.AndOp) else llvm.OrOp
                self.values[op.result] = self.emit(cls(self.v(op.lhs), self.v(op.rhs)))
            case ew.NotOp():
                self.values[op.result] = self.emit(llvm.XOrOp(self.v(op.input), self.const(1, op.result.type)))
            case ew.SelectOp():
                self.values[op.result] = self.emit(llvmx.SelectOp(self.v(op.cond), self.v(op.lhs), self.v(op.rhs)))
            case ew.ConvertOp():
                self.values[op.result] = self.convert(self.v(op.input), op.input.type, op.result.type, op.input)
            case ew.ExpOp() | ew.SigmoidOp():
                raise ValueError(f"in pass lower-to-llvm: {op.name} survived; run expand-math first")
            case arith.AddiOp() | arith.SubiOp() | arith.MuliOp() | arith.DivSIOp() | arith.RemSIOp():
                cls = {
                    arith.AddiOp: llvm.AddOp,
                    arith.SubiOp: llvm.SubOp,
                    arith.MuliOp: llvm.MulOp,
                    arith.DivSIOp: llvm.SDivOp,
                    arith.RemSIOp: llvm.SRemOp,
                }[type(op)]
                self.values[op.result] = self.emit(cls(self.v(op.lhs), self.v(op.rhs)))
            case arith.ShLIOp() | arith.ShRSIOp():
                cls = llvm.ShlOp if isinstance(op, arith.ShLIOp) else llvm.AShrOp
                self.values[op.result] = self.emit(cls(self.v(op.lhs), self.v(op.rhs)))
            case arith.MinSIOp() | arith.MaxSIOp():
                pred = "slt" if isinstance(op, arith.MinSIOp) else "sgt"
                a, b = self.v(op.lhs), self.v(op.rhs)
                c = self.emit(llvm.ICmpOp(a, b, IntegerAttr(llvm.ICmpPredicateFlag(pred).to_int(), i64)))
                self.values[op.result] = self.emit(llvm.SelectOp(c, a, b))
            case arith.CmpiOp():
                pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
                c = llvm.ICmpOp(self.v(op.lhs), self.v(op.rhs), IntegerAttr(llvm.ICmpPredicateFlag(pred).to_int(), i64))
                self.values[op.result] = self.emit(c)
            case arith.SelectOp():
                self.values[op.result] = self.emit(llvm.SelectOp(self.v(op.cond), self.v(op.lhs), self.v(op.rhs)))
            case arith.BitcastOp():
                self.values[op.result] = self.emit(llvm.BitcastOp(self.v(op.input), op.result.type))
            case math.RoundEvenOp():
                x = self.v(op.operand)
                self.values[op.result] = self.intrinsic(f"llvm.roundeven.{_suffix(x.type)}", [x], x.type)
            case math.FmaOp():
                self.values[op.result] = self.emit(llvm.FMAOp(self.v(op.a), self.v(op.b), self.v(op.c)))
            case tile.ParamOp():
                slot = self.gep(self.v(op.meta), op.index.data, i64)
                t = op.result.type
                x = self.emit(llvm.LoadOp(slot, memory_type(t), alignment=_itemsize(t)))
                self.values[op.result] = self.from_memory(x, t)
            case tile.OffsetOp():
                self.values[op.result] = self.gep(self.v(op.base), self.v(op.offset), memory_type(op.elem))
            case tile.LoadOp():
                self.values[op.result] = self.load(op)
            case tile.StoreOp():
                self.store(op)
            case tile.AlignOffsetOp():
                self.values[op.result] = self.align_offset(op)
            case tile.SplatOp():
                self.values[op.result] = self.splat(self.v(op.input), cast(VectorType, llvm_type(op.result.type)))
            case cf.BranchOp():
                self.emit(llvm.BrOp(self.blocks[op.successor], *[self.v(a) for a in op.arguments]))
            case cf.ConditionalBranchOp():
                self.emit(
                    llvm.CondBrOp(
                        self.v(op.cond),
                        self.blocks[op.then_block],
                        [self.v(a) for a in op.then_arguments],
                        self.blocks[op.else_block],
                        [self.v(a) for a in op.else_arguments],
                    )
                )
            case func.ReturnOp():
                if self.has_nontemporal and host().triple.startswith(("x86_64", "i686")):
                    # streaming stores are weakly ordered: fence before other threads look
                    self.emit(llvm.CallIntrinsicOp("llvm.x86.sse.sfence", [], []))
                self.emit(llvm.ReturnOp())
            case _:
                raise ValueError(f"in pass lower-to-llvm: no lowering for {op.name}:\n  {op}")

    def compare(self, op: ew.CmpOp) -> SSAValue:
        a, b = self.v(op.lhs), self.v(op.rhs)
        t = element(op.lhs.type)
        pred = op.predicate.data
        if isinstance(t, IntegerType):
            unsigned = dtypes.is_unsigned(t)
            ipred = {"olt": "lt", "ole": "le", "ogt": "gt", "oge": "ge", "oeq": "eq", "une": "ne"}[pred]
            if ipred not in ("eq", "ne"):
                ipred = ("u" if unsigned else "s") + ipred
            return self.emit(llvm.ICmpOp(a, b, IntegerAttr(llvm.ICmpPredicateFlag(ipred).to_int(), i64)))
        return self.emit(llvmx.FCmpOp(pred, a, b))

    def align_offset(self, op: tile.AlignOffsetOp) -> SSAValue:
        """Elements from row[col] to the next `bytes` boundary; 2^62 ("never") when the
        address is not even element-aligned, so no aligned access is ever attempted."""
        size, nbytes = _itemsize(op.elem), op.bytes.data
        addr = self.emit(llvm.PtrToIntOp(self.gep(self.v(op.row), self.v(op.col), memory_type(op.elem)), i64))
        mis = self.emit(llvm.AndOp(addr, self.const(nbytes - 1, i64)))
        gap = self.emit(llvm.AndOp(self.emit(llvm.SubOp(self.const(nbytes, i64), mis)), self.const(nbytes - 1, i64)))
        elems = self.emit(llvm.LShrOp(gap, self.const(size.bit_length() - 1, i64)))
        odd = self.emit(llvm.AndOp(addr, self.const(size - 1, i64)))
        ok = self.emit(llvm.ICmpOp(odd, self.const(0, i64), IntegerAttr(llvm.ICmpPredicateFlag("eq").to_int(), i64)))
        return self.emit(llvm.SelectOp(ok, elems, self.const(2**62, i64)))

    def _lane_ptrs(self, op: tile.LoadOp | tile.StoreOp, n: int) -> list[SSAValue]:
        col, stride = self.v(op.col), self.v(op.stride)
        elem = memory_type(op.elem)
        return [
            self.gep(self.v(op.row), self.emit(llvm.MulOp(self.emit(llvm.AddOp(col, self.const(i, i64))), stride)), elem)
            for i in range(n)
        ]

    def _ptr(self, op: tile.LoadOp | tile.StoreOp) -> SSAValue:
        layout = op.layout.data
        if layout == "broadcast":
            return self.v(op.row)
        index = self.v(op.col)
        if layout == "strided":
            index = self.emit(llvm.MulOp(index, self.v(op.stride)))
        return self.gep(self.v(op.row), index, memory_type(op.elem))

    def from_memory(self, x: SSAValue, t: Attribute) -> SSAValue:
        """A value of IR type `t` as loaded (`memory_type`) to its register form."""
        if not isinstance(element(t), BFloat16Type):
            return x
        wide = self.emit(llvm.ZExtOp(x, like(t, i32)))
        return self.emit(llvm.ShlOp(wide, self.const(16, like(t, i32))))

    def to_memory(self, x: SSAValue, t: Attribute) -> SSAValue:
        """The counterpart of `from_memory`."""
        if not isinstance(element(t), BFloat16Type):
            return x
        return self.emit(llvm.TruncOp(self.emit(llvm.LShrOp(x, self.const(16, like(t, i32)))), like(t, i16)))

    def shuffle(self, a: SSAValue, b: SSAValue, mask: list[int], t: Attribute) -> SSAValue:
        return self.emit(llvm.ShuffleVectorOp(a, b, DenseArrayBase.from_list(i32, mask), t))

    def load(self, op: tile.LoadOp) -> SSAValue:
        rt = op.result.type
        t, elem, align = memory_type(rt), memory_type(op.elem), _itemsize(op.elem)
        n = lanes(t)
        if op.deinterleaved is not None:
            return self.load_deinterleaved(op)
        if n is None or op.layout.data == "contiguous":
            x = self.emit(llvm.LoadOp(self._ptr(op), t, alignment=align))
        elif op.layout.data == "broadcast":
            one = self.from_memory(self.emit(llvm.LoadOp(self._ptr(op), elem, alignment=align)), op.elem)
            return self.splat(one, cast(VectorType, llvm_type(rt)))  # n is not None: a vector
        else:
            x = self.emit(llvm.UndefOp(t))
            for i, p in enumerate(self._lane_ptrs(op, n)):
                lane = self.emit(llvm.LoadOp(p, elem, alignment=align))
                x = self.emit(llvm.InsertElementOp(x, lane, self.const(i, i32)))
        return self.from_memory(x, rt)

    def load_deinterleaved(self, op: tile.LoadOp) -> SSAValue:
        """Lanes [0, n/2) get the even columns, [n/2, n) the odd ones (bf16 only: the verifier
        sees to it); little-endian, so column 2k is the low half of word k."""
        rt = op.result.type
        n = lanes(rt)
        assert n is not None and isinstance(op.elem, BFloat16Type)
        words = self.emit(llvm.LoadOp(self._ptr(op), VectorType(i32, [n // 2]), alignment=_itemsize(op.elem)))
        even = self.emit(llvm.ShlOp(words, self.const(16, words.type)))
        odd = self.emit(llvm.AndOp(words, self.const(HIGH_HALF, words.type)))
        return self.shuffle(even, odd, list(range(n)), llvm_type(rt))

    def store(self, op: tile.StoreOp) -> None:
        value, align = self.v(op.value), _itemsize(op.elem)
        n = lanes(value.type)
        if op.align is not None:
            align = op.align.value.data
        if op.deinterleaved is not None:
            value = self.deinterleaved_memory(value, op.value.type)
        else:
            value = self.to_memory(value, op.value.type)
        if n is None or op.layout.data == "contiguous":
            nt = op.nontemporal is not None
            self.has_nontemporal |= nt
            self.emit(llvm.StoreOp(value, self._ptr(op), alignment=align, nontemporal=nt))
            return
        for i, p in enumerate(self._lane_ptrs(op, n)):
            x = self.emit(llvmx.ExtractElementOp(value, self.const(i, i64)))
            self.emit(llvm.StoreOp(x, p, alignment=_itemsize(op.elem)))

    def deinterleaved_memory(self, value: SSAValue, t: Attribute) -> SSAValue:
        """The memory image of a deinterleaved vector (the inverse of `load_deinterleaved`)."""
        n = lanes(t)
        assert n is not None and isinstance(element(t), BFloat16Type)
        half = n // 2
        words = VectorType(i32, [half])
        even = self.shuffle(value, value, list(range(half)), words)
        odd = self.shuffle(value, value, list(range(half, n)), words)
        low = self.emit(llvm.LShrOp(even, self.const(16, words)))
        return self.emit(llvm.OrOp(low, self.emit(llvm.AndOp(odd, self.const(HIGH_HALF, words)))))

    def run(self, noalias: bool) -> llvm.FuncOp:
        old_blocks = list(self.f.body.blocks)
        region = Region()
        for b in old_blocks:
            nb = Block(arg_types=[llvm_type(a.type) for a in b.args])
            for a, na in zip(b.args, nb.args):
                self.values[a] = na
                na.name_hint = a.name_hint
            self.blocks[b] = nb
            region.add_block(nb)
        for b in old_blocks:
            self.block = self.blocks[b]
            for op in b.ops:
                self.lower(op)
        inputs = [llvm_type(t) for t in self.f.function_type.inputs.data]
        ftype = llvm.LLVMFunctionType(inputs, llvm.LLVMVoidType())
        attrs = [
            DictionaryAttr({"llvm.noalias": UnitAttr()} if noalias and isinstance(t, llvm.LLVMPointerType) else {})
            for t in inputs
        ]
        return llvm.FuncOp(
            self.f.sym_name.data,
            ftype,
            linkage=llvm.LinkageAttr("external"),
            body=region,
            other_props={"arg_attrs": ArrayAttr(attrs)},
        )


@dataclass(frozen=True)
class LowerToLLVMPass(ModulePass):
    name = "lower-to-llvm"

    noalias: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for other in op.ops:
            if not isinstance(other, (func.FuncOp, llvm.FuncOp)):
                raise ValueError(
                    f"in pass {self.name}: cannot lower {other.name}; run tile-elementwise and "
                    "convert-scf-to-cf first"
                )
        for f in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            lowered = FuncLowering(f).run(self.noalias)
            for key, value in f.attributes.items():
                if key.startswith("tile."):
                    lowered.attributes[key] = value
            op.body.block.insert_op_before(lowered, f)
            op.body.block.erase_op(f)



