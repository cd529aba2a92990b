"""erf and erfc as vectorizable f32 code, within 1 ulp over all 2^32 floats with fused and
unfused multiply-adds (docs/math.md). erf has its own path; erfc keeps the high-precision one.

erfc: near 0 a polynomial, erfc x = 1 - x - x u(x^2) (u degree 6) with 1 - x split exactly;
away from 0 erfc_core(a), erfc for a in [0.5, 10.1], accurate relative to erfc down to
subnormals:

    erfc a = exp(-a^2 + KH + S(t)) t,   t = 1 / (a + 1/2)

S(t) = log((a + 1/2) e^(a^2) erfc a) - KH is tiny (|S| < 0.045) and smooth in t, so a degree-12
polynomial in t (absolute error 2^-27.7) has its error go straight into the exponent, with no
cancellation; the exponent's big part -a^2 + KH is exact (a^2 by a 12-bit split). The rest is
exp's scheme with every rounding accounted for: the exponent reduced to n ln 2 + r + rl (TwoSum),
e^(r + rl) as a pair, t as th + tl (the division's residual from exact 12-bit products), and
the product of the pairs rounded once before the 2^n scale (gradual underflow: erfc rounds to
+0 beyond a = 10.054).

    erfc:  |x| < 0.5: the polynomial; else erfc_core(|x|) for x > 0, 2 - erfc_core(|x|) below

The boundary keeps 1 - erf's cancellation small: erfc's polynomial up to 0.75 reached 1.09 ulp.

erf needs far less: for |x| >= 1/2 erf is in [0.52, 1), its ulp 2^-24, so 1 - erfc(a) needs
erfc(a) only to an absolute ~2^-27 (no subnormals, no relative accuracy), and erf rounds to +-1
from |x| = 3.9192 on. So, with a = |x|:

    a < 1/2:   erf x = x + x u(x^2), u of degree 4 (erf's relative error 2^-29.3)
    a >= 1/2:  erf x = copysign(1 - e^E, x),  E = -a^2 + KH + G(a - 1/2),  a clamped to 3.921875

G = log(e^(a^2) erfc a) - KH (KH = -1/2) is smooth: degree 6 by Horner, fitted minimax for the
absolute error of erfc (weighted by erfc a: 2^-27.7), so it needs no division and no t. -a^2 + KH
is exact as x1^2 + KH with x1 = a cut to 11 bits (split11: x1^2 on the 2^-22 grid), the rest
x2 (a + x1) goes with G into the small part; then exp's reduction (E = n ln 2 + r, the n C1 step
exact), e^r - 1 = r + r^2 P(r) in one multiply-add, and erf = (1 - 2^n) - 2^n (e^r - 1) in
another: 1 - 2^n is exact (n in [-24, -1]; at n = -25, from a = 3.9 on, it rounds to 1, as erf
nearly does), so erf rounds once but for e^r - 1's own rounding, at most 2^-26, times 2^n <= 1/2:
an eighth of erf's ulp. (Keeping e^r as 1 + r exactly plus a small part and 1 - 2^n (1 + r) by
Fast2Sum took eight more operations for 0.743 ulp instead of 0.838.) The boundary 1/2 is where
1 - erfc no longer cancels (erf >= 1/2) and the small branch's rounding of x^2 is still harmless;
G's own roundings are smallest there (G(0) ~ 0). 52 operations, no division (erfc: 120 and a
division; exp: 30); u by Horner and a clamped above only (below 1/2 a lane takes the polynomial).
AVX2, Zen 3, one process, 1M float32: 642 us with 63 operations, 620 with 60, 595 with 52
(llvm-mca: 106, 102, 100 cycles a 32-lane step).
Exhaustive: 0.838 ulp (FMA) and 0.854 (unfused) at most; erfc 0.886 and 0.961.

Both branches run in every lane (selects, no branches). +-0 give +-0 (erf) and 1, +-inf give
+-1 (erf), +0 and 2 (erfc), NaN passes the clamps and propagates. The coefficients are the
numerics prototypes' (my_erf2 and erfc_core); the polynomials in x^2 and S(t) have since taken
Horner's steps instead of pairs, swept again over all 2^32 inputs in both FMA modes.
"""

