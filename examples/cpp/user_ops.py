"""An operator a user declares: `aclgen sdk --prefix DIR --ops examples/cpp/user_ops.py` gives it a
header (aclnnop/aclnn_my_leaky_relu_backward.h) and its two C functions; my_leaky_relu_backward.cpp
calls them. (CANN's own aclnnLeakyReluBackward is a built-in, with its selfIsResult flag.)"""

import aclgen
from aclgen import select


@aclgen.operator(
    "MyLeakyReluBackward",
    inputs=("gradOutput", "self"),
    outputs=("gradInput",),
    scalars=("negativeSlope",),
    dtypes=("float32", "float16", "bfloat16"),
    broadcast=True,
)
def my_leaky_relu_backward(g, x, negative_slope):
    """g where x > 0, else g * negativeSlope."""
    return select(x > 0.0, g, g * negative_slope)
