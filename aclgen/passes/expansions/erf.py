"""erf and erfc as vectorizable f32 code, within 1 ulp over all 2^32 floats with fused and
unfused multiply-adds (docs/math.md).

Near 0 both are a polynomial: erf x = x + x u(x^2) (u degree 6, erf's relative error 2^-30.1),
erfc x = 1 - x - x u(x^2) with 1 - x split exactly. Away from 0 both come from erfc_core(a),
erfc for a in [0.5, 10.1]:

    erfc a = exp(-a^2 + KH + S(t)) t,   t = 1 / (a + 1/2)

S(t) = log((a + 1/2) e^(a^2) erfc a) - KH is tiny (|S| < 0.045) and smooth in t, so a degree-12
polynomial in t (absolute error 2^-27.7) has its error go straight into the exponent, with no
cancellation; the exponent's big part -a^2 + KH is exact (a^2 by a 12-bit split). The rest is
exp's scheme with every rounding accounted for: the exponent reduced to n ln 2 + r + rl (TwoSum),
e^(r + rl) as a pair, t as th + tl (the division's residual from exact 12-bit products), and
the product of the pairs rounded once before the 2^n scale (gradual underflow: erfc rounds to
+0 beyond a = 10.054).

    erfc:  |x| < 0.5: the polynomial; else erfc_core(|x|) for x > 0, 2 - erfc_core(|x|) below
    erf:   |x| < 0.75: the polynomial; else copysign(1 - erfc_core(|x|), x)

The boundaries keep 1 - erf's cancellation small: erfc's polynomial up to 0.75 reached 1.09 ulp.
Both branches run in every lane (selects, no branches). +-0 give +-0 (erf) and 1, +-inf give
+-1 (erf), +0 and 2 (erfc), NaN passes the clamps and propagates. The coefficients and the
order of every operation are the numerics prototype's (exhaustively swept in both FMA modes).
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from aclgen.passes.builder import Builder
from aclgen.passes.expansions.exp import C1, C2, L2E, SH, clamp, shifter, split_scale
from aclgen.passes.expansions.log import fast2sum, split12
from aclgen.passes.expansions.registry import expands
from aclgen.passes.expansions.tanh import exp_pair

h = float.fromhex
# erf x = x + x u(x^2) for |x| < 0.75, U0..U6
U = (
    h("0x1.06eba8p-3"),  # 0x3e0375d4
    h("-0x1.812744p-2"),  # 0xbec093a2
    h("0x1.ce2e8ap-4"),  # 0x3de71745
    h("-0x1.b81ceap-6"),  # 0xbcdc0e75
    h("0x1.55730cp-8"),  # 0x3baab986
    h("-0x1.b164f0p-11"),  # 0xba58b278
    h("0x1.7931bap-14"),  # 0x38bc98dd
)
KH = h("-0x1.fp-2")  # -0.484375 (0xbef80000): S's offset, exact on the grid of -a^2
TM = h("0x1.1826a4p-1")  # 0x3f0c1352: S's polynomial is in d = t - TM
# S(t) = S0 + S1 d + ... + S12 d^12
S = (
    h("0x1.67e542p-5"),  # 0x3d33f2a1
    h("0x1.da5616p-9"),  # 0x3b6d2b0b
    h("-0x1.44d4fap-2"),  # 0xbea26a7d
    h("0x1.f3c502p-3"),  # 0x3e79e281
    h("-0x1.355bf6p-4"),  # 0xbd9aadfb
    h("-0x1.6d78ecp-4"),  # 0xbdb6bc76
    h("0x1.83949ep-3"),  # 0x3e41ca4f
    h("-0x1.9ebd7ap-3"),  # 0xbe4f5ebd
    h("0x1.f5a644p-4"),  # 0x3dfad322
    h("0x1.f793c6p-4"),  # 0x3dfbc9e3
    h("-0x1.9617e4p-2"),  # 0xbecb0bf2
    h("0x1.914df8p-3"),  # 0x3e48a6fc
    h("0x1.2bb458p-3"),  # 0x3e15da2c
)
TOP = 10.1  # erfc_core's argument is clamped to [lo, TOP]: erfc(10.1) rounds to +0
ERF_SMALL = 0.75
ERFC_SMALL = 0.5


def u_poly(b: Builder, z: SSAValue) -> SSAValue:
    """u(z) = erf(sqrt z) / sqrt z - 1."""
    c = [b.f32(v) for v in U]
    z2 = b.mul(z, z)
    p = b.muladd(b.muladd(c[6], z, c[5]), z2, b.muladd(c[4], z, c[3]))
    return b.muladd(b.muladd(p, z2, b.muladd(c[2], z, c[1])), z, c[0])


def s_poly(b: Builder, th: SSAValue) -> SSAValue:
    """S(t) for t = th, degree 12 in d = th - TM, by pairs from the top."""
    c = [b.f32(v) for v in S]
    d = b.sub(th, b.f32(TM))
    d2 = b.mul(d, d)
    s = b.muladd(c[12], d2, b.muladd(c[11], d, c[10]))
    for k in (8, 6, 4, 2, 0):
        s = b.muladd(s, d2, b.muladd(c[k + 1], d, c[k]))
    return s


def erfc_core(b: Builder, a: SSAValue) -> SSAValue:
    """erfc(a) for a in [0.5, 10.1] (the callers clamp)."""
    half, one = b.f32(0.5), b.f32(1.0)
    x1 = split12(b, a)
    x2 = b.sub(a, x1)  # a^2 = x1^2 (exact) + x2 (a + x1)
    xch, xcl = fast2sum(b, a, half)  # a + 1/2 exactly
    th = b.div(one, xch)
    s = s_poly(b, th)
    # the exponent -a^2 + KH + S = n ln 2 + r + rl
    kh = b.f32(KH)
    n, ni = shifter(b, b.muladd(b.add(b.muladd(b.neg(a), a, kh), s), b.f32(L2E), b.f32(SH)))
    big = b.add(b.muladd(n, b.f32(-C1), b.neg(b.mul(x1, x1))), kh)  # exact
    small = b.muladd(n, b.f32(-C2), b.muladd(b.neg(x2), b.add(a, x1), s))
    r = b.add(big, small)
    bb = b.sub(r, big)
    rl = b.add(b.sub(big, b.sub(r, bb)), b.sub(small, bb))  # TwoSum
    ph, pl = exp_pair(b, r, rl)
    # t = th + tl: the residual 1 - th (xch + xcl) from exact 12-bit products
    th_a = split12(b, th)
    th_b = b.sub(th, th_a)
    x_a = split12(b, xch)
    x_b = b.sub(xch, x_a)
    res = b.muladd(b.neg(th_a), x_a, one)
    res = b.muladd(b.neg(th_a), x_b, res)
    res = b.muladd(b.neg(th_b), xch, res)
    res = b.muladd(b.neg(th), xcl, res)
    tl = b.mul(th, res)
    # (Ph + Pl)(th + tl), rounded once: PA thA is exact
    p_a = split12(b, ph)
    p_b = b.sub(ph, p_a)
    mid = b.muladd(p_a, th_b, b.muladd(p_b, th, b.muladd(ph, tl, b.mul(pl, th))))
    s1, s2 = split_scale(b, ni)
    return b.mul(b.mul(b.muladd(p_a, th_a, mid), s1), s2)


@expands("erf")
def erf(b: Builder, x: SSAValue) -> SSAValue:
    a = b.call("absolute", x)
    ys = b.muladd(x, u_poly(b, b.mul(x, x)), x)
    yl = b.call("copysign", b.sub(b.f32(1.0), erfc_core(b, clamp(b, a, ERF_SMALL, TOP))), x)
    return b.select(b.cmp("olt", a, b.f32(ERF_SMALL)), ys, yl)


@expands("erfc")
def erfc(b: Builder, x: SSAValue) -> SSAValue:
    a = b.call("absolute", x)
    one = b.f32(1.0)
    hi, lo = fast2sum(b, one, b.neg(x))
    ys = b.add(hi, b.muladd(b.neg(x), u_poly(b, b.mul(x, x)), lo))
    c = erfc_core(b, clamp(b, a, ERFC_SMALL, TOP))
    yl = b.select(b.cmp("ogt", x, b.f32(0.0)), c, b.sub(b.f32(2.0), c))
    return b.select(b.cmp("olt", a, b.f32(ERFC_SMALL)), ys, yl)
