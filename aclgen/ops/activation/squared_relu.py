"""activation/squared_relu: aclnnSquaredRelu(input, out).

Formula (doc page's 计算公式): y = relu(x)^2, relu(x) = max(0, x).

Choices the doc leaves open, and what decided them: the doc's constraints say a NaN input gives
NaN, +inf gives +inf and -inf gives 0, so relu here keeps NaN: r = (x < 0 ? 0 : x), y = r * r
(the kernel squares with one multiply in f32; -0 gives +0).

aclnnSquaredRelu has no hand-written op_api in CANN (its aclnn layer is generated from the
operator definition), so the checks follow the doc page: input and out present (161001);
input's dtype listed, out of input's dtype and shape (161002); the doc's constraints allow 1 to
8 dims, so rank 0 and rank > 8 are refused (161002). SoCs: Atlas A2/A3 and Ascend 950 only.
Held to 0.5 ulp against the reference (one multiply, rounded once).
"""

import numpy as np

import aclgen
from aclgen import select
from aclgen.runtime import constants as C

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": (), "Ascend310P": ()}


def check(call):
    """The doc's order: presence; input's dtype listed; out of input's dtype; 1 to 8 dims;
    out of input's shape."""
    call.present()
    call.dtype_in("input")
    call.same_dtype("out", ref="input")
    for name in ("input", "out"):
        if not call.tensor(name).view_dims:
            raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"{name} has 0 dims, 1 to 8 are supported")
    call.max_rank("input", "out")
    call.out_shape(call.same_shape("out", ref="input"))


def squared_relu_reference(x):
    with np.errstate(invalid="ignore"):
        r = np.where(x < 0, 0.0, x)
        return r * r


# the doc page's call example: input = [0, 1, 2, -33, 4, 5, 6, 7], FLOAT [2, 4]
EXAMPLE = aclgen.Example((np.array([[0, 1, 2, -33], [4, 5, 6, 7]], np.float32),), tuple("0 1 4 0 16 25 36 49".split()))


@aclgen.operator(
    "SquaredRelu",
    inputs=("input",),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    reference=squared_relu_reference,
    tolerance=0.5,
    examples=(EXAMPLE,),
)
def squared_relu(x):
    """relu(x) squared (NaN stays NaN)."""
    r = select(x < 0, 0.0, x)
    return r * r
