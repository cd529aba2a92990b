"""The built-in operators: CANN's families, one declaration file per CANN folder
(aclgen/ops/activation/hard_swish_grad.py declares aclnnHardswishBackward; aclgen.declaration).

Every module of the family packages is imported here, and each operator it declares becomes an
attribute under its Python name (`aclgen.ops.hardswish_backward(...)`); `OPERATORS` maps those
names to the declarations. Nothing else in aclgen lists the built-ins: a new file here is a
new operator everywhere (aclgen.aclnn, the CLI, the C SDK, the docs, the tests).
"""

import importlib
import importlib.util
import os
import pkgutil
import sys
import traceback

from aclgen.declaration import DeclarationError, Operator, collecting, registered
from aclgen.frontend.dsl import FormulaError
from aclgen.runtime import torch_library
from aclgen.runtime.errors import OperatorError
from aclgen.runtime.function import Function, function_of

FAMILIES = ("activation", "norm")  # CANN's folders of hicann/ops-nn, one subpackage each
for _family in FAMILIES:
    _package = importlib.import_module(f"{__name__}.{_family}")
    for _module in pkgutil.iter_modules(_package.__path__):
        importlib.import_module(f"{__name__}.{_family}.{_module.name}")

OPERATORS: dict[str, Operator] = {
    op.python_name: op for op in registered().values() if op.formula.__module__.startswith(__name__ + ".")
}


def family(op: Operator) -> tuple[str, str]:
    """(family, CANN folder) of a built-in operator: ("activation", "hard_swish_grad")."""
    parts = op.formula.__module__.split(".")
    return parts[2], parts[3]
globals().update({name: function_of(op) for name, op in OPERATORS.items()})
torch_library.watch()  # the operators become torch ops (torch.ops.aclgen.*) once torch is imported


_loaded: dict[str, list[Operator]] = {}  # real path -> the operators that file declared


def load(path: str) -> list[Operator]:
    """Import a user's Python file of `@aclgen.operator` declarations (once per process) and
    return the operators it declares. FileNotFoundError when there is no such file; a
    FormulaError naming every operator whose formula cannot be compiled (the others of the file
    stay declared); the module's other errors (DeclarationError, SyntaxError, ...) propagate."""
    real = os.path.realpath(path)
    if real in _loaded:
        return _loaded[real]
    if not os.path.isfile(real):
        raise FileNotFoundError(f"cannot read {path}: no such file")
    name = "aclgen_user_" + "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(real))[0])
    spec = importlib.util.spec_from_file_location(name, real)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with collecting() as broken:
            spec.loader.exec_module(module)
    except (DeclarationError, FormulaError):
        sys.modules.pop(name, None)
        raise
    except Exception as exc:  # the file's own code failed (a TypeError in a declaration, a typo): where
        sys.modules.pop(name, None)
        message = exc.msg if isinstance(exc, SyntaxError) else exc  # its str repeats the place
        raise DeclarationError(f"{path}{_line_in(exc, real)}: {type(exc).__name__}: {message}") from None
    if broken:
        sys.modules.pop(name, None)
        raise FormulaError(f"{path}: {len(broken)} operator{'s' * (len(broken) > 1)} cannot be compiled:\n"
                           + "\n".join(str(e) for e in broken))
    declared = [op for op in registered().values() if os.path.realpath(op.source[0]) == real]
    _loaded[real] = declared
    return declared


def _line_in(exc: Exception, real: str) -> str:
    """":N", the line of file `real` where `exc` was raised (its last frame there), or ""."""
    if isinstance(exc, SyntaxError) and exc.lineno and os.path.realpath(exc.filename or "") == real:
        return f":{exc.lineno}"
    lines = [line for frame, line in traceback.walk_tb(exc.__traceback__)
             if os.path.realpath(frame.f_code.co_filename) == real]
    return f":{lines[-1]}" if lines else ""


def __getattr__(name: str) -> Function:  # for type checkers: the operators are set above
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *OPERATORS])


__all__ = ["OPERATORS", "OperatorError", "load"]  # and every operator by its Python name (see __dir__)
