"""The formula DSL: plain Python functions over symbolic elements, traced into a graph.

Every name of the language (`select`, `f32`, `tanh`, ...) comes from aclgen/frontend/dsl.py,
whose table of functions is the one list of them; `trace` and `Value` are the tracer's.
"""

from typing import TYPE_CHECKING, Any

from aclgen.frontend.dsl import FormulaError, names

if TYPE_CHECKING:  # loaded on first access, by __getattr__
    from aclgen.frontend.tracer import Value, trace


def __getattr__(name: str) -> Any:
    if name in ("trace", "Value"):
        from aclgen.frontend import tracer

        return getattr(tracer, name)
    language = names()
    if name in language:
        return language[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = ["FormulaError", "Value", "trace", *names()]  # pyright: ignore[reportUnsupportedDunderAll]
