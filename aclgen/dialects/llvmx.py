"""`llvmx`: the few LLVM instructions xDSL's `llvm` dialect cannot express for vectors, and the
AVX-512 instructions and the table lookups the math expansions use where the target has them.

xDSL 0.74's `llvm.fcmp` only takes scalar floats and returns `i1`, `llvm.select` only takes an
`i1` condition, and there is no `llvm.extractelement` or `llvm.fptosi`. These ops are the vector-capable
versions; `aclgen.codegen.llvm_ir` translates them next to xDSL's own converters.

    %m = llvmx.fcmp "ole" %a, %b : vector<8xf32> -> vector<8xi1>
    %r = llvmx.select %m, %x, %y : vector<8xi1>, vector<8xf32>
    %e = llvmx.extractelement %v[%i] : vector<8xf32> -> f32
    %n = llvmx.fptosi %r : vector<8xf32> to vector<8xi32>
    %y = llvmx.avx512ps "scalef"(%v, %n) : vector<64xf32>, vector<64xf32> -> vector<64xf32>
    %z = llvmx.avx512ps "fixupimm"(%y, %x) {table = 1 : i64} : vector<64xf32>, vector<64xf32> -> vector<64xf32>
    %t = llvmx.lookup [1.0 : f32, ...] (%k) : vector<64xi32> -> vector<64xf32>
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntegerAttr, StringAttr, f32, i1, i32, i64
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from aclgen.dialects.construct import init
from aclgen.dialects.enums import RELATION_SYMBOLS
from aclgen.dialects.ew import element, lanes, like


class FCmpPredicate(enum.StrEnum):
    """LLVM's fcmp predicates, which `llvmx.fcmp` takes: ordered (`o`: false if either operand is
    NaN) or unordered (`u`: true if either is), then the relation; `ord` and `uno` test for NaN
    alone. `ew.cmp`'s predicates (aclgen.dialects.enums.Predicate) are six of them, by name."""

    OEQ = "oeq"
    OGT = "ogt"
    OGE = "oge"
    OLT = "olt"
    OLE = "ole"
    ONE = "one"
    ORD = "ord"
    UEQ = "ueq"
    UGT = "ugt"
    UGE = "uge"
    ULT = "ult"
    ULE = "ule"
    UNE = "une"
    UNO = "uno"

    @property
    def ordered(self) -> bool:
        return self.value[0] == "o"

    @property
    def symbol(self) -> str:
        """llvmlite's name of the comparison (its `fcmp_ordered` and `fcmp_unordered` take the
        flavour apart): "<", "==", ..., or "ord" and "uno" as they are."""
        return RELATION_SYMBOLS.get(self.value[1:], self.value)


@irdl_op_definition
class FCmpOp(IRDLOperation):
    name = "llvmx.fcmp"
    predicate = prop_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$predicate $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, predicate: FCmpPredicate, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        init(self, (lhs, rhs), [like(lhs.type, i1)], {"predicate": StringAttr(predicate)})

    def verify_(self) -> None:
        if self.predicate.data not in tuple(FCmpPredicate):
            raise VerifyException(f"unknown fcmp predicate {self.predicate.data!r}")
        if self.lhs.type != self.rhs.type or self.result.type != like(self.lhs.type, i1):
            raise VerifyException("llvmx.fcmp compares two values of one type into a mask of their shape")


@irdl_op_definition
class SelectOp(IRDLOperation):
    name = "llvmx.select"
    cond = operand_def()
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, cond: SSAValue | Operation, lhs: SSAValue | Operation, rhs: SSAValue | Operation,
                 result_type: Attribute | None = None):
        init(self, (cond, lhs, rhs), [result_type or SSAValue.get(lhs).type])

    def verify_(self) -> None:
        if element(self.cond.type) != i1 or lanes(self.cond.type) != lanes(self.lhs.type):
            raise VerifyException("llvmx.select needs an i1 condition or a mask as long as its values")
        if not (self.lhs.type == self.rhs.type == self.result.type):
            raise VerifyException("llvmx.select operands and result must share one type")


@irdl_op_definition
class ExtractElementOp(IRDLOperation):
    name = "llvmx.extractelement"
    vector = operand_def()
    index = operand_def(i64)
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$vector `[` $index `]` attr-dict `:` type($vector) `->` type($result)"

    def __init__(self, vector: SSAValue | Operation, index: SSAValue | Operation, result_type: Attribute | None = None):
        init(self, (vector, index), [result_type or element(SSAValue.get(vector).type)])


@irdl_op_definition
class FPToSIOp(IRDLOperation):
    """`fptosi`: float to signed integer, toward zero. Poison out of range: callers clamp first
    (LLVM's `fptosi.sat` would do both, but is scalarized with branches on x86)."""

    name = "llvmx.fptosi"
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, input: SSAValue | Operation, result_type):
        init(self, (input,), [result_type])


