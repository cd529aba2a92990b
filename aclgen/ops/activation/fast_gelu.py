"""activation/fast_gelu: aclnnFastGelu(self, out).

Formula (doc page's 计算公式): out = x / (1 + e^(-1.702 x)), computed as x * σ(z) with
z = f32(1.702) * x rounded to f32, as CANN's kernel does (Muls by the f32 constant, then exp).
σ(z) below e^-80 is carried scaled (sigmoid.times_sigmoid), so a result below FLT_MIN is
rounded once. x = -inf gives NaN and +inf gives +inf (x / (1 + e^-z) in the kernel
gives the same), NaN propagates.

Bound: 128 ulp of the output dtype against the float64 formula; 3 ulp for |z| < 2. The f32 z
is off the exact 1.702 x by up to 2^-24 relative (and f32(1.702) by 1.3e-8), which e^z turns
into about |z| * 2^-24 relative for z < 0: up to ~90 ulp near z = -87, below which the result
is subnormal. A compensated product would cost as much as the rest of the kernel.

dtypes: FLOAT16, FLOAT32, BFLOAT16 on Atlas A2/A3 and Ascend 950; the Atlas training and
inference series are not supported (every call 161002).

Checks (op_api's order), 161001 for a NULL self or out, else 161002: out's dtype equal to
self's; self's dtype in the SoC's list; out's shape equal to self's; at most 8 dims; out's
format equal to self's.
"""

import numpy as np

import aclgen
from aclgen import f32
from aclgen.ops.activation.sigmoid import times_sigmoid

FLOATS = ("float16", "float32", "bfloat16")
DTYPES = {"Ascend910B": FLOATS, "Ascend910_93": FLOATS, "Ascend950": FLOATS, "Ascend910": (), "Ascend310P": ()}
ALPHA = f32(1.702)


def check(call):
    """CANN's order: presence, one dtype, the dtype list, the shape, the rank, the format."""
    call.present()
    call.same_dtype("out")
    call.dtype_in("self")
    call.shape = call.same_shape("out")
    call.max_rank("self")
    call.same_format("out")
    call.out_shape(call.shape)


def fast_gelu_reference(x):
    z = 1.702 * x
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-z))


@aclgen.operator(
    "FastGelu",
    inputs=("self",),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    check=check,
    reference=fast_gelu_reference,
    tolerance=128,
    backward="FastGeluBackward",
)
def fast_gelu(x):
    """x / (1 + e^(-1.702 x)), element by element."""
    return times_sigmoid(x, ALPHA * x)
