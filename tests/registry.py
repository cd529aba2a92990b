"""The operators under test, read from aclgen's registry: nothing in the tests lists them.

Tests name an operator by its Python name (`hardswish_backward`), its aclnn name
(`HardswishBackward`) or a unique abbreviation (`hardswish`, `swiglu`: the Python name without
underscores starts with it), so a table keyed by short names stays readable while the set of
operators comes from `aclgen.ops` (and any operator a test declares).
"""

from __future__ import annotations

import aclgen.ops
from aclgen.declaration import Operator, lookup, registered
from aclgen.runtime.function import Function, function_of


def builtins() -> list[Operator]:
    return list(aclgen.ops.OPERATORS.values())


def resolve(key: str) -> Operator:
    op = lookup(key)
    if op is not None:
        return op
    hits = [o for o in registered().values() if o.python_name.replace("_", "").startswith(key.replace("_", ""))]
    if len(hits) != 1:
        raise KeyError(f"{key!r} names {len(hits)} registered operators")
    return hits[0]


def function(key: str) -> Function:
    """The Python function of an operator (`aclgen.ops.<name>` for a built-in)."""
    return function_of(resolve(key))


def union_dtypes(op: Operator) -> tuple[str, ...]:
    """Every dtype some SoC profile accepts, in first-seen order."""
    return tuple(d.name for d in op.all_dtypes())


def extras(op) -> tuple:
    """The declarations of the C arguments between an operator's tensors: its aclScalars, then
    its attributes (`kind` "int64" for SwiGluGrad's dim)."""
    return (*op.scalars, *op.attrs)