from __future__ import annotations

import struct

from xdsl.ir import SSAValue

from aclgen.dialects import ew
from aclgen.dialects.enums import Predicate
from aclgen.passes.builder import Builder
from aclgen.passes.expansions.exp import (
    C1,
    C2,
    L2E,
    SH,
    clamp,
    clamp_above,
    estrin,
    exp_poly,
    horner,
    pow2,
    shifter,
    times_pow2,
)
from aclgen.passes.expansions.log import exponent_split, fast2sum, log_normal, split12
from aclgen.passes.expansions.registry import expands
from aclgen.passes.expansions.tanh import exp_pair

h = float.fromhex
# erf x = x + x u(x^2) for |x| < 1/2, u = ERF_U0 + ... + ERF_U4 z^4; erf's relative error 2^-29.3
ERF_U = (
    h("0x1.06eba8p-3"),  # 0x3e0375d4
    h("-0x1.812734p-2"),  # 0xbec0939a
    h("0x1.ce2544p-4"),  # 0x3de712a2
    h("-0x1.b66846p-6"),  # 0xbcdb3423
    h("0x1.35465ep-8"),  # 0x3b9aa32f
)
# erf x = 1 - e^(-a^2 + KH + G(a - 1/2)) for a = |x| in [1/2, 3.921875]: G = log(e^(a^2) erfc a) - KH,
# G0..G6 (Horner), absolute error of erfc (weighted minimax) 2^-27.7
ERF_KH = -0.5
ERF_G = (
    h("0x1.eb27aep-7"),  # 0x3c7593d7
    h("-0x1.aa585cp-1"),  # 0xbf552c2e
    h("0x1.e545c6p-3"),  # 0x3e72a2e3
    h("-0x1.12c642p-4"),  # 0xbd896321
    h("0x1.022f96p-6"),  # 0x3c8117cb
    h("-0x1.57cc70p-9"),  # 0xbb2be638
    h("0x1.d3b066p-13"),  # 0x3969d833
)
# Where only a half type stores erf (`Builder.half`): erf x = x P(x^2) / Q(x^2) on [0, 3.25], P and Q
# of degree 3, a minimax fit of the relative error (2^-19.2; 2^-18.9 with the f32 coefficients and
# evaluation); erf(3.25) = 1 - 2^-17.8, so the clamp's value is within 2^-18.6 of erf beyond
ERF_HALF_TOP = 3.25
ERF_HALF_P = (h("0x1.20dd86p+0"), h("0x1.3b9452p-3"), h("0x1.626054p-5"), h("0x1.8a9976p-11"))
ERF_HALF_Q = (1.0, h("0x1.e1348ep-2"), h("0x1.847564p-4"), h("0x1.3153c8p-7"))
# erfc x = 1 - x - x u(x^2) for |x| < 1/2, U0..U6 (fitted up to 0.75 as erf's polynomial of before:
# erf's relative error 2^-30.1 there)
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
# erfinv, |x| < 0.75: erfinv x = x (C0HI + P(x^2)), P = C0 + C1 z + ... + C10 z^10, where
# C0HI + C0 is sqrt(pi)/2 as a pair (so x C0HI is the only big product); relative error 2^-29.6
EINV_C0HI = h("0x1.c5bf8ap-1")  # 0x3f62dfc5
EINV_C = (
    h("-0x1.c96212p-26"),  # 0xb2e4b109
    h("0x1.db29d6p-3"),  # 0x3e6d94eb
    h("0x1.054836p-3"),  # 0x3e02a41b
    h("0x1.5fd636p-4"),  # 0x3dafeb1b
    h("0x1.2f9710p-4"),  # 0x3d97cb88
    h("-0x1.5921a2p-6"),  # 0xbcac90d1
    h("0x1.94287ep-2"),  # 0x3eca143f
    h("-0x1.05c368p+0"),  # 0xbf82e1b4
    h("0x1.fc19aap+0"),  # 0x3ffe0cd5
    h("-0x1.028126p+1"),  # 0xc0014093
    h("0x1.fc09e8p-1"),  # 0x3f7e04f4
)
# erfinv, |x| >= 0.75, w = -log((1 - |x|)(1 + |x|)): three degree-8 sets P0..P8 in d = u - center,
# the centers chosen so that P0 (the value there) is an f32 within 1e-4 ulp of exact.
# A: w < 2, erfinv = |x| P(w - AC) (Giles' form, no square root); relative error 2^-30.1
EINV_AC = h("0x1.6900e0p+0")  # 0x3fb48070
EINV_A = (
    h("0x1.3ac5e8p+0"),  # 0x3f9d62f4
    h("0x1.00282ap-2"),  # 0x3e801415
    h("0x1.7ca5bap-10"),  # 0x3abe52dd
    h("-0x1.1a516cp-9"),  # 0xbb0d28b6
    h("0x1.5d6c90p-13"),  # 0x392eb648
    h("0x1.9a8ad6p-16"),  # 0x37cd456b
    h("-0x1.7a76dcp-18"),  # 0xb6bd3b6e
    h("0x1.616d50p-19"),  # 0x3630b6a8
    h("0x1.6bc578p-21"),  # 0x3535e2bc
)
# B: 2 <= w <= 5, erfinv = |x| P(w - BC); 2^-32.0
EINV_BC = h("0x1.c026f0p+1")  # 0x40601378
EINV_B = (
    h("0x1.be3c6ep+0"),  # 0x3fdf1e37
    h("0x1.e1fb38p-3"),  # 0x3e70fd9c
    h("-0x1.b85278p-8"),  # 0xbbdc293c
    h("-0x1.f7df82p-12"),  # 0xb9fbefc1
    h("0x1.4c5920p-13"),  # 0x39262c90
    h("-0x1.09046ep-16"),  # 0xb7848237
    h("-0x1.a1b09cp-22"),  # 0xb4d0d84e
    h("0x1.54d0dcp-22"),  # 0x34aa686e
    h("-0x1.165900p-25"),  # 0xb30b2c80
)
# H: w > 5, erfinv = P(sqrt(w) - HC); 2^-29.0
EINV_HC = h("0x1.895976p+1")  # 0x4044acbb
EINV_H = (
    h("0x1.73fa3ep+1"),  # 0x4039fd1f
    h("0x1.00ec80p+0"),  # 0x3f807640
    h("0x1.915f68p-8"),  # 0x3bc8afb4
    h("-0x1.99473ep-9"),  # 0xbb4ca39f
    h("0x1.15d5d2p-10"),  # 0x3a8aeae9
    h("-0x1.ebdeb2p-13"),  # 0xb975ef59
    h("-0x1.c8a35ep-17"),  # 0xb76451af
    h("0x1.8fb9d4p-15"),  # 0x3847dcea
    h("-0x1.315e1ep-16"),  # 0xb798af0f
)
# erfinv with FMA, |x| up to w = 6.5: erfinv x = |x| P(w - WC), one polynomial of degree 10 for
# what the sets above split in four (the central branch, A, B), P0 + P1 d + d^2 R(d) with R =
# P2..P10; WC chosen so that P0 = P(WC) is an f32 within 9e-5 ulp of exact. Minimax fit of the
# relative error with P0 fixed and the others rounded to f32 in turn, each refit: 2^-27.2 on
# [0, 6.5005]
EINV_WC = h("0x1.9fd822p+1")  # 3.24878
EINV_P = (
    h("0x1.aeebfcp+0"),  # 0x3fd775fe
    h("0x1.e8b7c8p-3"),  # 0x3e745be4
    h("-0x1.9c57fap-8"),  # 0xbbce2bfd
    h("-0x1.54fd32p-11"),  # 0xba2a7e99
    h("0x1.7515bcp-13"),  # 0x393a8ade
    h("-0x1.f02a2cp-17"),  # 0xb7781516
    h("-0x1.14ce28p-20"),  # 0xb58a6714
    h("0x1.accab8p-22"),  # 0x34d6655c
    h("-0x1.f62f1ap-26"),  # 0xb2fb178d
    h("-0x1.0685e8p-28"),  # 0xb18342f4
    h("0x1.65a50ep-31"),  # 0x3032d287
)
# erfinv's log (`neg_log`): log1p(f) = f - f^2/2 + f^3 Q(f) on [sqrt(1/2) - 1, sqrt 2 - 1] (+-1e-5), Q of
# degree 6 (fitted as log.Q is): log1p's relative error 2^-24.8, 1e-8 absolute at most
EINV_LOGQ = (
    h("0x1.5556d8p-2"),  # 0x3eaaab6c
    h("-0x1.000382p-2"),  # 0xbe8001c1
    h("0x1.98d7ecp-3"),  # 0x3e4c6bf6
    h("-0x1.538232p-3"),  # 0xbe29c119
    h("0x1.317490p-3"),  # 0x3e18ba48
    h("-0x1.243392p-3"),  # 0xbe1219c9
    h("0x1.645f90p-4"),  # 0x3db22fc8
)
EINV_TOP = 6.5  # EINV_P up to w = 6.5 (|x| = 0.999247), set H beyond
EINV_SMALL = 0.75
TOP = 10.1  # erfc_core's argument is clamped to [lo, TOP]: erfc(10.1) rounds to +0
ERF_SMALL = 0.5  # erf: the polynomial below, 1 - e^E from here on
ERF_TOP = h("0x1.f6p+1")  # 3.921875: erfc(3.921875) < 2^-25, erf rounds to 1 from 3.9192 on
ERFC_SMALL = 0.5


