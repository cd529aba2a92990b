"""activation/relu: aclnnRelu(self, out) and aclnnInplaceRelu(selfRef);
aclnnAddRelu(self, other, alpha, out) and aclnnInplaceAddRelu(selfRef, other, alpha).

Formulas (doc pages' 计算公式): relu(x) = x for x > 0, else 0; AddRelu = relu(self + alpha * other).
The doc is silent on NaN. CANN's kernel computes Maxs(x, 0) on the vector unit, which returns
the non-NaN operand (0) for a NaN x, as `select(x > 0, x, 0)` does; torch.relu keeps the NaN.
Integer tensors compare and select exactly (no trip through f32 for relu).
"""

import numpy as np

import aclgen
from aclgen import select

A2 = ("float32", "float16", "int8", "int32", "int64", "bfloat16")
RELU_DTYPES = {"Ascend910B": A2, "Ascend910_93": A2, "Ascend950": A2, "Ascend910": A2[:-1], "Ascend310P": ()}


def relu_reference(x):
    return np.where(x > 0, x, 0.0)


@aclgen.operator(
    "Relu",
    inputs=("self",),
    outputs=("out",),
    dtypes=RELU_DTYPES,
    broadcast=False,
    inplace="self",
    reference=relu_reference,
    tolerance=0,
    examples=(aclgen.Example((np.array([[-1.0, 0.0], [2.5, -0.0]], np.float32),), ("0", "0", "2.5", "0")),),
)
def relu(x):
    """max(x, 0) element by element: x where x > 0, else 0 (a NaN gives 0, as CANN's kernel)."""
    return select(x > 0, x, 0)


ADD_DTYPES = {soc: ("float32", "float16", "int32", "int8", "uint8", "int64", "bfloat16")
              for soc in ("Ascend910B", "Ascend910_93", "Ascend950")}
ADD_DTYPES |= {"Ascend910": ("float32", "float16", "int32", "int8", "uint8", "int64"), "Ascend310P": ()}


def add_relu_reference(x, other, alpha):
    return relu_reference(x + np.float32(alpha) * other)


@aclgen.operator(
    "AddRelu",
    inputs=("self", "other"),
    scalars=(aclgen.Scalar("alpha", default=1.0),),
    outputs=("out",),
    dtypes=ADD_DTYPES,
    broadcast=True,
    inplace="self",
    reference=add_relu_reference,
    tolerance=1,
)
def add_relu(x, other, alpha):
    """relu(self + alpha * other), broadcasting."""
    y = x + alpha * other
    return select(y > 0, y, 0)
