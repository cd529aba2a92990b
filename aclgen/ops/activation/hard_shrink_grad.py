"""activation/hard_shrink_grad: aclnnHardshrinkBackward(gradOutput, self, lambd, gradInput).

Formula (doc page's 计算公式): gradInput = gradOutput where x > lambd or x < -lambd, else 0.

Choices the doc leaves open, and what decided them:
- lambd < 0 counts as 0 (the doc's table says so; op_api clamps it); a NaN lambd is kept.
- The compare: the kernel computes `|x| <= lambd ? 0 : grad` (arch35 hard_shrink_grad.h), so
  |x| = lambd gives 0, a NaN x passes grad through, and the 0 is a select (an infinite or NaN
  grad inside the dead zone still gives 0). The arch35 kernel compares fp16 in fp16 against
  lambd rounded to fp16; the doc's formula compares with lambd itself, which aclgen does (in
  f32) for every dtype.

Inputs broadcast. Mixed gradOutput/self dtypes promote as CANN's PromoteType does among the
listed ones (equal: that dtype; otherwise FLOAT). Checks, in op_api's order: presence
(161001); gradOutput's, self's, gradInput's dtypes listed; ranks <= 8; then the promoted dtype
against gradInput; then the broadcast and gradInput's shape (161002). CANN casts the result to
any listed gradInput dtype; aclgen requires gradInput to be of the promoted dtype. CANN also
returns before its shape checks when an input is empty; aclgen checks shapes first.
SoCs: Atlas inference products unsupported; Atlas training products FLOAT and FLOAT16.
Held to 0 ulp against the reference (a select).
"""

import numpy as np

import aclgen
from aclgen import Scalar, select

FLOAT_HALF_BF16 = ("float32", "float16", "bfloat16")
DTYPES = {"Ascend910B": FLOAT_HALF_BF16, "Ascend910_93": FLOAT_HALF_BF16, "Ascend950": FLOAT_HALF_BF16,
          "Ascend910": FLOAT_HALF_BF16[:2], "Ascend310P": ()}


def promote(g: str, x: str) -> str:
    """PromoteType among FLOAT, FLOAT16, BFLOAT16: equal dtypes keep theirs, others give FLOAT."""
    return g if g == x else "float32"


def check(call):
    """op_api's order: presence; each tensor's dtype listed; ranks <= 8; the promoted dtype
    is gradInput's; the inputs broadcast to gradInput's shape."""
    call.present()
    call.dtype_in("gradOutput", "self", "gradInput")
    call.max_rank("gradOutput", "self", "gradInput")
    call.result_dtype()
    call.out_shape(call.broadcast())


def hardshrink_backward_reference(g, x, lambd):
    lam = np.float32(lambd)
    lam = np.nan if np.isnan(lam) else max(float(lam), 0.0)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x) <= lam, 0.0, g)


@aclgen.operator(
    "HardshrinkBackward",
    inputs=("gradOutput", "self"),
    scalars=(Scalar("lambd", default=0.5),),
    outputs=("gradInput",),
    dtypes=DTYPES,
    promote=promote,
    check=check,
    reference=hardshrink_backward_reference,
    tolerance=0,
)
def hardshrink_backward(g, x, lambd):
    """The gradient of hardshrink(lambd) at `self` applied to `gradOutput` (broadcasting)."""
    lam = select(lambd < 0, 0.0, lambd)
    return select(abs(x) <= lam, 0.0, g)
