"""activation/threshold: aclnnThreshold(self, threshold, value, out) and aclnnInplaceThreshold.

Formula (doc page's 计算公式): out = x where x > threshold, else value.

Choices, and what decided them:
- Integer tensors: op_api converts threshold and value to self's dtype before the kernel, so
  an integer self compares with trunc(threshold) and gets trunc(value) (the `like-input`
  scalar kind: exact i64 compares, no trip through f32). A value outside an 8-bit dtype
  saturates on store here (CANN's conversion may wrap instead).
- Float tensors compare in f32 with threshold read as f32 (CANN rounds threshold to fp16/bf16
  first for those dtypes, which can move the boundary by an ulp of the dtype; aclgen keeps the
  doc's compare with threshold itself).
- NaN, which the doc's cases do not order: the kernel (threshold_v2's threshold_dag.h, the
  operator op_api launches) selects value where x <= threshold, so a NaN x stays NaN (as in
  PyTorch), and a NaN threshold leaves every x as it is.

Checks, in op_api's order: self, out, threshold, value present (161001); self's dtype listed;
out's dtype castable from self's; rank <= 8; shapes equal (161002). CANN casts the result to
out's dtype; aclgen requires out of self's dtype (161002). INT16 (listed by the doc) is not an
aclgen dtype. SoCs: Atlas inference products unsupported; Atlas training products without
BFLOAT16. Held to 0 ulp against the reference (a select).
"""

import numpy as np

import aclgen
from aclgen import Scalar, select
from aclgen.runtime.scalar import truncated

A2 = ("bfloat16", "float16", "float32", "int32", "int8", "uint8", "int64")
DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": A2[1:], "Ascend310P": ()}


def check(call):
    """op_api's order: presence (out before the scalars); self's dtype listed; out of self's
    dtype (aclgen does not cast); rank <= 8; shapes equal."""
    call.present("self", "out", "threshold", "value")
    call.dtype_in("self")
    call.same_dtype("out", ref="self")
    call.max_rank("self")
    call.out_shape(call.same_shape("out", ref="self"))


def threshold_reference(x, threshold, value):
    """Float tensors: threshold and value as f32; an integer tensor (int64 here) compares with
    trunc(threshold) and takes trunc(value), as CANN's integer kernels do."""
    t, v = np.float32(threshold), np.float32(value)
    if x.dtype.kind in "iu":
        t, v = np.float64(truncated(float(t))), np.float64(truncated(float(v)))
    with np.errstate(invalid="ignore"):
        return np.where(x <= np.float64(t), np.float64(v), x)


# the doc page's call example: self = [0, 1, 2, 3, 4.1, 5, 6, 7], threshold = 4.1, value = 10, FLOAT [8]
EXAMPLE = aclgen.Example((np.array([0, 1, 2, 3, 4.1, 5, 6, 7], np.float32), 4.1, 10.0),
                         tuple("10 10 10 10 10 5 6 7".split()))


@aclgen.operator(
    "Threshold",
    inputs=("self",),
    scalars=(Scalar("threshold", kind="like-input"), Scalar("value", kind="like-input")),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    inplace="self",
    check=check,
    reference=threshold_reference,
    tolerance=0,
    examples=(EXAMPLE,),
)
def threshold(x, threshold, value):
    """x where x > threshold, else value (integer tensors: trunc(threshold), trunc(value)); NaN
    stays NaN."""
    return select(x <= threshold, value, x)
