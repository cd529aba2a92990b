"""`lower-to-llvm`: our dialects (plus func/cf/arith/math) to xDSL's `llvm` dialect.

xDSL has no pure-Python conversion of these dialects to `llvm` (its JIT shells out to
mlir-opt), so this is ours: one rewrite pattern per kind of op, walked over each function after
`convert-scf-to-cf`, then each `func.func` becomes an external `llvm.func` around the same blocks.

- `tile.param` / `tile.offset` / `tile.load` / `tile.store` become GEPs and loads/stores with an
  explicit alignment equal to the element size (numpy buffers are only element-aligned);
  strided vector accesses become per-lane loads + `insertelement` (stores: `extractelement`);
- `ew` arithmetic (and the f64 `arith` arithmetic of an expansion that widens: pow) becomes
  `llvm.fadd`/... (never fused: no fast-math flags), `arith.extf`/`truncf` become
  `fpext`/`fptrunc`; compares become `llvmx.fcmp` / `llvm.icmp` masks, selects `llvmx.select`;
  formula functions that are LLVM intrinsics (aclgen/passes/expansions/) become calls of them,
  and any other that survived is an error (`expand-math` should have run);
- `ew.convert`: fp16 by `fpext`/`fptrunc` (F16C), bf16 by integer ops so no libcall is needed,
  float -> int by compares and `fptosi` (saturating, NaN -> 0; the value is rounded already);
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

The walk goes from the last op to the first, so a pattern always sees its operands as the ops
that made them, with their IR types (a bf16 value, not the i32 it lives in) and provenance (what
`low_bits` reads); the producers are rewritten after their users and their new values replace
the old ones everywhere.

Options: `noalias = true` makes every pointer argument `noalias` (the runtime only picks such a
variant when it has proved that the outputs overlap no input); `x86 = true` (the compiler sets it
from the target) fences streaming stores before returning (`sfence`: they are weakly ordered);
`halves_masked = false` (the compiler's choice for a target without AVX-512BW) makes a masked
16-bit access one of 32-bit words plus one of an odd last column (`load_halves`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, cf, func, llvm, math
from xdsl.dialects.builtin import (
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
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter

from aclgen import dtypes
from aclgen.dialects import ew, llvmx, tile
from aclgen.dialects.enums import Layout, Predicate
from aclgen.dialects.ew import element, lanes, like
from aclgen.dialects.llvmx import FCmpPredicate
from aclgen.passes import low_bits
from aclgen.passes.builder import Builder
from aclgen.passes.expansions import INTRINSICS


def llvm_type(t: Attribute) -> Attribute:
    """The LLVM-level type of an aclgen IR value (bf16 -> i32, ui8 -> i8, vectors likewise)."""
    if isinstance(t, VectorType):
        return like(t, llvm_type(t.element_type))
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
    """An intrinsic's type suffix: f32, v8f32, i64, ..."""
    e = element(t)
    s = f"i{e.width.data}" if isinstance(e, IntegerType) else {"f32": "f32", "f16": "f16"}[e.name]
    n = lanes(t)
    return s if n is None else f"v{n}{s}"


def _itemsize(elem: Attribute) -> int:
    return dtypes.from_ir(elem).itemsize


def _icmp(pred: str) -> IntegerAttr[IntegerType]:
    return IntegerAttr(llvm.ICmpPredicateFlag(pred).to_int(), i64)


def _intrinsic(b: Builder, name: str, args: list[SSAValue], result: Attribute) -> SSAValue:
    return b(llvm.CallIntrinsicOp(f"{name}.{_suffix(result)}", args, [result]))


# ----------------------------------------------------------------------------- conversions
# (types are aclgen IR types; values are LLVM-level)


def to_f32(b: Builder, x: SSAValue, src: Attribute) -> SSAValue:
    s = element(src)
    if isinstance(s, Float32Type):
        return x
    if isinstance(s, Float16Type):
        # fenced: else InstCombine folds `fcmp (fpext x), C` into an f16 compare, which x86
        # promotes back with the mask narrowed to i16 lanes and widened again (4 extra
        # shuffles per compare in the vector loop)
        wide = b(llvm.FPExtOp(x, like(src, f32)))
        return _intrinsic(b, "llvm.arithmetic.fence", [wide], wide.type)
    if isinstance(s, BFloat16Type):
        return b(llvm.BitcastOp(x, like(src, f32)))
    assert isinstance(s, IntegerType)
    if dtypes.is_unsigned(s):
        x = b(llvm.ZExtOp(x, like(src, i32)))
    return b(llvm.SIToFPOp(x, like(src, f32)))


