"""`vectorize-elementwise`: run the column loop `width` elements at a time.

Every `scf.for ... {tile.inner}` becomes a vector loop whose body is the scalar body with every
value widened to `vector<width x T>` (the `ew` ops are shape-polymorphic, so they are re-created
with vector types; compares give vector masks). The body exists once: a `tile.pieces` loop runs
the vector loop over the largest multiple of `width` columns in place, and over the remaining
`< width` columns (the tail) through scratch vectors in the function's frame — masked loads copy
the tail's columns into them, one vector step computes on them, masked stores copy its results
back. No scalar loop is left (a scalar exp per leftover column cost a 256-float softmax row 3x,
and Glu's 256-float rows of a split view 2.7x), and no second copy of the body: a masked copy
cost every later stage its size again (a cold compile of GELU's two forms took 1.45x as long;
see `_pieces`). Values from outside the loop (parameters) are splatted once before it;
broadcast (stride-0) operands are loaded once per row and splatted.

`width = 0` takes the model's width (`model_width`) for `lanes`, the f32 lanes of one of the
target's vector registers (the compiler passes 4 for SSE, 8 for AVX2, 16 for AVX-512; the
default, 8, keeps `aclgen opt`'s output the same on every machine): two registers, four for
bodies with heavy functions (exp, sigmoid, tanh, ...: the `heavy` records of
aclgen/frontend/dsl.py), and 32 lanes in at most four registers for other deinterleaved bf16.
The runtime passes a width `aclgen tune` measured instead, where it measured one
(aclgen/schedules.py).

With `align = true` (default) the whole vectors start at the first column where the first
contiguous output's vector stores are aligned to one register (`4 * lanes` bytes, or the whole
vector if that is narrower), and the columns before it (the head) are one more piece through
the scratch vectors, like the tail (a view that is not even element-aligned is done wholly by
them); the whole vectors' stores then carry `align`. A loop marked `tile.no_peel` (a row
kernel's column loop: rows may be short) is not aligned. `nontemporal = true` makes the
contiguous vector store a streaming store (for outputs larger than the caches, where it saves
the read-for-ownership traffic) — when the loop has exactly one output stream; with several,
partial write-combining flushes make streaming stores slower. A `tile.no_peel` loop streams
only a row that is whole aligned vectors, and stores any other row as usual (`_streamed_row`).

With `deinterleave = true` (default) a loop whose every access is a contiguous or broadcast bf16
one gets `deinterleaved` contiguous loads and stores (even columns in the low lanes, odd ones in
the high lanes; the body is lane-wise, so the result is the same): bf16 then widens and narrows
with a shift or a mask per register instead of zero-extensions and cross-lane packs (hardswish
bf16, 1M elements: see `deinterleaves`). The scratch vectors hold the columns in memory order,
so the body reads them deinterleaved like any row.

Before:
    scf.for %c = %c0 to %c1 step %one : i64 {
      %x = tile.load %row[%c] stride %s "contiguous" : f32 -> f32
      %m = ew.cmp "ole" %x, %t : f32, f32 -> i1
      ...
    } {tile.inner}
After (align = false):
    %scratch = tile.alloca 8 x f32                        (in the function's entry block)
    ...
    %t8 = tile.splat %t : f32 -> vector<8xf32>
    scf.for %piece = %one to %three step %one : i64 {      (1: whole vectors, 2: the tail)
      ... %from, %count: the piece's first column and its number of columns
      %masked = arith.cmpi ne, %piece, %one : i64
      %copied = arith.select %masked, %count, %zero : i64
      %scratched = arith.cmpi sgt, %copied, %zero : i64   (the tail has columns)
      %at = tile.offset %row[%from] : f32
      scf.if %scratched {
        %m = tile.prefix %copied : i64 -> vector<8xi1>
        %v = tile.load %at[%zero] stride %s mask %m : vector<8xi1> "contiguous" {fill = 0.0 : f32} : f32 -> vector<8xf32>
        tile.store %v, %scratch[%zero] stride %one "contiguous" : vector<8xf32> -> f32
      }
      %x_row = arith.select %masked, %scratch, %at : !llvm.ptr
      scf.for %c = %zero to %columns step %eight : i64 {
        %x = tile.load %x_row[%c] stride %s "contiguous" : f32 -> vector<8xf32>
        %m = ew.cmp "ole" %x, %t8 : vector<8xf32>, vector<8xf32> -> vector<8xi1>
        ...
      } {tile.vector}
      scf.if %scratched { ...the outputs' scratch vectors back, by masked stores... }
    } {tile.pieces}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import BFloat16Type, IntegerAttr, ModuleOp, UnitAttr, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from aclgen import dtypes
from aclgen.dialects import ew, tile
from aclgen.dialects.enums import Layout
from aclgen.knobs import MAX_WIDTH, WIDTH_RULE, width_ok


def _vec(t, width: int):
    return ew.vector(t, width)


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
        return _add(before, op)

    c0, c1 = loop.lb, loop.ub
    first = c0
    w = pre(arith.ConstantOp(IntegerAttr(width, i64)))
    zero = pre(arith.ConstantOp(IntegerAttr(0, i64)))
    no_peel = "tile.no_peel" in loop.attributes
    target = _aligned_store(body) if align and not no_peel else None
    align_bytes = 0
    cp = None
    if target is not None:
        # the whole vectors start at cp, where the target's vector stores are aligned to a register
        align_bytes = _register_bytes(target, width, lanes)
        gap = pre(tile.AlignOffsetOp(target.row, c0, align_bytes, target.elem))
        cp = pre(arith.MinSIOp(pre(arith.AddiOp(c0, gap)), c1))
        cp.name_hint = "peel_end"
        c0 = cp
    # whole vectors: [c0, cv) with cv = c1 - (c1 - c0) % width
    cv = pre(arith.SubiOp(c1, pre(arith.RemSIOp(pre(arith.SubiOp(c1, c0)), w))))
    cv.name_hint = "vector_end"

    # Streaming stores only pay for a lone output stream: with several, the write-combining
    # buffers flush partial lines between the loop's long compute (SwiGluGrad ran 1.75x slower).
    # A store to a row the loop also reads (a partial sum's read-modify-write) is no stream.
    read = {o.row for o in body.ops if isinstance(o, tile.LoadOp)}
    streams = [o for o in body.ops
               if isinstance(o, tile.StoreOp) and o.layout.data == Layout.CONTIGUOUS and o.row not in read]
    nontemporal = nontemporal and len(streams) == 1
    lines = streams[0] if nontemporal and no_peel and align else None  # see `_streamed_row`
    deinterleave = deinterleave and width % 2 == 0 and deinterleaves(body)
    hoisted: dict[SSAValue, SSAValue] = {}  # broadcast loads, once before the loop
    for op in body.ops:
        if isinstance(op, tile.LoadOp) and op.layout.data == Layout.BROADCAST:
            scalar = pre(tile.LoadOp(op.row, first, op.stride, Layout.BROADCAST, op.elem))
            hoisted[op.result] = pre(tile.SplatOp(scalar, _vec(op.elem, width)))
    accesses = [o for o in body.ops if isinstance(o, tile.StoreOp)
                or (isinstance(o, tile.LoadOp) and o.layout.data != Layout.BROADCAST)]
    splats: dict[SSAValue, SSAValue] = {}

    def widened(bases: dict[Operation, SSAValue], strides: dict[Operation, SSAValue],
                aligned_store: tile.StoreOp | None, align_bytes: int, nontemporal: bool) -> Block:
        """The body `width` columns at a time, each access at its `bases` row (moved to the run's
        first column) with its `strides` stride. `aligned_store`'s stores carry `align_bytes`;
        `nontemporal` streams the output stream's."""
        vbody = Block(arg_types=[i64])
        col = vbody.args[0]
        mapping: dict[SSAValue, SSAValue] = {iv: col, **hoisted}

        def vector_of(v: SSAValue) -> SSAValue:
            if v in mapping:
                return mapping[v]
            if v not in splats:  # defined outside the loop: splat once, before it
                splats[v] = pre(tile.SplatOp(v, _vec(v.type, width)))
            return splats[v]

        for op in body.ops:
            match op:
                case scf.YieldOp():
                    vbody.add_op(scf.YieldOp())
                case tile.LoadOp() if op.result in hoisted:
                    pass
                case tile.LoadOp():
                    new = tile.LoadOp(bases[op], col, strides[op], op.layout.data, op.elem, _vec(op.elem, width),
                                      deinterleaved=deinterleave and op.layout.data == Layout.CONTIGUOUS)
                    vbody.add_op(new)
                    mapping[op.result] = new.result
                case tile.StoreOp():
                    vbody.add_op(tile.StoreOp(
                        vector_of(op.value), bases[op], col, strides[op], op.layout.data, op.elem,
                        align=align_bytes if op is aligned_store else None,
                        nontemporal=nontemporal and op in streams,
                        deinterleaved=deinterleave and op.layout.data == Layout.CONTIGUOUS))
                case _ if op.dialect_name() == "ew":
                    new = type(op).create(operands=[vector_of(v) for v in op.operands],
                                          result_types=[_vec(r.type, width) for r in op.results],
                                          properties=dict(op.properties), attributes=dict(op.attributes))
                    vbody.add_op(new)
                    mapping.update(zip(op.results, new.results))
                case _:
                    raise ValueError(f"in pass vectorize-elementwise: cannot vectorize {op.name} in a column loop")
        return vbody

    def run(ops: list[Operation], lo: SSAValue, end: SSAValue, bases: dict[Operation, SSAValue],
            strides: dict[Operation, SSAValue], aligned_store: tile.StoreOp | None, align_bytes: int,
            nontemporal: bool) -> None:
        """A vector loop over the `end` columns from `lo`: each access's row moved to `lo`."""
        for op in accesses:
            if op not in bases:
                bases[op] = _place(ops, op, lo)
        vloop = scf.ForOp(zero, end, w, [], Region(widened(bases, {**{o: o.stride for o in accesses}, **strides},
                                                             aligned_store, align_bytes, nontemporal)))
        vloop.attributes["tile.vector"] = UnitAttr()
        ops.append(vloop)

    pieces = _pieces(first, cp, cv, c1, zero, w, width, accesses, run, target, align_bytes,
                     nontemporal and lines is None, _scratch(loop, accesses, width))
    if lines is not None:  # cp is None: rows are not peeled
        row = _streamed_row(c0, c1, w, run, lines, _register_bytes(lines, width, lanes), pieces)
        parent.insert_ops_before([*before, *row], loop)  # after the call: it adds to `before`
    else:
        parent.insert_ops_before([*before, *pieces], loop)
    loop.detach()
    loop.erase()


