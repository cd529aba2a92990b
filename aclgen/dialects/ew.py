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
from typing import cast

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    Float32Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
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

LAYOUTS = ("contiguous", "strided", "broadcast")


# ----------------------------------------------------------------------------- types


@irdl_attr_definition
class ViewType(ParametrizedAttribute, TypeAttribute):
    """A strided view of `rank` dims over elements of `element_type`.

    `layout` is the class of the innermost stride this variant was specialized for:
    `contiguous` (stride 1), `strided` (any stride) or `broadcast` (stride 0). Outer dims are
    always read through runtime strides.

        !ew.view<2xf16, contiguous>
    """

    name = "ew.view"

    rank: IntAttr
    element_type: Attribute
    layout: StringAttr

    def __init__(self, rank: int, element_type: Attribute, layout: str = "contiguous"):
        super().__init__(IntAttr(rank), element_type, StringAttr(layout))

    def verify(self) -> None:
        if self.rank.data < 1:
            raise VerifyException(f"view rank must be >= 1, got {self.rank.data}")
        if self.layout.data not in LAYOUTS:
            raise VerifyException(f"view layout must be one of {LAYOUTS}, got {self.layout.data!r}")

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


def like(t: Attribute, elem: Attribute) -> Attribute:
    """`elem`, as a vector of the same length as `t` when `t` is a vector."""
    n = lanes(t)
    return elem if n is None else VectorType(elem, [n])


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
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "inputs": ArrayAttr(inputs),
                "outputs": ArrayAttr(outputs),
                "params": ArrayAttr(params),
                "arg_names": ArrayAttr([StringAttr(n) for n in arg_names]),
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
        for v in self.outputs.data:
            if v.layout.data == "broadcast":
                raise VerifyException(f"ew.kernel output {v} cannot be a broadcast (stride-0) view")
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
        super().__init__(operands=[list(values)])


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
        super().__init__(properties={"value": value}, result_types=[result_type or value.type])

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
        super().__init__(operands=[lhs, rhs], result_types=[result_type or like(lhs.type, f32)])


class UnaryOp(FloatResultOp):
    input = operand_def()
    result = result_def()
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation, result_type: Attribute | None = None):
        input = SSAValue.get(input)
        super().__init__(operands=[input], result_types=[result_type or like(input.type, f32)])


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


@irdl_op_definition
class AbsOp(UnaryOp):
    """`|input|` (clears the sign bit; exact)."""

    name = "ew.abs"


@irdl_op_definition
class ExpOp(UnaryOp):
    """`e ** input`; `expand-math` replaces it with a vectorizable polynomial (<= 2 ulp)."""

    name = "ew.exp"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """`1 / (1 + exp(-input))`; expanded by `expand-math`."""

    name = "ew.sigmoid"


# ----------------------------------------------------------------------------- predicates

#: Compare predicates; float compares are ordered except `une` (so NaN compares false,
#: except `ne`). Integer operands compare exactly, with the signedness of their type.
PREDICATES = ("olt", "ole", "ogt", "oge", "oeq", "une")


@irdl_op_definition
class CmpOp(IRDLOperation):
    """Compare two elements: `i1`, or a `vector<W x i1>` mask for vectors.

        %m = ew.cmp ole %x, %t : vector<8xf32>, vector<8xf32>
    """

    name = "ew.cmp"
    predicate = prop_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$predicate $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, predicate: str, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(
            operands=[lhs, rhs], result_types=[like(lhs.type, i1)], properties={"predicate": StringAttr(predicate)}
        )

    def verify_(self) -> None:
        _check_same_shape(self)
        if self.predicate.data not in PREDICATES:
            raise VerifyException(f"ew.cmp predicate must be one of {PREDICATES}, got {self.predicate.data!r}")
        if element(self.result.type) != i1:
            raise VerifyException("ew.cmp result must be i1 or a vector of i1")


@irdl_op_definition
class IsNanOp(IRDLOperation):
    """True where the element is NaN (always false for integers)."""

    name = "ew.isnan"
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation):
        input = SSAValue.get(input)
        super().__init__(operands=[input], result_types=[like(input.type, i1)])

    def verify_(self) -> None:
        _check_same_shape(self)


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
        super().__init__(operands=[lhs, rhs], result_types=[SSAValue.get(lhs).type])


@irdl_op_definition
class AndOp(BinaryLogicalOp):
    """Lane-wise `lhs and rhs` of two masks."""

    name = "ew.and"


@irdl_op_definition
class OrOp(BinaryLogicalOp):
    """Lane-wise `lhs or rhs` of two masks."""

    name = "ew.or"


@irdl_op_definition
class NotOp(LogicalOp):
    """Lane-wise `not input` of a mask."""

    name = "ew.not"
    input = operand_def()
    result = result_def()
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation):
        super().__init__(operands=[input], result_types=[SSAValue.get(input).type])


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
        super().__init__(operands=[cond, lhs, rhs], result_types=[result_type])

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
    float -> int: round to nearest even, saturate to the type's range, NaN -> 0;
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
        super().__init__(operands=[input], result_types=[like(input.type, elem)])

    def verify_(self) -> None:
        _check_same_shape(self)
        for v in (self.input, self.result):
            e = element(v.type)
            if e == i1 or not (isinstance(e, IntegerType) or e.name in ("f32", "f16", "bf16")):
                raise VerifyException(f"ew.convert cannot convert {v.type}")


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
        AbsOp,
        ExpOp,
        SigmoidOp,
        CmpOp,
        IsNanOp,
        AndOp,
        OrOp,
        NotOp,
        SelectOp,
        ConvertOp,
    ],
    [ViewType],
)
