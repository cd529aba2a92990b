"""The interval a formula value lies in, read from the ops that make it: what lets an expansion
drop the range work its function needs only for arguments the formula never gives it.

`interval(v)` is a (lo, hi) with lo <= v <= hi for every lane of v that is not NaN (a NaN lane
may occur anyway: the expansions keep NaN's path). It follows constants, `minimum` and `maximum`
(`clamp` is both), negation and selects, through the ew ops of a formula before expand-math
rewrites them; anything else is (-inf, inf). A formula that clamps an exp's argument to where
its result is a normal float, as sigmoid's products do (aclgen/ops/activation/sigmoid.py), gets
an exp without its own clamp and with one power of two for the scale (`expansions.exp`).
"""

from __future__ import annotations

import math

from xdsl.ir import OpResult, SSAValue

from aclgen.dialects import ew

Interval = tuple[float, float]
ANY: Interval = (-math.inf, math.inf)
_MINIMUM = ew.function_op("minimum")
_MAXIMUM = ew.function_op("maximum")
DEPTH = 64  # ops followed up a chain (Python's recursion stays far from its limit)


def interval(v: SSAValue, memo: dict[SSAValue, Interval] | None = None, depth: int = 0) -> Interval:
    """(lo, hi) bounding every non-NaN lane of `v`. `memo` (shared across calls) visits each value
    once, so a formula's DAG costs its size; past DEPTH ops up the chain a value counts as
    unbounded."""
    if not isinstance(v, OpResult) or depth > DEPTH:
        return ANY
    if memo is None:
        memo = {}
    known = memo.get(v)
    if known is None:
        known = memo[v] = _interval(v.op, memo, depth + 1)
    return known


def _interval(op, memo: dict[SSAValue, Interval], depth: int) -> Interval:
    if isinstance(op, ew.ConstantOp):
        c = float(op.value.value.data)
        return ANY if math.isnan(c) else (c, c)
    if isinstance(op, ew.NegOp):
        lo, hi = interval(op.operands[0], memo, depth)
        return -hi, -lo
    if isinstance(op, ew.SelectOp):
        (a_lo, a_hi), (b_lo, b_hi) = interval(op.operands[1], memo, depth), interval(op.operands[2], memo, depth)
        return min(a_lo, b_lo), max(a_hi, b_hi)
    if isinstance(op, _MINIMUM | _MAXIMUM):
        (a_lo, a_hi), (b_lo, b_hi) = interval(op.operands[0], memo, depth), interval(op.operands[1], memo, depth)
        if isinstance(op, _MINIMUM):
            return min(a_lo, b_lo), min(a_hi, b_hi)
        return max(a_lo, b_lo), max(a_hi, b_hi)
    return ANY


def within(v: Interval, lo: float, hi: float) -> bool:
    """Whether interval `v` lies in [lo, hi]."""
    return lo <= v[0] and v[1] <= hi
