"""aclgen: operator formulas in Python -> our xDSL dialects -> LLVM -> native kernels, served
through Ascend's aclnn API.

    import aclgen.ops                       # the five built-in operators on numpy arrays
    from aclgen import compile, select      # your own operators
"""

from aclgen.formula import Formula, compile
from aclgen.frontend import (
    FormulaError,
    absolute,
    exp,
    f32,
    isnan,
    logical_and,
    logical_not,
    logical_or,
    select,
    sigmoid,
    where,
)

__version__ = "0.1.0"

__all__ = [
    "Formula",
    "FormulaError",
    "absolute",
    "compile",
    "exp",
    "f32",
    "isnan",
    "logical_and",
    "logical_not",
    "logical_or",
    "select",
    "sigmoid",
    "where",
]
