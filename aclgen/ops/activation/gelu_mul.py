"""activation/gelu_mul: aclnnGeluMul(input, approximateOptional, out).

input splits along its last dim into halves x1 | x2; out = Gelu(x1) * x2 (the doc page's
计算公式), Gelu by `approximateOptional`: "tanh", 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))), or
"none" (NULL means "none"), 0.5 x (1 + erf(x/√2)). The forms are gelu.py's (x * sigmoid(z) and
x * Φ(x) with Φ from erfc: no cancellation for x < 0, where 1 + tanh and 1 + erf cancel), and the
product with x2 is ge_glu_v2.py's (kept where sigmoid(z) is subnormal or x1 * x2 overflows).
x1 = -inf gives NaN (-inf * 0, as the formula and the kernel).

Checks: no op_api source (the API is generated from the op definition). Its door checks input
and out nullptr (161001; approximateOptional may be NULL); approximateOptional a string if given;
input's dtype in the list and out's equal to it; formats in {ND, NCHW, NHWC, NCDHW, NCL}; at most
8 dims; out of input's shape with the last dim halved (the inferred shape) (161002 each). The
tiling then refuses (561002): approximateOptional other than "none" or "tanh"; input of fewer
than 2 dims; a last dim that is odd or above 1024; more than 200000 rows (the product of the
other dims), as FatreluMul's. An empty input returns success before tiling (the doc: 支持空Tensor).

dtypes: BFLOAT16, FLOAT16, FLOAT on Atlas A2/A3 and Ascend950; not on the Atlas training and
inference series.

Bound: 256 ulp of the output dtype (gelu.py's: the f32 z and x/√2 carry rounding that e^z and
erfc amplify in the left tail), at the reference's scale: where Φ(x1) is subnormal the product
keeps only its bits, a few 2^-149 * |x1 * x2|.
"""

import math

import numpy as np

import aclgen
from aclgen import Attr, Split
from aclgen.ops.activation.fatrelu_mul import TILING, doubled, tiling
from aclgen.ops.activation.ge_glu_v2 import TANH, gelu_and_product, gelu_reference
from aclgen.ops.activation.swi_glu_grad import FORMATS
from aclgen.runtime import constants as C
from aclgen.runtime.tensor import fmt_dims

A2 = ("bfloat16", "float16", "float32")
CHOICES = ("none", "tanh")
APPROXIMATE = "approximateOptional"


def check(call):
    """The generated door's order, then the tiling's (see the module docstring)."""
    call.present("input", "out")
    given = call.values[APPROXIMATE]
    if given is not None and not isinstance(given, str):
        call.attr(APPROXIMATE)  # 161002, naming the kind it must have
    call.dtype_in("input")
    call.same_dtype("out", ref="input")
    call.format_in(FORMATS)
    call.max_rank("input", "out")
    x = call.tensor("input").view_dims
    want = (*x[:-1], x[-1] // 2) if x else ()
    out = call.tensor("out").view_dims
    if out != want:
        raise call.error(C.ACLNN_ERR_PARAM_INVALID, f"out shape {fmt_dims(out)} must equal input shape with the "
                                                    f"last dim halved {fmt_dims(want)}")
    mode = "none" if given is None else given
    if math.prod(x):
        if mode not in CHOICES:
            raise call.error(TILING, f"{APPROXIMATE} must be 'none' or 'tanh', got {mode!r}")
        tiling(call, x, None)
    call.attrs[APPROXIMATE] = mode if mode in CHOICES else "none"
    call.shape = call.split_shape() if x else ()


def result(ins, attrs):
    """out: input's shape with the last dim halved, input's dtype."""
    x = ins[0]
    if x is None or not x.view_dims:
        return [((), x.dtype if x is not None else C.ACL_FLOAT)]
    return [((*x.view_dims[:-1], x.view_dims[-1] // 2), x.dtype)]


def input_shapes(shape):
    """input of `shape` with its last dim doubled (within the tiling's limits)."""
    return [doubled(shape)]


def _mode(approximate) -> int:
    return TANH if approximate == "tanh" else 0


def gelu_mul_reference(x, approximate="none"):
    x1, x2 = np.split(x, 2, axis=-1)
    return gelu_reference(x1, _mode(approximate)) * x2


def _scale(x, approximate="none"):
    """Its size, and at least 2^-126 * |x1 * x2| (a subnormal Φ(x1) keeps only its bits)."""
    x1, x2 = np.split(x, 2, axis=-1)
    with np.errstate(all="ignore"):
        s = np.abs(gelu_mul_reference(x, approximate)) + float(np.finfo(np.float32).tiny) * np.abs(x1 * x2)
    return np.nan_to_num(s, nan=0.0, posinf=np.inf)


gelu_mul_reference.scale = _scale  # type: ignore[attr-defined]


@aclgen.operator(
    "GeluMul",
    inputs=("input",),
    attrs=(Attr(APPROXIMATE, "str", default="none", choices=CHOICES),),
    outputs=("out",),
    dtypes={"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": (), "Ascend310P": ()},
    broadcast=False,
    check=check,
    split=Split("input", dim=-1, into=("x1", "x2"), status=TILING),
    result=result,
    input_shapes=input_shapes,
    reference=gelu_mul_reference,
    tolerance=256,
    half_forms="terms",
)
def gelu_mul(x1, x2, approximate):
    """Gelu of the first half of `input`'s last dim ("none": erf, "tanh") times the second half."""
    out, _ = gelu_and_product(x2, x1, _mode(approximate))
    return out