def from_f32(b: Builder, x: SSAValue, dst: Attribute, source: SSAValue | None, facts: dict) -> SSAValue:
    """`x` (LLVM-level f32) rounded to `dst`; `source` is the IR value it lowers, whose
    provenance may spare the bf16 rounding steps (see `low_bits`)."""
    d = element(dst)
    if isinstance(d, Float32Type):
        return x
    if isinstance(d, Float16Type):
        return b(llvm.FPTruncOp(x, dst))
    if isinstance(d, BFloat16Type):
        t32 = like(dst, i32)
        bits = b(llvm.BitcastOp(x, t32))
        if source is not None and low_bits.exact_in_bf16(source, facts):
            return bits
        lsb = b(llvm.AndOp(b(llvm.LShrOp(bits, b.llvm(16, t32))), b.llvm(1, t32)))
        rounded = b(llvm.AddOp(bits, b(llvm.AddOp(lsb, b.llvm(0x7FFF, t32)))))
        if source is None or not low_bits.nan_payload_high(source, facts):
            nan = b(llvmx.FCmpOp(FCmpPredicate.UNO, x, x))
            quiet = b(llvm.OrOp(bits, b.llvm(0x400000, t32)))
            rounded = b(llvmx.SelectOp(nan, quiet, rounded))
        return b(llvm.AndOp(rounded, b.llvm(HIGH_HALF, t32)))
    assert isinstance(d, IntegerType)
    return f32_to_int(b, x, d, like(dst, llvm_type(d)))


def f32_to_int(b: Builder, x: SSAValue, d: IntegerType, out: Attribute) -> SSAValue:
    """Toward zero, saturating to `d`'s range, NaN -> 0 (`x` is integral: legalize-dtypes
    rounded it) — with vector-friendly compares and selects (LLVM's fptosi.sat is scalarized
    with branches on x86)."""
    info = np.iinfo(dtypes.from_ir(d).np_dtype)
    lo, hi = int(info.min), int(info.max)
    hi_f = float(np.nextafter(np.float32(hi + 1), np.float32(0)))  # largest f32 <= hi
    t32, f = like(x.type, i32 if d.width.data <= 32 else i64), x.type
    r = x
    nan = b(llvmx.FCmpOp(FCmpPredicate.UNO, r, r))
    big = b(llvmx.FCmpOp(FCmpPredicate.OGE, r, b.llvm(float(hi) + 1.0, f)))
    r = b(llvmx.SelectOp(b(llvmx.FCmpOp(FCmpPredicate.OLT, r, b.llvm(float(lo), f))), b.llvm(float(lo), f), r))
    r = b(llvmx.SelectOp(big, b.llvm(hi_f, f), r))
    r = b(llvmx.SelectOp(nan, b.llvm(0.0, f), r))
    n = b(llvmx.FPToSIOp(r, t32))
    n = b(llvmx.SelectOp(big, b.llvm(hi, t32), n))
    if element(out) != element(t32):
        n = b(llvm.TruncOp(n, out))
    return n


def convert(b: Builder, x: SSAValue, src: Attribute, dst: Attribute, source: SSAValue, facts: dict) -> SSAValue:
    s, d = element(src), element(dst)
    if s == d:
        return x
    if isinstance(s, IntegerType) and isinstance(d, IntegerType):
        if d.width.data < s.width.data:
            raise NotImplementedError(f"narrowing integer conversion {src} -> {dst}")
        ext = llvm.ZExtOp if dtypes.is_unsigned(s) else llvm.SExtOp
        return b(ext(x, llvm_type(dst)))
    return from_f32(b, to_f32(b, x, src), dst, source if isinstance(s, Float32Type) else None, facts)


def splat(b: Builder, x: SSAValue, t: VectorType) -> SSAValue:
    undef = b(llvm.UndefOp(t))
    one = b(llvm.InsertElementOp(undef, x, b.llvm(0, i32)))
    return b(llvm.ShuffleVectorOp(one, undef, DenseArrayBase.from_list(i32, [0] * t.get_shape()[0]), t))


def shuffle(b: Builder, x: SSAValue, y: SSAValue, mask: list[int], t: Attribute) -> SSAValue:
    return b(llvm.ShuffleVectorOp(x, y, DenseArrayBase.from_list(i32, mask), t))


def from_memory(b: Builder, x: SSAValue, t: Attribute) -> SSAValue:
    """A value of IR type `t` as loaded (`memory_type`) to its register form."""
    if not isinstance(element(t), BFloat16Type):
        return x
    wide = b(llvm.ZExtOp(x, like(t, i32)))
    return b(llvm.ShlOp(wide, b.llvm(16, like(t, i32))))


def to_memory(b: Builder, x: SSAValue, t: Attribute) -> SSAValue:
    """The counterpart of `from_memory`. `x` may still be the IR value (typed bf16) that a later
    rewrite replaces with its i32: the shift is given its LLVM type, not `x`'s."""
    if not isinstance(element(t), BFloat16Type):
        return x
    high = b(llvm.LShrOp.create(operands=[x, b.llvm(16, like(t, i32))], result_types=[like(t, i32)]))
    return b(llvm.TruncOp(high, like(t, i16)))