def _add(ops: list[Operation], op: Operation) -> SSAValue:
    ops.append(op)
    return op.results[0]


def _place(ops: list[Operation], op: tile.LoadOp | tile.StoreOp, col: SSAValue) -> SSAValue:
    """Access `op`'s row moved to column `col`."""
    at = col if op.layout.data == Layout.CONTIGUOUS else _add(ops, arith.MuliOp(col, op.stride))
    return _add(ops, tile.OffsetOp(op.row, at, op.elem))


def _scratch(loop: scf.ForOp, accesses: list[tile.LoadOp | tile.StoreOp], width: int) -> dict[Operation, SSAValue]:
    """A vector of `width` elements per access in the function's frame (made in its entry block):
    where the masked steps' columns go through."""
    fn: Operation | None = loop
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    assert fn is not None, "a column loop is in a function"
    entry = fn.body.block
    buffers = {op: tile.AllocaOp(width, op.elem) for op in accesses}
    for b in buffers.values():
        b.result.name_hint = "scratch"
    entry.insert_ops_before(list(buffers.values()), entry.first_op)  # type: ignore[arg-type]
    return {op: b.result for op, b in buffers.items()}


def _pieces(first: SSAValue, cp: SSAValue | None, cv: SSAValue, c1: SSAValue, zero: SSAValue, w: SSAValue,
            width: int, accesses: list[tile.LoadOp | tile.StoreOp], run, target: tile.StoreOp | None,
            align_bytes: int, nontemporal: bool, scratch: dict[Operation, SSAValue]) -> list[Operation]:
    """The columns [first, c1) in up to three pieces, with one copy of the body: the peeled head
    [first, cp) (with `cp`), the whole vectors [cp, cv) in place, and the tail [cv, c1). A head or
    tail (fewer than `width` columns) is one vector step through `scratch`: its columns are read
    by masked loads into it, the body runs on it, and masked stores write its results back.
    A second copy of the body with masked accesses would double the compile time of every stage
    after vectorization; the scratch costs a few stores and loads per head or tail (with
    `nontemporal`, the step's store into it streams too: at most twice a tile, at its ends)."""
    ops: list[Operation] = []
    one = _add(ops, arith.ConstantOp(IntegerAttr(1, i64)))
    two = _add(ops, arith.ConstantOp(IntegerAttr(2, i64)))
    three = _add(ops, arith.ConstantOp(IntegerAttr(3, i64)))
    rb = Block(arg_types=[i64])
    r = rb.args[0]
    inner: list[Operation] = []
    c0 = cp if cp is not None else first
    r.name_hint = "piece"
    tail = _add(inner, arith.CmpiOp(r, two, "eq"))
    lo = _add(inner, arith.SelectOp(tail, cv, c0))
    hi = _add(inner, arith.SelectOp(tail, c1, cv))
    if cp is not None:
        head = _add(inner, arith.CmpiOp(r, zero, "eq"))
        lo = _add(inner, arith.SelectOp(head, first, lo))
        hi = _add(inner, arith.SelectOp(head, cp, hi))
    masked = _add(inner, arith.CmpiOp(r, one, "ne"))
    count = _add(inner, arith.SubiOp(hi, lo))
    # The copies need two values a piece (the columns they copy, 0 for whole vectors, and each
    # access's place), the fewer live across the vector loop the better: each takes a register
    # from its body.
    left = _add(inner, arith.SelectOp(masked, count, zero))
    copying = _add(inner, arith.CmpiOp(left, zero, "sgt"))
    end = _add(inner, arith.SelectOp(masked, _add(inner, arith.SelectOp(copying, w, zero)), count))
    for v, name in ((lo, "from"), (count, "count"), (masked, "masked"), (left, "copied"), (copying, "scratched"),
                    (end, "columns")):
        v.name_hint = name
    places = {op: _place(inner, op, lo) for op in accesses}

    def copy(loads: bool) -> scf.IfOp:
        """The masked columns into the scratch (`loads`) or back from it, where there are any."""
        ops: list[Operation] = []
        mask = _add(ops, tile.PrefixOp(left, width))
        for op in accesses:
            vt = _vec(op.elem, width)
            if isinstance(op, tile.LoadOp) == loads:
                if loads:
                    v = _add(ops, tile.LoadOp(places[op], zero, op.stride, op.layout.data, op.elem, vt, mask=mask,
                                              fill=0.0))
                    ops.append(tile.StoreOp(v, scratch[op], zero, one, Layout.CONTIGUOUS, op.elem))
                else:
                    v = _add(ops, tile.LoadOp(scratch[op], zero, one, Layout.CONTIGUOUS, op.elem, vt))
                    ops.append(tile.StoreOp(v, places[op], zero, op.stride, op.layout.data, op.elem, mask=mask))
        return scf.IfOp(copying, [], [*ops, scf.YieldOp()])

    inner.append(copy(loads=True))
    bases, strides = {}, {}
    for op in accesses:
        bases[op] = _add(inner, arith.SelectOp(masked, scratch[op], places[op]))
        if op.layout.data == Layout.STRIDED:
            strides[op] = _add(inner, arith.SelectOp(masked, one, op.stride))
    run(inner, lo, end, bases, strides, target, align_bytes, nontemporal)
    inner.append(copy(loads=False))
    rb.add_ops([*inner, scf.YieldOp()])
    loop = scf.ForOp(zero if cp is not None else one, three, one, [], Region(rb))
    loop.attributes["tile.pieces"] = UnitAttr()
    return [*ops, loop]