class AVX512Function(enum.StrEnum):
    """AVX-512F's float32 functions that `llvmx.avx512ps` names, each one instruction:
    `scalef`: a * 2^floor(b), rounded once (vscalefps); `getexp`: floor(log2 |a|) as a float,
    subnormals included (vgetexpps); `getmant`: |a|'s significand in [1, 2) with a's sign
    (vgetmantps, interval and sign control 0); `rsqrt14`: 1 / sqrt(a) within a relative 2^-14,
    subnormals included, +-0 -> +-inf, +inf -> +0, a < 0 -> NaN (vrsqrt14ps: the one estimate of
    the four, the others exact); `fixupimm`: a, or a special value chosen by b's class
    (vfixupimmps: the op's `table`, `fixup_table`). NaN operands give a quieted NaN of theirs (but
    for fixupimm, which only copies)."""

    SCALEF = "scalef"
    GETEXP = "getexp"
    GETMANT = "getmant"
    RSQRT14 = "rsqrt14"
    FIXUPIMM = "fixupimm"

    @property
    def arity(self) -> int:
        return 2 if self in (AVX512Function.SCALEF, AVX512Function.FIXUPIMM) else 1

    @property
    def estimate(self) -> bool:
        """vrsqrt14ps: its intrinsic has no `mask.` in its name and no rounding operand."""
        return self is AVX512Function.RSQRT14

    @property
    def rounding_operand(self) -> bool:
        """Whether the 512-bit intrinsic takes a rounding operand (the exact functions do)."""
        return not self.estimate

    def intrinsic(self, bits: int) -> str:
        """LLVM's name of the instruction on `bits`-bit vectors (128, 256 or 512)."""
        return f"llvm.x86.avx512.{'' if self.estimate else 'mask.'}{self.value}.ps.{bits}"


class FixupClass(enum.IntEnum):
    """vfixupimmps's classes of its second operand, in the order of the table's nibbles."""

    QNAN = 0
    SNAN = 1
    ZERO = 2  # +-0
    ONE = 3  # +1
    NEG_INF = 4
    POS_INF = 5
    NEGATIVE = 6  # finite, below 0
    POSITIVE = 7  # finite, above 0 (but 1)


class Fixup(enum.IntEnum):
    """vfixupimmps's responses (a nibble each): the first operand kept, the second copied, or a
    constant."""

    KEEP = 0
    SOURCE = 1
    QNAN_OF_SOURCE = 2
    NAN = 3  # the default NaN, 0xffc00000 (negative)
    NEG_INF = 4
    POS_INF = 5
    INF_OF_SOURCE_SIGN = 6
    NEG_ZERO = 7
    POS_ZERO = 8
    NEG_ONE = 9
    POS_ONE = 10


def fixup_table(**responses: Fixup) -> int:
    """fixupimm's table from responses by class name (`FixupClass`; the others keep)."""
    table = 0
    for name, response in responses.items():
        table |= int(response) << (4 * FixupClass[name.upper()])
    return table


@irdl_op_definition
class AVX512Op(IRDLOperation):
    """One of `AVX512Function` on f32 values of any shape (scalar or vector): translated to its
    intrinsic (`AVX512Function.intrinsic`, 512, 256 or 128 bits) on chunks of 16, 8 or 4 lanes (a
    scalar in the first lane of 4). expand-math emits it only for targets with AVX-512F (its
    `avx512` option), where the generic form (`llvm.frexp`, `llvm.ldexp`) would be a libcall or an
    integer conversion, and rsqrt's estimate has none."""

    name = "llvmx.avx512ps"
    function = prop_def(StringAttr)
    table = opt_prop_def(IntegerAttr)  # fixupimm's, printed in the attribute dictionary
    args = var_operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$function `(` $args `)` attr-dict `:` type($args) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, function: AVX512Function, *args: SSAValue | Operation, table: int | None = None):
        props: dict[str, Attribute] = {"function": StringAttr(function)}
        if table is not None:
            props["table"] = IntegerAttr(table, i64)
        super().__init__(operands=[list(args)], properties=props, result_types=[SSAValue.get(args[0]).type])

    def verify_(self) -> None:
        if self.function.data not in tuple(AVX512Function):
            raise VerifyException(f"unknown llvmx.avx512ps function {self.function.data!r}")
        fn = AVX512Function(self.function.data)
        if len(self.args) != fn.arity:
            raise VerifyException(f"llvmx.avx512ps {fn} takes {fn.arity} operands")
        if (self.table is not None) != (fn is AVX512Function.FIXUPIMM):
            raise VerifyException("llvmx.avx512ps takes a table for fixupimm, and only there")
        if element(self.result.type) != f32 or any(a.type != self.result.type for a in self.args):
            raise VerifyException("llvmx.avx512ps takes and gives f32 values of one shape")


@irdl_op_definition
class LookupOp(IRDLOperation):
    """`table[key mod len(table)]` in every lane: an i32 key of any shape (scalar or vector) picks
    one of 8 or 16 f32 constants. Translated to LLVM IR as an extract from the constant table
    per lane, which LLVM's x86 backend turns into `vpermps` (AVX2 and later); without a vector
    permute it is a load per lane, so expand-math emits it only with its `permute` option
    (`Builder.lookup`: 8 entries, selects elsewhere)."""

    name = "llvmx.lookup"
    table = prop_def(ArrayAttr[FloatAttr])
    key = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$table `(` $key `)` attr-dict `:` type($key) `->` type($result)"

    def __init__(self, table: Sequence[float], key: SSAValue | Operation):
        key = SSAValue.get(key)
        super().__init__(operands=[key], properties={"table": ArrayAttr([FloatAttr(v, f32) for v in table])},
                         result_types=[like(key.type, f32)])

    @property
    def values(self) -> list[float]:
        return [a.value.data for a in self.table.data]

    def verify_(self) -> None:
        if len(self.table.data) not in (8, 16) or any(a.type != f32 for a in self.table.data):
            raise VerifyException("llvmx.lookup's table is 8 or 16 f32 values")
        if element(self.key.type) != i32 or self.result.type != like(self.key.type, f32):
            raise VerifyException("llvmx.lookup takes i32 keys and gives f32 values of their shape")


LLVMX = Dialect("llvmx", [FCmpOp, SelectOp, ExtractElementOp, FPToSIOp, AVX512Op, LookupOp], [])
