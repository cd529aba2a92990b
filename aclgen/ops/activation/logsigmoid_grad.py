"""activation/logsigmoid_grad: aclnnLogSigmoidBackward(gradOutput, self, buffer, gradInput).

Formula (doc page's 计算公式): gradInput = gradOutput / (1 + e^x) = gradOutput * σ(-x). CANN's kernel
forms it from e = e^-|x| as (x < 0 ? 1 : e) / (1 + e) * g; here it is g / (1 + e^x) from one
exp, with a σ(-x) below e^-80 carried scaled so that a large gradient keeps its bits
(sigmoid.times_sigmoid). x = +inf gives g * 0, x = -inf gives g, NaN propagates.
Bound: 4 ulp of the output dtype against float64.

`buffer` (the forward's intermediate result) is unused, as the doc says; it must still be given.

dtypes: FLOAT, FLOAT16, BFLOAT16; FLOAT and FLOAT16 on the Atlas training and inference series
(the doc's note). The four tensors share one dtype and one shape; op_api has no dims limit.

Checks (op_api's order), 161001 for a NULL tensor, else 161002: gradOutput's dtype, then self's,
in the SoC's list; gradInput's dtype equal to gradOutput's and self's; gradOutput's and self's
shapes equal to gradInput's. op_api does not look at buffer past its presence; the doc's table
names it with the others, so its dtype and shape are checked last, the same way.
"""

import numpy as np

import aclgen
from aclgen.ops.activation.sigmoid import times_sigmoid

FLOATS = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOATS, "Ascend910_93": FLOATS, "Ascend950": FLOATS,
          "Ascend910": FLOATS[:2], "Ascend310P": FLOATS[:2]}


def check(call):
    """CANN's order (presence, input dtypes, the output's dtype, shapes), then buffer's dtype
    and shape as the doc's table asks."""
    call.present("gradOutput", "self", "buffer", "gradInput")
    call.dtype_in("gradOutput", "self")
    call.same_dtype("gradInput", ref="gradOutput")
    call.same_dtype("gradInput", ref="self")
    call.same_shape("gradOutput", "self", ref="gradInput")
    call.dtype_in("buffer")
    call.same_dtype("buffer", ref="gradInput")
    call.same_shape("buffer", ref="gradInput")
    call.out_shape(call.tensor("gradInput").view_dims)


def log_sigmoid_backward_reference(g, x, buffer=None):
    with np.errstate(over="ignore"):
        return g / (1.0 + np.exp(x))


@aclgen.operator(
    "LogSigmoidBackward",
    inputs=("gradOutput", "self", "buffer"),
    outputs=("gradInput",),
    dtypes=DTYPES,
    broadcast=False,
    max_rank=None,
    check=check,
    reference=log_sigmoid_backward_reference,
    tolerance=4,
)
def log_sigmoid_backward(g, x, buffer):
    """The gradient of log_sigmoid at `self` applied to `gradOutput` (`buffer` is not used)."""
    return times_sigmoid(g, -x)
