"""activation/log_sigmoid: aclnnLogSigmoid(self, out) and aclnnLogSigmoidForward(self, out, buffer).

Formula (doc pages' 计算公式): out = log(1 / (1 + e^-x)), computed as CANN's kernel does without
overflow: min(x, 0) - log1p(e^-|x|). x = -inf gives -inf, +inf gives 0, NaN propagates (min and
log1p keep it). Bound: 2 ulp of the output dtype against float64.

aclnnLogSigmoidForward's `buffer` is, as its doc says, for an intermediate result and "unused for
now": op_api neither checks nor writes it, and aclnnLogSigmoidBackward ignores it. Here a buffer
of out's shape and dtype receives e^-|x|, the intermediate CANN's kernel forms (and torch's CPU
kernel keeps as its buffer); any other buffer, or NULL, is accepted and left as it is (the check
drops it from the call, aclgen's way of leaving an optional output out), as CANN leaves every
buffer. The Python call allocates it like out.

dtypes: FLOAT, FLOAT16, BFLOAT16 on Atlas A2/A3 and Ascend 950; FLOAT and FLOAT16 on the Atlas
training series; the Atlas inference series: not supported by aclnnLogSigmoid (every call 161002),
FLOAT16 and FLOAT for aclnnLogSigmoidForward (each doc page's table). out has self's dtype and
shape; op_api has no dims limit (it flattens more than 8 dims).

Checks (op_api's order), 161001 for a NULL self or out, else 161002: self's dtype, then out's, in
the SoC's list; out's dtype equal to self's; out's shape equal to self's.

aclnnBinaryCrossEntropyWithLogitsTargetBackward, the folder's third doc page, is not provided: the
page states no formula (it points to the BCELoss page of loss/), and its reduction = 1 (mean)
divides by the element count of target, a property of the call's shape that an aclgen formula
cannot name.
"""

import numpy as np

import aclgen
from aclgen import Tensor, exp, log1p, minimum

FLOATS = ("float32", "float16", "bfloat16")
LOG_SIGMOID_DTYPES = {"Ascend910B": FLOATS, "Ascend910_93": FLOATS, "Ascend950": FLOATS,
                      "Ascend910": FLOATS[:2], "Ascend310P": ()}
FORWARD_DTYPES = {**LOG_SIGMOID_DTYPES, "Ascend310P": FLOATS[:2]}


def check(call):
    """CANN's order: presence, dtypes, one dtype, the shape (no dims limit)."""
    call.present("self", "out")
    call.dtype_in("self", "out")
    call.same_dtype("out")
    call.out_shape(call.same_shape("out"))


def forward_check(call):
    """aclnnLogSigmoid's checks; a `buffer` not of self's shape and dtype (or NULL) is left out
    of the call first: nothing looks at it or writes to it."""
    call.present("self", "out")
    if call.values["buffer"] is not None:
        buffer, x = call.tensor("buffer"), call.tensor("self")  # a live aclTensor, if given
        if buffer.view_dims != x.view_dims or buffer.dtype != x.dtype:
            call.values["buffer"] = None
    check(call)


def log_sigmoid_reference(x):
    return -np.logaddexp(0.0, -x)


def log_sigmoid_forward_reference(x):
    return log_sigmoid_reference(x), np.exp(-np.abs(x))


def _log_sigmoid(x):
    return minimum(x, 0.0) - log1p(exp(-abs(x)))


@aclgen.operator(
    "LogSigmoid",
    inputs=("self",),
    outputs=("out",),
    dtypes=LOG_SIGMOID_DTYPES,
    broadcast=False,
    max_rank=None,
    check=check,
    reference=log_sigmoid_reference,
    tolerance=2,
)
def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), element by element."""
    return _log_sigmoid(x)


@aclgen.operator(
    "LogSigmoidForward",
    inputs=("self",),
    outputs=("out", Tensor("buffer", optional=True)),
    dtypes=FORWARD_DTYPES,
    broadcast=False,
    max_rank=None,
    check=forward_check,
    reference=log_sigmoid_forward_reference,
    tolerance=2,
)
def log_sigmoid_forward(x):
    """log(sigmoid(x)) into `out`, and e^-|x| into `buffer` when it has out's shape and dtype."""
    e = exp(-abs(x))
    return minimum(x, 0.0) - log1p(e), e
