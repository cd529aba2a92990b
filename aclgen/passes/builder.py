"""`Builder`: the one op-building helper of the passes.

A pass builds ops either at the end of a block it is filling (`tile-elementwise`'s loops) or
before the op a rewrite pattern matched (`expand-math`, `lower-to-llvm`). Either way it wants the
same thing: insert an op, get its result back, and make constants of the right shape without
spelling out attributes. The builder's `shape` is the type a value of the code being built has
(`f32` or `vector<8xf32>`): `f32(0.5)` and `i32(127)` are constants of that shape.

    b = Builder.before(op, rewriter, shape=op.result.type, fma=True)
    y = b.muladd(x, b.f32(LOG2E), b.f32(MAGIC))      # an FMA, or a multiply and an add

Arithmetic is `ew`'s, in f32, but for an expansion that needs more than f32 keeps (pow's
y log2|x|): `widen` makes an f64 value (of the same lane count), on which `add`, `sub`, `mul` and
`muladd` build `arith`'s f64 ops (`cmp` and `select` take any type), and `narrow` rounds it back
once. Constants say their type (`f32`, `f64`, `i32`, `i64`) or take a value's (`constant`); `bits`,
`float` and `shl` follow their operand's width.

`fma`, `avx512` and `permute` are facts about the target that expand-math's options carry:
whether a multiply-add is fused, whether AVX-512F's exact scale, exponent and significand
instructions (`llvmx.avx512ps`) are there, and whether a vector permute reads a table
(`llvmx.lookup`). `half` is a fact about the value being built: expand-math found that only a
half type stores it (`half_precision.half_functions`), so a relative error of 2^-16 is enough
(docs/math.md, "Half-type results").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import cast

from xdsl.dialects import arith, llvm, math
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from aclgen.dialects import ew, llvmx
from aclgen.dialects.enums import Predicate
from aclgen.passes.value_range import ANY, Interval


class Builder:
    def __init__(self, insert: Callable[[Operation], object], shape: Attribute = f32, fma: bool = False,
                 avx512: bool = False, permute: bool = False, half: bool = False,
                 expansions: Mapping[type[Operation], Callable[..., SSAValue]] | None = None,
                 bounds: Interval = ANY):
        self.insert = insert
        self.shape = shape
        self.fma = fma
        self.avx512 = avx512
        self.permute = permute
        self.half = half
        self.expansions = expansions or {}
        self.bounds = bounds  # the first operand's interval (value_range), for an expansion to use

    @classmethod
    def at_end(cls, block: Block, **kw) -> Builder:
        """Appends to `block`."""
        return cls(block.add_op, **kw)

    @classmethod
    def before(cls, op: Operation, rewriter: PatternRewriter, **kw) -> Builder:
        """Inserts before `op` (the op `rewriter` matched) through the rewriter."""
        return cls(rewriter.insert, **kw)

    def __call__(self, op: Operation) -> SSAValue:
        self.insert(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def make(self, cls: type[Operation], *operands: SSAValue, result: Attribute | None = None,
             **properties: Attribute) -> SSAValue:
        """An op of xDSL's dialects from its operands and properties as they are
        (`Operation.create`: its own builder parses its arguments, four times the op's cost; see
        aclgen/dialects/construct.py); its result has the first operand's type unless `result`
        says."""
        t = result if result is not None else operands[0].type
        return self(cls.create(operands=operands, result_types=[t], properties=properties))

    # -- constants --------------------------------------------------------------------------

    def index(self, v: int) -> SSAValue:
        """An i64 loop-level constant (`arith.constant`)."""
        return self(arith.ConstantOp(IntegerAttr(v, i64)))

    def f32(self, v: float) -> SSAValue:
        """An f32 constant of the builder's shape (`ew.constant`)."""
        return self(ew.ConstantOp(FloatAttr(v, f32), ew.like(self.shape, f32)))

    def i32(self, v: int) -> SSAValue:
        """An i32 constant of the builder's shape (`ew.constant`)."""
        return self(ew.ConstantOp(IntegerAttr(v, i32), ew.like(self.shape, i32)))

    def f64(self, v: float) -> SSAValue:
        """An f64 constant of the builder's lane count."""
        return self(ew.ConstantOp(FloatAttr(v, f64), ew.like(self.shape, f64)))

    def i64(self, v: int) -> SSAValue:
        """An i64 constant of the builder's lane count."""
        return self(ew.ConstantOp(IntegerAttr(v, i64), ew.like(self.shape, i64)))

    def constant(self, v: float, like: SSAValue) -> SSAValue:
        """A float constant of `like`'s width: f64 for a widened value, else f32."""
        return self.f64(v) if _wide(like) else self.f32(v)

    def llvm(self, value: float | int, t: Attribute) -> SSAValue:
        """A constant of LLVM-level type `t` (scalar, or a splat vector): `llvm.mlir.constant`."""
        return self.make(llvm.ConstantOp, result=t, value=_llvm_constant(t, repr(value), value))

    # -- arithmetic: ew ops in f32 (they stay shape-polymorphic), arith ops on widened values --

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.AddfOp(a, b) if _wide(a) else ew.AddOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.SubfOp(a, b) if _wide(a) else ew.SubOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.MulfOp(a, b) if _wide(a) else ew.MulOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ew.DivOp(a, b))

    def neg(self, a: SSAValue) -> SSAValue:
        return self(ew.NegOp(a))

    def widen(self, x: SSAValue) -> SSAValue:
        """f32 `x` as an f64 (exact)."""
        return self(arith.ExtFOp(x, ew.like(self.shape, f64)))

    def narrow(self, x: SSAValue) -> SSAValue:
        """f64 `x` rounded once to f32 (to nearest even; gradual underflow, overflow to inf)."""
        return self(arith.TruncFOp(x, ew.like(self.shape, f32)))

    def muladd(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        """a * b + c: one FMA (one rounding) where the target has it, else a multiply and an add."""
        if self.fma:
            return self.make(math.FmaOp, a, b, c)
        return self.add(self.mul(a, b), c)

    def cmp(self, predicate: Predicate, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ew.CmpOp(predicate, a, b))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ew.SelectOp(cond, a, b))

    def and_(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """Both masks."""
        return self(ew.AndOp(a, b))

    def or_(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """Either mask."""
        return self(ew.OrOp(a, b))

    def not_(self, a: SSAValue) -> SSAValue:
        """The mask's complement."""
        return self(ew.NotOp(a))

    def call(self, function: str, *args: SSAValue) -> SSAValue:
        """Formula function `function`: its expansion, built here in the f32 form, where the
        builder has one (expand-math's), else its `ew` op (an instruction: lower-to-llvm's)."""
        op = ew.function_op(function)
        expansion = self.expansions.get(op)
        if expansion is None:
            return self(op(*args))
        return expansion(Builder(self.insert, args[0].type, self.fma, self.avx512, self.permute, False,
                                 self.expansions), *args)

    # -- bits ----------------------------------------------------------------------------------

    def bits(self, x: SSAValue) -> SSAValue:
        """The bit pattern of `x`: an i32 for an f32, an i64 for an f64."""
        return self.make(arith.BitcastOp, x, result=ew.like(self.shape, i64 if _wide(x) else i32))

    def float(self, n: SSAValue) -> SSAValue:
        """The float whose bit pattern is `n`: an f32 for an i32, an f64 for an i64."""
        return self.make(arith.BitcastOp, n, result=ew.like(self.shape, f64 if ew.element(n.type) == i64 else f32))

    # -- integer arithmetic on bit patterns (wrapping, as LLVM's add/sub/shl without flags) --------

    def iadd(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.make(arith.AddiOp, a, b)

    def isub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.make(arith.SubiOp, a, b)

    def shl(self, a: SSAValue, k: int) -> SSAValue:
        """`a << k`, for i32 or i64 `a`."""
        return self.make(arith.ShLIOp, a, self.i64(k) if ew.element(a.type) == i64 else self.i32(k))

    def ashr(self, a: SSAValue, k: int) -> SSAValue:
        """`a >> k`, shifting the sign bit in."""
        return self.make(arith.ShRSIOp, a, self.i32(k))

    def x86(self, function: llvmx.AVX512Function, *args: SSAValue, table: int | None = None) -> SSAValue:
        """AVX-512F's `function` (scalef, getexp, getmant, rsqrt14, fixupimm with its `table`:
        llvmx.AVX512Function), one instruction; only where the builder's `avx512` says the target
        has it (elsewhere LLVM's generic forms are libcalls, so callers check first)."""
        assert self.avx512, f"{function} is an instruction only with AVX-512F"
        return self(llvmx.AVX512Op(function, *args, table=table))

    def lookup(self, table: Sequence[float], key: SSAValue) -> SSAValue:
        """`table[key mod 8]` per lane, for 8 f32 constants and i32 keys: one `llvmx.lookup`
        (vpermps) where the builder's `permute` holds, elsewhere a tree of selects on the key's
        three low bits. Both give the same values."""
        assert len(table) == 8, "a lookup takes 8 entries"
        if self.permute:
            return self(llvmx.LookupOp(table, key))
        level = [self.f32(v) for v in table]
        for bit in range(3):  # bit 0 picks within pairs, bit 2 between halves
            set_ = self.cmp(Predicate.OLT, self.shl(key, 31 - bit), self.i32(0))
            level = [self.select(set_, hi, lo) for lo, hi in zip(level[::2], level[1::2])]
        return level[0]

    def to_f32(self, n: SSAValue) -> SSAValue:
        """i32 `n` as an f32 (exact for |n| <= 2^24)."""
        return self(ew.ConvertOp(n, f32))


def _wide(x: SSAValue) -> bool:
    """Whether `x` is an f64 value (`Builder.widen`'s)."""
    return isinstance(ew.element(x.type), Float64Type)


@cache
def _llvm_constant(t: Attribute, spelling: str, value: float | int) -> Attribute:
    """The attribute of an LLVM-level constant, made once per type and value (`spelling` tells
    -0.0 from 0.0, which compare equal): a vector's lists every lane, which took a twentieth of a
    cold compile to build again for every constant."""
    e = ew.element(t)
    if isinstance(t, VectorType):
        return DenseIntOrFPElementsAttr.from_list(t, [value] * t.get_shape()[0])
    if isinstance(e, IntegerType):
        return IntegerAttr(int(value), e)
    return FloatAttr(float(value), cast(AnyFloat, e))
