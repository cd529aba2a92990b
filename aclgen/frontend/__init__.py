"""The formula DSL: plain Python functions over symbolic elements, traced into `ew`.

The DSL names come from the light `dsl` module; `trace` and `Value` (which need xDSL) load the
tracer on first access.
"""

from typing import TYPE_CHECKING

from aclgen.frontend.dsl import (
    FormulaError,
    absolute,
    exp,
    isnan,
    logical_and,
    logical_not,
    logical_or,
    select,
    sigmoid,
    where,
)
from aclgen.frontend.dsl import (
    f32_const as f32,
)

if TYPE_CHECKING:  # loaded on first access, by __getattr__
    from aclgen.frontend.tracer import Value, trace


def __getattr__(name: str):
    if name in ("trace", "Value"):
        from aclgen.frontend import tracer

        return getattr(tracer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FormulaError",
    "Value",
    "absolute",
    "exp",
    "f32",
    "isnan",
    "logical_and",
    "logical_not",
    "logical_or",
    "select",
    "sigmoid",
    "trace",
    "where",
]
