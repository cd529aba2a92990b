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
  (payload 0) or a quieted operand NaN, so arithmetic on such values keeps the fact; integer
  sources never give NaN. Parameters (any f32 bit pattern), f16 inputs (payload bits 13-15)
  and anything this analysis does not know are assumed dirty.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, IntegerType
from xdsl.ir import OpResult, SSAValue

from aclgen.dialects import ew, tile

_SIGN_ONLY = (ew.NegOp, ew.function_op("absolute"))
_ARITHMETIC = (ew.AddOp, ew.SubOp, ew.MulOp, ew.DivOp)


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
        elif isinstance(op, ew.ConstantOp):
            value = op.value.value.data
            memo[key] = value == value  # a NaN constant's payload is not tracked
        elif isinstance(op, _ARITHMETIC):
            memo[key] = all(nan_payload_high(s, memo) for s in op.operands)
        elif inner:
            memo[key] = all(nan_payload_high(s, memo) for s in inner)
    return memo[key]
