"""`ew`: the elementwise graph dialect.

An `ew.kernel` is one operator variant: its signature lists the strided views it reads and
writes (`!ew.view<rank x elem, layout>`) and its scalar parameters; its body is the traced
formula on *one element*: block arguments are the elements of the inputs (in their storage
types) followed by the parameters, `ew.yield` gives the elements of the outputs.

The compute ops (`ew.add`, `ew.cmp`, `ew.select`, ...) are shape-polymorphic: the same op works
on a scalar element inside `ew.kernel` and on `vector<W x T>` after vectorization, so tiling and
vectorization re-use the formula instead of re-deriving it. Compares give `i1`, or a vector
mask `vector<W x i1>` for vector operands (unlike xDSL's `arith.cmpf`).

Typing: arithmetic always computes in f32 (SPEC.md: fp16/bf16/int widen to f32); before
`legalize-dtypes` its operands may be any element type, afterwards they are f32. Compares,
selects and conversions are exact.

    ew.kernel @hardswish_backward(%g: !ew.view<1xf16, contiguous>, %x: !ew.view<1xf16, contiguous>)
        -> (!ew.view<1xf16, contiguous>) {
    ^bb0(%g: f16, %x: f16):
      %c = ew.constant -3.0 : f16
      %lo = ew.cmp olt %x, %c : f16, f16
      ...
      ew.yield %r : f32
    }
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    Float32Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    VectorType,
    f32,
    i1,
)
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, IsTerminator, Pure, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from aclgen.dialects.construct import init
from aclgen.dialects.enums import Layout, Predicate
from aclgen.frontend.dsl import FUNCTIONS, Function

# ----------------------------------------------------------------------------- types


@irdl_attr_definition
class ViewType(ParametrizedAttribute, TypeAttribute):
    """A strided view of `rank` dims over elements of `element_type`.

    `layout` (a `Layout`) is the class of the innermost stride this variant was specialized
    for: `contiguous` (stride 1), `strided` (any stride) or `broadcast` (stride 0). Outer dims
    are always read through runtime strides.

        !ew.view<2xf16, contiguous>
    """

    name = "ew.view"

    rank: IntAttr
    element_type: Attribute
    layout: StringAttr

    def __init__(self, rank: int, element_type: Attribute, layout: str = Layout.CONTIGUOUS):
        super().__init__(IntAttr(rank), element_type, StringAttr(layout))

    def verify(self) -> None:
        if self.rank.data < 1:
            raise VerifyException(f"view rank must be >= 1, got {self.rank.data}")
        if self.layout.data not in tuple(Layout):
            raise VerifyException(f"view layout must be one of {', '.join(Layout)}, got {self.layout.data!r}")

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.rank.data}x")
            printer.print_attribute(self.element_type)
            printer.print_string(f", {self.layout.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr, Attribute, StringAttr]:
        with parser.in_angle_brackets():
            rank = parser.parse_integer(allow_boolean=False, allow_negative=False)
            parser.parse_shape_delimiter()
            elem = parser.parse_type()
            parser.parse_punctuation(",")
            layout = parser.parse_identifier()
        return IntAttr(rank), elem, StringAttr(layout)


# ----------------------------------------------------------------------------- type helpers


def lanes(t: Attribute) -> int | None:
    """Vector length of `t`, or None for a scalar."""
    return t.get_shape()[0] if isinstance(t, VectorType) else None


def element(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, VectorType) else t


@cache
def vector(elem: Attribute, n: int) -> VectorType:
    """`vector<n x elem>`, made once (types are immutable; building one verifies its parameters,
    which took a twentieth of a cold compile)."""
    return VectorType(elem, [n])


def like(t: Attribute, elem: Attribute) -> Attribute:
    """`elem`, as a vector of the same length as `t` when `t` is a vector."""
    n = lanes(t)
    return elem if n is None else vector(elem, n)


def _types(ts) -> str:
    return ", ".join(str(t) for t in ts)


def _check_same_shape(op: Operation) -> None:
    shapes = {lanes(v.type) for v in (*op.operands, *op.results)}
    if len(shapes) != 1:
        raise VerifyException(f"{op.name}: operands and results must be all scalars or all vectors of one length")


# ----------------------------------------------------------------------------- kernel


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One operator variant: views in, views out, scalar params, a per-element body."""

    name = "ew.kernel"

    sym_name = prop_def(StringAttr)
    inputs = prop_def(ArrayAttr[ViewType])
    outputs = prop_def(ArrayAttr[ViewType])
    params = prop_def(ArrayAttr[Attribute])
    arg_names = prop_def(ArrayAttr[StringAttr])
    reduced = prop_def(IntAttr, default_value=IntAttr(0))  # trailing dims the `ew.reduce`s reduce
    # rows run `lanes` at a time along the innermost kept dim, which the views' layouts describe
    columns = opt_prop_def(UnitAttr)
    # outputs that add up across rows: each gets, per block of `blocks` rows (the threads split
    # whole blocks), the block's sum of its yielded value as one f32 row (`tile-rows`)
    partials = opt_prop_def(ArrayAttr[IntAttr])
    blocks = opt_prop_def(IntAttr)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(
        self,
        sym_name: str,
        inputs: Sequence[ViewType],
        outputs: Sequence[ViewType],
        params: Sequence[Attribute],
        arg_names: Sequence[str],
        body: Region,
        reduced: int = 0,
        columns: bool = False,
        partials: Sequence[int] = (),
        blocks: int = 0,
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "inputs": ArrayAttr(inputs),
                "outputs": ArrayAttr(outputs),
                "params": ArrayAttr(params),
                "arg_names": ArrayAttr([StringAttr(n) for n in arg_names]),
                "reduced": IntAttr(reduced),
                **({"columns": UnitAttr()} if columns else {}),
                **({"partials": ArrayAttr([IntAttr(k) for k in partials]), "blocks": IntAttr(blocks)}
                   if partials else {}),
            },
            regions=[body],
        )

    @staticmethod
    def block_types(inputs: Sequence[ViewType], params: Sequence[Attribute]) -> list[Attribute]:
        return [v.element_type for v in inputs] + list(params)

    @property
    def block(self) -> Block:
        return self.body.block

    def verify_(self) -> None:
        want = self.block_types(self.inputs.data, self.params.data)
        got = [a.type for a in self.block.args]
        if want != got:
            raise VerifyException(
                f"ew.kernel block arguments ({_types(got)}) do not match its signature ({_types(want)})"
            )
        reduced = self.reduced.data
        for v in self.outputs.data:
            if v.layout.data == Layout.BROADCAST and not reduced:
                raise VerifyException(f"ew.kernel output {v} cannot be a broadcast (stride-0) view")
        if not 0 <= reduced <= (self.inputs.data or self.outputs.data)[0].rank.data:
            raise VerifyException(f"ew.kernel reduces {reduced} dims of views of rank "
                                  f"{(self.inputs.data or self.outputs.data)[0].rank.data}")
        if not reduced and any(isinstance(o, ReduceOp) for o in self.block.ops):
            raise VerifyException("ew.reduce in an ew.kernel that reduces no dims")
        if self.columns is not None and not 0 < reduced < (self.inputs.data or self.outputs.data)[0].rank.data:
            raise VerifyException("ew.kernel runs rows in columns only when it reduces some dims and keeps some")
        if self.partials is not None:
            outs = self.outputs.data
            if self.blocks is None or self.blocks.data < 1 or not reduced or self.columns is not None:
                raise VerifyException("ew.kernel partials need blocks >= 1 and rows that reduce a row at a time")
            for k in self.partials.data:
                if not 0 <= k.data < len(outs) or not isinstance(outs[k.data].element_type, Float32Type):
                    raise VerifyException(f"ew.kernel partial {k.data} must be one of its f32 outputs")
        if len(self.arg_names.data) != len(self.inputs.data) + len(self.params.data) + len(self.outputs.data):
            raise VerifyException("ew.kernel needs one name per input, param and output")
        ranks = {v.rank.data for v in (*self.inputs.data, *self.outputs.data)}
        if len(ranks) > 1:
            raise VerifyException(f"ew.kernel views must share one rank, got {sorted(ranks)}")
        term = self.block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException("ew.kernel body must end with ew.yield")
        if len(term.values) != len(self.outputs.data):
            raise VerifyException(f"ew.yield gives {len(term.values)} values for {len(self.outputs.data)} outputs")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The elements an `ew.kernel` stores into its outputs (converted to their types on store)."""

    name = "ew.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue | Operation):
        init(self, values)


# ----------------------------------------------------------------------------- values


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A constant element, splatted when the result is a vector.

        %c = ew.constant 0.5 : f32
        %v = ew.constant 0.5 : vector<8xf32>
    """

    name = "ew.constant"
    value = prop_def(FloatAttr | IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())

    def print(self, printer: Printer) -> None:
        v = self.value.value.data
        printer.print_string(f" {v!r}" if isinstance(v, float) else f" {v}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        negative = parser.parse_optional_punctuation("-") is not None
        number = parser.parse_optional_number()
        if number is None:  # non-finite floats print as nan / inf / -inf
            word = parser.parse_identifier()
            if word not in ("nan", "inf"):
                parser.raise_error(f"expected a number, nan or inf, got {word!r}")
            number = float(word)
        if negative:
            number = -number
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        e = element(t)
        attr = IntegerAttr(int(number), e) if isinstance(e, IntegerType) else FloatAttr(float(number), cast(AnyFloat, e))
        op = cls(attr, t)
        op.attributes.update(attrs)
        return op

    def __init__(self, value: FloatAttr | IntegerAttr, result_type: Attribute | None = None):
        init(self, (), [result_type or value.type], {"value": value})

    def verify_(self) -> None:
        if element(self.result.type) != self.value.type:
            raise VerifyException(f"ew.constant of type {self.value.type} cannot produce {self.result.type}")


# ----------------------------------------------------------------------------- arithmetic (f32)


class FloatResultOp(IRDLOperation):
    """Base of the arithmetic ops: any element-typed operands, an f32 (vector) result."""

    traits = traits_def(Pure())

    def verify_(self) -> None:
        _check_same_shape(self)
        if not isinstance(element(self.results[0].type), Float32Type):
            raise VerifyException(f"{self.name} computes in f32, result type {self.results[0].type} is not")


class BinaryOp(FloatResultOp):
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation, result_type: Attribute | None = None):
        lhs = SSAValue.get(lhs)
        init(self, (lhs, rhs), [result_type or like(lhs.type, f32)])


