"""The operators under test, read from aclgen's registry: nothing in the tests lists them.

Tests name an operator by its Python name (`hardswish_backward`), its aclnn name
(`HardswishBackward`) or a unique abbreviation (`hardswish`, `swiglu`: the Python name without
underscores starts with it), so a table keyed by short names stays readable while the set of
operators comes from `aclgen.ops` (and any operator a test declares). An abbreviation names a
seed first: the runtime's tables were written for them (`hardswish` is HardswishBackward there;
the family's Hardswish is `Hardswish`).
"""

from __future__ import annotations

import aclgen.ops
from aclgen.declaration import Operator, lookup, registered
from aclgen.runtime.function import Function, function_of

# The five operators of the original contract: tests/reference.py computes each bit for bit, and the
# runtime's matrices (property tests, guards, numerics per SoC) run them in depth. The families are
# checked operator by operator against their own references (tests/ops) and sampled here.
SEEDS = ("HardswishBackward", "SeluBackward", "SoftshrinkBackward", "SwiGluGrad", "ThresholdBackward")
FAMILY_SAMPLE = 6  # family operators the generic bad-input rows and phase-2 tests add to the seeds


def seeds() -> list[Operator]:
    return [op for op in aclgen.ops.OPERATORS.values() if op.name in SEEDS]


def builtins() -> list[Operator]:
    """The seeds and a fixed sample of the families (the same every run: every `FAMILY_SAMPLE`-th
    operator by name), for the matrices whose rows are generic: the suite samples the families
    rather than multiplying by them."""
    family = sorted((op for op in aclgen.ops.OPERATORS.values() if op.name not in SEEDS), key=lambda o: o.name)
    step = max(1, len(family) // FAMILY_SAMPLE)
    return seeds() + family[::step][:FAMILY_SAMPLE]


def _abbreviates(key: str, op: Operator) -> bool:
    return op.python_name.replace("_", "").startswith(key.replace("_", ""))


def resolve(key: str) -> Operator:
    seed = [o for o in seeds() if _abbreviates(key, o)]
    if len(seed) == 1:
        return seed[0]
    op = lookup(key)
    if op is not None:
        return op
    hits = [o for o in registered().values() if _abbreviates(key, o)]
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
