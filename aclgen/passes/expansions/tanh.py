"""tanh as vectorizable f32 code, within 1 ulp over all 2^32 floats with fused and unfused
multiply-adds (docs/math.md).

Both branches are computed for every lane and one is selected on a = |x| < 0.55 (a vector has
no branches); the sign is copied from x last:

    a < 0.55:  tanh a = a + a u,  u = z P(z), z = a^2        (P degree 4, Estrin; 2^-29.2)
    otherwise: tanh a = 1 - 2 / (1 + e^w), w = 2 min(a, 9.5)  (9.5: tanh rounds to 1 long before)

The large branch computes e^w as exp does (same reduction and polynomial), but keeps it as a
pair Ph + Pl, then D = 1 + e^w as Dh + Dl (Fast2Sum, |2^n Ph| >= 1), and corrects the one
division: 2 / (Dh + Dl) ~ t0 - t0^2 Dl / 2 with t0 = 2 / Dh, 1 - t0 split exactly as h + l.
The division's own rounding (<= 2^-26 absolute for t0 <= 1/2) is the largest error left.
+-0 give +-0 (the small branch), +-inf give +-1 (w = 19), NaN fails a < 0.55 and runs through
the large branch's arithmetic. The coefficients and the order of every operation are the
numerics prototype's (exhaustively swept in both FMA modes).
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from aclgen.dialects.enums import Predicate
from aclgen.passes.builder import Builder
from aclgen.passes.expansions.exp import exp_poly, one_plus, pow2, reduce_ln2, round_log2e
from aclgen.passes.expansions.log import fast2sum
from aclgen.passes.expansions.registry import expands

h = float.fromhex
SMALL = 0.55  # below: the odd polynomial; above: 1 - 2 / (1 + e^2a)
# tanh(a) = a + a z P(z) on a <= 0.57, P1..P5; tanh's relative error 2^-29.2
P = (
    h("-0x1.555546p-2"),  # 0xbeaaaaa3
    h("0x1.110bd2p-3"),  # 0x3e0885e9
    h("-0x1.b8ee72p-5"),  # 0xbd5c7739
    h("0x1.5750fap-6"),  # 0x3caba87d
    h("-0x1.90150cp-8"),  # 0xbbc80a86
)


def exp_pair(b: Builder, r: SSAValue, low: SSAValue | None = None) -> tuple[SSAValue, SSAValue]:
    """e^(r + low) = Ph + Pl (|r| <= ln2 / 2, `low` a tiny correction or None): H + L with
    H = 1 + r rounded and L = r^2 P(r) + (1 + r - H) (+ low (1 + r)), then Fast2Sum."""
    r2 = b.mul(r, r)
    q = exp_poly(b, r, r2)
    hi, lo = one_plus(b, r)
    if low is not None:
        lo = b.add(b.muladd(r, low, low), lo)
    big = b.muladd(q, r2, lo)
    return fast2sum(b, hi, big)


@expands("tanh")
def tanh(b: Builder, x: SSAValue) -> SSAValue:
    a = b.call("absolute", x)
    # small: a + a u
    c = [b.f32(v) for v in P]
    z = b.mul(a, a)
    z2 = b.mul(z, z)
    p = b.muladd(b.muladd(c[4], z, c[3]), z2, b.muladd(c[2], z, c[1]))
    u = b.muladd(p, z2, b.mul(c[0], z))
    ys = b.muladd(a, u, a)
    # large: 1 - 2 / (1 + e^w)
    cap = b.f32(9.5)
    w = b.mul(b.f32(2.0), b.select(b.cmp(Predicate.OGT, a, cap), cap, a))  # NaN passes
    n, ni = round_log2e(b, w)  # n in [1, 28]
    ph, pl = exp_pair(b, reduce_ln2(b, n, w))
    t = pow2(b, b.iadd(ni, b.i32(127)))
    one = b.f32(1.0)
    s = b.mul(t, ph)  # exact
    dh = b.add(one, s)
    dl = b.muladd(t, pl, b.add(b.sub(s, dh), one))
    t0 = b.div(b.f32(2.0), dh)
    hi, lo = fast2sum(b, one, b.neg(t0))
    yl = b.add(hi, b.muladd(b.mul(b.mul(b.f32(0.5), t0), t0), dl, lo))
    y = b.select(b.cmp(Predicate.OLT, a, b.f32(SMALL)), ys, yl)
    return b.call("copysign", y, x)
