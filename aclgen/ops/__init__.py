"""The operator library: one file per operator (its formula and its binding)."""

from aclgen.ops.hardswish_backward import OP as HARDSWISH_BACKWARD
from aclgen.ops.hardswish_backward import hardswish_backward
from aclgen.ops.selu_backward import OP as SELU_BACKWARD
from aclgen.ops.selu_backward import selu_backward
from aclgen.ops.softshrink_backward import OP as SOFTSHRINK_BACKWARD
from aclgen.ops.softshrink_backward import softshrink_backward
from aclgen.ops.swi_glu_grad import OP as SWI_GLU_GRAD
from aclgen.ops.swi_glu_grad import swi_glu_grad
from aclgen.ops.threshold_backward import OP as THRESHOLD_BACKWARD
from aclgen.ops.threshold_backward import threshold_backward

OPERATORS = {
    op.name: op
    for op in (HARDSWISH_BACKWARD, SELU_BACKWARD, SOFTSHRINK_BACKWARD, SWI_GLU_GRAD, THRESHOLD_BACKWARD)
}

__all__ = [
    "OPERATORS",
    "hardswish_backward",
    "selu_backward",
    "softshrink_backward",
    "swi_glu_grad",
    "threshold_backward",
]
