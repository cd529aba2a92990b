"""An operator a user declares: `aclgen sdk --prefix DIR --ops examples/cpp/user_ops.py` gives it a
header (aclnnop/aclnn_leaky_relu_backward.h) and its two C functions; leaky_relu_backward.cpp
calls them."""

import aclgen
from aclgen import select


@aclgen.operator(
    "LeakyReluBackward",
    inputs=("gradOutput", "self"),
    outputs=("gradInput",),
    scalars=("negativeSlope",),
    dtypes=("float32", "float16", "bfloat16"),
    broadcast=True,
)
def leaky_relu_backward(g, x, negative_slope):
    """g where x > 0, else g * negativeSlope."""
    return select(x > 0.0, g, g * negative_slope)
