"""`vectorize-elementwise`: run the column loop `width` elements at a time.

Every `scf.for ... {tile.inner}` becomes a vector loop over the largest multiple of `width`
columns, whose body is the scalar body with every value widened to `vector<width x T>` (the
`ew` ops are shape-polymorphic, so they are re-created with vector types; compares give vector
masks), followed by one more vector step for the remaining `< width` columns (the tail) whose
loads and stores are masked to them: no scalar loop is left (a scalar exp per leftover column
cost a 256-float softmax row 3x, and Glu's 256-float rows of a split view 2.7x). Values from
outside the loop (parameters) are splatted once before it; broadcast (stride-0) operands are
loaded once per row and splatted.

`width = 0` takes the model's width (`model_width`) for `lanes`, the f32 lanes of one of the
target's vector registers (the compiler passes 4 for SSE, 8 for AVX2, 16 for AVX-512; the
default, 8, keeps `aclgen opt`'s output the same on every machine): two registers, four for
bodies with heavy functions (exp, sigmoid, tanh, ...: the `heavy` records of
aclgen/frontend/dsl.py), and 32 lanes in at most four registers for other deinterleaved bf16.
The runtime passes a width `aclgen tune` measured instead, where it measured one
(aclgen/schedules.py).

With `align = true` (default) the vector loop starts at the first column where the first
contiguous output's vector stores are aligned to one register (`4 * lanes` bytes, or the whole
vector if that is narrower), and the masked steps, run in a two-trip `tile.remainders` loop, do
both the columns before it and the tail (a view that is not even element-aligned is done wholly
by them); those stores then carry `align`. A loop marked `tile.no_peel` (a row kernel's
column loop: rows may be short) is not aligned. `nontemporal = true` makes the contiguous vector
store a streaming store (for outputs larger than the caches, where it saves the
read-for-ownership traffic) — when the loop has exactly one output stream; with several,
partial write-combining flushes make streaming stores slower. A `tile.no_peel` loop streams
only a row that is whole aligned vectors, and stores any other row as usual (`_streamed_row`).

With `deinterleave = true` (default) a loop whose every access is a contiguous or broadcast bf16
one gets `deinterleaved` contiguous loads and stores (even columns in the low lanes, odd ones in
the high lanes; the body is lane-wise, so the result is the same): bf16 then widens and narrows
with a shift or a mask per register instead of zero-extensions and cross-lane packs (hardswish
bf16, 1M elements: see `deinterleaves`).

Before:
    scf.for %c = %c0 to %c1 step %one : i64 {
      %x = tile.load %row[%c] stride %s {layout = "contiguous"} : f32 -> f32
      %m = ew.cmp ole %x, %t : f32, f32
      ...
    } {tile.inner}
After:
    %t8 = tile.splat %t : f32 -> vector<8xf32>
    scf.for %c = %c0 to %cv step %eight : i64 {
      %x = tile.load %row[%c] stride %s {layout = "contiguous"} : f32 -> vector<8xf32>
      %m = ew.cmp ole %x, %t8 : vector<8xf32>, vector<8xf32>
      ...
    } {tile.vector}
    scf.for %c = %cv to %c1 step %eight : i64 {
      %n = arith.subi %c1, %c : i64
      %m = tile.prefix %n : i64 -> vector<8xi1>
      %x = tile.load %row[%c] stride %s mask %m : vector<8xi1> "contiguous" {fill = 0.0 : f32} : f32 -> vector<8xf32>
      ...
    } {tile.vector}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import BFloat16Type, IntegerAttr, ModuleOp, UnitAttr, VectorType, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from aclgen import dtypes
from aclgen.dialects import ew, tile
from aclgen.dialects.enums import Layout


def _vec(t, width: int):
    return VectorType(t, [width])


def _aligned_store(body: Block) -> tile.StoreOp | None:
    """The store whose vector accesses peeling makes aligned: the first contiguous one."""
    for op in body.ops:
        if isinstance(op, tile.StoreOp) and op.layout.data == Layout.CONTIGUOUS:
            return op
    return None


def deinterleaves(body: Block) -> bool:
    """Whether to deinterleave a column loop (at an even width): every access bf16, contiguous or
    broadcast (hoisted splats are lane-invariant), at least one contiguous. Measured in one
    process (1M elements, 2 threads, AVX2): hardswish bf16 158 -> 102 µs, selu bf16 139 -> 93."""
    memory = [o for o in body.ops if isinstance(o, (tile.LoadOp, tile.StoreOp))]
    return all(
        isinstance(o.elem, BFloat16Type) and o.layout.data in (Layout.CONTIGUOUS, Layout.BROADCAST) for o in memory
    ) and any(o.layout.data == Layout.CONTIGUOUS for o in memory)


def vectorize_loop(loop: scf.ForOp, width: int, lanes: int, align: bool = True, nontemporal: bool = False,
                   deinterleave: bool = False) -> None:
    parent = loop.parent_block()
    assert parent is not None
    body = loop.body.block
    iv = body.args[0]
    before: list[Operation] = []

    def pre(op: Operation) -> SSAValue:
        before.append(op)
        return op.results[0]

    c0, c1 = loop.lb, loop.ub
    first = c0
    w = pre(arith.ConstantOp(IntegerAttr(width, i64)))
    no_peel = "tile.no_peel" in loop.attributes
    target = _aligned_store(body) if align and not no_peel else None
    align_bytes = 0
    cp = None
    if target is not None:
        # the vector loop starts at cp, where the target's vector stores are aligned to a register
        align_bytes = min(width * dtypes.from_ir(target.elem).itemsize, 4 * lanes)
        gap = pre(tile.AlignOffsetOp(target.row, c0, align_bytes, target.elem))
        cp = pre(arith.MinSIOp(pre(arith.AddiOp(c0, gap)), c1))
        cp.name_hint = "peel_end"
        c0 = cp
    # vector loop bounds: [c0, cv) with cv = c1 - (c1 - c0) % width
    n = pre(arith.SubiOp(c1, c0))
    cv = pre(arith.SubiOp(c1, pre(arith.RemSIOp(n, w))))
    cv.name_hint = "vector_end"

    # Streaming stores only pay for a lone output stream: with several, the write-combining
    # buffers flush partial lines between the loop's long compute (SwiGluGrad ran 1.75x slower).
    # A store to a row the loop also reads (a partial sum's read-modify-write) is no stream.
    read = {o.row for o in body.ops if isinstance(o, tile.LoadOp)}
    streams = [o for o in body.ops
               if isinstance(o, tile.StoreOp) and o.layout.data == Layout.CONTIGUOUS and o.row not in read]
    nontemporal = nontemporal and len(streams) == 1
    lines = streams[0] if nontemporal and no_peel and align else None  # see `_streamed_row`
    lines_bytes = min(width * dtypes.from_ir(lines.elem).itemsize, 4 * lanes) if lines else 0
    deinterleave = deinterleave and width % 2 == 0 and deinterleaves(body)
    splats: dict[SSAValue, SSAValue] = {}
    hoisted: dict[SSAValue, SSAValue] = {}  # broadcast loads, once before the loop

    def vector_of(v: SSAValue, mapping: dict[SSAValue, SSAValue]) -> SSAValue:
        """The vector form of a value used inside the vector loop."""
        if v in mapping:
            return mapping[v]
        if v not in splats:  # defined outside the loop: splat once, before it
            splats[v] = pre(tile.SplatOp(v, _vec(v.type, width)))
        return splats[v]

    def widened(hi: SSAValue | None, aligned_store: tile.StoreOp | None = target, align_bytes: int = align_bytes,
                nontemporal: bool = nontemporal) -> Block:
        """The body `width` columns at a time; with `hi`, only the first `hi - column` of them
        (a remainder), every load and store masked. `aligned_store`'s vector stores carry
        `align_bytes`; `nontemporal` streams the output stream's unmasked ones."""
        vbody = Block(arg_types=[i64])
        viv = vbody.args[0]
        mapping: dict[SSAValue, SSAValue] = {iv: viv}
        mask = None
        if hi is not None:
            count = arith.SubiOp(hi, viv)
            mask = tile.PrefixOp(count, width)
            vbody.add_ops([count, mask])
        for op in body.ops:
            match op:
                case scf.YieldOp():
                    vbody.add_op(scf.YieldOp())
                case tile.LoadOp() if op.layout.data == Layout.BROADCAST:
                    if op.result not in hoisted:
                        scalar = pre(tile.LoadOp(op.row, c0, op.stride, Layout.BROADCAST, op.elem))
                        hoisted[op.result] = pre(tile.SplatOp(scalar, _vec(op.elem, width)))
                    mapping[op.result] = hoisted[op.result]
                case tile.LoadOp():
                    new = tile.LoadOp(op.row, viv, op.stride, op.layout.data, op.elem, _vec(op.elem, width),
                                      deinterleaved=deinterleave and op.layout.data == Layout.CONTIGUOUS,
                                      mask=mask.result if mask else None, fill=0.0 if mask else None)
                    vbody.add_op(new)
                    mapping[op.result] = new.result
                case tile.StoreOp():
                    aligned = op is aligned_store and not mask
                    vbody.add_op(
                        tile.StoreOp(
                            vector_of(op.value, mapping), op.row, viv, op.stride, op.layout.data, op.elem,
                            align=align_bytes if aligned else None,
                            nontemporal=nontemporal and not mask and op in streams,
                            deinterleaved=deinterleave and op.layout.data == Layout.CONTIGUOUS,
                            mask=mask.result if mask else None,
                        )
                    )
                case _ if op.dialect_name() == "ew":
                    new = type(op).create(
                        operands=[vector_of(v, mapping) for v in op.operands],
                        result_types=[_vec(r.type, width) for r in op.results],
                        properties=dict(op.properties),
                        attributes=dict(op.attributes),
                    )
                    vbody.add_op(new)
                    for old, res in zip(op.results, new.results):
                        mapping[old] = res
                case _:
                    raise ValueError(f"in pass vectorize-elementwise: cannot vectorize {op.name} in a column loop")
        return vbody

    def masked_loop(lo: SSAValue, hi: SSAValue) -> scf.ForOp:
        """[lo, hi) `width` columns at a time, every step masked to the columns left."""
        remainder = scf.ForOp(lo, hi, w, [], Region(widened(hi)))
        remainder.attributes["tile.vector"] = UnitAttr()
        return remainder

    vloop = scf.ForOp(c0, cv, w, [], Region(widened(None, nontemporal=nontemporal and lines is None)))
    vloop.attributes["tile.vector"] = UnitAttr()
    if cp is None and lines is not None:
        row = _streamed_row(c0, c1, cv, w, widened, lines, lines_bytes, [vloop, masked_loop(cv, c1)])
        parent.insert_ops_before([*before, *row], loop)  # after the call: it adds to `before`
    elif cp is None:  # the < width last columns in one masked step
        parent.insert_ops_before([*before, vloop, masked_loop(cv, c1)], loop)
    else:
        # One masked loop serves both remainders, the peeled head [first, cp) and the tail
        # [cv, c1), in a two-trip loop: a second copy of the body would cost compile time for
        # nothing (columns are independent, so their order does not matter).
        rbody = Block(arg_types=[i64])
        r = rbody.args[0]
        zero = arith.ConstantOp(IntegerAttr(0, i64))
        two = arith.ConstantOp(IntegerAttr(2, i64))
        one = arith.ConstantOp(IntegerAttr(1, i64))
        is_head = arith.CmpiOp(r, zero, "eq")
        lo = arith.SelectOp(is_head, first, cv)
        hi = arith.SelectOp(is_head, cp, c1)
        rbody.add_ops([is_head, lo, hi, masked_loop(lo.result, hi.result), scf.YieldOp()])
        remainders = scf.ForOp(zero, two, one, [], Region(rbody))
        remainders.attributes["tile.remainders"] = UnitAttr()
        parent.insert_ops_before([*before, vloop, zero, two, one, remainders], loop)
    loop.detach()
    loop.erase()


