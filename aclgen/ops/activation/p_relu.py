"""activation/p_relu: aclnnPrelu(self, weight, out).

out = max(0, x) + w * min(0, x) (the doc page's 计算公式), w the weight of x's channel: weight
holds one value, or one per channel, channels being self's dim 1 (1 for a self of fewer than 2
dims). The doc is silent on NaN and -0: the kernel (op_kernel/arch35/p_relu_dag.h) selects x
where x > 0 and x * w elsewhere, so a NaN x gives NaN and -0 gives -0 * w, as here.

Checks, in op_api's order (aclnn_prelu.cpp): self, weight, out nullptr (161001); self's, weight's
and out's dtypes each in the SoC's list; self's and weight's promote (every pair of listed
floats does: FLOAT16 with BFLOAT16 gives FLOAT) and out's dtype is castable from that (any listed
float is; the result is computed in f32 and rounded once into out's dtype); self, weight, out at
most 8 dims; out of self's shape and format (the doc's table names the format; op_api compares
the shapes only); weight of one element or of `channels` (161002 each). Then an empty self or
weight returns at once.

aclgen takes the weight as a vector along dim 1 (`Tensor("weight", along=1)`): a weight of 0 or
1 dims. CANN also takes a weight of more dims holding the same count (it reshapes it); aclgen
refuses that with 161002. A self of 0 or 1 dims (channels = 1) runs over a [1, n] space, so
that the one-element weight has a dim 1 to lie along.

dtypes: FLOAT, FLOAT16, BFLOAT16 on Atlas A2/A3 and Ascend950; FLOAT, FLOAT16 on Ascend910 and
Ascend310P. Correctly rounded (one compare, one multiply): held to 0.5 ulp of the float64
reference (below); torch.nn.functional.prelu is the second oracle.
"""

import math

import numpy as np

import aclgen
from aclgen import Tensor, select
from aclgen.runtime import constants as C
from aclgen.runtime.tensor import fmt_dims

A2 = ("float32", "float16", "bfloat16")
INVALID = C.ACLNN_ERR_PARAM_INVALID


def promote(x: str, w: str) -> str:
    """CANN's promotion of two float dtypes: equal ones stay, others give float32."""
    return x if x == w else "float32"


def check(call):
    """op_api's order (see the module docstring)."""
    call.present()
    call.dtype_in("self", "weight", "out")
    call.max_rank("self", "weight", "out")
    x = call.same_shape("out", ref="self")
    call.same_format("out", ref="self")
    w = call.tensor("weight").view_dims
    channels = x[1] if len(x) > 1 else 1
    if math.prod(w) not in (1, channels):
        raise call.error(INVALID, f"weight shape {fmt_dims(w)} must hold one element or one per channel "
                                  f"({channels}, self's dim 1)")
    if len(w) > 1:
        raise call.error(INVALID, f"weight shape {fmt_dims(w)}: aclgen takes a weight of 0 or 1 dims (one value, or "
                                  f"one per channel)")
    call.shape = x if len(x) > 1 else (1, math.prod(x))


def result(ins, attrs):
    """out: self's shape, the promoted dtype."""
    x, w = ins
    if x is None:
        return [((), C.ACL_FLOAT)]
    kx, kw = C.kernel_dtype(x.dtype), C.kernel_dtype(w.dtype) if w is not None else None
    if kx is None or kw is None:
        return [(x.view_dims, x.dtype)]
    return [(x.view_dims, C.code_of(promote(kx.name, kw.name)))]


def prelu_reference(x, w):
    if x.ndim > 1 and w.size > 1:
        w = w.reshape([1, -1] + [1] * (x.ndim - 2))
    else:
        w = w.reshape(())
    return np.where(x > 0, x, x * w)


@aclgen.operator(
    "Prelu",
    inputs=("self", Tensor("weight", along=1)),
    outputs=("out",),
    dtypes={"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": A2[:2], "Ascend310P": A2[:2]},
    check=check,
    promote=promote,
    result=result,
    reference=prelu_reference,
    tolerance=0.5,
)
def prelu(x, w):
    """PReLU: x where x > 0, else x times the weight of x's channel (dim 1)."""
    return select(x > 0.0, x, x * w)