def u_poly(b: Builder, z: SSAValue) -> SSAValue:
    """u(z) = erf(sqrt z) / sqrt z - 1."""
    return horner(b, U, z)


def s_poly(b: Builder, th: SSAValue) -> SSAValue:
    """S(t) for t = th, degree 12 in d = th - TM, by Horner's steps: a product fewer than by
    pairs (d^2), and with u's the same, erfc 4-6% faster on Zen 3 (1M float32, one process:
    1565 -> 1496 us, 1761 -> 1660 in a second run), though its chain is longer."""
    return horner(b, S, b.sub(th, b.f32(TM)))


def gauss_exponent(b: Builder, a: SSAValue, x1: SSAValue, x2: SSAValue, kh: SSAValue, s: SSAValue
                   ) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
    """The exponent -a^2 + kh + s of erf's and erfc's e^E as n ln 2 + big + small: (n, n as an
    i32, big, small), with a = x1 + x2 split so that x1^2 is exact and big = -n C1 - x1^2
    + kh exact; small = -n C2 - x2 (a + x1) + s carries every rounding."""
    n, ni = shifter(b, b.muladd(b.add(b.muladd(b.neg(a), a, kh), s), b.f32(L2E), b.f32(SH)))
    big = b.add(b.muladd(n, b.f32(-C1), b.neg(b.mul(x1, x1))), kh)  # exact
    small = b.muladd(n, b.f32(-C2), b.muladd(b.neg(x2), b.add(a, x1), s))
    return n, ni, big, small


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
    n, ni, big, small = gauss_exponent(b, a, x1, x2, kh, s)
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
    return times_pow2(b, b.muladd(p_a, th_a, mid), n, ni)


