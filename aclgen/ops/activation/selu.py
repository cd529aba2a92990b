"""activation/selu: aclnnSelu(self, out) and aclnnInplaceSelu(selfRef).

Formula (doc page's 计算公式): out = scale * (max(0, x) + min(0, alpha * (exp(x) - 1))),
alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946 (as f32).

Choices, and what decided them:
- exp(x) - 1 is computed as expm1(x): near 0- the difference keeps none of its digits in f32.
  For x > 0 the min term is 0 and for x <= 0 the max term is (+-)0, so the formula is
  scale * (x > 0 ? x : alpha * expm1(x)), which is what aclgen computes (f32, in that order:
  alpha * expm1(x), then * scale; rounded once to fp16/bf16). NaN x gives NaN (the kernel's
  Maxs/Mins propagate it); -0 gives -0.
- INT32 and INT8: the doc is silent; the arch35 kernel converts INT32 results with CAST_TRUNC,
  so integer results truncate toward zero here (then saturate on store: INT8 x >= 122 gives
  127, where that kernel's own INT8 path wraps, and also rounds its positive branch in fp16).

Checks, in op_api's order: self, out present (161001); self's and out's dtypes listed; shapes
equal (161002); out of self's dtype (the doc's "type mismatch", 161002). op_api checks no rank
(it flattens more than 8 dims), nor does aclgen. SoCs: Atlas A2/A3 and Atlas training products
(without BFLOAT16); the doc lists Ascend 950 and Atlas inference products as unsupported.
Held to 3 ulp against a float64 reference (expm1 <= 1 ulp and two multiplies; measured 1.8 in
f32); integer results against the f32 steps truncated.
"""

import numpy as np

import aclgen
from aclgen import expm1, f32, select, trunc

ALPHA = f32(1.6732632423543772848170429916717)
SCALE = f32(1.0507009873554804934193349852946)
A2 = ("float32", "float16", "int32", "int8", "bfloat16")
DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": (), "Ascend910": A2[:4], "Ascend310P": ()}


def check(call):
    """op_api's order: presence; dtypes listed; shapes equal; then one dtype (the doc's table)."""
    call.present()
    call.dtype_in("self", "out")
    shape = call.same_shape("out", ref="self")
    call.same_dtype("out", ref="self")
    call.out_shape(shape)


def selu_reference(x):
    """float64 from the f32 constants; for an integer input (int64 here) the f32 steps, truncated."""
    a, s = np.float64(np.float32(1.6732632423543772)), np.float64(np.float32(1.0507009873554805))
    with np.errstate(all="ignore"):
        if x.dtype.kind in "iu":
            xf = x.astype(np.float32)
            pos = xf * np.float32(s)
            neg = np.float32(a) * np.expm1(xf.astype(np.float64)).astype(np.float32) * np.float32(s)
            return np.trunc(np.where(xf > 0, pos, neg).astype(np.float64))
        return np.where(x > 0, x * s, a * np.expm1(x) * s)


# the doc page's call example: self = [0, 2, 3, 4, 5, 6, 7, 7], FLOAT [4, 2]
EXAMPLE = aclgen.Example((np.array([0, 2, 3, 4, 5, 6, 7, 7], np.float32).reshape(4, 2),),
                         tuple("0 2.101402 3.152103 4.202804 5.253505 6.304206 7.354907 7.354907".split()))


@aclgen.operator(
    "Selu",
    inputs=("self",),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    max_rank=None,
    inplace="self",
    check=check,
    reference=selu_reference,
    tolerance=3,
    examples=(EXAMPLE,),
)
def selu(x):
    """SELU: scale * x for x > 0, scale * alpha * expm1(x) otherwise; integer results truncate."""
    y = select(x > 0.0, x, expm1(x) * ALPHA) * SCALE
    return trunc(y) if x.type.startswith(("int", "uint")) else y
