"""activation/erfinv: aclnnErfinv(self, out) and aclnnInplaceErfinv(selfRef).

Formula (doc page's 计算公式): y = erfinv(x), the y with erf(y) = x: aclgen's `erfinv` (CANN's
kernel calls the device library's erfinvf). ±1 give ±inf, |x| > 1 and NaN give NaN, ±0 give ±0
(that function's contract, as C's erfinvf). Bound: 2 ulp of the output dtype against float64
(the reference solves erf(y) = x, or erfc(y) = 1 - x for |x| >= 0.5, with math.erf/erfc).

dtypes: self FLOAT, FLOAT16, BFLOAT16 and, on Atlas A2/A3 and Ascend 950, INT8, INT32, INT64,
UINT8 (the doc's BOOL and INT16 have no aclgen kernel dtype); FLOAT and FLOAT16 on the Atlas
training series; the Atlas inference series is not supported (every call 161002). out is FLOAT,
FLOAT16 or BFLOAT16: self's dtype for a float self, FLOAT for an integer one (op_api computes
integers in FLOAT and casts the result to any float out; aclgen's out has that dtype). The
in-place API takes the float types only, as its doc says (an integer selfRef cannot hold the
result: 161002).

Checks (op_api's order), 161001 for a NULL self or out, else 161002: self's dtype in the SoC's
list; out's dtype the result's; out's shape equal to self's; at most 8 dims for self.
"""

import math

import numpy as np

import aclgen
from aclgen import erfinv as _erfinv

FLOATS = ("float32", "float16", "bfloat16")
INTS = ("int8", "int32", "int64", "uint8")
DTYPES = {"Ascend910B": (*FLOATS, *INTS), "Ascend910_93": (*FLOATS, *INTS), "Ascend950": (*FLOATS, *INTS),
          "Ascend910": FLOATS[:2], "Ascend310P": ()}


def promote(x: str) -> str:
    """A float self keeps its dtype; an integer one gives float32."""
    return x if x in FLOATS else "float32"


def check(call):
    """CANN's order: presence, self's dtype, out's dtype, the shape, the rank."""
    call.present()
    call.dtype_in("self")
    call.result_dtype()
    call.out_shape(call.same_shape("out"))
    call.max_rank("self")


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def erfinv_reference(x):
    """float64 erfinv: bisection then Newton steps on erf(y) = |x| (|x| < 0.5) or erfc(y) = 1 - |x|
    (exact in float64 for |x| >= 0.5), the sign restored; ±1 -> ±inf, |x| > 1 or NaN -> NaN."""
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    inside = a < 1.0
    t = np.where(inside, a, 0.0)
    tail = t >= 0.5
    target = np.where(tail, 1.0 - t, t)

    def miss(y):  # increasing in y
        return np.where(tail, target - _erfc(y), _erf(y) - target)

    lo, hi = np.zeros_like(t), np.full_like(t, 6.0)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        up = miss(mid) > 0
        hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
    y = 0.5 * (lo + hi)
    for _ in range(3):
        y = y - miss(y) / (2.0 / math.sqrt(math.pi) * np.exp(-y * y))
    y = np.where(t == 0.0, 0.0, y)
    with np.errstate(invalid="ignore"):
        y = np.where(inside, y, np.where(a == 1.0, np.inf, np.nan))
    return np.copysign(y, x)


@aclgen.operator(
    "Erfinv",
    inputs=("self",),
    outputs=("out",),
    dtypes=DTYPES,
    broadcast=False,
    inplace="self",
    promote=promote,
    check=check,
    reference=erfinv_reference,
    tolerance=2,
)
def erfinv(x):
    """The inverse error function: the y with erf(y) = x, element by element."""
    return _erfinv(x)
