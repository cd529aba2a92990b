"""`expand-math`: replace `ew.exp` and `ew.sigmoid` with vectorizable f32 code.

LLVM would lower a vector `exp` to one scalar `expf` call per lane; this pass writes it out
instead (Cephes' `expf` scheme), so it vectorizes and needs no libcall:

    x' = clamp(x, -104, 89)          (NaN is set aside and returned as is)
    n  = roundeven(x' * log2(e))     (by adding and subtracting 1.5 * 2^23)
    r  = x' - n * C1 - n * C2        (Cody-Waite: C1 + C2 = ln 2, C1 exact in 9 bits)
    p  = 1 + r + r^2 * P(r)          (degree-5 minimax P on [-ln2/2, ln2/2])
    e^x = p * 2^(n >> 1) * 2^(n - (n >> 1))

The scale by 2^n is split in two normal powers of two, so results that overflow become +inf and
results in the subnormal range round once (gradual underflow), over the whole float range.
Measured error <= 2 ulp against float64 (tests/test_math.py); exp(+inf) = +inf, exp(-inf) = 0,
exp(NaN) = NaN. `sigmoid(x)` is `1 / (1 + e)` for x >= 0 and `e / (1 + e)` for x < 0, with
`e = exp(-|x|)`, so it is accurate down to subnormal results.

With `fma = on` (`auto`, the default, means on where the host has FMA) the polynomial uses fused multiply-adds.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from aclgen.codegen.target import host
from aclgen.dialects import ew

LOG2E = 1.44269504088896341
C1 = 0.693359375
C2 = -2.12194440e-4
MAGIC = 12582912.0  # 1.5 * 2^23
POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)


class _Builder:
    def __init__(self, anchor: Operation, like: SSAValue, fma: bool):
        self.anchor = anchor
        self.like = like.type
        self.fma_ok = fma

    def __call__(self, op: Operation) -> SSAValue:
        self.anchor.parent_block().insert_op_before(op, self.anchor)  # type: ignore[union-attr]
        return op.results[0]

    def f(self, v: float) -> SSAValue:
        return self(ew.ConstantOp(FloatAttr(v, f32), ew.like(self.like, f32)))

    def i(self, v: int) -> SSAValue:
        return self(ew.ConstantOp(IntegerAttr(v, i32), ew.like(self.like, i32)))

    def muladd(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        if self.fma_ok:
            return self(math.FmaOp(a, b, c))
        return self(ew.AddOp(self(ew.MulOp(a, b)), c))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ew.SelectOp(cond, a, b))


def build_exp(b: _Builder, x: SSAValue) -> SSAValue:
    nan = b(ew.IsNanOp(x))
    lo, hi = b.f(-104.0), b.f(89.0)
    xc = b.select(b(ew.CmpOp("olt", x, lo)), lo, x)
    xc = b.select(b(ew.CmpOp("ogt", xc, hi)), hi, xc)
    xc = b.select(nan, b.f(0.0), xc)  # keep NaN out of the integer path
    # n = roundeven(x * log2e) by the 1.5 * 2^23 trick: the add rounds to an integer, which the
    # low mantissa bits of `t` then hold (|n| <= 150), so no fptosi/roundeven is needed.
    magic = b.f(MAGIC)
    t = b(ew.AddOp(b(ew.MulOp(xc, b.f(LOG2E))), magic))
    n = b(ew.SubOp(t, magic))
    r = b(ew.SubOp(xc, b(ew.MulOp(n, b.f(C1)))))
    r = b(ew.SubOp(r, b(ew.MulOp(n, b.f(C2)))))
    p = b.f(POLY[0])
    for c in POLY[1:]:
        p = b.muladd(p, r, b.f(c))
    r2 = b(ew.MulOp(r, r))
    p = b.muladd(p, r2, b(ew.AddOp(r, b.f(1.0))))
    as_int = ew.like(b.like, i32)
    ni = b(arith.SubiOp(b(arith.BitcastOp(t, as_int)), b(arith.BitcastOp(magic, as_int))))
    n1 = b(arith.ShRSIOp(ni, b.i(1)))
    n2 = b(arith.SubiOp(ni, n1))
    bias, shift = b.i(127), b.i(23)

    def pow2(k: SSAValue) -> SSAValue:
        bits = b(arith.ShLIOp(b(arith.AddiOp(k, bias)), shift))
        return b(arith.BitcastOp(bits, ew.like(b.like, f32)))

    y = b(ew.MulOp(b(ew.MulOp(p, pow2(n1))), pow2(n2)))
    return b.select(nan, x, y)


def expand(op: ew.ExpOp | ew.SigmoidOp, fma: bool) -> None:
    b = _Builder(op, op.input, fma)
    x = op.input
    if isinstance(op, ew.ExpOp):
        result = build_exp(b, x)
    else:
        # e = exp(-|x|) never overflows, and for x < 0, e / (1 + e) keeps sigmoid's tiny values
        # (down to subnormals) that 1 / (1 + exp(-x)) would flush to 0 once exp(-x) overflows.
        e = build_exp(b, b(ew.NegOp(b(ew.AbsOp(x)))))
        denom = b(ew.AddOp(b.f(1.0), e))
        positive = b(ew.DivOp(b.f(1.0), denom))
        negative = b(ew.DivOp(e, denom))
        result = b.select(b(ew.CmpOp("olt", x, b.f(0.0))), negative, positive)
    op.result.replace_all_uses_with(result)
    op.parent_block().erase_op(op)  # type: ignore[union-attr]


@dataclass(frozen=True)
class ExpandMathPass(ModulePass):
    name = "expand-math"

    fma: str = "auto"  # "auto" (where the host has FMA), "on", "off"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.fma not in ("auto", "on", "off"):
            raise ValueError(f"in pass {self.name}: fma must be auto, on or off, got {self.fma!r}")
        use_fma = host().has("fma") if self.fma == "auto" else self.fma == "on"
        for target in [o for o in op.walk() if isinstance(o, (ew.ExpOp, ew.SigmoidOp))]:
            expand(target, use_fma)