# ----------------------------------------------------------------------------- patterns


class Lowering(RewritePattern):
    """A pattern of this pass: replaces the matched op through a Builder placed before it."""

    def __init__(self, facts: dict):
        self.facts = facts  # low_bits' memo, shared by the patterns of one run

    @staticmethod
    def builder(op: Operation, rewriter: PatternRewriter) -> Builder:
        return Builder.before(op, rewriter)


class LowerConstant(Lowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp | ew.ConstantOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        t = op.result.type
        if isinstance(op, arith.ConstantOp):
            value = cast("IntegerAttr | FloatAttr", op.value).value.data  # the passes make scalar constants only
        else:
            value = op.value.value.data
            e = element(t)
            if isinstance(e, BFloat16Type):  # the bit pattern in the upper half of an i32
                value = int(dtypes.bfloat16.np_dtype.type(value).view("uint16")) << 16
                value = value - 0x100000000 if value >= 0x80000000 else value
            elif dtypes.is_unsigned(e) and value > 127:
                value -= 256
        rewriter.replace(op, [], [b.llvm(value, llvm_type(t))])


_FLOAT_BINARY = {ew.AddOp: llvm.FAddOp, ew.SubOp: llvm.FSubOp, ew.MulOp: llvm.FMulOp, ew.DivOp: llvm.FDivOp,
                 arith.AddfOp: llvm.FAddOp, arith.SubfOp: llvm.FSubOp, arith.MulfOp: llvm.FMulOp}
_INT_BINARY = {arith.AddiOp: llvm.AddOp, arith.SubiOp: llvm.SubOp, arith.MuliOp: llvm.MulOp,
               arith.DivSIOp: llvm.SDivOp, arith.RemSIOp: llvm.SRemOp, arith.ShLIOp: llvm.ShlOp,
               arith.ShRSIOp: llvm.AShrOp, arith.AndIOp: llvm.AndOp, ew.AndOp: llvm.AndOp, ew.OrOp: llvm.OrOp}


class LowerBinary(Lowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: ew.AddOp | ew.SubOp | ew.MulOp | ew.DivOp | arith.AddfOp | arith.SubfOp | arith.MulfOp | arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.DivSIOp
        | arith.RemSIOp | arith.ShLIOp | arith.ShRSIOp | arith.AndIOp | ew.AndOp | ew.OrOp,
        rewriter: PatternRewriter,
    ) -> None:
        cls = _FLOAT_BINARY.get(type(op)) or _INT_BINARY[type(op)]  # type: ignore[call-overload]
        rewriter.replace(op, cls.create(operands=[op.lhs, op.rhs], result_types=[op.lhs.type]))


class LowerUnary(Lowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.NegOp | ew.NotOp | ew.UnlikelyOp, rewriter: PatternRewriter) -> None:
        if isinstance(op, ew.NegOp):
            rewriter.replace(op, llvm.FNegOp.create(operands=[op.input], result_types=[op.input.type]))
            return
        if isinstance(op, ew.UnlikelyOp):  # a promise (version-unlikely's, where it ran)
            rewriter.replace(op, [], [op.input])
            return
        b = self.builder(op, rewriter)
        rewriter.replace(op, llvm.XOrOp(op.input, b.llvm(1, op.result.type)))


class LowerFunction(Lowering):
    """A formula function that is an LLVM intrinsic; any other must have been expanded."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.FunctionOp, rewriter: PatternRewriter) -> None:
        name = INTRINSICS.get(op.FUNCTION.name)
        if name is None:
            raise ValueError(f"in pass lower-to-llvm: {op.name} survived; run expand-math first")
        b = self.builder(op, rewriter)
        rewriter.replace(op, [], [_intrinsic(b, name, list(op.operands), llvm_type(op.results[0].type))])


class LowerMath(Lowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.FmaOp | math.RoundEvenOp, rewriter: PatternRewriter) -> None:
        if isinstance(op, math.FmaOp):
            rewriter.replace(op, llvm.FMAOp.create(operands=[op.a, op.b, op.c], result_types=[op.a.type]))
            return
        b = self.builder(op, rewriter)
        rewriter.replace(op, [], [_intrinsic(b, "llvm.roundeven", [op.operand], op.result.type)])


class LowerCompare(Lowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.CmpOp | arith.CmpiOp, rewriter: PatternRewriter) -> None:
        if isinstance(op, arith.CmpiOp):
            pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
            rewriter.replace(op, llvm.ICmpOp(op.lhs, op.rhs, _icmp(pred)))
            return
        t = element(op.lhs.type)
        pred = Predicate(op.predicate.data)
        if not isinstance(t, IntegerType):
            rewriter.replace(op, llvmx.FCmpOp(FCmpPredicate(pred), op.lhs, op.rhs))  # LLVM's, by name
            return
        ipred = pred.relation
        if ipred not in ("eq", "ne"):
            ipred = ("u" if dtypes.is_unsigned(t) else "s") + ipred
        rewriter.replace(op, llvm.ICmpOp(op.lhs, op.rhs, _icmp(ipred)))


class LowerSelect(Lowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.SelectOp | arith.SelectOp | arith.MinSIOp | arith.MaxSIOp,
                          rewriter: PatternRewriter) -> None:
        if isinstance(op, (arith.MinSIOp, arith.MaxSIOp)):
            b = self.builder(op, rewriter)
            c = b(llvm.ICmpOp(op.lhs, op.rhs, _icmp("slt" if isinstance(op, arith.MinSIOp) else "sgt")))
            rewriter.replace(op, llvm.SelectOp(c, op.lhs, op.rhs))
        elif isinstance(op, arith.SelectOp):
            rewriter.replace(op, llvm.SelectOp(op.cond, op.lhs, op.rhs))
        else:
            rewriter.replace(op, llvmx.SelectOp(op.cond, op.lhs, op.rhs, llvm_type(op.result.type)))


class LowerConvert(Lowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.ConvertOp | arith.BitcastOp | arith.ExtFOp | arith.TruncFOp,
                          rewriter: PatternRewriter) -> None:
        if isinstance(op, arith.BitcastOp):
            rewriter.replace(op, llvm.BitcastOp(op.input, op.result.type))
            return
        if isinstance(op, (arith.ExtFOp, arith.TruncFOp)):  # f32 <-> f64 inside an expansion (pow)
            cls = llvm.FPExtOp if isinstance(op, arith.ExtFOp) else llvm.FPTruncOp
            rewriter.replace(op, cls(op.input, op.result.type))
            return
        b = self.builder(op, rewriter)
        value = convert(b, op.input, op.input.type, op.result.type, op.input, self.facts)
        rewriter.replace(op, [], [value])


class LowerParam(Lowering):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.ParamOp | tile.OffsetOp | tile.SplatOp | tile.AllocaOp | tile.PrefetchOp,
                          rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        if isinstance(op, tile.PrefetchOp):  # read, keep in every cache level, data
            flags = [b.llvm(f, i32) for f in (0, 3, 1)]
            b(llvm.CallIntrinsicOp("llvm.prefetch.p0", [_gep(b, op.base, op.offset, memory_type(op.elem)), *flags], []))
            rewriter.replace(op, [], [])
            return
        if isinstance(op, tile.AllocaOp):
            # an array of the elements (loads and stores index it by element, as any row)
            size = op.count.data * (lanes(op.elem) or 1)
            value = b(llvm.AllocaOp(b.llvm(size, i64), memory_type(element(op.elem)), alignment=64))
        elif isinstance(op, tile.ParamOp):
            slot = b(llvm.GEPOp(op.meta, [op.index.data], i64))
            t = op.result.type
            value = from_memory(b, b(llvm.LoadOp(slot, memory_type(t), alignment=_itemsize(t))), t)
            if op in (self.facts.get(low_bits.PARAMS_QUIETED) or ()):
                value = quiet_high(b, value)
        elif isinstance(op, tile.OffsetOp):
            value = _gep(b, op.base, op.offset, memory_type(op.elem))
        else:
            value = splat(b, op.input, cast(VectorType, llvm_type(op.result.type)))
        rewriter.replace(op, [], [value])


def quiet_high(b: Builder, x: SSAValue) -> SSAValue:
    """f32 `x`, but a NaN quieted with its low 16 payload bits cleared: what a bf16 rounding of
    it keeps, so that arithmetic on it makes no NaN the rounding must guard against."""
    t32 = like(x.type, i32)
    bits = b(llvm.BitcastOp(x, t32))
    quiet = b(llvm.OrOp(b(llvm.AndOp(bits, b.llvm(HIGH_HALF, t32))), b.llvm(0x400000, t32)))
    return b(llvmx.SelectOp(b(llvmx.FCmpOp(FCmpPredicate.UNO, x, x)), b(llvm.BitcastOp(quiet, x.type)), x))


def _gep(b: Builder, base: SSAValue, index: SSAValue, elem: Attribute) -> SSAValue:
    return b(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], elem, ssa_indices=[index]))


def _ptr(b: Builder, op: tile.LoadOp | tile.StoreOp) -> SSAValue:
    layout = op.layout.data
    if layout == Layout.BROADCAST:
        return op.row
    index = op.col
    if layout == Layout.STRIDED:
        index = b(llvm.MulOp(index, op.stride))
    return _gep(b, op.row, index, memory_type(op.elem))


def _lane_ptrs(b: Builder, op: tile.LoadOp | tile.StoreOp, n: int) -> list[SSAValue]:
    elem = memory_type(op.elem)
    return [_gep(b, op.row, b(llvm.MulOp(b(llvm.AddOp(op.col, b.llvm(i, i64))), op.stride)), elem)
            for i in range(n)]


def _halves(b: Builder, count: SSAValue, n: int) -> tuple[SSAValue, SSAValue]:
    """For the first `count` of `n` 16-bit columns (all of them when count >= n): the mask of the
    n/2 32-bit words they fill, and the column of an odd last one (column 0, which the words hold
    too, when there is none)."""
    top = b.llvm(n, i64)
    c = b(llvm.SelectOp(b(llvm.ICmpOp(count, top, _icmp("slt"))), count, top))
    full = b(llvm.LShrOp(c, b.llvm(1, i64)))
    odd = b(llvm.ICmpOp(b(llvm.AndOp(c, b.llvm(1, i64))), b.llvm(0, i64), _icmp("ne")))
    index = b(llvm.SelectOp(odd, b(llvm.SubOp(c, b.llvm(1, i64))), b.llvm(0, i64)))
    return prefix_mask(b, full, n // 2), index


def prefix_mask(b: Builder, count: SSAValue, n: int) -> SSAValue:
    """The `<n x i1>` mask of lanes below `count` (an i64; all of them when count >= n)."""
    t = VectorType(i64, [n])
    index = b(llvm.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, list(range(n))), t))
    return b(llvm.ICmpOp(index, splat(b, count, t), _icmp("ult")))


def _half_bits(fill: float | int) -> int:
    """A 16-bit element's fill as its bits (bf16 memory constants are bits already; f16's are
    floats)."""
    return int(fill) if isinstance(fill, int) else int(np.float16(fill).view(np.uint16))


def _prefix_count(mask: SSAValue | None) -> SSAValue | None:
    """The column count of a `tile.prefix` mask (None for any other mask)."""
    return mask.owner.count if mask is not None and isinstance(mask.owner, tile.PrefixOp) else None


def load_halves(b: Builder, ptr: SSAValue, count: SSAValue, n: int, fill: int) -> SSAValue:
    """The first `count` of `n` 16-bit columns at `ptr` as `<n x i16>`, `fill` (bits) in the
    others, for a target without 16-bit masked loads (x86 before AVX-512BW, where LLVM's would
    become a branch per lane): a masked load of the words they fill, and one 16-bit load of an odd
    last column (always a column of the prefix: nothing past it is read)."""
    mask, index = _halves(b, count, n)
    word = ((fill & 0xFFFF) << 16) | (fill & 0xFFFF)
    words_t = VectorType(i32, [n // 2])
    words = b(llvm.CallIntrinsicOp(f"llvm.masked.load.v{n // 2}i32.p0",
                                   [ptr, b.llvm(2, i32), mask, b.llvm(word - (1 << 32) * (word >> 31), words_t)],
                                   [words_t]))
    last = b(llvm.LoadOp(_gep(b, ptr, index, i16), i16, alignment=2))
    return b(llvm.InsertElementOp(b(llvm.BitcastOp(words, VectorType(i16, [n]))), last, index))


def store_halves(b: Builder, image: SSAValue, ptr: SSAValue, count: SSAValue, n: int) -> None:
    """The first `count` columns of the `<n x i16>` `image` to `ptr`, for a target without 16-bit
    masked stores: a masked store of the words they fill and one 16-bit store of an odd last
    column (or of column 0 again, which the words also write: nothing past the prefix is
    touched)."""
    mask, index = _halves(b, count, n)
    b(llvm.CallIntrinsicOp(f"llvm.masked.store.v{n // 2}i32.p0",
                           [b(llvm.BitcastOp(image, VectorType(i32, [n // 2]))), ptr, b.llvm(2, i32), mask], []))
    last = b(llvmx.ExtractElementOp(image, index, i16))
    b(llvm.StoreOp(last, _gep(b, ptr, index, i16), alignment=2))


class LowerLoad(Lowering):
    def __init__(self, facts: dict, halves_masked: bool = True):
        super().__init__(facts)
        self.halves_masked = halves_masked

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.LoadOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        rt = op.result.type
        t, elem, align = memory_type(rt), memory_type(op.elem), _itemsize(op.elem)
        n = lanes(t)
        if op.deinterleaved is not None:
            value = self.deinterleaved(b, op)
        elif op.mask is not None:
            value = self.masked(b, op)
        elif n is None or op.layout.data == Layout.CONTIGUOUS:
            value = from_memory(b, b(llvm.LoadOp(_ptr(b, op), t, alignment=align)), rt)
        elif op.layout.data == Layout.BROADCAST:
            one = from_memory(b, b(llvm.LoadOp(_ptr(b, op), elem, alignment=align)), op.elem)
            value = splat(b, one, cast(VectorType, llvm_type(rt)))  # n is not None: a vector
        else:
            x = b(llvm.UndefOp(t))
            for i, p in enumerate(_lane_ptrs(b, op, n)):
                lane = b(llvm.LoadOp(p, elem, alignment=align))
                x = b(llvm.InsertElementOp(x, lane, b.llvm(i, i32)))
            value = from_memory(b, x, rt)
        rewriter.replace(op, [], [value])

    def masked(self, b: Builder, op: tile.LoadOp) -> SSAValue:
        """Only the mask's lanes read (a remainder), `fill` in the others. Contiguous: LLVM's
        masked load (16-bit columns without 16-bit masked loads: `load_halves`); otherwise each
        lane reads at its column where the mask holds and at `col` (the first, always present)
        where it does not, and the fill is selected in."""
        rt = op.result.type
        t, elem, align = memory_type(rt), memory_type(op.elem), _itemsize(op.elem)
        n = lanes(t)
        assert n is not None and op.mask is not None and op.fill is not None
        fill = _memory_constant(op.fill.value.data, element(op.elem))
        count = _prefix_count(op.mask)
        if op.layout.data == Layout.CONTIGUOUS and align == 2 and not self.halves_masked and count is not None:
            raw = load_halves(b, _ptr(b, op), count, n, _half_bits(fill))
            return from_memory(b, raw if elem == i16 else b(llvm.BitcastOp(raw, t)), rt)
        if op.layout.data == Layout.CONTIGUOUS:
            suffix = f"v{n}{_suffix(elem).removeprefix('v')}"
            x = b(llvm.CallIntrinsicOp(f"llvm.masked.load.{suffix}.p0",
                                       [_ptr(b, op), b.llvm(align, i32), op.mask, b.llvm(fill, t)], [t]))
            return from_memory(b, x, rt)
        x = b(llvm.UndefOp(t))
        for i in range(n):
            there = b(llvmx.ExtractElementOp(op.mask, b.llvm(i, i64), IntegerType(1)))
            col = b(llvm.SelectOp(there, b(llvm.AddOp(op.col, b.llvm(i, i64))), op.col))
            index = col if op.layout.data == Layout.BROADCAST else b(llvm.MulOp(col, op.stride))
            lane = b(llvm.LoadOp(_gep(b, op.row, index, elem), elem, alignment=align))
            x = b(llvm.InsertElementOp(x, lane, b.llvm(i, i32)))
        return from_memory(b, b(llvmx.SelectOp(op.mask, x, b.llvm(fill, t))), rt)

    def deinterleaved(self, b: Builder, op: tile.LoadOp) -> SSAValue:
        """Lanes [0, n/2) get the even columns, [n/2, n) the odd ones (bf16 only: the verifier
        sees to it); little-endian, so column 2k is the low half of word k."""
        rt = op.result.type
        n = lanes(rt)
        assert n is not None and isinstance(op.elem, BFloat16Type)
        words = b(llvm.LoadOp(_ptr(b, op), VectorType(i32, [n // 2]), alignment=_itemsize(op.elem)))
        even = b(llvm.ShlOp(words, b.llvm(16, words.type)))
        odd = b(llvm.AndOp(words, b.llvm(HIGH_HALF, words.type)))
        return shuffle(b, even, odd, list(range(n)), llvm_type(rt))


class LowerStore(Lowering):
    def __init__(self, facts: dict, halves_masked: bool = True):
        super().__init__(facts)
        self.halves_masked = halves_masked

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.StoreOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        t = op.value.type
        n = lanes(t)
        align = op.align.value.data if op.align is not None else _itemsize(op.elem)
        value = self.deinterleaved(b, op.value, t) if op.deinterleaved is not None else to_memory(b, op.value, t)
        if op.mask is not None:
            self.masked(b, op, value, align)
        elif n is None or op.layout.data == Layout.CONTIGUOUS:
            b(llvm.StoreOp(value, _ptr(b, op), alignment=align, nontemporal=op.nontemporal is not None))
        else:
            for i, p in enumerate(_lane_ptrs(b, op, n)):
                x = b(llvmx.ExtractElementOp(value, b.llvm(i, i64), memory_type(op.elem)))
                b(llvm.StoreOp(x, p, alignment=_itemsize(op.elem)))
        rewriter.erase(op)

    def masked(self, b: Builder, op: tile.StoreOp, value: SSAValue, align: int) -> None:
        """Only the mask's lanes written (a remainder): LLVM's masked store (16-bit columns
        without 16-bit masked stores: `store_halves`), or its masked scatter of the lanes'
        addresses for a strided view."""
        vt = value.type
        n = lanes(vt)
        assert n is not None and op.mask is not None
        suffix = f"v{n}{_suffix(memory_type(op.elem)).removeprefix('v')}"
        count = _prefix_count(op.mask)
        if op.layout.data == Layout.CONTIGUOUS and _itemsize(op.elem) == 2 and not self.halves_masked and count is not None:
            image = value if element(vt) == i16 else b(llvm.BitcastOp(value, VectorType(i16, [n])))
            store_halves(b, image, _ptr(b, op), count, n)
            return
        if op.layout.data == Layout.CONTIGUOUS:
            b(llvm.CallIntrinsicOp(f"llvm.masked.store.{suffix}.p0", [value, _ptr(b, op), b.llvm(align, i32), op.mask],
                                   []))
            return
        ptrs = b(llvm.UndefOp(VectorType(llvm.LLVMPointerType(), [n])))
        for i, p in enumerate(_lane_ptrs(b, op, n)):
            ptrs = b(llvm.InsertElementOp(ptrs, p, b.llvm(i, i32)))
        b(llvm.CallIntrinsicOp(f"llvm.masked.scatter.{suffix}.v{n}p0",
                               [value, ptrs, b.llvm(_itemsize(op.elem), i32), op.mask], []))

    @staticmethod
    def deinterleaved(b: Builder, value: SSAValue, t: Attribute) -> SSAValue:
        """The memory image of a deinterleaved vector (the inverse of `LowerLoad.deinterleaved`)."""
        n = lanes(t)
        assert n is not None and isinstance(element(t), BFloat16Type)
        half = n // 2
        words = VectorType(i32, [half])
        even = shuffle(b, value, value, list(range(half)), words)
        odd = shuffle(b, value, value, list(range(half, n)), words)
        low = b(llvm.LShrOp(even, b.llvm(16, words)))
        return b(llvm.OrOp(low, b(llvm.AndOp(odd, b.llvm(HIGH_HALF, words)))))


def _memory_constant(value: float, elem: Attribute) -> float | int:
    """`value` as an element of type `elem` in memory: bf16 as its 16 bits, integers as ints."""
    if isinstance(elem, BFloat16Type):
        bits = int(dtypes.bfloat16.np_dtype.type(value).view("uint16"))
        return bits - 0x10000 if bits >= 0x8000 else bits
    return int(value) if isinstance(elem, IntegerType) else value


class LowerLanes(Lowering):
    """`tile.prefix`, `tile.any`, `tile.shuffle` and `tile.extract`: a lane mask, testing one, and
    picking lanes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.PrefixOp | tile.AnyOp | tile.ShuffleOp | tile.ExtractOp,
                          rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        if isinstance(op, tile.PrefixOp):
            n = lanes(op.result.type)
            assert n is not None
            rewriter.replace(op, [], [prefix_mask(b, op.count, n)])
        elif isinstance(op, tile.AnyOp):
            rewriter.replace(op, llvm.CallIntrinsicOp(f"llvm.vector.reduce.or.{_suffix(op.input.type)}", [op.input],
                                                      [op.result.type]))
        elif isinstance(op, tile.ShuffleOp):
            rt = llvm_type(op.result.type)
            rewriter.replace(op, [], [shuffle(b, op.input, op.input, list(op.lanes.get_values()), rt)])
        else:
            rewriter.replace(op, llvmx.ExtractElementOp(op.input, b.llvm(op.lane.data, i64),
                                                        llvm_type(op.result.type)))