def split11(b: Builder, v: SSAValue) -> SSAValue:
    """v with its mantissa cut to 10 fraction bits (the low 13 bits cleared): its square is exact
    and lies on the 2^-22 grid for v >= 1/2 (split12's would on the 2^-24 grid, too fine for
    erf's exponent to stay exact below a = 1)."""
    return b.float(b.shl(b.ashr(b.bits(v), 13), 13))


@expands("erf")
def erf(b: Builder, x: SSAValue) -> SSAValue:
    """Both branches in every lane, selected on a = |x| < 1/2; see the module docstring."""
    if b.half:
        return erf_half(b, x)
    one = b.f32(1.0)
    a = b.call("absolute", x)
    # small: x + x u(x^2), u of degree 4 by Horner (one product fewer than by pairs: the FMA pipes
    # bound this loop, and its lanes are independent)
    z = b.mul(x, x)
    ys = b.muladd(x, horner(b, ERF_U, z), x)
    # large: 1 - e^E, E = -a^2 + KH + G(a - 1/2)
    ac = clamp_above(b, a, ERF_TOP)  # below 1/2 a lane takes ys: no lower clamp
    x1 = split11(b, ac)
    x2 = b.sub(ac, x1)  # a^2 = x1^2 (exact) + x2 (a + x1)
    d = b.sub(ac, b.f32(ERF_SMALL))
    kh = b.f32(ERF_KH)
    _, ni, big, small = gauss_exponent(b, ac, x1, x2, kh, horner(b, ERF_G, d))
    r = b.add(big, small)
    r2 = b.mul(r, r)
    em1 = b.muladd(exp_poly(b, r, r2), r2, r)  # e^r - 1
    s = pow2(b, b.iadd(ni, b.i32(127)))  # 2^n, n in [-25, -1]
    yl = b.call("copysign", b.muladd(b.neg(s), em1, b.sub(one, s)), x)  # (1 - s) - s (e^r - 1)
    return b.select(b.cmp(Predicate.OLT, a, b.f32(ERF_SMALL)), ys, yl)