class UnaryOp(FloatResultOp):
    input = operand_def()
    result = result_def()
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation, result_type: Attribute | None = None):
        input = SSAValue.get(input)
        init(self, (input,), [result_type or like(input.type, f32)])


@irdl_op_definition
class AddOp(BinaryOp):
    """`lhs + rhs` in f32."""

    name = "ew.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """`lhs - rhs` in f32."""

    name = "ew.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """`lhs * rhs` in f32 (never contracted into an FMA with a neighbour)."""

    name = "ew.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """`lhs / rhs` in f32, correctly rounded."""

    name = "ew.div"


@irdl_op_definition
class NegOp(UnaryOp):
    """`-input` (sign flip; exact)."""

    name = "ew.neg"





# ----------------------------------------------------------------------------- compares


@irdl_op_definition
class CmpOp(IRDLOperation):
    """Compare two elements: `i1`, or a `vector<W x i1>` mask for vectors. `predicate` is a
    `Predicate`: float compares are ordered except `une` (so NaN compares false, except `ne`);
    integer operands compare exactly, with the signedness of their type.

        %m = ew.cmp ole %x, %t : vector<8xf32>, vector<8xf32>
    """

    name = "ew.cmp"
    predicate = prop_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$predicate $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, predicate: Predicate, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        init(self, (lhs, rhs), [like(lhs.type, i1)], {"predicate": StringAttr(predicate)})

    def verify_(self) -> None:
        _check_same_shape(self)
        if self.predicate.data not in tuple(Predicate):
            raise VerifyException(
                f"ew.cmp predicate must be one of {', '.join(Predicate)}, got {self.predicate.data!r}"
            )
        if element(self.result.type) != i1:
            raise VerifyException("ew.cmp result must be i1 or a vector of i1")


class LogicalOp(IRDLOperation):
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _check_same_shape(self)
        for v in (*self.operands, *self.results):
            if element(v.type) != i1:
                raise VerifyException(f"{self.name} works on i1 masks, got {v.type}")


class BinaryLogicalOp(LogicalOp):
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        init(self, (lhs, rhs), [SSAValue.get(lhs).type])


@irdl_op_definition
class AndOp(BinaryLogicalOp):
    """Lane-wise `lhs and rhs` of two masks."""

    name = "ew.and"


@irdl_op_definition
class OrOp(BinaryLogicalOp):
    """Lane-wise `lhs or rhs` of two masks."""

    name = "ew.or"


class UnaryLogicalOp(LogicalOp):
    input = operand_def()
    result = result_def()
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation):
        init(self, (input,), [SSAValue.get(input).type])


@irdl_op_definition
class NotOp(UnaryLogicalOp):
    """Lane-wise `not input` of a mask."""

    name = "ew.not"


@irdl_op_definition
class UnlikelyOp(UnaryLogicalOp):
    """`input` itself, with the formula's promise that it rarely holds (`aclgen.unlikely`):
    `version-unlikely` runs each vector step in a version made for it being false in every lane.

        %t = ew.unlikely %m : vector<8xi1> -> vector<8xi1>
    """

    name = "ew.unlikely"


@irdl_op_definition
class SelectOp(IRDLOperation):
    """`cond ? lhs : rhs`, lane by lane. Exact: a select never rounds, multiplies or makes -0.

        %r = ew.select %m, %zero, %g : vector<8xi1>, vector<8xf32>, vector<8xf32>
    """

    name = "ew.select"
    cond = operand_def()
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(
        self,
        cond: SSAValue | Operation,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        result_type: Attribute | None = None,
    ):
        lhs, rhs = SSAValue.get(lhs), SSAValue.get(rhs)
        if result_type is None:
            result_type = lhs.type if lhs.type == rhs.type else like(lhs.type, f32)
        init(self, (cond, lhs, rhs), [result_type])

    def verify_(self) -> None:
        _check_same_shape(self)
        if element(self.cond.type) != i1:
            raise VerifyException(f"ew.select condition must be i1 or a mask, got {self.cond.type}")
        same = self.lhs.type == self.rhs.type
        if same and self.result.type != self.lhs.type:
            raise VerifyException("ew.select of two values of one type has that type")
        if not same and not isinstance(element(self.result.type), Float32Type):
            raise VerifyException("ew.select of values of different types computes in f32")


@irdl_op_definition
class ConvertOp(IRDLOperation):
    """Convert an element to another type, rounding once.

    float -> float: round to nearest even (bf16 by integer rounding, no libcall);
    float -> int: toward zero, saturating to the type's range, NaN -> 0 (`legalize-dtypes`
    rounds to nearest even first, with `ew.round`);
    int -> float: round to nearest even; int -> int: sign/zero extension or saturation.

        %h = ew.convert %r : vector<8xf32> to vector<8xf16>
    """

    name = "ew.convert"
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, input: SSAValue | Operation, elem: Attribute):
        input = SSAValue.get(input)
        init(self, (input,), [like(input.type, elem)])

    def verify_(self) -> None:
        _check_same_shape(self)
        for v in (self.input, self.result):
            e = element(v.type)
            if e == i1 or not (isinstance(e, IntegerType) or e.name in ("f32", "f16", "bf16")):
                raise VerifyException(f"ew.convert cannot convert {v.type}")


# ----------------------------------------------------------------------------- reductions

REDUCTION_KINDS = ("sum", "mean", "amax", "amin")


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """The `kind` (sum, mean, amax, amin) of `input` over the kernel's reduced dims (its views'
    trailing `reduced` dims): one f32 value per row, the same at every element of the row. Sums
    are accumulated in f32 in an order that depends on the row's shape alone (aclgen/passes/
    tile_rows.py); amax and amin propagate NaN.

        %s = ew.reduce "sum" %e : f32 -> f32
    """

    name = "ew.reduce"
    kind = prop_def(StringAttr)
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, kind: str, input: SSAValue | Operation):
        v = SSAValue.get(input)
        init(self, (v,), [like(v.type, f32)], {"kind": StringAttr(kind)})

    def verify_(self) -> None:
        if self.kind.data not in REDUCTION_KINDS:
            raise VerifyException(f"ew.reduce kind must be one of {REDUCTION_KINDS}, got {self.kind.data!r}")
        if lanes(self.input.type) is not None or self.result.type != f32:
            raise VerifyException("ew.reduce takes an element of the kernel's body and gives an f32")


# ----------------------------------------------------------------------------- formula functions


class FunctionOp(IRDLOperation):
    """Base of the formula functions' ops: one op per record of aclgen.frontend.dsl.FUNCTIONS,
    made by `_function_op` (`ew.exp`, `ew.tanh`, `ew.isnan`, ...). Operands are f32 after
    `legalize-dtypes` (any element type before); the result is f32, or a mask for `mask`
    functions. The record (`FUNCTION`) says what the op computes; its code is an expansion or
    an intrinsic (aclgen/passes/expansions/).

        %t = ew.tanh %x : vector<8xf32> -> vector<8xf32>
        %p = ew.pow %x, %y : f32, f32 -> f32
    """

    FUNCTION: ClassVar[Function]
    traits = traits_def(Pure())

    def __init__(self, *args: SSAValue | Operation):
        first = SSAValue.get(args[0])
        result = like(first.type, i1 if self.FUNCTION.mask else f32)
        init(self, args, [result])

    def verify_(self) -> None:
        _check_same_shape(self)
        want = i1 if self.FUNCTION.mask else f32
        if element(self.results[0].type) != want:
            raise VerifyException(f"{self.name} gives {want} elements, not {self.results[0].type}")


def _function_op(f: Function) -> type[FunctionOp]:
    operands = [f"x{k}" for k in range(f.arity)] if f.arity > 1 else ["input"]
    body: dict = {name: operand_def() for name in operands}
    body |= {
        "name": f"ew.{f.op_name}",
        "FUNCTION": f,
        "__annotations__": {"FUNCTION": ClassVar[Function]},
        "result": result_def(),
        "__doc__": f"`{f.name}`: {f.contract}",
        "__module__": __name__,
        "assembly_format": " `,` ".join(f"${n}" for n in operands) + " attr-dict `:` "
        + " `,` ".join(f"type(${n})" for n in operands) + " `->` type($result)",
    }
    cls_name = "".join(w.capitalize() for w in f.op_name.split("_")) + "Op"
    return irdl_op_definition(type(cls_name, (FunctionOp,), body))


#: The op of every formula function, by the function's name (`FUNCTION_OPS["tanh"]` is `ew.tanh`).
FUNCTION_OPS: dict[str, type[FunctionOp]] = {name: _function_op(f) for name, f in FUNCTIONS.items()}


def function_op(name: str) -> type[FunctionOp]:
    """The op class of formula function `name` (the same as FUNCTION_OPS[name])."""
    return FUNCTION_OPS[name]


EW = Dialect(
    "ew",
    [
        KernelOp,
        YieldOp,
        ConstantOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        NegOp,
        CmpOp,
        AndOp,
        OrOp,
        NotOp,
        UnlikelyOp,
        SelectOp,
        ConvertOp,
        ReduceOp,
        *FUNCTION_OPS.values(),
    ],
    [ViewType],
)
