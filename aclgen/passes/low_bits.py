"""What `lower-to-llvm` may assume about the low 16 bits of an f32 value it narrows to bf16.

Rounding f32 to bf16 by integer ops (`bits + 0x7FFF + lsb`, keep the upper half) needs two
fix-ups in general: none at all when the value is already a bf16 number, and a NaN guard
because a NaN whose payload lies in the low half would carry into the exponent (0x7F800001
would round to +inf, 0x7FFFFFFF to -0). Both are facts about where the value comes from, read
off the def chain of the (vector or scalar) f32 value:

- `exact_in_bf16(v)`: every value `v` can take, NaNs included, has its low 16 bits clear
  (bf16 inputs widened, bf16-exact constants, and selects, negations and absolute values of
  such): narrowing is the identity on the bits.
- `nan_payload_high(v)`: every NaN `v` can be has its low 16 bits clear. LLVM's NaN semantics
  (LangRef, "Floating-point semantics") let an arithmetic result NaN be only the preferred NaN
  (payload 0) or a quieted operand NaN, so arithmetic on such values keeps the fact (the
  expansions' fused multiply-adds, the rounding and square-root intrinsics and AVX-512's
  scale, exponent, significand and reciprocal-square-root instructions included). Integer
  sources never give NaN, nor does a lookup in a table without NaN (`llvmx.lookup`); a
  float made from an integer whose low 16 bits are always clear (`low_half_clear`: the
  expansions' powers of two, an exponent shifted into place) has no other NaN, nor has a float
  whose low mantissa bits were cut (the expansions' 12-bit splits: NaN only where the float
  they cut is). A NaN constant is 0x7FC00000. An f32 parameter is any bit pattern, unless the
  kernel stores nothing but bf16 (`PARAMS_QUIETED` in the memo): then lower-to-llvm quiets each
  parameter this analysis relied on and clears its low payload bits as it reads it, once per
  call, which no bf16 result can tell (their rounding keeps a NaN's upper half and sets the
  quiet bit). f16 inputs (payload bits 13-15) and anything this analysis does not know are
  assumed dirty.
"""


from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import BFloat16Type, Float32Type, IntegerAttr, IntegerType, f32
from xdsl.ir import OpResult, SSAValue

from aclgen.dialects import ew, llvmx, tile

#: A key of the memo (lower-to-llvm's facts): where the kernel stores nothing but bf16, the set of
#: f32 parameters this analysis took as quieted; lower-to-llvm reads those with a NaN quieted and
#: its low payload bits clear.
PARAMS_QUIETED = "params quieted"

_SIGN_ONLY = (ew.NegOp, ew.function_op("absolute"), ew.function_op("copysign"))
_ARITHMETIC = (ew.AddOp, ew.SubOp, ew.MulOp, ew.DivOp, math.FmaOp, llvmx.AVX512Op,
               *(ew.function_op(name) for name in ("sqrt", "floor", "ceil", "trunc", "round")))


def _low_half(x: float) -> int:
    """The low 16 bits of `x` as the f32 the lowering emits (rounded to nearest, overflow to inf)."""
    with np.errstate(over="ignore"):
        return int(np.array(x, np.float32).view(np.uint32)) & 0xFFFF


def _sources(v: SSAValue) -> tuple[object, list[SSAValue]]:
    op = v.owner if isinstance(v, OpResult) else None
    if isinstance(op, ew.SelectOp):
        return op, [op.lhs, op.rhs]
    if isinstance(op, tile.SplatOp):
        return op, [op.input]
    if isinstance(op, _SIGN_ONLY):
        return op, [op.operands[0]]
    return op, []


def exact_in_bf16(v: SSAValue, memo: dict | None = None) -> bool:
    memo = {} if memo is None else memo
    key = ("exact", v)
    if key not in memo:
        memo[key] = False  # cycles (block arguments feeding back) are not exact
        op, inner = _sources(v)
        if isinstance(op, ew.ConvertOp):
            memo[key] = isinstance(ew.element(op.input.type), BFloat16Type)
        elif isinstance(op, ew.ConstantOp):
            value = op.value.value.data
            memo[key] = isinstance(value, float) and value == value and _low_half(value) == 0
        elif inner:
            memo[key] = all(exact_in_bf16(s, memo) for s in inner)
    return memo[key]


