"""`tile-rows`: turn each `ew.kernel` with reductions into a `func.func` that works a row at a time.

A kernel that reduces (`reduced = k`) has an iteration space of kept dims followed by its `k`
reduced dims (the runtime permutes and merges the call's dims into that form). A *row* is one
point of the kept dims: the reduced slice every `ew.reduce` of the formula reduces. Threads own
ranges `[begin, end)` of rows, so a row is always computed by one thread, start to end.

For each row the function runs, in the order of the formula:

- one pass over the row per set of `ew.reduce`s that need no value of each other (`_ready`:
  LayerNormBackward's two means share one): their operands' ops (cloned into the loop) 32 lanes
  at a time, each into its `vector<32xf32>` accumulator, then the 32 lanes folded in a fixed tree
  (16 + 16, 8 + 8, ..., 1 + 1) into the row's value. A tail of fewer than 32 columns is read with
  a masked load (nothing past the row is touched) and its missing lanes are the reduction's
  identity (+0, -inf, +inf). So element j of a run of the innermost reduced dim always lands in
  lane j mod 32, runs of the outer reduced dims follow in order, and the order of every sum is
  fixed by the row's shape alone: not by the vector width of the target, the tile, the thread
  count or the call. Sums and means accumulate in f32 for every dtype;
- the ops that depend only on row values (rsqrt(mean + eps)), once per row;
- the outputs: those that vary along the row in a column loop (`tile.inner`, vectorized by
  `vectorize-elementwise` like any elementwise loop), those that are row values (RmsNorm's rstd)
  stored once at the row's position.

A pass re-reads the row, from the cache when it fits (a 4096-float row is 16 KiB).

A row of at most `ROW_BUFFER` elements keeps a reduction's operand that the outputs use again and
that takes a heavy function (softmax's exp(x - max): `_reused`) in a stack buffer during its
pass, and the outputs read it back instead of computing it again. A longer row keeps it in its
f32 output instead, where the final pass then reads it and writes the output over it
(`_held_in_output`: softmax's row of e, then e / sum), if that pass reads nothing else of the
row, so that an output written in place over an input clobbers nothing still to be read;
otherwise (a half-type output) its pass stores it to a scratch it never reads (`SCRATCH`) and
the final pass computes it again. The passes are built once, storing through a pointer the
row's length selects; the final pass once for each place it reads from (an `scf.if`). All give
the same bits.

A kernel marked `columns` (the planner's choice when the operands walk the innermost kept dim
contiguously and the reduced ones with a stride: RmsNormGrad's dgamma sums down the columns of
x) runs `column_lanes` adjacent rows at a time instead, one per vector lane: its views' layouts
describe the kept dim; each pass walks the run element by element, and accumulator l of every
lane adds the elements j = l mod 32 (`_reduce_columns`), so every row's value keeps the bits a
row at a time gives it; row values are vectors, outputs are stored a vector of rows per element,
the last block of a run masked. Where every reduction is in the first pass (dgamma, gradBias),
the runs are walked once for `column_group` blocks together (up to 1024 adjacent rows: a row
visit of 4 KiB of f32 instead of 256 bytes), each block's accumulators in one stack array, then
each block folds its own: the same additions in the same order.

A kernel with `partials` (the planner's choice for a sum across rows next to outputs a row at a
time: RmsNormGrad's dgamma = sum over the rows of rstd * x * dy, beside dx) yields each such
sum's operand, and runs its rows in blocks of `blocks`: its range [begin, end) counts rows in
whole blocks, as the pool's chunks of it do (Kernel.chunking). Such an output's pointer is the
block's row of a contiguous [blocks, row] f32 buffer; the block's first row stores its values
there and each next row adds its own in the column loop (`_final_pass`). A block is one
thread's, so its sums' order is the rows' order whatever the thread count; a second kernel
adds the blocks up. A pass whose reductions take a heavy function (exp) prefetches the next
row (`_next_rows`) and takes two vectors a step.

Before:
    ew.kernel @softmax(%x: !ew.view<2xf32, contiguous>) -> (!ew.view<2xf32, contiguous>) reduced 1 {
      %m = ew.reduce "amax" %x : f32 -> f32
      %e = ew.exp (ew.sub %x, %m)
      %s = ew.reduce "sum" %e : f32 -> f32
      ew.yield (ew.div %e, %s)
    }
After (abridged):
    scf.for %row = %begin to %end step %one {
      %acc = scf.for %c = %c0 to %n32 step %c32 iter_args(%a = %neg_inf) { ... ew.maximum ... }
      ...                                       (the tail, the tree)
      %s = scf.for ... { ew.exp, ew.add }       (the second pass)
      scf.for %c = %c0 to %n step %one { ew.div; tile.store } {tile.inner}
    } {tile.rows}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import Float32Type, FloatAttr, IntegerAttr, ModuleOp, UnitAttr, VectorType, f32, i64
from xdsl.ir import Block, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass

from aclgen import dtypes as dt
from aclgen.dialects import ew, tile
from aclgen.dialects.enums import Layout
from aclgen.passes.builder import Builder
from aclgen.passes.tile_elementwise import Entry, offsets_of

LANES = 32  # partial results per reduction: element j of a run goes to lane j mod 32
# Bytes of each operand a `columns` kernel reads per element of the run: its rows per block are
# COLUMN_BYTES / the narrowest input's element size, at most MAX_COLUMN_LANES (four cache lines a
# row visit; fewer leave the memory system idle on rows a page apart). One thread, [4096, 4096]
# f32, LayerNormBackward's gradBias (accumulators in registers then): 16 lanes 18.5 ms, 32 9.6,
# 64 8.4, 128 12.7. Two threads, RmsNormGrad and LayerNormBackward in bfloat16 at the issue's
# three shapes: 128 lanes instead of 64 took 0.71-0.94 of the time (f32 at 128: even or slower).
COLUMN_BYTES = 256
MAX_COLUMN_LANES = 128
# Stack bytes of accumulators a `columns` kernel spends to walk its runs for several blocks at once
# (`column_group`), shared by its reductions: one f32 sum 16 blocks (1024 columns, 4 KiB a row
# visit), two (LayerNormBackward's gradWeight and gradBias) 8. One thread, RmsNormGrad's dgamma
# alone: 32-256 KiB gave the same times within this host's noise; 128 KiB bounds the stack a
# kernel takes from its calling thread (docs/c-sdk.md).
COLUMN_SLOT_BYTES = 128 * 1024
# How far ahead (elements of the run) a `columns` reduction prefetches its inputs' lines.
PREFETCH_ROWS = 8
# Floats a row may hold to keep a reduction's heavy operand for its outputs (`_reused`): 32 KiB of
# stack per operand. One thread, f32 softmax (medians on a loaded machine): [65536, 256] 29.7 ->
# 19.5-24.7 ms, [4096, 4096] 30.0 -> 20.3-25.9 ms.
ROW_BUFFER = 8192
# Floats of the scratch that takes those stores where a row is longer and its output cannot hold the
# value (a half type: softmax's bfloat16 e): the passes are the same code for every row, and their
# stores land at the column modulo 2 * LANES (columns of a step are a multiple of LANES), the run's
# offset too; the final pass then computes the value again.
SCRATCH = 4 * LANES
IDENTITY = {"sum": 0.0, "mean": 0.0, "amax": float("-inf"), "amin": float("inf")}


def _vec(t, n: int = LANES):
    return VectorType(t, [n])


def row_values(kernel: ew.KernelOp) -> set[SSAValue]:
    """The values of the body that are the same along a row: parameters, constants, reductions
    and what is computed from those alone."""
    n_in = len(kernel.inputs.data)
    uniform: set[SSAValue] = set(kernel.block.args[n_in:])
    for op in kernel.block.ops:
        if isinstance(op, ew.ReduceOp) or (op.results and all(v in uniform for v in op.operands)):
            uniform.update(op.results)
    return uniform


class _Row:
    """What one row's code needs: the row's pointers and strides, the reduced block's dims."""

    def __init__(self, kernel: ew.KernelOp, b: Builder, dims, strides, rows_ptrs, uniform: set[SSAValue],
                 col: SSAValue):
        self.kernel = kernel
        self.b = b
        self.dims = dims
        self.strides = strides
        self.rows = rows_ptrs  # per operand: its pointer at the start of the row
        self.uniform = uniform
        self.values: dict[SSAValue, SSAValue] = {}  # row values, as computed at the row's scope
        self.col = col  # where the row's (or, for `columns`, the block's first row's) loads start
        self.mask: SSAValue | None = None  # `columns`: the block's rows
        self.width: int | None = None  # `columns`: rows per block
        self.entry: Builder | None = None  # `columns`: the function's entry (its stack slots)
        self.cached: dict[SSAValue, SSAValue] = {}  # reduction operands kept in a row buffer (`_reused`)
        self.wrap: SSAValue | None = None  # the passes' index mask for those (`SCRATCH`), where one applies
        rank = len(dims)
        self.kept = rank - kernel.reduced.data
        self.inner = dims[-1]
        # the dim a vector load walks: the innermost reduced one (a row's elements), or for
        # `columns` the innermost kept one (adjacent rows)
        self.lane = self.kept - 1 if kernel.columns is not None else rank - 1

    def lane_stride(self, i: int) -> SSAValue:
        return self.strides[i][self.lane]

    def runs(self, b: Builder) -> SSAValue:
        """How many runs of the innermost reduced dim the row has (the outer reduced dims' product)."""
        count = b.index(1)
        for d in self.dims[self.kept : -1]:
            count = b(arith.MuliOp(count, d))
        return count

    def run_pointers(self, b: Builder, run: SSAValue) -> list[SSAValue]:
        """Each operand's pointer at the start of run `run` of the row."""
        dims = self.dims[self.kept : -1]
        if not dims:
            return list(self.rows)
        views = [*self.kernel.inputs.data, *self.kernel.outputs.data]
        outer = [s[self.kept : -1] for s in self.strides]
        return offsets_of(b, run, dims, outer, self.rows, views)

    def count(self, b: Builder) -> SSAValue:
        """The number of elements of the row (reduced dims' product), as an f32."""
        n = b.index(1)
        for d in self.dims[self.kept :]:
            n = b(arith.MuliOp(n, d))
        return b(ew.ConvertOp(n, f32))


