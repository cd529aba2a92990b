"""Finding operators for the CLI: the built-ins, and those a user's module declares.

    find("hardswish_backward")         a built-in by Python name
    find("HardswishBackward")          ... or by aclnn name (with or without the aclnn prefix)
    find("my_ops.py:LeakyReluBackward")  an operator declared in a file (imported once)
    load("my_ops.py")                  the operators a file declares
"""

from __future__ import annotations

import importlib.util
import os
import sys

from aclgen.declaration import Operator, lookup, registered
from aclgen.tools import UsageError


class NotFound(UsageError):
    """An operator name or file that does not resolve; the message says what is known."""


_loaded: dict[str, list[Operator]] = {}  # real path -> the operators it declared


def load(path: str) -> list[Operator]:
    """Import the Python file at `path` (once per process) and return the operators it declares."""
    real = os.path.realpath(path)
    if real in _loaded:
        return _loaded[real]
    if not os.path.isfile(real):
        raise NotFound(f"cannot read {path}: no such file")
    import aclgen.ops  # noqa: F401  (the built-ins first: a file that reuses a built-in's name is refused)

    name = "aclgen_user_" + "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(real))[0])
    spec = importlib.util.spec_from_file_location(name, real)
    if spec is None or spec.loader is None:
        raise NotFound(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    ops = [op for op in registered().values() if os.path.realpath(op.source[0]) == real]
    _loaded[real] = ops
    return ops


def builtins() -> list[Operator]:
    import aclgen.ops

    return list(aclgen.ops.OPERATORS.values())


def find(spec: str) -> Operator:
    """The operator `spec` names: NAME, or FILE.py:NAME (Python or aclnn name)."""
    path, sep, name = spec.rpartition(":")
    if sep and path.endswith(".py"):
        ops = load(path)
        for op in ops:
            if name in (op.python_name, op.name, op.api):
                return op
        known = ", ".join(f"{op.python_name} ({op.api})" for op in ops) or "none"
        raise NotFound(f"{path} declares no operator {name!r}; it declares: {known}")
    if spec.endswith(".py"):
        ops = load(spec)
        if len(ops) == 1:
            return ops[0]
        raise NotFound(f"{spec} declares {len(ops)} operators: name one as {spec}:NAME")
    builtins()
    op = lookup(spec)
    if op is None:
        raise NotFound(f"unknown operator {spec!r}; known: {', '.join(o.python_name for o in builtins())} "
                       f"(or FILE.py:NAME for a module's own)")
    return op
