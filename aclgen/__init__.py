"""aclgen: operator formulas in Python -> our xDSL dialects -> LLVM -> native kernels, served
through Ascend's aclnn API.

    import aclgen.ops                       # the five built-in operators on numpy arrays
    from aclgen import compile, select      # your own operators
"""

from aclgen.frontend.dsl import (
    FormulaError,
    absolute,
    exp,
    f32_const as f32,
    isnan,
    logical_and,
    logical_not,
    logical_or,
    select,
    sigmoid,
    where,
)

__version__ = "0.1.0"


def __getattr__(name: str):
    # `compile` and `Formula` bring in the operator machinery; `import aclgen` stays light.
    if name in ("compile", "Formula"):
        from aclgen import formula

        return getattr(formula, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
