"""activation/leaky_relu_grad: aclnnLeakyReluBackward(gradOutput, self, negativeSlope,
selfIsResult, out).

Formula (doc page's 计算公式): out = gradOutput where self > 0, gradOutput * negativeSlope where
self <= 0. A NaN self is neither; the kernel (arch35 leaky_relu_grad_dag.h) selects on
self > 0, so NaN gives gradOutput * negativeSlope. One f32 multiply, rounded once.
`selfIsResult` (C bool) only matters to the checks: the kernel does not read it.

gradOutput and self broadcast; mixed dtypes promote as CANN's PromoteType does among the
listed ones (equal: that dtype; otherwise FLOAT). Checks, in op_api's order: gradOutput, self,
negativeSlope, out present (161001); gradOutput's and self's dtypes listed; negativeSlope's
dtype listed (every scalar dtype but UINT16/32/64, and BFLOAT16 on Atlas training and
inference products); ranks <= 8; the broadcast and out's shape; selfIsResult with
negativeSlope < 0 (read as double); the promoted dtype castable to out's (161002). CANN casts
the result to out's dtype; aclgen requires out of the promoted dtype (161002). DOUBLE tensors
are not an aclgen dtype. Held to 0.5 ulp against the reference (the f32 multiply, rounded once).
"""

import numpy as np

import aclgen
from aclgen import Attr, Scalar, select
from aclgen.runtime import constants as C
from aclgen.runtime.checks import listing, soc

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": FLOAT_HALF_BF16[:2]}
SLOPE_DTYPES = (C.ACL_FLOAT, C.ACL_FLOAT16, C.ACL_DOUBLE, C.ACL_INT32, C.ACL_INT64, C.ACL_INT8, C.ACL_UINT8,
                C.ACL_BOOL, C.ACL_INT16, C.ACL_BF16)


def promote(g: str, x: str) -> str:
    """PromoteType among FLOAT, FLOAT16, BFLOAT16: equal dtypes keep theirs, others give FLOAT."""
    return g if g == x else "float32"


def check(call):
    """op_api's order: presence; dtypes listed (negativeSlope's too); ranks; broadcast and out's
    shape; selfIsResult needs negativeSlope >= 0; out of the promoted dtype."""
    call.present("gradOutput", "self", "negativeSlope", "out")
    call.dtype_in("gradOutput", "self")
    slope = call.scalar("negativeSlope")
    allowed = SLOPE_DTYPES if soc() in ("Ascend910B", "Ascend910_93", "Ascend950") else SLOPE_DTYPES[:-1]
    if slope.dtype not in allowed:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"negativeSlope dtype {C.dtype_name(slope.dtype)} is not in "
                                                    f"{listing(allowed)}")
    call.max_rank("gradOutput", "self")
    call.out_shape(call.broadcast())
    if call.attr("selfIsResult") and float(slope.value) < 0:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"negativeSlope must be >= 0 when selfIsResult is true (the "
                                                    f"forward ran in place), got {float(slope.value)!r}")
    call.result_dtype()


def leaky_relu_backward_reference(g, x, negative_slope, self_is_result):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(x > 0, g, (g.astype(np.float32) * np.float32(negative_slope)).astype(np.float64))


# the doc page's call example: gradOutput = [2, 3, 4, 5], self = [1, 2, 3, 4], negativeSlope =
# 0.01, selfIsResult = true, FLOAT [4]
EXAMPLE = aclgen.Example((np.array([2, 3, 4, 5], np.float32), np.array([1, 2, 3, 4], np.float32), 0.01, True),
                         tuple("2 3 4 5".split()))


@aclgen.operator(
    "LeakyReluBackward",
    inputs=("gradOutput", "self"),
    scalars=(Scalar("negativeSlope", default=0.01),),
    attrs=(Attr("selfIsResult", "bool", default=False),),
    outputs=("out",),
    dtypes=DTYPES,
    promote=promote,
    check=check,
    reference=leaky_relu_backward_reference,
    tolerance=0.5,
    examples=(EXAMPLE,),
)
def leaky_relu_backward(g, x, negative_slope, self_is_result):
    """The gradient of leaky_relu(negativeSlope) at `self` applied to `gradOutput` (broadcasting);
    `selfIsResult` says `self` is the forward's output (it only restricts negativeSlope)."""
    return select(x > 0.0, g, g * negative_slope)