def _register_bytes(store: tile.StoreOp, width: int, lanes: int) -> int:
    """The alignment of `store`'s whole vectors at aligned columns: one register (`4 * lanes`
    bytes), or the whole vector if that is narrower."""
    return min(width * dtypes.from_ir(store.elem).itemsize, 4 * lanes)


def _streamed_row(c0: SSAValue, c1: SSAValue, w: SSAValue, run, stream: tile.StoreOp, align_bytes: int,
                  stored: list[Operation]) -> list[Operation]:
    """A row loop [c0, c1) (not peeled: rows may be short) whose one output stream is to go past
    the caches: a row whose output starts on a register boundary and is whole vectors long
    stores every vector aligned and streaming; any other row runs `stored` (the pieces, storing
    as usual). Streaming stores that are not aligned become 8-byte
    `movntsd`s on x86 (eight and their shuffles a zmm), and an ordinary store to a row's partial
    end line, between streamed lines, fetches that line and (the adjacent-line prefetch) its
    streamed neighbour, which the streaming store then has to evict: RmsNorm f32 [65536, 256],
    rows 4 bytes past a line, took 11 ms with aligned streamed middles and ordinary ends, 4.1
    with every vector in `movntsd`s or every store ordinary; rows on a line, streamed whole, 2.6."""
    ops: list[Operation] = []
    gap = _add(ops, tile.AlignOffsetOp(stream.row, c0, align_bytes, stream.elem))
    n = _add(ops, arith.SubiOp(c1, c0))
    left = _add(ops, arith.AddiOp(gap, _add(ops, arith.RemSIOp(n, w))))  # both >= 0
    whole = _add(ops, arith.CmpiOp(left, _add(ops, arith.ConstantOp(IntegerAttr(0, i64))), "eq"))
    streamed: list[Operation] = []
    run(streamed, c0, n, {}, {}, stream, align_bytes, True)
    return [*ops, scf.IfOp(whole, [], [*streamed, scf.YieldOp()], [*stored, scf.YieldOp()])]


@dataclass(frozen=True)
class VectorizeElementwisePass(ModulePass):
    name = "vectorize-elementwise"

    width: int = 0
    lanes: int = 8  # f32 lanes of one vector register of the target
    align: bool = True
    nontemporal: bool = False
    deinterleave: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not width_ok(self.width):
            raise ValueError(f"in pass {self.name}: width must be {WIDTH_RULE}, got {self.width}")
        if not width_ok(self.lanes) or self.lanes == 0:
            raise ValueError(f"in pass {self.name}: lanes must be a power of two up to {MAX_WIDTH}, got {self.lanes}")
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
