"""`tile-elementwise`: turn each `ew.kernel` into a `func.func` of tiled loops.

The iteration space (the row-major flattening of the views' common shape) is cut into tiles
of `tile_size` elements — the unit a thread owns (CANN's blockDim split across cores) and
small enough to stay in cache. Inside a tile, a row loop walks the rows the tile touches and a
column loop (marked `tile.inner`) runs the formula over one contiguous run of the innermost
dim, reading and writing through `tile.load`/`tile.store` with the operands' row pointers
and innermost strides. Outer dims are addressed through runtime strides, so one variant
serves every shape of its rank. A rank-1 space is a single row: its column loop sits directly
in the tile loop over [t0, t1), with no row loop and none of the row divisions.

Before:
    ew.kernel @k(%x: !ew.view<1xf32, contiguous>) -> (!ew.view<1xf32, contiguous>) { ... }
After:
    func.func @k(%in0: !llvm.ptr, %out0: !llvm.ptr, %meta: !llvm.ptr, %begin: i64, %end: i64) {
      scf.for %t0 = %begin to %end step %tile : i64 {
        scf.for %row = %r0 to %r1 step %one : i64 {
          scf.for %c = %c0 to %c1 step %one : i64 {
            %x = tile.load %row0[%c] stride %s0 {layout = "contiguous"} : f32 -> f32
            ...
            tile.store %y, %row1[%c] stride %s1 {layout = "contiguous"} : f32 -> f32
          } {tile.inner}
        } {tile.rows}
      } {tile.tiles}
      func.return
    }

Threads are the runtime's business: the native pool hands each thread a `[begin, end)` range of
the same function (aclgen/codegen/native.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, UnitAttr, i64
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass

from aclgen.abi import MetaLayout
from aclgen.dialects import ew, tile
from aclgen.passes.builder import Builder


def _for(e: Builder, lb: SSAValue, ub: SSAValue, step: SSAValue, marker: str) -> tuple[Block, SSAValue]:
    body = Block(arg_types=[i64])
    loop = scf.ForOp(lb, ub, step, [], Region(body))
    loop.attributes[marker] = UnitAttr()
    e(loop)
    return body, body.args[0]


def offsets_of(b: Builder, index: SSAValue, dims, strides, bases, views) -> list[SSAValue]:
    """Each operand's pointer at point `index` of the row-major space `dims`: the multi-index
    of `index` over `dims` dotted with the operand's `strides` (one per dim), past its base."""
    index_k: list[SSAValue] = []
    rest = index
    for k in range(len(dims) - 1, -1, -1):
        index_k.append(b(arith.RemSIOp(rest, dims[k])) if k > 0 else rest)
        if k > 0:
            rest = b(arith.DivSIOp(rest, dims[k]))
    index_k.reverse()
    out = []
    for base, stride, view in zip(bases, strides, views):
        off = None
        for k in range(len(dims)):
            term = b(arith.MuliOp(index_k[k], stride[k]))
            off = term if off is None else b(arith.AddiOp(off, term))
        assert off is not None  # at least one dim
        out.append(b(tile.OffsetOp(base, off, view.element_type)))
    return out


class Entry:
    """The start of a kernel's function: `fn(in0.., out0.., meta, begin, end)`, its entry block
    (`e` builds at its end), the operands' base pointers (`views`' order: inputs then outputs),
    and the launch record's dims, strides (per operand) and parameters read at the top."""

    def __init__(self, kernel: ew.KernelOp):
        ins, outs, params = kernel.inputs.data, kernel.outputs.data, kernel.params.data
        self.views = list(ins) + list(outs)
        rank = self.views[0].rank.data
        layout = MetaLayout(rank, len(self.views), len(params))
        ptr = LLVMPointerType()
        self.types = [ptr] * len(self.views) + [ptr, i64, i64]
        self.block = Block(arg_types=self.types)
        names = [f"in{i}" for i in range(len(ins))] + [f"out{i}" for i in range(len(outs))] + ["meta", "begin", "end"]
        for arg, n in zip(self.block.args, names):
            arg.name_hint = n
        self.bases = list(self.block.args[: len(self.views)])
        self.meta, self.begin, self.end = self.block.args[len(self.views) :]
        e = self.e = Builder.at_end(self.block)
        self.dims = [e(tile.ParamOp(self.meta, layout.dim(k), i64)) for k in range(rank)]
        self.strides = [[e(tile.ParamOp(self.meta, layout.stride(o, k), i64)) for k in range(rank)]
                        for o in range(len(self.views))]
        self.params = [e(tile.ParamOp(self.meta, layout.param(j), t)) for j, t in enumerate(params)]

    def function(self, kernel: ew.KernelOp) -> func.FuncOp:
        """The function, its entry block ended with a return."""
        self.block.add_op(func.ReturnOp())
        return func.FuncOp(kernel.sym_name.data, (self.types, []), Region(self.block))