class LowerAlignOffset(Lowering):
    """Elements from row[col] to the next `bytes` boundary; 2^62 ("never") when the address is
    not even element-aligned, so no aligned access is ever attempted."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.AlignOffsetOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        size, nbytes = _itemsize(op.elem), op.bytes.data
        addr = b(llvm.PtrToIntOp(_gep(b, op.row, op.col, memory_type(op.elem)), i64))
        mis = b(llvm.AndOp(addr, b.llvm(nbytes - 1, i64)))
        gap = b(llvm.AndOp(b(llvm.SubOp(b.llvm(nbytes, i64), mis)), b.llvm(nbytes - 1, i64)))
        elems = b(llvm.LShrOp(gap, b.llvm(size.bit_length() - 1, i64)))
        odd = b(llvm.AndOp(addr, b.llvm(size - 1, i64)))
        ok = b(llvm.ICmpOp(odd, b.llvm(0, i64), _icmp("eq")))
        rewriter.replace(op, llvm.SelectOp(ok, elems, b.llvm(2**62, i64)))


class LowerControl(Lowering):
    def __init__(self, facts: dict, x86: bool):
        super().__init__(facts)
        self.x86 = x86

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp | cf.ConditionalBranchOp | func.ReturnOp,
                          rewriter: PatternRewriter) -> None:
        if isinstance(op, cf.BranchOp):
            rewriter.replace(op, llvm.BrOp(op.successor, *op.arguments))
        elif isinstance(op, cf.ConditionalBranchOp):
            rewriter.replace(op, llvm.CondBrOp(op.cond, op.then_block, op.then_arguments, op.else_block,
                                                  op.else_arguments))
        else:
            if self.x86 and _has_nontemporal(op):
                # streaming stores are weakly ordered: fence before other threads look
                self.builder(op, rewriter)(llvm.CallIntrinsicOp("llvm.x86.sse.sfence", [], []))
            rewriter.replace(op, llvm.ReturnOp())


def _has_nontemporal(ret: func.ReturnOp) -> bool:
    f = ret.parent_op()
    assert f is not None
    return any(isinstance(o, tile.StoreOp) and o.nontemporal is not None for o in f.walk())


def patterns(facts: dict, x86: bool, halves_masked: bool = True) -> list[RewritePattern]:
    return [LowerConstant(facts), LowerBinary(facts), LowerUnary(facts), LowerFunction(facts), LowerMath(facts),
            LowerCompare(facts), LowerSelect(facts), LowerConvert(facts), LowerParam(facts),
            LowerLoad(facts, halves_masked), LowerStore(facts, halves_masked), LowerAlignOffset(facts),
            LowerLanes(facts), LowerControl(facts, x86)]


class _Refuse(RewritePattern):
    """Last in line: an op no pattern lowered is an error naming it."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.dialect_name() not in ("llvm", "llvmx"):
            raise ValueError(f"in pass lower-to-llvm: no lowering for {op.name}:\n  {op}")