def erf_half(b: Builder, x: SSAValue) -> SSAValue:
    """erf for a half-type result, to 2^-18.5: one rational function, erf x = xc P(z) / Q(z) with
    xc = x clamped to [-3.25, 3.25] and z = xc^2 (P, Q of degree 3: ERF_HALF_P, ERF_HALF_Q), the
    clamp's value 1 - 2^-18.6 standing for erf beyond. 10 operations and a division, against
    28 for the f32 scheme cut to half precision (x + x u(x^2) below 1/2, 1 - e^E above, both
    in every lane). +-0 stay +-0, NaN passes the clamp; subnormal x keep their last bits' error
    (x P rounds in the subnormals, as erf's x + x u does)."""
    xc = clamp(b, x, -ERF_HALF_TOP, ERF_HALF_TOP)
    z = b.mul(xc, xc)
    return b.div(b.mul(xc, horner(b, ERF_HALF_P, z)), horner(b, ERF_HALF_Q, z))


@expands("erfc")
def erfc(b: Builder, x: SSAValue) -> SSAValue:
    a = b.call("absolute", x)
    one = b.f32(1.0)
    hi, lo = fast2sum(b, one, b.neg(x))
    ys = b.add(hi, b.muladd(b.neg(x), u_poly(b, b.mul(x, x)), lo))
    c = erfc_core(b, clamp(b, a, ERFC_SMALL, TOP))
    yl = b.select(b.cmp(Predicate.OGT, x, b.f32(0.0)), c, b.sub(b.f32(2.0), c))
    return b.select(b.cmp(Predicate.OLT, a, b.f32(ERFC_SMALL)), ys, yl)


def split12_const(v: float) -> tuple[float, float]:
    """split12 of an f32 constant, folded: (its high part, the exact rest)."""
    (bits,) = struct.unpack("<I", struct.pack("<f", v))
    (hi,) = struct.unpack("<f", struct.pack("<I", bits & 0xFFFFF000))
    return hi, v - hi