def _streamed_row(c0: SSAValue, c1: SSAValue, cv: SSAValue, w: SSAValue, widened, stream: tile.StoreOp,
                  align_bytes: int, stored: list[Operation]) -> list[Operation]:
    """A row loop [c0, c1) (not peeled: rows may be short) whose one output stream is to go past
    the caches: a row whose output starts on a register boundary and is whole vectors long
    (`cv`, the vector loop's end, is c1) stores every vector aligned and streaming; any other row
    runs `stored` (the vector loop and the masked step, storing as usual). Streaming stores that are not aligned become 8-byte
    `movntsd`s on x86 (eight and their shuffles a zmm), and an ordinary store to a row's partial
    end line, between streamed lines, fetches that line and (the adjacent-line prefetch) its
    streamed neighbour, which the streaming store then has to evict: RmsNorm f32 [65536, 256],
    rows 4 bytes past a line, took 11 ms with aligned streamed middles and ordinary ends, 4.1
    with every vector in `movntsd`s or every store ordinary; rows on a line, streamed whole, 2.6."""
    ops: list[Operation] = []

    def add(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    gap = add(tile.AlignOffsetOp(stream.row, c0, align_bytes, stream.elem))
    left = add(arith.AddiOp(gap, add(arith.SubiOp(c1, cv))))  # both >= 0
    whole = add(arith.CmpiOp(left, add(arith.ConstantOp(IntegerAttr(0, i64))), "eq"))
    streamed = scf.ForOp(c0, c1, w, [], Region(widened(None, stream, align_bytes)))
    streamed.attributes["tile.vector"] = UnitAttr()
    return [*ops, scf.IfOp(whole, [], [streamed, scf.YieldOp()], [*stored, scf.YieldOp()])]


@dataclass(frozen=True)
class VectorizeElementwisePass(ModulePass):
    name = "vectorize-elementwise"

    width: int = 0
    lanes: int = 8  # f32 lanes of one vector register of the target
    align: bool = True
    nontemporal: bool = False
    deinterleave: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for option in ("width", "lanes"):
            v = getattr(self, option)
            if v < 0 or v & (v - 1) or (option == "lanes" and v == 0):
                raise ValueError(f"in pass {self.name}: {option} must be {'0 or ' * (option == 'width')}"
                                 f"a power of two, got {v}")
        loops = [o for o in op.walk() if isinstance(o, scf.ForOp) and "tile.inner" in o.attributes]
        for loop in loops:
            width = self.width or model_width(loop, self.lanes)
            if width > 1:
                vectorize_loop(loop, width, self.lanes, self.align, self.nontemporal, self.deinterleave)


DEINTERLEAVED_LANES = 32  # f32 lanes of one value in light deinterleaved bf16 bodies
REGISTERS_PER_VALUE = (4, 2)  # at most, in heavy and in other bodies


def model_width(loop: scf.ForOp, lanes: int) -> int:
    """The model's width for a target of `lanes` f32 lanes per register, for a variant
    `aclgen tune` has not measured on this target
    (aclgen/schedules.py): how many vector registers one value of the body spans, so that LLVM
    interleaves that many independent pieces of each iteration and the loads of the next.

    - Other bodies: two registers (AVX2: 16 lanes; AVX-512: 32). Measured on AVX2, one process,
      2 threads, median µs: f16/bf16 bodies (widen, compute in f32, round back) hardswish bf16
      174 -> 161, f16 95 -> 87 against one register (four: 81 -> 90); f32 bodies, more loads in
      flight: selu 64K 7.8 -> 7.0, 1M 110 -> 105, threshold 64K 8.4 -> 7.4, 1M 101 -> 98.
    - Bodies with heavy functions (long dependent chains, a dozen live temporaries): four
      registers, whatever their width. AVX2: four ymm (SwiGluGrad 1M 777 -> 701 against two).
      AVX-512 (Zen 4, `aclgen bench`, 1M, minima of two runs): four zmm against two, softplus
      f32 595 -> 504 µs, bf16 643 -> 540, mish_backward bf16 587 -> 494, log_sigmoid bf16 590 ->
      506, GeLU bf16 412 -> 371, Glu bf16 344 -> 292; sigmoid f32 135 -> 142 and SwiGluGrad f32
      322 -> 331 the other way. Four zmm spill some temporaries; that used to cost 1.5x (SwiGluGrad
      2.5 ms against 1.7) while the spill slots could straddle cache lines, which the kernels'
      64-byte frame alignment (aclgen/codegen/llvm_ir.py) ended.
    - Light deinterleaved bf16 bodies (`deinterleaves`): 32 lanes, at most four registers (AVX2:
      hardswish bf16 1M 118 -> 112, selu 91 -> 83, softshrink 56 -> 50 against two; AVX-512:
      64 lanes ran softshrink bf16 1M 36 -> 39 and hardswish 69 -> 76).
    """
    body = loop.body.block
    if any(isinstance(o, ew.FunctionOp) and o.FUNCTION.heavy for o in body.ops):
        return REGISTERS_PER_VALUE[0] * lanes
    if deinterleaves(body):
        return min(REGISTERS_PER_VALUE[0] * lanes, max(DEINTERLEAVED_LANES, lanes))
    return REGISTERS_PER_VALUE[1] * lanes
