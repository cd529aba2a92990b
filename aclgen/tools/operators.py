"""Finding operators for the CLI: the built-ins, and those a user's module declares.

    find("hardswish_backward")         a built-in by Python name
    find("HardswishBackward")          ... or by aclnn name (with or without the aclnn prefix)
    find("my_ops.py:LeakyReluBackward")  an operator declared in a file (imported once)
    load("my_ops.py")                  the operators a file declares
"""

from __future__ import annotations

from aclgen.declaration import Operator, lookup
from aclgen.tools import UsageError


class NotFound(UsageError):
    """An operator name or file that does not resolve; the message says what is known."""


def load(path: str) -> list[Operator]:
    """The operators the Python file at `path` declares (imported once per process)."""
    from aclgen import ops

    try:
        return ops.load(path)
    except (FileNotFoundError, ImportError) as exc:
        raise NotFound(str(exc)) from None


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