@expands("erfinv")
def erfinv(b: Builder, x: SSAValue) -> SSAValue:
    """With fused multiply-adds, for a = |x|: w = -log((1 - a)(1 + a)) in every lane (1 - a
    exact for a >= 1/2, (1 - a)(1 + a) = 2e - e^2 one multiply-add; below 1/2 its error barely
    moves P, whose slope in w is 0.26 there; the log is `neg_log`), then erfinv x = a P(w - WC)
    up to w = 6.5 (|x| up to 0.999247), one polynomial (EINV_P) where `erfinv_sets` takes a
    central polynomial in x^2 and two sets of a polynomial in w picked per lane. Every part of a
    P that is not small is exact: d + dl = w - WC (dl from Fast2Sum, or 0 where Sterbenz makes d
    exact), P1 d = t + te and P0 + t = s + se (|P0| > |t|), a s = hi + lo, so y = hi + (lo + a
    (se + te + P1 dl + d^2 R(d))) rounds once but for the small sum's own error. Beyond w = 6.5
    (and for |x| >= 1 and NaN) the set H of `erfinv_sets`, in u = sqrt(w); those lanes are
    promised rare (`ew.unlikely`), so a vector step without one runs neither the tail nor the
    special values: uniform inputs in (-1, 1) put one in 2.4% of 32-lane steps. About 50
    operations a lane where `erfinv_sets` takes 111 and nine table lookups: AVX2, x uniform in
    (-0.999, 0.999), 1M float32, one process: 1645 -> 1062 us with P up to w = 5 and log's
    1-ulp code, -> 954 (from 1105 in a slower phase) with P up to 6.5 and `neg_log`.

    Without FMA, `erfinv_sets`: the products above would each need a 12-bit split."""
    if not b.fma:
        return erfinv_sets(b, x)
    one = b.f32(1.0)
    a = b.call("absolute", x)
    e = b.sub(one, a)
    w = neg_log(b, b.muladd(b.neg(e), e, b.mul(b.f32(2.0), e)))
    up = b.cmp(Predicate.OGT, w, b.f32(EINV_TOP))
    rare = b(ew.UnlikelyOp(b.or_(up, b.not_(b.cmp(Predicate.OLT, a, one)))))
    # w <= EINV_TOP: a P(d)
    c = [b.f32(v) for v in EINV_P]
    wc = b.f32(EINV_WC)
    d = b.sub(w, wc)
    dl = b.add(b.sub(b.neg(wc), d), w)  # w - WC - d exactly
    t = b.mul(c[1], d)
    te = b.muladd(c[1], d, b.neg(t))
    s, se = fast2sum(b, c[0], t)
    d2 = b.mul(d, d)
    small = b.muladd(d2, estrin(b, c[2:], d, d2), b.muladd(c[1], dl, b.add(se, te)))
    hi = b.mul(a, s)
    y = b.add(hi, b.muladd(a, small, b.muladd(a, s, b.neg(hi))))
    # w > EINV_TOP: set H
    k = [b.f32(v) for v in EINV_H]
    hc = b.f32(EINV_HC)
    u = b.call("sqrt", w)
    d = b.sub(u, hc)
    d2 = b.mul(d, d)
    dl = b.add(b.sub(b.neg(hc), d), u)
    q = estrin(b, k[1:], d, d2)
    c0a, c0b = split12_const(EINV_H[0])
    yt = b.add(b.f32(c0a), b.add(b.muladd(d, q, b.mul(k[1], dl)), b.f32(c0b)))
    y = b.call("copysign", b.select(up, yt, y), x)
    return b.select(rare, specials_erfinv(b, x, a, y), y)


def neg_log(b: Builder, v: SSAValue) -> SSAValue:
    """-log v for a positive normal v, with less care than `log.log_normal`: w's error moves
    erfinv's P by 0.26 of it at most (relative), so -(k C1 + (k C2 + log1p(f))) with log1p(f) =
    f + f^2 (f Q(f) - 1/2) in plain multiply-adds (Q of degree 6, EINV_LOGQ) is within an ulp of
    w and a few hundredths of an ulp of erfinv: 18 operations where log's 1-ulp code takes 26."""
    m, k = exponent_split(b, v)
    f = b.sub(m, b.f32(1.0))
    kf = b.to_f32(k)
    log1p = b.muladd(b.mul(f, f), b.muladd(f, horner(b, EINV_LOGQ, f), b.f32(-0.5)), f)
    return b.neg(b.muladd(kf, b.f32(C1), b.muladd(kf, b.f32(C2), log1p)))


def specials_erfinv(b: Builder, x: SSAValue, a: SSAValue, y: SSAValue) -> SSAValue:
    """y, but +-inf for x = +-1 and NaN for |x| > 1 and NaN."""
    one = b.f32(1.0)
    y = b.select(b.cmp(Predicate.OEQ, a, one), b.call("copysign", b.f32(float("inf")), x), y)
    return b.select(b.cmp(Predicate.OLE, a, one), y, b.f32(float("nan")))


