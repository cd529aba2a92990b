"""The formula DSL: plain Python functions over symbolic elements, traced into `ew`."""

from aclgen.frontend.tracer import (
    FormulaError,
    Value,
    absolute,
    exp,
    f32_const as f32,
    isnan,
    logical_and,
    logical_not,
    logical_or,
    select,
    sigmoid,
    trace,
    where,
)

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
