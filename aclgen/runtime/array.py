"""aclIntArray, aclFloatArray and aclBoolArray: CANN's array arguments (an attribute such as
LayerNorm's normalizedShape), values copied at creation as C does.

    a = create(ARRAY_INT, [1, 2])      # aclCreateIntArray: int64 values
    f = create(ARRAY_FLOAT, [0.5])     # aclCreateFloatArray: C floats (rounded to f32)
    b = create(ARRAY_BOOL, [True])     # aclCreateBoolArray
"""

from __future__ import annotations

import numpy as np

from aclgen.runtime import constants as C
from aclgen.runtime.errors import AclError
from aclgen.runtime.tensor import next_serial

ARRAY_INT, ARRAY_FLOAT, ARRAY_BOOL = "aclIntArray", "aclFloatArray", "aclBoolArray"


class AclArray:
    __slots__ = ("destroyed", "kind", "serial", "values")
    block = None  # no runtime memory (the planner's memo treats it like a scalar)

    def __init__(self, kind: str, values: tuple):
        self.kind = kind
        self.values = values
        self.destroyed = False
        self.serial = next_serial()

    def __repr__(self) -> str:
        return f"{self.kind}({list(self.values)})"


def create(kind: str, values) -> AclArray:
    """aclCreate{Int,Float,Bool}Array: the values copied, as int64, f32 or bool."""
    try:
        items = list(values)
    except TypeError:
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"create {kind}: values must be a sequence, got {values!r}") from None
    try:
        if kind == ARRAY_INT:
            if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in items):
                raise TypeError
            return AclArray(kind, tuple(int(np.int64(v)) for v in items))
        if kind == ARRAY_FLOAT:
            if not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in items):
                raise TypeError
            return AclArray(kind, tuple(float(np.float32(v)) for v in items))
        if kind == ARRAY_BOOL:
            if not all(isinstance(v, (bool, np.bool_)) for v in items):
                raise TypeError
            return AclArray(kind, tuple(bool(v) for v in items))
    except (TypeError, OverflowError):
        want = {ARRAY_INT: "int64 values", ARRAY_FLOAT: "float values", ARRAY_BOOL: "bool values"}[kind]
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"create {kind}: {want} expected, got {items!r}") from None
    raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"unknown array kind {kind!r}")


def destroy(a) -> int:
    """aclDestroy{Int,Float,Bool}Array: None is fine (0); anything else than an array is 161002."""
    if a is None:
        return C.ACLNN_SUCCESS
    if not isinstance(a, AclArray) or a.destroyed:
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"destroy: {a!r} is not a live aclIntArray/aclFloatArray/aclBoolArray")
    a.destroyed = True
    return C.ACLNN_SUCCESS
