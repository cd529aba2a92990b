"""activation/elu_grad_v2: aclnnEluBackward(gradOutput, alpha, scale, inputScale, isResult,
selfOrResult, gradInput).

Formula (doc page's 计算公式), x an element of selfOrResult:
- isResult true (x is ELU's output): gradInput = gradOutput * scale for x > 0, gradOutput *
  inputScale * (x + alpha * scale) for x <= 0;
- isResult false (x is ELU's input): gradInput = gradOutput * scale for x > 0, gradOutput *
  inputScale * alpha * scale * exp(x * inputScale) for x <= 0.

Choices, and what decided them: the kernel (arch35 elu_grad_v2_dag.h) selects on x <= 0, so a
NaN x takes the x > 0 branch, gradOutput * scale (the doc's branches do not name NaN). Its f32
order: alpha * scale once (the tiling's negcoef), then (gradOutput * inputScale) * (x + negcoef)
or ((gradOutput * inputScale) * negcoef) * exp(x * inputScale); rounded once to fp16/bf16.
aclgen keeps that order with two guards: exp(z) below e^-64 is carried as exp(z + 64) times
f32(e^-64), applied last, so a large gradOutput times a subnormal exp keeps its bits; where
(gradOutput * inputScale) * negcoef overflows, exp's factor is applied before negcoef.
Products, not selects: an infinite gradOutput times a zero factor is NaN.

C order: the scalars and the bool come before selfOrResult (order=). Checks, in op_api's
order: the six arguments present (161001); gradOutput of selfOrResult's dtype; gradOutput's
dtype listed; alpha's, scale's, inputScale's dtypes castable to FLOAT (every aclScalar dtype
is); gradInput's dtype castable from gradOutput's; selfOrResult and gradInput of gradOutput's
shape; rank <= 8; isResult with alpha < 0 (161002). CANN casts the result to gradInput's dtype;
aclgen requires gradInput of gradOutput's dtype (161002). SoCs: Atlas training and inference
products take FLOAT and FLOAT16.
Held to 4 ulp (measured 2.8 in f32) against a float64 reference from f32(x * inputScale) and
f32(alpha * scale) (exp <= 1 ulp, f32(e^-64), then up to four f32 multiplies), where
exp(x * inputScale) does not overflow.
"""

import numpy as np

import aclgen
from aclgen import Attr, Scalar, exp, f32, select, unlikely
from aclgen.runtime import constants as C

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
BIG = 64.0  # exp(z) for z < -BIG is exp(z + BIG) * f32(e^-BIG): z + BIG is exact there
E_MINUS_BIG = f32(np.exp(-BIG))
INF = float("inf")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": FLOAT_HALF_BF16[:2]}


def scaled_exp(z):
    """exp(z) as t * k with t normal down to z = -151: k = 1, or k = f32(e^-64) and t = exp(z + 64)
    for z < -64 (z + 64 is exact there), so a product taking t first and k last keeps the bits
    exp(z) itself would lose below FLT_MIN."""
    big = unlikely(z < -BIG)
    return exp(select(big, z + BIG, z)), select(big, E_MINUS_BIG, 1.0)


def check(call):
    """op_api's order: presence; one dtype, listed; shapes; rank <= 8; isResult needs alpha >= 0."""
    call.present("gradOutput", "alpha", "scale", "inputScale", "selfOrResult", "gradInput")
    call.same_dtype("selfOrResult", ref="gradOutput")
    call.dtype_in("gradOutput")
    call.same_dtype("gradInput", ref="gradOutput")
    shape = call.same_shape("selfOrResult", ref="gradOutput")
    call.same_shape("gradInput", ref="gradOutput")
    call.max_rank("gradOutput")
    alpha = call.scalar("alpha").f32
    if call.attr("isResult") and alpha < 0:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"alpha must be >= 0 when isResult is true (the forward ran "
                                                    f"in place), got {alpha!r}")
    call.out_shape(shape)


def elu_backward_reference(g, x, alpha, scale, input_scale, is_result):
    a, s, k = (np.float64(np.float32(v)) for v in (alpha, scale, input_scale))
    with np.errstate(all="ignore"):
        z = (x.astype(np.float32) * np.float32(k)).astype(np.float64)  # the formula's f32 product
        negcoef = np.float64(np.float32(a * s))  # alpha * scale, rounded to f32 once as the kernel does
        negative = g * k * (x + negcoef) if is_result else g * k * negcoef * np.exp(z)
        return np.where(x <= 0, negative, g * s)


# the doc page's call example: gradOutput = selfOrResult = [-2, -1, 0, 1], alpha = scale =
# inputScale = 1, isResult = false, FLOAT [2, 2]
EXAMPLE = aclgen.Example(
    (np.array([[-2, -1], [0, 1]], np.float32), np.array([[-2, -1], [0, 1]], np.float32), 1.0, 1.0, 1.0, False),
    tuple("-0.27067056 -0.36787945 0 1".split()),
)


@aclgen.operator(
    "EluBackward",
    inputs=("gradOutput", "selfOrResult"),
    scalars=(Scalar("alpha", default=1.0), Scalar("scale", default=1.0), Scalar("inputScale", default=1.0)),
    attrs=(Attr("isResult", "bool", default=False),),
    outputs=("gradInput",),
    order=("gradOutput", "alpha", "scale", "inputScale", "isResult", "selfOrResult", "gradInput"),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    reference=elu_backward_reference,
    tolerance=4,
    examples=(EXAMPLE,),
)
def elu_backward(g, x, alpha, scale, input_scale, is_result):
    """The gradient of ELU applied to `gradOutput`, given ELU's input (isResult false) or its
    output (isResult true) in `selfOrResult`."""
    negcoef = alpha * scale
    gk = g * input_scale
    if is_result:
        negative = gk * (x + negcoef)
    else:
        t, k = scaled_exp(x * input_scale)
        a = gk * negcoef
        negative = select(abs(a) < INF, a * t * k, gk * t * negcoef * k)
    return select(x <= 0.0, negative, g * scale)