def _same_fixups_for_twins(f: func.FuncOp, facts: dict) -> None:
    """Conversions that version-unlikely made copies of (the same `tile.twin`) get the facts all
    of them have: a copy's folded operand may prove a bf16 fix-up unneeded that its original
    needs, and the versions must narrow each lane alike. Decided before the walk, while every
    operand is still the op that made it."""
    twins: dict[int, list[SSAValue]] = {}
    for op in f.walk():
        twin = op.attributes.get("tile.twin")
        if isinstance(op, ew.ConvertOp) and isinstance(twin, IntegerAttr):
            twins.setdefault(twin.value.data, []).append(op.input)
    for values in twins.values():
        low_bits.share(values, facts)


def llvm_function(f: func.FuncOp, noalias: bool) -> llvm.FuncOp:
    """`f`'s blocks, already lowered, moved into an external `llvm.func` of LLVM-level types."""
    region = Region()
    for block in list(f.body.blocks):
        for arg in block.args:
            if llvm_type(arg.type) != arg.type:
                Rewriter.replace_value_with_new_type(arg, llvm_type(arg.type))
        f.body.detach_block(block)
        region.add_block(block)
    inputs = [llvm_type(t) for t in f.function_type.inputs.data]
    attrs = [DictionaryAttr({"llvm.noalias": UnitAttr()} if noalias and isinstance(t, llvm.LLVMPointerType) else {})
             for t in inputs]
    lowered = llvm.FuncOp(f.sym_name.data, llvm.LLVMFunctionType(inputs, llvm.LLVMVoidType()),
                          linkage=llvm.LinkageAttr("external"), body=region,
                          other_props={"arg_attrs": ArrayAttr(attrs)})
    for key, value in f.attributes.items():
        if key.startswith("tile."):
            lowered.attributes[key] = value
    return lowered


