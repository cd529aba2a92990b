"""A traced formula (`tracer.Graph`) as an `ew.kernel`: one op per node.

The graph already carries every element type (weak constants resolved, compares as masks), so
this is a walk: arguments become the kernel block's arguments, constants `ew.constant`, the
operators their `ew` ops, each formula function its `ew` op (made from the same record,
aclgen/frontend/dsl.py), and the results `ew.yield`. Nodes no result needs are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, IntegerType, i1
from xdsl.ir import Attribute, Block, Region, SSAValue

from aclgen import dtypes
from aclgen.dialects import ew
from aclgen.dialects.enums import Predicate
from aclgen.frontend.tracer import MASK, Graph, Node

_BINARY = {"add": ew.AddOp, "sub": ew.SubOp, "mul": ew.MulOp, "div": ew.DivOp, "and": ew.AndOp, "or": ew.OrOp}


def ir_type(type_: str) -> Attribute:
    """The xDSL element type of a graph element type."""
    return i1 if type_ == MASK else dtypes.dtype(type_).ir_type


def _constant(value, t: Attribute) -> ew.ConstantOp:
    if isinstance(t, IntegerType):
        return ew.ConstantOp(IntegerAttr(int(value), t))
    return ew.ConstantOp(FloatAttr(float(value), cast(AnyFloat, t)))


def kernel(graph: Graph, name: str, inputs: Sequence[ew.ViewType], params: Sequence[Attribute],
           outputs: Sequence[ew.ViewType], arg_names: Sequence[str], reduced: int = 0,
           columns: bool = False, partials: Sequence[int] = (), blocks: int = 0) -> ew.KernelOp:
    """The `ew.kernel` of `graph` for these views and parameter types; its reductions reduce the
    views' trailing `reduced` dims (`columns`: rows a vector at a time). The results in
    `partials` are sums across rows: the kernel yields their operands, added up per block of
    `blocks` rows."""
    block = Block(arg_types=ew.KernelOp.block_types(inputs, params))
    values: dict[Node, SSAValue] = {}
    for node, arg, n in zip(graph.args, block.args, arg_names):
        arg.name_hint = n
        values[node] = arg
    results = [r.args[0] if k in partials else r for k, r in enumerate(graph.results)]
    live = _live(results)
    for node in graph.nodes:
        if node not in live:
            continue
        op = _op(node, [values[a] for a in node.args])
        block.add_op(op)
        values[node] = op.results[0]
    block.add_op(ew.YieldOp(*[values[r] for r in results]))
    k = ew.KernelOp(name, inputs, outputs, params, arg_names, Region(block), reduced, columns, partials, blocks)
    k.verify()
    return k


def _live(results: Sequence[Node]) -> set[Node]:
    """The nodes the results need: a kernel of some of an operator's outputs (RmsNormGrad's dx
    kernel, its dgamma kernel) computes none of the others' reductions."""
    live: set[Node] = set()
    todo = list(results)
    while todo:
        node = todo.pop()
        if node not in live:
            live.add(node)
            todo.extend(node.args)
    return live


def _op(node: Node, args: list[SSAValue]):
    match node.op:
        case "const":
            return _constant(node.attr, ir_type(node.type))
        case "cmp":
            return ew.CmpOp(cast(Predicate, node.attr), args[0], args[1])
        case "select":
            return ew.SelectOp(args[0], args[1], args[2])
        case "neg":
            return ew.NegOp(args[0])
        case "reduce":
            return ew.ReduceOp(node.attr[0], args[0])  # type: ignore[index]
        case "not":
            return ew.NotOp(args[0])
        case "unlikely":
            return ew.UnlikelyOp(args[0])
        case op if op in _BINARY:
            return _BINARY[op](args[0], args[1])
    f = node.function
    assert f is not None, f"no ew op for graph node {node.op!r}"
    return ew.FUNCTION_OPS[f.name](*args)
