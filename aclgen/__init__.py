"""aclgen: operator formulas in Python -> our xDSL dialects -> LLVM -> native kernels, served
through Ascend's aclnn API.

    import aclgen.ops                       # the five built-in operators on numpy arrays
    import aclgen.aclnn                     # their two-phase API (and every declared operator's)

    @aclgen.operator("LeakyReluBackward", inputs=("gradOutput", "self"), outputs=("gradInput",),
                     scalars=("negativeSlope",))
    def leaky_relu_backward(g, x, negative_slope):       # your own operator, every face
        return aclgen.select(x > 0.0, g, g * negative_slope)

    fn = aclgen.compile(formula, dtypes="float16")      # the quick path: no aclnn name needed
"""

from typing import TYPE_CHECKING, Any

from aclgen.declaration import Attr, DeclarationError, Example, Scalar, Split, Tensor, registered
from aclgen.frontend.dsl import FormulaError, names

__version__ = "0.1.0"

if TYPE_CHECKING:  # for type checkers; at run time the names below load on first use
    from aclgen.formula import compile
    from aclgen.runtime.function import Function, OperatorError, operator


def __getattr__(name: str) -> Any:
    # The formula language's names come from its table (aclgen/frontend/dsl.py).
    language = names()
    if name in language:
        return language[name]
    # The runtime (numpy views, the native layer) loads on first use: `import aclgen` stays light.
    if name in ("operator", "Function", "OperatorError"):
        from aclgen.runtime import function, torch_library

        torch_library.watch()  # declared operators become torch ops once torch is imported

        return {"operator": function.operator, "Function": function.Function,
                "OperatorError": function.OperatorError}[name]
    if name == "compile":
        from aclgen import formula
        from aclgen.runtime import torch_library

        torch_library.watch()

        return formula.compile
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(globals()))


__all__ = [
    "Attr",
    "DeclarationError",
    "Example",
    "FormulaError",
    "Function",
    "OperatorError",
    "Scalar",
    "Split",
    "Tensor",
    "compile",
    "operator",
    "registered",
    *names(),  # pyright: ignore[reportUnsupportedDunderAll]
]