def tile_kernel(kernel: ew.KernelOp, tile_size: int) -> func.FuncOp:
    ins, outs = kernel.inputs.data, kernel.outputs.data
    fn = Entry(kernel)
    views, bases, e = fn.views, fn.bases, fn.e
    begin, end, dims, strides, pvals = fn.begin, fn.end, fn.dims, fn.strides, fn.params
    rank = len(dims)
    for v, n in zip(dims, "nmlkjihg"[: rank][::-1]):
        v.name_hint = f"dim_{n}"
    inner = dims[-1]
    one = e.index(1)
    tsize = e.index(tile_size)

    # tile loop: [t0, t1) of the flattened space
    tb, t0 = _for(e, begin, end, tsize, "tile.tiles")
    te = Builder.at_end(tb)
    t1 = te(arith.MinSIOp(te(arith.AddiOp(t0, tsize)), end))
    if rank == 1:
        # one row: the tile's columns are [t0, t1), no row loop and no divisions
        rb, re, c0, c1 = tb, te, t0, t1
        rows = list(bases)
    else:
        r0 = te(arith.DivSIOp(t0, inner))
        r1 = te(arith.AddiOp(te(arith.DivSIOp(te(arith.SubiOp(t1, one)), inner)), one))
        # row loop: the columns [c0, c1) of this row inside the tile
        rb, row = _for(te, r0, r1, one, "tile.rows")
        re = Builder.at_end(rb)
        rstart = re(arith.MuliOp(row, inner))
        c0 = re(arith.SubiOp(re(arith.MaxSIOp(t0, rstart)), rstart))
        c1 = re(arith.SubiOp(re(arith.MinSIOp(t1, re(arith.AddiOp(rstart, inner)))), rstart))
        rows = offsets_of(re, row, dims[:-1], [s[:-1] for s in strides], bases, views)

    # column loop: the formula, element by element
    cb, col = _for(re, c0, c1, one, "tile.inner")
    ce = Builder.at_end(cb)
    mapping: dict[SSAValue, SSAValue] = {}
    for i, (arg, view) in enumerate(zip(kernel.block.args, ins)):
        mapping[arg] = ce(
            tile.LoadOp(rows[i], col, strides[i][-1], view.layout.data, view.element_type)
        )
    for arg, p in zip(kernel.block.args[len(ins) :], pvals):
        mapping[arg] = p
    for op in kernel.block.ops:
        if isinstance(op, ew.YieldOp):
            for j, (v, view) in enumerate(zip(op.values, outs)):
                o = len(ins) + j
                ce(tile.StoreOp(mapping[v], rows[o], col, strides[o][-1], view.layout.data, view.element_type))
            continue
        clone = op.clone(value_mapper=mapping)
        cb.add_op(clone)
    cb.add_op(scf.YieldOp())
    if rb is not tb:
        rb.add_op(scf.YieldOp())
    tb.add_op(scf.YieldOp())
    f = fn.function(kernel)
    f.attributes["tile.size"] = IntegerAttr(tile_size, i64)
    return f


@dataclass(frozen=True)
class TileElementwisePass(ModulePass):
    name = "tile-elementwise"

    tile_size: int = 8192

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.tile_size < 1:
            raise ValueError(f"in pass {self.name}: tile_size must be >= 1")
        for kernel in list(op.walk()):
            if isinstance(kernel, ew.KernelOp) and not kernel.reduced.data:  # reductions: tile-rows
                f = tile_kernel(kernel, self.tile_size)
                kernel.parent_block().insert_op_before(f, kernel)  # type: ignore[union-attr]
                op.body.block.erase_op(kernel)