def _clone_cone(op_value: SSAValue, row: _Row, b: Builder, ptrs: list[SSAValue], col: SSAValue, width: int | None,
                mask: SSAValue | None, memo: dict[SSAValue, SSAValue]) -> SSAValue:
    """`op_value` computed at column `col` of the current run: its element-level ops cloned
    (as `vector<width>` ops when `width`), inputs loaded (the first lanes only, where `mask`),
    row values taken from the row's scope (splatted for vectors)."""
    if op_value in memo:
        return memo[op_value]
    kernel = row.kernel
    n_in = len(kernel.inputs.data)
    args = kernel.block.args
    if op_value in row.uniform:
        v = row.values[op_value]
        out = b(tile.SplatOp(v, _vec(v.type, width))) if width and not isinstance(v.type, VectorType) else v
    elif op_value in args[:n_in]:
        i = args.index(op_value)
        view = kernel.inputs.data[i]
        stride = row.lane_stride(i)
        layout = view.layout.data
        if width is None:
            out = b(tile.LoadOp(ptrs[i], col, stride, layout, view.element_type))
        elif layout == Layout.BROADCAST:
            one = b(tile.LoadOp(ptrs[i], col, stride, layout, view.element_type))
            out = b(tile.SplatOp(one, _vec(view.element_type, width)))
        else:
            out = b(tile.LoadOp(ptrs[i], col, stride, layout, view.element_type, _vec(view.element_type, width),
                                mask=mask, fill=0.0 if mask is not None else None))
    else:
        op = op_value.owner
        assert isinstance(op, Operation)
        operands = [_clone_cone(v, row, b, ptrs, col, width, mask, memo) for v in op.operands]
        new = type(op).create(
            operands=operands,
            result_types=[_vec(r.type, width) if width else r.type for r in op.results],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        b(new)
        out = new.results[[r for r in op.results].index(cast(OpResult, op_value))]
    memo[op_value] = out
    return out


def _combine(b: Builder, kind: str, acc: SSAValue, v: SSAValue) -> SSAValue:
    if kind in ("sum", "mean"):
        return b.add(acc, v)
    return b.call("maximum" if kind == "amax" else "minimum", acc, v)


def _identity(b: Builder, kind: str, width: int = LANES) -> SSAValue:
    return b(ew.ConstantOp(FloatAttr(IDENTITY[kind], f32), _vec(f32, width)))


def _reduce(row: _Row, ops: list[ew.ReduceOp]) -> list[SSAValue]:
    """One pass over the row: the values of `ops` (reductions that need no value of each other)
    for this row, each with its own accumulator (see the module docstring)."""
    b = row.b
    kinds = [op.kind.data for op in ops]
    vt = _vec(f32)
    zero, step = b.index(0), b.index(LANES)
    n = row.inner

    runs_body = Block(arg_types=[i64] + [vt] * len(ops))
    run, *accs = runs_body.args
    rb = Builder.at_end(runs_body)
    ptrs = row.run_pointers(rb, run)
    keep = _buffer_rows(row, rb, run, [op.input for op in ops])
    one = rb.index(1)
    heavy = any(_heavy(op.input, row.uniform) for op in ops)
    next_rows = _next_rows(row, rb, ptrs, ops) if heavy else {}

    def kept_at(b: Builder, col: SSAValue) -> SSAValue:
        """Where column `col`'s kept values go in `keep` (wrapped into a scratch: `SCRATCH`)."""
        return col if row.wrap is None else b(arith.AndIOp(col, row.wrap))

    def vectors(lo: SSAValue, hi: SSAValue, accs: list[SSAValue], unroll: int) -> list[SSAValue]:
        """Full vectors of 32 columns over [lo, hi), `unroll` a step (added in column order)."""
        body = Block(arg_types=[i64] + [vt] * len(ops))
        first, *a = body.args
        vb = Builder.at_end(body)
        steps = []
        for k in range(unroll):  # every vector's values first: a store of one (that LLVM cannot tell
            # apart from the inputs: the kept value's pointer may be the output's) would keep the next
            # one's loads after it, and their polynomials from overlapping
            col = first if not k else vb(arith.AddiOp(first, vb.index(k * LANES)))
            memo: dict[SSAValue, SSAValue] = {}
            steps.append((col, memo, [_clone_cone(op.input, row, vb, ptrs, col, LANES, None, memo) for op in ops]))
        for col, memo, vs in steps:
            for v, buf in keep.items():  # kept for the outputs (`_reused`)
                vb(tile.StoreOp(memo[v], buf, kept_at(vb, col), one, Layout.CONTIGUOUS, f32))
            if next_rows:  # while the heavy function runs on this row, the next one comes from memory
                _prefetch(vb, row, [next_rows.get(i, p) for i, p in enumerate(ptrs)], col, LANES, set(next_rows))
            a = [_combine(vb, kind, x, v) for kind, x, v in zip(kinds, a, vs)]
        vb(scf.YieldOp(*a))
        loop = scf.ForOp(lo, hi, rb.index(LANES * unroll), accs, Region(body))
        loop.attributes["tile.reduce"] = UnitAttr()
        rb(loop)
        return list(loop.results)

    # A heavy pass (exp) takes two vectors a step, so their polynomials overlap: sum(exp(x - max))
    # over rows of [4096, 4096] f32, one process, 3.66 -> 3.28 ms. The additions keep their order.
    # Its masked steps then take what is left, a whole vector and a part (two steps at most), so
    # that the heavy operand is built in two loops, not three (three copies, not four: the whole
    # vector's mask is all lanes). A light pass runs its whole vectors unmasked and the masked
    # step once at most.
    unroll = 2 if heavy else 1
    full = rb(arith.SubiOp(n, rb(arith.RemSIOp(n, rb.index(unroll * LANES)))))
    results = vectors(zero, full, list(accs), unroll)

    # the masked steps from `full` to n
    tail = Block(arg_types=[i64] + [vt] * len(ops))
    tcol, *ta = tail.args
    tb = Builder.at_end(tail)
    count = tb(arith.SubiOp(n, tcol))
    mask = tb(tile.PrefixOp(count, LANES))
    memo = {}
    tvs = [tb.select(mask, _clone_cone(op.input, row, tb, ptrs, tcol, LANES, mask, memo), _identity(tb, k))
           for op, k in zip(ops, kinds)]
    for v, buf in keep.items():
        tb(tile.StoreOp(memo[v], buf, kept_at(tb, tcol), one, Layout.CONTIGUOUS, f32, mask=mask))
    tb(scf.YieldOp(*[_combine(tb, k, x, v) for k, x, v in zip(kinds, ta, tvs)]))
    tail_loop = scf.ForOp(full, n, step, results, Region(tail))
    tail_loop.attributes["tile.reduce"] = UnitAttr()
    rb(tail_loop)
    rb(scf.YieldOp(*tail_loop.results))

    runs = scf.ForOp(zero, row.runs(b), b.index(1), [_identity(b, k) for k in kinds], Region(runs_body))
    b(runs)
    values = []
    for kind, acc in zip(kinds, runs.results):
        width = LANES
        while width > 1:  # the fixed tree: lanes [0, w) with lanes [w, 2w)
            width //= 2
            lo = b(tile.ShuffleOp(acc, list(range(width))))
            hi = b(tile.ShuffleOp(acc, list(range(width, 2 * width))))
            acc = _combine(b, kind, lo, hi)
        value = b(tile.ExtractOp(acc, 0))
        if kind == "mean":
            value = b.div(value, row.count(b))
        values.append(value)
    return values


def _next_rows(row: _Row, b: Builder, ptrs: list[SSAValue], ops: list[ew.ReduceOp]) -> dict[int, SSAValue]:
    """For a pass whose reductions take a heavy function (softmax's sum of exp(x - max)), of rows
    that are one run: the pointers of the next row (a step of the innermost kept dim) of the
    contiguous inputs the pass reads, which it prefetches. A row's first pass then finds it in
    the cache, and the row's arithmetic overlaps the next row's reads instead of following them
    (the first pass of a row is otherwise a wait on memory: softmax ran at 0.44 of a triad)."""
    kernel = row.kernel
    if not row.kept or kernel.reduced.data != 1:
        return {}
    views = kernel.inputs.data
    return {i: b(tile.OffsetOp(ptrs[i], row.strides[i][row.kept - 1], views[i].element_type))
            for i in sorted(_inputs_of(kernel, [op.input for op in ops]))
            if views[i].layout.data == Layout.CONTIGUOUS}


def _buffer_rows(row: _Row, b: Builder, run: SSAValue, values) -> dict[SSAValue, SSAValue]:
    """For each of `values` the row keeps in a buffer (`row.cached`), the buffer at run `run`: the
    buffer itself for rows of one run, so that an output holding a value (`_held_in_output`) is
    the very pointer the final pass stores to, which vectorize-elementwise then never streams
    past the caches (the pass reads it back: a streamed store would write each line twice).
    `row.wrap` masks the run's offset (`SCRATCH`)."""
    at = None
    out = {}
    for v in dict.fromkeys(values):
        if v in row.cached:
            if not row.dims[row.kept : -1]:
                out[v] = row.cached[v]
                continue
            if at is None:
                at = b(arith.MuliOp(run, row.inner))
                at = at if row.wrap is None else b(arith.AndIOp(at, row.wrap))
            out[v] = b(tile.OffsetOp(row.cached[v], at, f32))
    return out


def _ready(kernel: ew.KernelOp, done: set[SSAValue]) -> list[ew.ReduceOp]:
    """The reductions not computed yet whose operands need none that is not (`done`): one pass
    computes them together (LayerNormBackward's mean(dy * w) and mean(dy * w * xhat))."""
    waiting = [op for op in kernel.block.ops if isinstance(op, ew.ReduceOp) and op.result not in done]

    def needs(v: SSAValue, seen: set[SSAValue]) -> bool:
        """Whether `v` is made from a reduction not done yet."""
        if v in done or v in seen or not isinstance(v, OpResult):
            return False
        seen.add(v)
        if isinstance(v.op, ew.ReduceOp):
            return True
        return any(needs(x, seen) for x in v.op.operands)

    return [op for op in waiting if not needs(op.input, set())]


def _passes(kernel: ew.KernelOp) -> list[list[ew.ReduceOp]]:
    """The row's passes in the order `tile_kernel` runs them: at each reduction of the formula
    not computed yet, the ones `_ready` then."""
    done: set[SSAValue] = set()
    passes = []
    for op in kernel.block.ops:
        if isinstance(op, ew.ReduceOp) and op.result not in done:
            passes.append(_ready(kernel, done))
            done.update(r.result for r in passes[-1])
    return passes


def column_lanes(kernel: ew.KernelOp) -> int:
    """Rows per block of a `columns` kernel (COLUMN_BYTES of its narrowest input)."""
    narrowest = min((dt.from_ir(v.element_type).itemsize for v in kernel.inputs.data), default=4)
    return min(COLUMN_BYTES // narrowest, MAX_COLUMN_LANES)


def column_group(kernel: ew.KernelOp, width: int) -> int:
    """Blocks of `width` rows a `columns` kernel walks its runs for at once: as many as
    COLUMN_SLOT_BYTES of accumulators hold for all its reductions, where every reduction is in
    the first pass (its outputs need no other walk), else 1."""
    reductions = [op for op in kernel.block.ops if isinstance(op, ew.ReduceOp)]
    if len(_ready(kernel, set())) != len(reductions):
        return 1
    return max(1, COLUMN_SLOT_BYTES // (len(reductions) * LANES * width * 4))


def tile_kernel(kernel: ew.KernelOp) -> func.FuncOp:
    ins, outs = kernel.inputs.data, kernel.outputs.data
    fn = Entry(kernel)
    views, bases, e, entry = fn.views, fn.bases, fn.e, fn.block
    begin, end, dims, strides, pvals = fn.begin, fn.end, fn.dims, fn.strides, fn.params
    kept = len(dims) - kernel.reduced.data
    one = e.index(1)
    uniform = row_values(kernel)
    n_in = len(ins)
    # the outputs that sum across rows (operand indices), and whether this row is its block's first
    partials = [n_in + k.data for k in kernel.partials.data] if kernel.partials is not None else []
    first: SSAValue | None = None

    group, hi = 1, None
    if kernel.columns is not None:
        width: int | None = column_lanes(kernel)
        group = column_group(kernel, width)
        b, rows, col, mask, hi = _column_blocks(e, kernel, dims, strides, list(bases), views, begin, end, width, group)
    else:  # the row loop: [begin, end) over the kept dims' points (or blocks of them: `partials`)
        lo, outer, block_rows = begin, e, {}
        if partials:
            assert kernel.blocks is not None
            outer, lo, end, block_rows = _row_blocks(e, kernel.blocks.data, begin, end, dims, kept, bases, partials)
        rb_block = Block(arg_types=[i64])
        row_index = rb_block.args[0]
        loop = scf.ForOp(lo, end, one, [], Region(rb_block))
        loop.attributes["tile.rows"] = UnitAttr()
        outer(loop)
        if partials:
            outer(scf.YieldOp())
        b = Builder.at_end(rb_block)
        kept_strides = [s[:kept] for s in strides]
        rows = offsets_of(b, row_index, dims[:kept], kept_strides, list(bases), views) if kept else list(bases)
        if partials:  # this block's row of each partial; the first row stores, the others add
            rows = [block_rows.get(o, p) for o, p in enumerate(rows)]
            first = b(arith.CmpiOp(row_index, lo, "eq"))
        col, mask, width = b.index(0), None, None
    first_op = entry.first_op
    assert first_op is not None
    top = Builder(lambda op: entry.insert_op_before(op, first_op))  # stack slots: before any use

    yield_op = kernel.block.last_op
    assert isinstance(yield_op, ew.YieldOp)

    def new_row(b: Builder, col: SSAValue, mask: SSAValue | None) -> _Row:
        row = _Row(kernel, b, dims, strides, rows, uniform, col)
        row.mask, row.width, row.entry = mask, width, top
        for arg, p in zip(kernel.block.args[n_in:], pvals):
            row.values[arg] = p if width is None else b(tile.SplatOp(p, _vec(p.type, width)))
        return row

    def row_value(row: _Row, op: Operation) -> None:
        """Op `op` of the formula (its operands row values) at the row's scope."""
        clone = op.clone(value_mapper=dict(row.values)) if width is None else _widened(op, row.values, width)
        row.b(clone)
        row.values.update(zip(op.results, clone.results))

    def body(b: Builder, cached: dict[SSAValue, SSAValue], col: SSAValue, mask: SSAValue | None,
             folded: tuple[list[ew.ReduceOp], list[SSAValue], SSAValue] | None = None,
             final: tuple[SSAValue, dict[SSAValue, SSAValue], dict[SSAValue, SSAValue]] | None = None,
             wrap: SSAValue | None = None) -> None:
        """The row's reductions, row values and outputs, built with `b` (`cached`: the reduction
        operands kept in a row buffer for the outputs, by value: the buffer; `folded`: the
        reductions a grouped walk already added up, their slots and this block's index; `final`:
        (a condition, the buffers the final pass reads where it holds, those where it does not),
        its two forms in an `scf.if`; `wrap`: the passes' index mask for `cached`)."""
        row = new_row(b, col, mask)
        row.cached, row.wrap = cached, wrap
        passes = iter(_passes(kernel))
        for op in kernel.block.ops:
            if isinstance(op, ew.ReduceOp):
                if op.result not in row.values:
                    ready = next(passes)
                    if width is None:
                        values = _reduce(row, ready)
                    elif folded is not None and ready == folded[0]:
                        values = _fold_columns(row, ready, folded[1], folded[2])
                    else:
                        values = _reduce_columns(row, ready)
                    row.values.update((r.result, v) for r, v in zip(ready, values))
            elif op is not yield_op and op.results and op.results[0] in uniform:
                row_value(row, op)

        # outputs: row values stored once at the row's position, the others in the column loop
        element_outputs = []
        for j, (v, view) in enumerate(zip(yield_op.values, outs)):
            o = n_in + j
            if v in uniform and o not in partials:
                b(tile.StoreOp(row.values[v], rows[o], col, row.lane_stride(o),
                               view.layout.data if width else Layout.CONTIGUOUS, view.element_type, mask=mask))
            else:
                element_outputs.append((j, v, view))
        if not element_outputs:
            return
        if width is not None:
            _final_pass_columns(row, element_outputs)
        elif final is None:
            _final_pass(row, element_outputs, partials, first)
        else:
            cond, *forms = final
            blocks = [Block(), Block()]
            for block, buffers in zip(blocks, forms):
                row.b, row.cached, row.wrap = Builder.at_end(block), buffers, None
                _final_pass(row, element_outputs, partials, first)
                block.add_op(scf.YieldOp())
            b(scf.IfOp(cond, [], Region(blocks[0]), Region(blocks[1])))

    reused = _reused(kernel) if width is None else []
    if reused:  # the passes are built once, storing each where the row's length says; the final pass twice
        size = b.index(1)
        for d in dims[kept:]:
            size = b(arith.MuliOp(size, d))
        fits = b(arith.CmpiOp(size, b.index(ROW_BUFFER), "sle"))
        buffers = {v: top(tile.AllocaOp(ROW_BUFFER, f32)) for v in reused}
        held = {v: rows[o] for v, o in _held_in_output(kernel, reused).items()}
        elsewhere, wrap = held, None
        if not held:  # the passes' stores go to a scratch, at their column modulo 2 * LANES
            elsewhere = {v: top(tile.AllocaOp(SCRATCH, f32)) for v in reused}
            wrap = b(arith.SelectOp(fits, b.index(-1), b.index(2 * LANES - 1)))
        kept = {v: b(arith.SelectOp(fits, buffers[v], elsewhere[v])) for v in reused}
        body(b, kept, col, mask, final=(fits, buffers, held), wrap=wrap)
    elif group > 1:  # one walk of the runs for `group` blocks, then each block's values and outputs
        assert width is not None and hi is not None
        row = new_row(b, col, None)
        for op in kernel.block.ops:  # the row values the reductions' operands use
            if (op is not yield_op and not isinstance(op, ew.ReduceOp) and op.results and op.results[0] in uniform
                    and all(v in row.values for v in op.operands)):
                row_value(row, op)
        ready = _ready(kernel, set())
        slots = _column_slots(row, ready, group)
        span = b(arith.AddiOp(b(arith.SubiOp(hi, col)), b.index(width - 1)))
        count = b(arith.MinSIOp(b.index(group), b(arith.DivSIOp(span, b.index(width)))))  # blocks left
        _walk_columns(row, ready, slots, count, hi)
        # each block's values and outputs: whole blocks without a mask, the last one masked
        _each_block(b, col, count, _whole_blocks(b, col, count, hi, width), hi, width,
                    lambda gb, g, col_g, rows_mask: body(gb, {}, col_g, rows_mask, (ready, slots, g)))
    elif mask is not None:  # `columns`, a block a step: masked loads and stores only in the last
        assert width is not None and hi is not None
        whole = b(arith.CmpiOp(b(arith.AddiOp(col, b.index(width))), hi, "sle"))
        forms = [Block(), Block()]
        for form, m in zip(forms, (None, mask)):
            body(Builder.at_end(form), {}, col, m)
            form.add_op(scf.YieldOp())
        b(scf.IfOp(whole, [], Region(forms[0]), Region(forms[1])))
    else:
        body(b, {}, col, mask)
    b(scf.YieldOp())
    f = fn.function(kernel)
    f.attributes["tile.rows"] = IntegerAttr(kernel.reduced.data, i64)
    return f


def _heavy(v: SSAValue, uniform: set[SSAValue]) -> bool:
    """Whether element value `v` is made with a heavy function (exp, ...) along the row."""
    seen: set[SSAValue] = set()
    todo = [v]
    while todo:
        x = todo.pop()
        if x in seen or x in uniform or not isinstance(x, OpResult):
            continue
        seen.add(x)
        if isinstance(x.op, ew.FunctionOp) and x.op.FUNCTION.heavy:
            return True
        todo.extend(x.op.operands)
    return False


def _reused(kernel: ew.KernelOp) -> list[SSAValue]:
    """The reductions' operands that the element outputs use again and that take a heavy
    function to compute (softmax's exp(x - max)): a row that fits `ROW_BUFFER` keeps them from its
    reduction pass for the outputs instead of computing them twice."""
    uniform = row_values(kernel)
    yield_op = kernel.block.last_op
    assert isinstance(yield_op, ew.YieldOp)
    used: set[SSAValue] = set()
    todo = [v for v in yield_op.values if v not in uniform]
    while todo:
        x = todo.pop()
        if x in used or x in uniform:
            continue
        used.add(x)
        if isinstance(x, OpResult):
            todo.extend(x.op.operands)
    operands = [op.input for op in kernel.block.ops if isinstance(op, ew.ReduceOp)]
    return list(dict.fromkeys(v for v in operands if v in used and _heavy(v, uniform)))


def _held_in_output(kernel: ew.KernelOp, reused: list[SSAValue]) -> dict[SSAValue, int]:
    """For a row too long for `ROW_BUFFER`: {the reused value: the operand index of the output
    that holds it from its reduction pass to the final pass}, or {}. Softmax's e = exp(x - max)
    goes into its f32 output, which the final pass reads back and overwrites with e / sum: 16M
    exps fewer on [256, 65536]. It takes one run a row (the buffer is the row), one reused value,
    the last reduction pass being the one that stores it, and one element output, f32 and
    contiguous, computed from row values and that value alone: no pass after the store reads an
    input, so an output that is an input (in place) loses nothing still to be read."""
    yield_op = kernel.block.last_op
    assert isinstance(yield_op, ew.YieldOp)
    uniform = row_values(kernel)
    elements = [j for j, v in enumerate(yield_op.values) if v not in uniform]
    if kernel.reduced.data != 1 or kernel.partials is not None or len(reused) != 1 or len(elements) != 1:
        return {}
    (v,), j = reused, elements[0]
    view = kernel.outputs.data[j]
    if not isinstance(view.element_type, Float32Type) or view.layout.data != Layout.CONTIGUOUS:
        return {}
    if v not in [r.input for r in _passes(kernel)[-1]]:
        return {}
    args = set(kernel.block.args[: len(kernel.inputs.data)])
    seen: set[SSAValue] = set()
    todo = [yield_op.values[j]]
    while todo:  # the output's cone, up to v and the row values
        x = todo.pop()
        if x in seen or x is v or x in uniform:
            continue
        if x in args:
            return {}
        seen.add(x)
        if isinstance(x, OpResult):
            todo.extend(x.op.operands)
    return {v: len(kernel.inputs.data) + j}


def _widened(op: Operation, values: dict[SSAValue, SSAValue], width: int) -> Operation:
    """`op` on `width` rows at once: its operands' vectors, vector results."""
    return type(op).create(
        operands=[values[v] for v in op.operands],
        result_types=[_vec(r.type, width) for r in op.results],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )


def _column_blocks(e: Builder, kernel: ew.KernelOp, dims, strides, bases, views, begin, end, width: int,
                   group: int = 1):
    """The loops of a `columns` kernel: its rows [begin, end) (the kept dims' points) as runs of
    the innermost kept dim, each in blocks of `width` adjacent rows, the last block masked, and
    `group` blocks a step. Returns the step's builder, the operands' pointers at the run's first
    row, the step's first row within the run, the mask of its block's rows (one block a step)
    and the end of the run's rows."""
    kept = len(dims) - kernel.reduced.data
    inner = dims[kept - 1]
    one = e.index(1)
    first = e(arith.DivSIOp(begin, inner))
    last = e(arith.AddiOp(e(arith.DivSIOp(e(arith.SubiOp(end, one)), inner)), one))
    run_block = Block(arg_types=[i64])
    run = run_block.args[0]
    rb = Builder.at_end(run_block)
    start = rb(arith.MuliOp(run, inner))
    lo = rb(arith.SubiOp(rb(arith.MaxSIOp(begin, start)), start))
    hi = rb(arith.SubiOp(rb(arith.MinSIOp(end, rb(arith.AddiOp(start, inner)))), start))
    outer = [s[: kept - 1] for s in strides]
    rows = offsets_of(rb, run, dims[: kept - 1], outer, bases, views) if kept > 1 else list(bases)
    block = Block(arg_types=[i64])
    col = block.args[0]
    b = Builder.at_end(block)
    mask = b(tile.PrefixOp(b(arith.SubiOp(hi, col)), width)) if group == 1 else None
    blocks = scf.ForOp(lo, hi, rb.index(width * group), [], Region(block))
    blocks.attributes["tile.rows"] = UnitAttr()
    rb(blocks)
    rb(scf.YieldOp())
    runs = scf.ForOp(first, last, one, [], Region(run_block))
    e(runs)
    return b, rows, col, mask, hi


def _at(b: Builder, row: _Row, ptrs: list[SSAValue], j: SSAValue) -> list[SSAValue]:
    """Each operand's pointer at element `j` of the current run of its rows (`columns`)."""
    views = [*row.kernel.inputs.data, *row.kernel.outputs.data]
    return [b(tile.OffsetOp(p, b(arith.MuliOp(j, row.strides[i][-1])), v.element_type))
            for i, (p, v) in enumerate(zip(ptrs, views))]


def _prefetch(b: Builder, row: _Row, at: list[SSAValue], col: SSAValue, w: int, loaded: set[int]) -> None:
    """Fetch the lines of the `w` rows from `col` on at the operands' pointers `at` (an element of
    the run ahead), of every input in `loaded` whose rows are adjacent (`columns`: consecutive
    elements of the run lie a row apart, often a page or more, where the hardware prefetchers do
    not follow)."""
    views = row.kernel.inputs.data
    for i, (view, p) in enumerate(zip(views, at)):
        if view.layout.data != Layout.CONTIGUOUS or i not in loaded:
            continue
        per_line = 64 // dt.from_ir(view.element_type).itemsize
        for k in range(-(-w // per_line)):
            b(tile.PrefetchOp(p, b(arith.AddiOp(col, b.index(k * per_line))), view.element_type))


def _inputs_of(kernel: ew.KernelOp, values: list[SSAValue]) -> set[int]:
    """The indices of the inputs `values` are computed from."""
    args = list(kernel.block.args[: len(kernel.inputs.data)])
    seen: set[SSAValue] = set()
    todo = list(values)
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, OpResult):
            todo.extend(v.op.operands)
    return {k for k, a in enumerate(args) if a in seen}


def _whole_blocks(b: Builder, col: SSAValue, blocks: SSAValue, hi: SSAValue, w: int) -> SSAValue:
    """How many of `blocks` blocks of `w` rows from `col` end at or before row `hi`."""
    return b(arith.MinSIOp(blocks, b(arith.DivSIOp(b(arith.SubiOp(hi, col)), b.index(w)))))


def _each_block(at: Builder, col: SSAValue, blocks: SSAValue, full: SSAValue, hi: SSAValue, w: int, fn) -> None:
    """fn(builder, block index g, its first row, its mask) for `blocks` adjacent blocks of `w`
    rows from `col`: the `full` whole ones in a loop without a mask (masked moves cost Zen 3 more
    than the rest of a block), then the others (the last, rows before `hi`) masked."""
    for lo, end, masked in ((at.index(0), full, False), (full, blocks, True)):
        block = Block(arg_types=[i64])
        gb = Builder.at_end(block)
        g = block.args[0]
        first = gb(arith.AddiOp(col, gb(arith.MuliOp(g, gb.index(w)))))
        fn(gb, g, first, gb(tile.PrefixOp(gb(arith.SubiOp(hi, first)), w)) if masked else None)
        gb(scf.YieldOp())
        at(scf.ForOp(lo, end, at.index(1), [], Region(block)))


def _used(b: Builder, row: _Row) -> SSAValue:
    """How many of a block's 32 accumulators a run reaches: its length, at most 32."""
    return b(arith.MinSIOp(row.inner, b.index(LANES)))


def _slot(b: Builder, used: SSAValue, g: SSAValue, lane: SSAValue, w: int) -> SSAValue:
    """Where block g's accumulator `lane` starts: slot g * used + lane (`_used`), `w` floats each.
    Dense for runs shorter than 32: a block's first accumulators 32 slots (8 KiB) apart met in
    the same cache sets, and [1, 2^20]'s sums took 16 cycles a column."""
    return b(arith.MuliOp(b(arith.AddiOp(b(arith.MuliOp(g, used)), lane)), b.index(w)))


def _column_slots(row: _Row, ops: list[ew.ReduceOp], group: int) -> list[SSAValue]:
    """Each reduction's accumulators for `group` blocks of `row.width` rows: up to 32 per block
    (`_slot`), in the function's stack frame, those a run reaches (`_used`) set to the identity
    (the others are never read: `_fold_columns`)."""
    b, e = row.b, row.entry
    w = row.width
    assert w is not None and e is not None
    vt = _vec(f32, w)
    slots = [e(tile.AllocaOp(LANES * group, vt)) for _ in ops]
    used = _used(b, row)
    blocks = Block(arg_types=[i64])
    gb = Builder.at_end(blocks)
    block = Block(arg_types=[i64])
    kb = Builder.at_end(block)
    at = _slot(kb, used, blocks.args[0], block.args[0], w)
    for op, acc in zip(ops, slots):
        kb(tile.StoreOp(_identity(kb, op.kind.data, w), acc, at, kb.index(1), Layout.CONTIGUOUS, f32))
    kb(scf.YieldOp())
    gb(scf.ForOp(gb.index(0), used, gb.index(1), [], Region(block)))
    gb(scf.YieldOp())
    b(scf.ForOp(b.index(0), b.index(group), b.index(1), [], Region(blocks)))
    return slots


def _walk_columns(row: _Row, ops: list[ew.ReduceOp], slots: list[SSAValue], blocks: SSAValue | None = None,
                  hi: SSAValue | None = None) -> None:
    """Add the runs into `slots` (`_column_slots`): element j of a run into accumulator j mod 32
    of each block, in order. Where the run's last group has no element l, `_reduce`'s masked
    lanes add the identity, which changes no accumulator's bits (a sum that starts at +0 is never
    -0, and +0 added to anything else is that; max with -inf, min with +inf), so nothing is added
    here (it was: a run of 2 rows padded 30 accumulators, LayerNormBackward's dgamma and dbeta at
    [2, 524288] 7.6 ms). One block (`row.col`, `row.mask`), or `blocks` adjacent
    ones from `row.col` (each masked to the rows before `hi`): the run is then read `blocks *
    width` rows at a time, contiguous where the kept dim is, instead of one block's (a row
    visit of 256 bytes, a page apart for RmsNormGrad's dgamma at [4096, 4096])."""
    b = row.b
    w = row.width
    assert w is not None
    kinds = [op.kind.data for op in ops]
    vt = _vec(f32, w)
    zero, one = b.index(0), b.index(1)
    n = row.inner
    full = None  # the blocks with all `w` rows (before `hi`): loads without a mask
    if blocks is not None and hi is not None:
        full = _whole_blocks(b, row.col, blocks, hi, w)

    def each_block(at: Builder, fn) -> None:
        """fn(builder, block index, its first row, its mask) for the block, or each of `blocks`."""
        if blocks is None:
            fn(at, at.index(0), row.col, row.mask)
            return
        assert hi is not None and full is not None
        _each_block(at, row.col, blocks, full, hi, w, fn)

    runs_body = Block(arg_types=[i64])
    run = runs_body.args[0]
    rb = Builder.at_end(runs_body)
    ptrs = row.run_pointers(rb, run)
    body = Block(arg_types=[i64])
    j = body.args[0]
    vb = Builder.at_end(body)
    at_j = _at(vb, row, ptrs, j)
    # the element PREFETCH_ROWS ahead, or the run's last: past the run a prefetch walks pages
    # the kernel never reads (a run of 1 row: 4 MiB ahead of x for [1, 2^20])
    ahead = _at(vb, row, ptrs, vb(arith.MinSIOp(vb(arith.AddiOp(j, vb.index(PREFETCH_ROWS))),
                                                vb(arith.SubiOp(n, vb.index(1))))))
    lane = vb(arith.RemSIOp(j, vb.index(LANES)))
    used = _used(b, row)
    loaded = _inputs_of(row.kernel, [op.input for op in ops])

    def add(gb: Builder, g: SSAValue, col: SSAValue, mask: SSAValue | None) -> None:
        memo: dict[SSAValue, SSAValue] = {}
        vs = [_clone_cone(op.input, row, gb, at_j, col, w, mask, memo) for op in ops]
        _prefetch(gb, row, ahead, col, w, loaded)
        at = _slot(gb, used, g, lane, w)
        for kind, acc, v in zip(kinds, slots, vs):
            old = gb(tile.LoadOp(acc, at, gb.index(1), Layout.CONTIGUOUS, f32, vt))
            gb(tile.StoreOp(_combine(gb, kind, old, v), acc, at, gb.index(1), Layout.CONTIGUOUS, f32))

    each_block(vb, add)
    vb(scf.YieldOp())
    loop = scf.ForOp(rb.index(0), n, rb.index(1), [], Region(body))
    loop.attributes["tile.reduce"] = UnitAttr()
    rb(loop)

    rb(scf.YieldOp())
    b(scf.ForOp(zero, row.runs(b), one, [], Region(runs_body)))


def _fold_columns(row: _Row, ops: list[ew.ReduceOp], slots: list[SSAValue], g: SSAValue | None = None
                  ) -> list[SSAValue]:
    """Block g's (the first's) accumulators of each reduction folded in `_reduce`'s tree (16 + 16,
    8 + 8, ..., 1 + 1), in place: at each level only the pairs whose second accumulator a run
    reached, since combining with the identity changes no bit (`_walk_columns`). A run of 2 rows
    folds once instead of 31 times."""
    b = row.b
    w = row.width
    assert w is not None
    vt = _vec(f32, w)
    one = b.index(1)
    live = _used(b, row)
    base = b.index(0) if g is None else _slot(b, live, g, b.index(0), w)
    kinds = [op.kind.data for op in ops]
    width = LANES
    while width > 1:  # accumulator k with k + width, for k + width < live
        width //= 2
        pairs = b(arith.MaxSIOp(b(arith.SubiOp(live, b.index(width))), b.index(0)))
        block = Block(arg_types=[i64])
        kb = Builder.at_end(block)
        at = kb(arith.AddiOp(base, kb(arith.MuliOp(block.args[0], kb.index(w)))))
        far = kb(arith.AddiOp(at, kb.index(width * w)))
        for kind, acc in zip(kinds, slots):
            near = kb(tile.LoadOp(acc, at, kb.index(1), Layout.CONTIGUOUS, f32, vt))
            other = kb(tile.LoadOp(acc, far, kb.index(1), Layout.CONTIGUOUS, f32, vt))
            kb(tile.StoreOp(_combine(kb, kind, near, other), acc, at, kb.index(1), Layout.CONTIGUOUS, f32))
        kb(scf.YieldOp())
        b(scf.ForOp(b.index(0), pairs, one, [], Region(block)))
        live = b(arith.MinSIOp(live, b.index(width)))
    reached = b(arith.CmpiOp(live, b.index(0), "sgt"))  # an empty run leaves the identity
    values = []
    for kind, acc in zip(kinds, slots):
        value = b(tile.LoadOp(acc, base, one, Layout.CONTIGUOUS, f32, vt))
        value = b(arith.SelectOp(reached, value, _identity(b, kind, w)))
        if kind == "mean":
            value = b.div(value, b(tile.SplatOp(row.count(b), vt)))
        values.append(value)
    return values


def _reduce_columns(row: _Row, ops: list[ew.ReduceOp]) -> list[SSAValue]:
    """`_reduce` for a block of `row.width` rows: accumulator l (lane r holds row r's) adds the
    elements j = l, l + 32, ... of each run in order (`_reduce`'s masked lanes add the identity,
    which changes no bit: `_walk_columns`); the 32 results fold in
    `_reduce`'s tree. So each row's value has the bits a row at a time gives it. The run is
    walked once, in order: element j adds into accumulator j mod 32, which waits in a stack
    array between its turns (its slot is read again 32 elements after its store). Walking it
    once per accumulator instead kept them in registers but read every run 32 times, 32
    elements apart (RmsNormGrad's dgamma, one thread: [65536, 256] f32 ~2x slower)."""
    slots = _column_slots(row, ops, 1)
    _walk_columns(row, ops, slots)
    return _fold_columns(row, ops, slots)


def _row_blocks(e: Builder, size: int, begin: SSAValue, end: SSAValue, dims, kept: int, bases, partials: list[int]):
    """The loop over blocks of `size` rows of a kernel with `partials`: its range [begin, end)
    counts rows, the blocks rounded up, and starts and ends at multiples of `size` (the pool's
    chunks do), so each block's sums are one thread's, in row order. Returns the block's
    builder, its rows [lo, hi) and each partial output's pointer at the block's row (the
    partials are contiguous: a row of the reduced dims per block)."""
    block = Block(arg_types=[i64])
    lo = block.args[0]
    e(scf.ForOp(begin, end, e.index(size), [], Region(block)))
    b = Builder.at_end(block)
    rows, n = b.index(1), b.index(1)
    for d in dims[:kept]:
        rows = b(arith.MuliOp(rows, d))
    for d in dims[kept:]:
        n = b(arith.MuliOp(n, d))
    hi = b(arith.MinSIOp(b(arith.AddiOp(lo, b.index(size))), rows))
    at = b(arith.MuliOp(b(arith.DivSIOp(lo, b.index(size))), n))
    return b, lo, hi, {o: b(tile.OffsetOp(bases[o], at, f32)) for o in partials}


def _final_pass(row: _Row, element_outputs, partials: Sequence[int] = (), first: SSAValue | None = None) -> None:
    """The outputs that vary along the row, run by run in a column loop (`tile.inner`). An
    output in `partials` (operand indices) holds its block's running sum: the block's `first`
    row stores its values, the others add theirs."""
    b = row.b
    n_in = len(row.kernel.inputs.data)
    runs_body = Block(arg_types=[i64])
    rb = Builder.at_end(runs_body)
    ptrs = row.run_pointers(rb, runs_body.args[0])
    kept = _buffer_rows(row, rb, runs_body.args[0], list(row.cached))
    one = rb.index(1)
    cb_block = Block(arg_types=[i64])
    col = cb_block.args[0]
    cb = Builder.at_end(cb_block)
    memo: dict[SSAValue, SSAValue] = {v: cb(tile.LoadOp(buf, col, one, Layout.CONTIGUOUS, f32))
                                      for v, buf in kept.items()}
    for j, v, view in element_outputs:
        value = _clone_cone(v, row, cb, ptrs, col, None, None, memo)
        o = n_in + j
        if o in partials:
            assert first is not None
            old = cb(tile.LoadOp(ptrs[o], col, row.strides[o][-1], view.layout.data, f32))
            value = cb.select(first, value, cb.add(old, value))
        cb(tile.StoreOp(value, ptrs[o], col, row.strides[o][-1], Layout(view.layout.data).stored(), view.element_type))
    cb(scf.YieldOp())
    columns = scf.ForOp(rb.index(0), row.inner, rb.index(1), [], Region(cb_block))
    columns.attributes["tile.inner"] = UnitAttr()
    columns.attributes["tile.no_peel"] = UnitAttr()  # rows may be short: no peeling
    rb(columns)
    rb(scf.YieldOp())
    b(scf.ForOp(b.index(0), row.runs(b), b.index(1), [], Region(runs_body)))


def _final_pass_columns(row: _Row, element_outputs) -> None:
    """`_final_pass` for a block of rows: element by element of the runs, `width` rows at once."""
    b = row.b
    n_in = len(row.kernel.inputs.data)
    runs_body = Block(arg_types=[i64])
    rb = Builder.at_end(runs_body)
    ptrs = row.run_pointers(rb, runs_body.args[0])
    cb_block = Block(arg_types=[i64])
    cb = Builder.at_end(cb_block)
    at = _at(cb, row, ptrs, cb_block.args[0])
    memo: dict[SSAValue, SSAValue] = {}
    for j, v, view in element_outputs:
        value = _clone_cone(v, row, cb, at, row.col, row.width, row.mask, memo)
        o = n_in + j
        cb(tile.StoreOp(value, at[o], row.col, row.lane_stride(o), Layout(view.layout.data).stored(), view.element_type,
                        mask=row.mask))
    cb(scf.YieldOp())
    rb(scf.ForOp(rb.index(0), row.inner, rb.index(1), [], Region(cb_block)))
    rb(scf.YieldOp())
    b(scf.ForOp(b.index(0), row.runs(b), b.index(1), [], Region(runs_body)))


@dataclass(frozen=True)
class TileRowsPass(ModulePass):
    name = "tile-rows"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in list(op.walk()):
            if isinstance(kernel, ew.KernelOp) and kernel.reduced.data:
                f = tile_kernel(kernel)
                kernel.parent_block().insert_op_before(f, kernel)  # type: ignore[union-attr]
                op.body.block.erase_op(kernel)


__all__ = ["LANES", "TileRowsPass", "row_values"]
