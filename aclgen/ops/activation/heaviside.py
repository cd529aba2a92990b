"""activation/heaviside: aclnnHeaviside(input, values, out).

Formula (doc page's 计算公式): out = 0 where input < 0, values where input = 0, 1 where
input > 0; input and values broadcast.

Choices the doc leaves open, and what decided them: NaN input. The kernel (heaviside.h) first
replaces NaN by -1 (`x == x` is false only for NaN), so a NaN input gives 0 (PyTorch gives
NaN). -0 equals 0 and takes `values`.

Checks, in op_api's order: input, values, out present (161001); input's, values' and out's
dtypes listed; input and values of rank <= 8; they broadcast; out of the broadcast shape
(161002). op_api compares out's element count only; aclgen requires the broadcast shape itself.
CANN does not require the three dtypes to match; aclgen does (161002). SoCs: Atlas A2/A3 only
(the doc page lists Ascend 950 as unsupported). Held to 0 ulp against the reference (selects).
"""

import numpy as np

import aclgen
from aclgen import select

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": (), "Ascend910": (),
          "Ascend310P": ()}


def check(call):
    """op_api's order: presence; dtypes listed (and one dtype, in aclgen); ranks; broadcast;
    out of the broadcast shape."""
    call.present()
    call.dtype_in("input", "values", "out")
    call.same_dtype("values", "out", ref="input")
    call.max_rank("input", "values")
    call.out_shape(call.broadcast())


def heaviside_reference(x, values):
    with np.errstate(invalid="ignore"):
        return np.where(x == 0, values, np.where(x > 0, 1.0, 0.0))


# the doc page's call example: input = [-1, -1, 0, 0, 0, 0, 5, 7], values = [-1, -1, 0, 1, 2, 3, 4, 5],
# FLOAT [2, 4]
EXAMPLE = aclgen.Example(
    (np.array([[-1, -1, 0, 0], [0, 0, 5, 7]], np.float32), np.array([[-1, -1, 0, 1], [2, 3, 4, 5]], np.float32)),
    tuple("0 0 0 1 2 3 1 1".split()),
)


@aclgen.operator(
    "Heaviside",
    inputs=("input", "values"),
    outputs=("out",),
    dtypes=DTYPES,
    check=check,
    reference=heaviside_reference,
    tolerance=0,
    examples=(EXAMPLE,),
)
def heaviside(x, values):
    """The Heaviside step: 0 below 0 (and for NaN), `values` at 0, 1 above 0 (broadcasting)."""
    return select(x == 0, values, select(x > 0, 1.0, 0.0))