def erfinv_sets(b: Builder, x: SSAValue) -> SSAValue:
    """Both branches in every lane, selected on a = |x| < 0.75; x's sign copied onto the result.

    Central: a (C0HI + P(a^2)), P of degree 10 by Estrin (a C0HI is the one big term, rounded
    once with the rest). Tail: w = -log((1 - a)(1 + a)) with 1 - a exact and (1 - a)(1 + a) =
    2e - e^2 one multiply-add; then one of three degree-8 polynomials in d = u - center, its
    coefficients picked per lane: u = w (w < 2 and 2 <= w <= 5: Giles' form a P(d), no square
    root, and w's own error barely matters) or u = sqrt(w) (w > 5: P(d)). M (c0 + d q + c1 dl)
    with M = a or 1: dl is d's rounding error, and M c0 (the big term) is exact through 12-bit
    splits, so the sum rounds once. One set for w in [0.82, 5] reached 2.1 ulp without FMA (d q
    is up to 46% of the value there); one sqrt-based tail 2.7 ulp.

    erfinv(+-1) = +-inf, |x| > 1 and NaN give NaN, +-0 give +-0 (the central branch)."""
    one = b.f32(1.0)
    a = b.call("absolute", x)
    # central
    c = [b.f32(v) for v in EINV_C]
    z = b.mul(x, x)
    z2 = b.mul(z, z)
    z4 = b.mul(z2, z2)
    p = b.muladd(b.muladd(c[10], z2, b.muladd(c[9], z, c[8])), z4,
                 b.muladd(b.muladd(c[7], z, c[6]), z2, b.muladd(c[5], z, c[4])))
    p = b.muladd(p, z4, b.muladd(b.muladd(c[3], z, c[2]), z2, b.muladd(c[1], z, c[0])))
    yc = b.muladd(a, b.f32(EINV_C0HI), b.mul(a, p))  # on |x|: x P would be +0 for x = -0 (P(0) < 0)
    # tail
    e = b.sub(one, a)  # exact for a >= 1/2
    v = b.muladd(b.neg(e), e, b.mul(b.f32(2.0), e))
    w = b.neg(log_normal(b, v))
    up = b.cmp(Predicate.OGT, w, b.f32(5.0))
    mid = b.cmp(Predicate.OGE, w, b.f32(2.0))

    # Where the target has a vector permute, a coefficient is one lookup by the set's number (0: A,
    # 1: B, 2: H) instead of two selects of three constants: the same values; AVX2, 1M float32,
    # 1.77-1.90 -> 1.56-1.58 ms, 770 -> 623 instructions in a loop of 32 lanes.
    key = b.select(up, b.i32(2), b.select(mid, b.i32(1), b.i32(0))) if b.permute else None

    def pick(h_: float, b_: float, a_: float) -> SSAValue:
        if key is not None:
            return b.lookup((a_, b_, h_, 0.0, 0.0, 0.0, 0.0, 0.0), key)
        return b.select(up, b.f32(h_), b.select(mid, b.f32(b_), b.f32(a_)))

    k = [pick(*coefs) for coefs in zip(EINV_H, EINV_B, EINV_A)]
    cc = pick(EINV_HC, EINV_BC, EINV_AC)
    u = b.select(up, b.call("sqrt", w), w)
    d = b.sub(u, cc)
    d2 = b.mul(d, d)
    dl = b.add(b.sub(b.neg(cc), d), u)  # u - cc - d exactly
    q = estrin(b, k[1:], d, d2)
    m = b.select(up, one, a)
    m_a = split12(b, m)
    m_b = b.sub(m, m_a)
    c0a, c0b = (pick(*parts) for parts in zip(*(split12_const(s[0]) for s in (EINV_H, EINV_B, EINV_A))))
    small = b.muladd(m_a, c0b, b.mul(m_b, k[0]))
    yt = b.muladd(m_a, c0a, b.muladd(m, b.muladd(d, q, b.mul(k[1], dl)), small))
    return specials_erfinv(b, x, a, b.call("copysign", b.select(b.cmp(Predicate.OLT, a, b.f32(EINV_SMALL)), yc, yt), x))
