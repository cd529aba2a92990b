"""activation/hard_sigmoid: aclnnHardsigmoid(self, out) and aclnnInplaceHardsigmoid.

Formula (doc page's 计算公式): out = clip(alpha * x + beta, 0, 1), alpha = 1/6, beta = 1/2; an
INT32 input's result is truncated to INT32.

Choices, and what decided them:
- alpha * x + beta with alpha = 1/6, beta = 1/2 is computed as (x + 3) / 6, the same function:
  the kernel's f32 order, x * f32(1/6) + 0.5, cancels near x = -3 and is thousands of ulps off
  there (x + 3 is exact there instead). Then the clip, in f32, rounded once to fp16/bf16.
  x = -3 gives 0 and x = 3 gives 1, as the doc's piecewise form says.
- INT32: the doc says truncated, and the kernel converts the f32 result with CAST_TRUNC, so
  x = 1 and x = 2 give 0 (0.667 and 0.833 truncate), x >= 3 gives 1. The formula truncates
  for integer inputs (it branches on the traced element type).
- NaN: the clip propagates it (the kernel's Mins/Maxs do; the doc is silent), NaN out.

Checks, in op_api's order: self, out present (161001); self's dtype listed; rank <= 8; shapes
equal; out of self's dtype; one format (161002). The doc names the in-place API's tensor
`self`; aclgen's in-place variants name it selfRef. SoCs: Atlas inference products
unsupported; Atlas training products FLOAT, FLOAT16, INT32.
Held to 1 ulp against a float64 reference (an add and a division); INT32 exactly.
"""

import numpy as np

import aclgen
from aclgen import clamp, trunc
from aclgen.runtime import constants as C

A2 = ("float32", "float16", "int32", "bfloat16")
DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": A2[:3], "Ascend310P": ()}


def check(call):
    """op_api's order: presence; self's dtype listed; rank <= 8; shapes equal; out of self's
    dtype and format."""
    call.present()
    call.dtype_in("self")
    call.max_rank("self")
    shape = call.same_shape("out", ref="self")
    call.same_dtype("out", ref="self")
    x, out = call.tensor("self"), call.tensor("out")
    if x.format != out.format:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"out format {C.format_name(out.format)} must equal self "
                                                    f"format {C.format_name(x.format)}")
    call.out_shape(shape)


def hardsigmoid_reference(x):
    """clip((x + 3) / 6, 0, 1); truncated for an integer input (int64 here)."""
    with np.errstate(invalid="ignore", over="ignore"):
        y = np.clip((x + 3) / 6, 0.0, 1.0)
    return np.trunc(y) if x.dtype.kind in "iu" else y


# the doc page's call example: self = [-4, -3, -2, 0, 1, 2, 4, 5], FLOAT [4, 2]
EXAMPLE = aclgen.Example((np.array([-4, -3, -2, 0, 1, 2, 4, 5], np.float32).reshape(4, 2),),
                         tuple("0 0 0.16666667 0.5 0.6666667 0.8333333 1 1".split()))


@aclgen.operator(
    "Hardsigmoid",
    inputs=("self",),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    inplace="self",
    check=check,
    reference=hardsigmoid_reference,
    tolerance=1,
    examples=(EXAMPLE,),
)
def hardsigmoid(x):
    """Hardsigmoid: clip(x / 6 + 1/2, 0, 1); integer results truncate."""
    y = clamp((x + 3.0) / 6.0, 0.0, 1.0)
    return trunc(y) if x.type.startswith("int") else y
