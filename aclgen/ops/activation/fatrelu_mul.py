"""activation/fatrelu_mul: aclnnFatreluMul(input, threshold, out).

input splits along its last dim into halves x1 | x2; out = Threshold(x1, threshold) * x2 with
Threshold(x, t) = 0 for x < t and x for x >= t (the doc page's 计算公式). The doc states the
boundary, so x1 == threshold keeps x1 (the kernel compares with GT and would give 0 there: the
doc's formula is the contract). It is silent on NaN: the kernel's compare-and-select gives 0 for
a NaN x1, as `select(x1 >= t, x1, 0)` does; the product is a multiply, so 0 * inf is NaN and
0 * (negative) is -0, as the kernel's Mul gives. threshold is a tensor of one element, in
input's dtype (the doc asks for a finite one; NaN or inf are computed as they come).

Checks: no op_api source (the API is generated from the op definition). Its door checks
input, threshold, out nullptr (161001); input's dtype in the list (161002), threshold's and out's
equal to it (the definition's dtype columns, 161002); formats in {ND, NCHW, NHWC, NCDHW, NCL};
input at most 8 dims; out of input's shape with the last dim halved (the inferred shape, 161002).
The tiling then refuses (561002, ACLNN_ERR_INNER_TILING_ERROR, as SwiGluGrad's tiling
failures): input of fewer than 2 dims, a last dim that is odd or above 1024, more than 200000
rows (the product of the other dims), a threshold of more than one element. An empty input
returns success before tiling (the doc: 支持空Tensor). A threshold of more dims than input is
refused (161002): aclgen broadcasts it, and a broadcast cannot drop dims.

dtypes: BFLOAT16, FLOAT16, FLOAT on Atlas A2/A3 only (Ascend950 and the others: 不支持).
Correctly rounded: one select and one f32 multiply (exact for half inputs, rounded once into the
output dtype), held to 0.5 ulp of the float64 reference (below).
"""

import math

import numpy as np

import aclgen
from aclgen import Split, select
from aclgen.ops.activation.swi_glu_grad import FORMATS
from aclgen.runtime import constants as C
from aclgen.runtime.tensor import fmt_dims

A2 = ("bfloat16", "float16", "float32")
MAX_LAST = 1024
MAX_ROWS = 200000
TILING = C.ACLNN_ERR_INNER_TILING_ERROR


def check(call):
    """The generated door's order, then the tiling's (see the module docstring)."""
    call.present()
    call.dtype_in("input")
    call.same_dtype("threshold", "out", ref="input")
    call.format_in(FORMATS)
    call.max_rank("input", "out")
    x = call.tensor("input").view_dims
    want = (*x[:-1], x[-1] // 2) if x else ()
    out = call.tensor("out").view_dims
    if out != want:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"out shape {fmt_dims(out)} must equal input shape with the "
                                                    f"last dim halved {fmt_dims(want)}")
    thr = call.tensor("threshold").view_dims
    if len(thr) > len(x):
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"threshold has {len(thr)} dims, more than input's {len(x)}")
    if math.prod(x):
        tiling(call, x, thr)
    call.shape = call.split_shape() if x else ()


def tiling(call, x, thr) -> None:
    """What FatreluMul's tiling refuses (561002); geluMul's tiling refuses the same shapes."""
    if len(x) < 2:
        raise call.error(TILING, f"input has {len(x)} dims, at least 2 are needed")
    if x[-1] % 2 or x[-1] > MAX_LAST:
        raise call.error(TILING, f"input's last dim {x[-1]} must be even and at most {MAX_LAST}")
    rows = math.prod(x[:-1])
    if rows > MAX_ROWS:
        raise call.error(TILING, f"input has {rows} rows (the product of all dims but the last), at most "
                                 f"{MAX_ROWS} are supported")
    if thr is not None and math.prod(thr) != 1:
        raise call.error(TILING, f"threshold shape {fmt_dims(thr)} must hold one element")


def result(ins, attrs):
    """out: input's shape with the last dim halved, input's dtype."""
    x = ins[0]
    if x is None or not x.view_dims:
        return [((), x.dtype if x is not None else C.ACL_FLOAT)]
    return [((*x.view_dims[:-1], x.view_dims[-1] // 2), x.dtype)]


def doubled(shape) -> tuple[int, ...]:
    """An input whose halves make outputs of `shape`, within the tiling's limits (ValueError
    beyond them; geluMul shares them)."""
    if len(shape) < 1 or 2 * shape[-1] > MAX_LAST or math.prod(shape[:-1]) > MAX_ROWS:
        raise ValueError(f"outputs of shape {fmt_dims(shape)} need an input beyond the tiling's limits (at least "
                         f"1 dim, a last dim of at most {MAX_LAST // 2}, at most {MAX_ROWS} rows)")
    return (*shape[:-1], 2 * shape[-1])


def input_shapes(shape):
    """input of `shape` with its last dim doubled; a one-element threshold."""
    return [doubled(shape), (1,)]


def fatrelu_mul_reference(x, threshold):
    x1, x2 = np.split(x, 2, axis=-1)
    return np.where(x1 >= threshold.reshape(()), x1, 0.0) * x2


@aclgen.operator(
    "FatreluMul",
    inputs=("input", "threshold"),
    outputs=("out",),
    dtypes={"Ascend910B": A2, "Ascend910_93": A2},
    broadcast=True,
    check=check,
    split=Split("input", dim=-1, into=("x1", "x2"), status=TILING),
    result=result,
    input_shapes=input_shapes,
    reference=fatrelu_mul_reference,
    tolerance=0.5,
)
def fatrelu_mul(x1, x2, threshold):
    """The first half of `input`'s last dim where it is >= `threshold` (else 0), times the second half."""
    return select(x1 >= threshold, x1, 0.0) * x2
