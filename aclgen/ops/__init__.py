"""The built-in operators: one declaration file each (aclgen.declaration).

Every module of this package is imported here, and each operator it declares becomes an
attribute under its Python name (`aclgen.ops.hardswish_backward(...)`); `OPERATORS` maps those
names to the declarations. Nothing else in aclgen lists the built-ins: a new file here is a
new operator everywhere (aclgen.aclnn, the CLI, the C SDK, the tests).
"""

import importlib
import pkgutil

from aclgen.declaration import Operator, registered
from aclgen.runtime.errors import OperatorError
from aclgen.runtime.function import Function, function_of

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

OPERATORS: dict[str, Operator] = {
    op.python_name: op for op in registered().values() if op.formula.__module__.startswith(__name__ + ".")
}
globals().update({name: function_of(op) for name, op in OPERATORS.items()})


def __getattr__(name: str) -> Function:  # for type checkers: the operators are set above
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *OPERATORS])


__all__ = ["OPERATORS", "OperatorError"]  # and every operator by its Python name (see __dir__)
