"""The element types kernels compute in, joining numpy and xDSL.

Every layer speaks in `DType` objects: the frontend types traced values with them, the passes
map them to xDSL types, and the runtime's record of each CANN aclDataType
(aclgen.runtime.constants.DATA_TYPES) names the DType kernels compute it in.

xDSL is imported only when an IR type is first asked for (`DType.ir_type`, `from_ir`, ...): a
process that finds its kernels in the compile cache never loads the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np

if TYPE_CHECKING:
    from xdsl.ir import Attribute


@dataclass(frozen=True)
class DType:
    name: str  # numpy-style name: "float32", "bfloat16", ...
    short: str  # used in kernel names: "f32", "bf16", ...
    np_dtype: np.dtype
    kind: str  # "float", "int" or "uint"

    @property
    def ir_type(self) -> Attribute:
        """The xDSL element type of a buffer of this dtype."""
        return _ir_types()[self.name]

    @property
    def itemsize(self) -> int:
        return self.np_dtype.itemsize

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"DType({self.name})"


float32 = DType("float32", "f32", np.dtype(np.float32), "float")
float16 = DType("float16", "f16", np.dtype(np.float16), "float")
bfloat16 = DType("bfloat16", "bf16", np.dtype(ml_dtypes.bfloat16), "float")
int8 = DType("int8", "i8", np.dtype(np.int8), "int")
int32 = DType("int32", "i32", np.dtype(np.int32), "int")
int64 = DType("int64", "i64", np.dtype(np.int64), "int")
uint8 = DType("uint8", "u8", np.dtype(np.uint8), "uint")

ALL: tuple[DType, ...] = (float32, float16, bfloat16, int8, int32, int64, uint8)
HALF: tuple[DType, ...] = (float16, bfloat16)  # computed in f32 and rounded once
_BY_NAME = {d.name: d for d in ALL} | {d.short: d for d in ALL}
_IR: dict | None = None


def _ir_types() -> dict:
    global _IR
    if _IR is None:
        from xdsl.dialects.builtin import IntegerType, Signedness, bf16, f16, f32, i8, i32, i64

        ui8 = IntegerType(8, Signedness.UNSIGNED)
        _IR = {"float32": f32, "float16": f16, "bfloat16": bf16, "int8": i8, "int32": i32, "int64": i64, "uint8": ui8}
    return _IR


def __getattr__(name: str):
    if name == "ui8":  # the unsigned 8-bit IR type, made on first use like every IR type here
        return _ir_types()["uint8"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def dtype(x: DType | str | np.dtype | type) -> DType:
    """Normalize a dtype given as a DType, a name ("float16", "f16") or a numpy dtype."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str) and x in _BY_NAME:
        return _BY_NAME[x]
    try:
        npd = np.dtype(x)
    except TypeError:
        raise ValueError(f"unknown dtype {x!r}") from None
    for d in ALL:
        if d.np_dtype == npd:
            return d
    raise ValueError(f"unsupported dtype {npd}; aclgen supports {', '.join(d.name for d in ALL)}")


def from_ir(t: Attribute) -> DType:
    """The DType whose buffers hold elements of IR type `t`."""
    for name, ir in _ir_types().items():
        if ir == t:
            return _BY_NAME[name]
    raise ValueError(f"no dtype for IR type {t}")


def is_float_type(t: Attribute) -> bool:
    from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type

    return isinstance(t, (Float32Type, Float16Type, BFloat16Type))


def is_int_type(t: Attribute) -> bool:
    from xdsl.dialects.builtin import IntegerType

    return isinstance(t, IntegerType) and t.width.data > 1


def is_unsigned(t: Attribute) -> bool:
    from xdsl.dialects.builtin import IntegerType, Signedness

    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED
