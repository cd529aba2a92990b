"""`tile`: the loop/tile level dialect — memory access of a tiled elementwise kernel.

After `tile-elementwise`, a kernel is a `func.func` whose loops are `scf.for` over i64:
an outer loop over tiles of the flattened iteration space (the unit a thread owns, CANN's
blockDim split), a row loop (rank >= 2), and an innermost column loop marked `tile.inner`. The element
formula (the `ew` ops) sits in the column loop between `tile.load`s and `tile.store`s:

    func.func @k(%out0: !llvm.ptr, %in0: !llvm.ptr, %meta: !llvm.ptr, %begin: i64, %end: i64) {
      %n1 = tile.param %meta[1] : i64
      ...
      scf.for %c = %c0 to %c1 step %one : i64 {
        %x = tile.load %row0[%c] stride %s0 "contiguous" : f32 -> f32
        %y = ew.abs %x : f32 -> f32
        tile.store %y, %row1[%c] stride %s1 "contiguous" : f32 -> f32
      } {tile.inner}
    }

`vectorize-elementwise` turns the loads/stores into `vector<W x T>` ones; `lower-to-llvm`
turns them into GEPs and loads/stores aligned to the element size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    VectorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from aclgen.dialects.enums import Layout
from aclgen.dialects.ew import element, lanes

PTR = LLVMPointerType()


@irdl_op_definition
class AllocaOp(IRDLOperation):
    """`count` values of type `elem` in the function's stack frame (a `columns` kernel's
    accumulators, indexed by a loop variable). Made in the entry block: a fixed frame.

        %acc = tile.alloca 32 x vector<64xf32>
    """

    name = "tile.alloca"
    count = prop_def(IntAttr)
    elem = prop_def(Attribute)
    result = result_def(PTR)

    def __init__(self, count: int, elem: Attribute):
        super().__init__(properties={"count": IntAttr(count), "elem": elem}, result_types=[LLVMPointerType()])

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.count.data} x ")
        printer.print_attribute(self.elem)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> AllocaOp:
        count = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_keyword("x")
        op = cls(count, parser.parse_type())
        op.attributes.update(parser.parse_optional_attr_dict())
        return op


@irdl_op_definition
class ParamOp(IRDLOperation):
    """Read slot `index` of the kernel's launch record (8-byte slots: dims, strides, params).

    An f32 parameter sits in the low 4 bytes of its slot.

        %t = tile.param %meta[7] : f32
    """

    name = "tile.param"
    meta = operand_def(PTR)
    index = prop_def(IntAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, meta: SSAValue | Operation, index: int, result_type: Attribute):
        super().__init__(operands=[meta], properties={"index": IntAttr(index)}, result_types=[result_type])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.meta)
        printer.print_string(f"[{self.index.data}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ParamOp:
        meta = parser.resolve_operand(parser.parse_unresolved_operand(), PTR)
        parser.parse_punctuation("[")
        index = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(meta, index, parser.parse_type())
        op.attributes.update(attrs)
        return op


@irdl_op_definition
class OffsetOp(IRDLOperation):
    """`base + offset` elements of type `elem` (a GEP).

        %row = tile.offset %in0[%off] : f16
    """

    name = "tile.offset"
    base = operand_def(PTR)
    offset = operand_def(i64)
    elem = prop_def(Attribute)
    result = result_def(PTR)
    traits = traits_def(Pure())
    assembly_format = "$base `[` $offset `]` attr-dict `:` $elem"

    def __init__(self, base: SSAValue | Operation, offset: SSAValue | Operation, elem: Attribute):
        super().__init__(operands=[base, offset], properties={"elem": elem}, result_types=[LLVMPointerType()])


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """A hint that the cache line of `base + offset` elements of type `elem` will be read soon:
    fetched now into every level (`llvm.prefetch`); it never faults, past the end included.

        tile.prefetch %in0[%off] : f32
    """

    name = "tile.prefetch"
    base = operand_def(PTR)
    offset = operand_def(i64)
    elem = prop_def(Attribute)
    assembly_format = "$base `[` $offset `]` attr-dict `:` $elem"

    def __init__(self, base: SSAValue | Operation, offset: SSAValue | Operation, elem: Attribute):
        super().__init__(operands=[base, offset], properties={"elem": elem})


class _Access(IRDLOperation):
    if TYPE_CHECKING:  # the fields LoadOp and StoreOp both define (IRDL rejects bare annotations here)
        layout: StringAttr
        elem: Attribute
        deinterleaved: UnitAttr | None
        mask: SSAValue | None

    def _check(self, value_type: Attribute) -> None:
        if self.layout.data not in tuple(Layout):
            raise VerifyException(f"{self.name} layout must be one of {', '.join(Layout)}, got {self.layout.data!r}")
        if element(value_type) != self.elem:
            raise VerifyException(f"{self.name} of {self.elem} elements cannot move {value_type}")
        if self.deinterleaved is not None:
            n = lanes(value_type)
            if self.layout.data != Layout.CONTIGUOUS or n is None or n % 2 or not isinstance(self.elem, BFloat16Type):
                raise VerifyException(
                    f"{self.name} deinterleaved needs a contiguous even-width bf16 vector, got {value_type}"
                )
            if self.mask is not None:
                raise VerifyException(f"{self.name} deinterleaved moves whole vectors: it takes no mask")

    @staticmethod
    def _flags(deinterleaved: bool) -> dict[str, Attribute]:
        return {"deinterleaved": UnitAttr()} if deinterleaved else {}


@irdl_op_definition
class LoadOp(_Access):
    """Load element(s) `row[col * stride]` of type `elem`: one element, or `W` consecutive
    columns as a vector (a plain vector load when `layout = contiguous`, a gather of strided
    elements, or one element splatted when `layout = broadcast`).

    With `mask` (a prefix of the columns, `tile.prefix`), only those columns are read (a
    remainder: nothing past them is touched) and the other lanes are `fill`.

    `deinterleaved` (whole contiguous bf16 vectors, no mask) orders the lanes even columns first:
    lane j holds column `col + 2j` for j < W/2 and `col + 2(j - W/2) + 1` after. A loop whose
    loads and stores are all deinterleaved computes what it would without (its body is
    lane-wise), and bf16 lowers without cross-lane packing that way.

        %x = tile.load %row[%c] stride %s "contiguous" {deinterleaved} : bf16 -> vector<16xbf16>
    """

    name = "tile.load"
    row = operand_def(PTR)
    col = operand_def(i64)
    stride = operand_def(i64)
    mask = opt_operand_def()
    layout = prop_def(StringAttr)
    elem = prop_def(Attribute)
    deinterleaved = opt_prop_def(UnitAttr)
    fill = opt_prop_def(FloatAttr)
    result = result_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = ("$row `[` $col `]` `stride` $stride (`mask` $mask^ `:` type($mask))? $layout attr-dict "
                       "`:` $elem `->` type($result)")

    def __init__(self, row, col, stride, layout: str, elem: Attribute, result_type: Attribute | None = None,
                 deinterleaved: bool = False, mask: SSAValue | None = None, fill: float | None = None):
        props: dict[str, Attribute] = {"layout": StringAttr(layout), "elem": elem, **self._flags(deinterleaved)}
        if fill is not None:
            props["fill"] = FloatAttr(fill, f32)
        super().__init__(
            operands=[row, col, stride, [mask] if mask is not None else []],
            properties=props,
            result_types=[result_type or elem],
        )

    def verify_(self) -> None:
        self._check(self.result.type)
        if (self.mask is None) != (self.fill is None):
            raise VerifyException("tile.load with a mask needs a fill for the lanes it does not read")
        if self.mask is not None and lanes(self.mask.type) != lanes(self.result.type):
            raise VerifyException("tile.load's mask has a lane per lane of the vector it loads")


@irdl_op_definition
class StoreOp(_Access):
    """Store element(s) to `row[col * stride]`; the counterpart of `tile.load`.

    `align` (bytes) promises more than element alignment (the vectorizer peels columns until
    it holds); `nontemporal` asks for a streaming store that bypasses the caches;
    `deinterleaved` takes the lanes in the order `tile.load` describes. With `mask` (a prefix of the
    columns, `tile.prefix`) only those columns are written (a remainder).

        tile.store %v, %row[%c] stride %s "contiguous" {align = 32 : i64, nontemporal} : vector<8xf32> -> f32
    """

    name = "tile.store"
    value = operand_def()
    row = operand_def(PTR)
    col = operand_def(i64)
    stride = operand_def(i64)
    mask = opt_operand_def()
    layout = prop_def(StringAttr)
    elem = prop_def(Attribute)
    align = opt_prop_def(IntegerAttr)
    nontemporal = opt_prop_def(UnitAttr)
    deinterleaved = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = ("$value `,` $row `[` $col `]` `stride` $stride (`mask` $mask^ `:` type($mask))? $layout "
                       "attr-dict `:` type($value) `->` $elem")

    def __init__(self, value, row, col, stride, layout: str, elem: Attribute, align: int | None = None,
                 nontemporal: bool = False, deinterleaved: bool = False, mask: SSAValue | None = None):
        props: dict[str, Attribute] = {"layout": StringAttr(layout), "elem": elem, **self._flags(deinterleaved)}
        if align is not None:
            props["align"] = IntegerAttr(align, i64)
        if nontemporal:
            props["nontemporal"] = UnitAttr()
        super().__init__(operands=[value, row, col, stride, [mask] if mask is not None else []], properties=props)

    def verify_(self) -> None:
        self._check(self.value.type)
        if self.mask is not None and lanes(self.mask.type) != lanes(self.value.type):
            raise VerifyException("tile.store's mask has a lane per value lane")
        if self.layout.data == Layout.BROADCAST:
            raise VerifyException("tile.store cannot write a broadcast (stride-0) view")
        if self.align is not None and (self.align.value.data & (self.align.value.data - 1)):
            raise VerifyException(f"tile.store align must be a power of two, got {self.align.value.data}")


@irdl_op_definition
class AlignOffsetOp(IRDLOperation):
    """How many elements of type `elem` from `row[col]` to the next `bytes`-aligned address
    (0 when already aligned); the vectorizer peels that many columns.

        %p = tile.align_offset %row[%c0] to 32 : f32
    """

    name = "tile.align_offset"
    row = operand_def(PTR)
    col = operand_def(i64)
    bytes = prop_def(IntAttr)
    elem = prop_def(Attribute)
    result = result_def(i64)
    traits = traits_def(Pure())

    def __init__(self, row, col, nbytes: int, elem: Attribute):
        super().__init__(operands=[row, col], properties={"bytes": IntAttr(nbytes), "elem": elem},
                         result_types=[i64])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.row)
        printer.print_string("[")
        printer.print_ssa_value(self.col)
        printer.print_string(f"] to {self.bytes.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.elem)

    @classmethod
    def parse(cls, parser: Parser) -> AlignOffsetOp:
        row = parser.resolve_operand(parser.parse_unresolved_operand(), PTR)
        parser.parse_punctuation("[")
        col = parser.resolve_operand(parser.parse_unresolved_operand(), i64)
        parser.parse_punctuation("]")
        parser.parse_keyword("to")
        nbytes = parser.parse_integer(allow_boolean=False, allow_negative=False)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(row, col, nbytes, parser.parse_type())
        op.attributes.update(attrs)
        return op


@irdl_op_definition
class SplatOp(IRDLOperation):
    """Broadcast a scalar to every lane of a vector.

        %v = tile.splat %t : f32 -> vector<8xf32>
    """

    name = "tile.splat"
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        if lanes(self.input.type) is not None or element(self.result.type) != self.input.type:
            raise VerifyException(f"tile.splat makes a vector of {self.input.type}, not {self.result.type}")


@irdl_op_definition
class PrefixOp(IRDLOperation):
    """The mask of the first `count` lanes of `lanes` (all of them when count >= lanes).

        %m = tile.prefix %count : i64 -> vector<32xi1>
    """

    name = "tile.prefix"
    count = operand_def(i64)
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$count attr-dict `:` type($count) `->` type($result)"

    def __init__(self, count: SSAValue | Operation, n: int):
        super().__init__(operands=[count], result_types=[VectorType(i1, [n])])


@irdl_op_definition
class AnyOp(IRDLOperation):
    """Whether any lane of a mask holds (the test of a `version-unlikely` step).

        %c = tile.any %m : vector<32xi1> -> i1
    """

    name = "tile.any"
    input = operand_def()
    result = result_def(i1)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation):
        super().__init__(operands=[input], result_types=[i1])


@irdl_op_definition
class ShuffleOp(IRDLOperation):
    """Lanes `lanes` of a vector, as a narrower vector (the horizontal steps of a reduction).

        %hi = tile.shuffle %acc [16, 17, ..., 31] : vector<32xf32> -> vector<16xf32>
    """

    name = "tile.shuffle"
    input = operand_def()
    lanes = prop_def(DenseArrayBase[IntegerType])
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, picked: list[int]):
        v = SSAValue.get(input)
        super().__init__(operands=[v], properties={"lanes": DenseArrayBase.from_list(i32, picked)},
                         result_types=[VectorType(element(v.type), [len(picked)])])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.input)
        printer.print_string(f" [{', '.join(str(k) for k in self.lanes.get_values())}] : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ShuffleOp:
        unresolved = parser.parse_unresolved_operand()
        picked = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation("->")
        parser.parse_type()
        return cls(parser.resolve_operand(unresolved, t), picked)

    def verify_(self) -> None:
        n = lanes(self.input.type)
        picked = self.lanes.get_values()
        if n is None or not all(0 <= k < n for k in picked) or lanes(self.result.type) != len(picked):
            raise VerifyException("tile.shuffle picks lanes of a vector into a vector of as many lanes")


@irdl_op_definition
class ExtractOp(IRDLOperation):
    """Lane `lane` of a vector, as a scalar.

        %s = tile.extract %v[0] : vector<1xf32> -> f32
    """

    name = "tile.extract"
    input = operand_def()
    lane = prop_def(IntAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, lane: int = 0):
        v = SSAValue.get(input)
        super().__init__(operands=[v], properties={"lane": IntAttr(lane)}, result_types=[element(v.type)])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.input)
        printer.print_string(f"[{self.lane.data}] : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ExtractOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        lane = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation("]")
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation("->")
        parser.parse_type()
        return cls(parser.resolve_operand(unresolved, t), lane)


TILE = Dialect("tile", [AllocaOp, ParamOp, OffsetOp, PrefetchOp, LoadOp, StoreOp, SplatOp, AlignOffsetOp, PrefixOp, AnyOp, ShuffleOp,
                            ExtractOp], [])