def share(values: list[SSAValue], memo: dict) -> None:
    """Make `memo` say of each of `values` only what it says of all of them (values narrowed
    alike: version-unlikely's copies of one conversion)."""
    exact = all([exact_in_bf16(v, memo) for v in values])
    nan_high = all([nan_payload_high(v, memo) for v in values])
    for v in values:
        memo[("exact", v)], memo[("nan", v)] = exact, nan_high


def nan_payload_high(v: SSAValue, memo: dict | None = None) -> bool:
    memo = {} if memo is None else memo
    key = ("nan", v)
    if key not in memo:
        memo[key] = False
        op, inner = _sources(v)
        if exact_in_bf16(v, memo):
            memo[key] = True
        elif isinstance(op, ew.ConvertOp):
            memo[key] = isinstance(ew.element(op.input.type), (BFloat16Type, IntegerType))
        elif isinstance(op, tile.ParamOp):
            quieted = memo.get(PARAMS_QUIETED)  # a set where the kernel may quiet its parameters
            if quieted is not None:
                quieted.add(op)
            memo[key] = quieted is not None
        elif isinstance(op, ew.ConstantOp):
            value = op.value.value.data
            memo[key] = isinstance(value, float) and (value == value or _low_half(value) == 0)  # NaN: 0x7FC00000
        elif isinstance(op, llvmx.LookupOp):
            memo[key] = all(value == value for value in op.values)  # a table without NaN gives none
        elif isinstance(op, _ARITHMETIC):
            memo[key] = all(nan_payload_high(s, memo) for s in op.operands)
        elif isinstance(op, arith.BitcastOp):
            low = _low_bits_cleared(op.input)  # a float with only low mantissa bits cut: v's NaNs
            memo[key] = low_half_clear(op.input, memo) or (low is not None and nan_payload_high(low, memo))
        elif inner:
            memo[key] = all(nan_payload_high(s, memo) for s in inner)
    return memo[key]


def low_half_clear(n: SSAValue, memo: dict | None = None) -> bool:
    """Every value of the i32 (or i32 vector) `n` has its low 16 bits clear."""
    memo = {} if memo is None else memo
    key = ("int", n)
    if key not in memo:
        memo[key] = False
        op = _owner(n)
        if (value := _constant_int(n)) is not None:
            memo[key] = value & 0xFFFF == 0
        elif isinstance(op, arith.ShLIOp):
            shift = _constant_int(op.rhs)
            memo[key] = (shift is not None and 16 <= shift < 32) or low_half_clear(op.lhs, memo)
        elif isinstance(op, (arith.AddiOp, arith.SubiOp, arith.OrIOp)):
            memo[key] = low_half_clear(op.lhs, memo) and low_half_clear(op.rhs, memo)
        elif isinstance(op, arith.AndIOp):
            memo[key] = low_half_clear(op.lhs, memo) or low_half_clear(op.rhs, memo)
        elif isinstance(op, arith.BitcastOp) and isinstance(ew.element(op.input.type), Float32Type):
            memo[key] = exact_in_bf16(op.input, memo)
        elif isinstance(op, ew.SelectOp):
            memo[key] = low_half_clear(op.lhs, memo) and low_half_clear(op.rhs, memo)
    return memo[key]


def _low_bits_cleared(n: SSAValue) -> SSAValue | None:
    """The f32 v when i32 `n` is v's bits with some low mantissa bits cleared (`shl(ashr(bits(v), k),
    k)` for k < 23, the expansions' splits): then the float of n is NaN only where v is, with a
    part of v's payload."""
    op = _owner(n)
    if not isinstance(op, arith.ShLIOp) or not isinstance(inner := _owner(op.lhs), arith.ShRSIOp):
        return None
    k = _constant_int(op.rhs)
    if k is None or not 0 < k < 23 or _constant_int(inner.rhs) != k:
        return None
    bits = _owner(inner.lhs)
    return bits.input if isinstance(bits, arith.BitcastOp) and ew.element(bits.input.type) == f32 else None


def _owner(v: SSAValue):
    return v.owner if isinstance(v, OpResult) else None


def _constant_int(v: SSAValue) -> int | None:
    op = _owner(v)
    if isinstance(op, ew.ConstantOp):
        value = op.value.value.data
    elif isinstance(op, arith.ConstantOp):
        value = _int_value(op.value)
    else:
        return None
    return value if isinstance(value, int) else None


def _int_value(attr) -> int | None:
    return attr.value.data if isinstance(attr, IntegerAttr) else None


