"""`init`: an op of fixed arity built from its operands, result types and properties as they are.

IRDL's generic builder (`IRDLOperation.__init__`) accepts ops or values, nested lists for
variadic operands and None for absent optional ones, and computes segment sizes: a general
parser of its arguments that took four times as long as the op itself (Zen 3: 60 against 13 µs
an `ew.add`), about a sixth of a cold compile, which builds some 560 ops. The ops of our
dialects with a fixed number of operands and results and no segments are built here instead,
as xDSL's `Operation.create` builds a foreign one; default properties are still filled
(`IRDLOperation.__post_init__`) and the verifier checks the result like any op.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.ir import Attribute, Operation, SSAValue


def init(op: Operation, operands: Sequence[SSAValue | Operation], result_types: Sequence[Attribute] = (),
         properties: Mapping[str, Attribute] | None = None) -> None:
    Operation.__init__(op, operands=[SSAValue.get(v) for v in operands], result_types=result_types,
                       properties=properties or {})