@dataclass(frozen=True)
class LowerToLLVMPass(ModulePass):
    name = "lower-to-llvm"

    noalias: bool = False
    x86: bool = True  # an x86 target (the compiler passes the target's)
    # 16-bit masked loads and stores are instructions (x86: AVX-512BW; the compiler passes the
    # target's); without them a masked 16-bit access is `load_halves` / `store_halves`
    halves_masked: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for other in op.ops:
            if not isinstance(other, (func.FuncOp, llvm.FuncOp)):
                raise ValueError(
                    f"in pass {self.name}: cannot lower {other.name}; run tile-elementwise and "
                    "convert-scf-to-cf first"
                )
        for f in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            stores = [s for s in f.walk() if isinstance(s, tile.StoreOp)]
            # a kernel whose every store is bf16 may read its f32 parameters quieted (low_bits)
            bf16_only = bool(stores) and all(isinstance(s.elem, BFloat16Type) for s in stores)
            facts: dict = {low_bits.PARAMS_QUIETED: set()} if bf16_only else {}
            _same_fixups_for_twins(f, facts)
            applier = GreedyRewritePatternApplier([*patterns(facts, self.x86, self.halves_masked), _Refuse()],
                                                  dce_enabled=False)
            PatternRewriteWalker(applier, apply_recursively=False, walk_reverse=True).rewrite_region(f.body)
            op.body.block.insert_op_before(llvm_function(f, self.noalias), f)
            op.body.block.erase_op(f)


__all__ = ["LowerToLLVMPass", "llvm_type", "memory_type"]
