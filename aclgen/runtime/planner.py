"""The one planner: from a checked call to an executor (views, staging, variant, launch record).

Every face enters here: aclnn's GetWorkspaceSize, the Python call of a declared operator, the
C ABI. The expensive part of planning (broadcast strides, dim merging, picking the variant,
fetching the kernel, packing the launch record) depends only on the geometry of the call:
dims, strides, dtypes, parameters and which outputs are staged, never on addresses. It is a
`Template` cached under that key, so a repeated call shape costs a tuple and a dict lookup;
addresses are bound per call. A call whose very objects passed every check before skips the
checks too (`reuse`: the memo of checked calls).

Policy: calls of PARALLEL_MIN elements and more run on the native pool (ACLGEN_THREADS), calls
that outgrow the last-level cache use streaming stores, and an output that overlaps an input
other than exactly (in place) is computed into the workspace first ("staged") and copied back.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np

from aclgen import cache
from aclgen import dtypes as dt
from aclgen.abi import pack
from aclgen.codegen import native
from aclgen.codegen.target import host, last_level_cache_bytes
from aclgen.kernel import Kernel, Options, Variant
from aclgen.runtime import checks
from aclgen.runtime import constants as C
from aclgen.runtime.executor import Executor, Staging
from aclgen.runtime.geometry import broadcast_strides, plan
from aclgen.runtime.scalar import truncated
from aclgen.runtime.soc import settings
from aclgen.runtime.tensor import AclTensor, contiguous_strides

native.set_object_store(cache.glue_object)  # the native glue's object code, kept as kernels are

ALIGN = native.LINE  # workspace slots start on a line, as blocks do
CACHE_LIMIT = 4096
PARALLEL_MIN = 1 << 15  # below this many elements one thread beats the (native, ~1 us) handoff
MEMO = True  # remember checked calls (`reuse`); benchmarks turn it off to time the full checks


def threads_for(numel: int, threads: int) -> int:
    """Threads a call of `numel` elements runs on: `threads` only where they pay."""
    return threads if numel >= PARALLEL_MIN else 1


def options_for(options: Options, moved_bytes: int) -> Options:
    """`options` for a call moving `moved_bytes`: streaming stores once the operands outgrow the
    last-level cache (below it they halve the speed)."""
    if moved_bytes > last_level_cache_bytes() and not options.nontemporal:
        return dataclasses.replace(options, nontemporal=True)
    return options


@dataclass(frozen=True, slots=True)
class View:
    """A kernel operand before addresses: tensor `tensor` of the call (inputs, then outputs) or,
    when `staged`, that output's temporary in the workspace; `offset` elements past its element
    0 (SwiGluGrad's B half); `dims` and element `strides`."""

    tensor: int
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0
    staged: bool = False
    # (byte offset, bytes) of a kernel's scratch in the workspace, after the staged outputs: the
    # partial sums of output `tensor` that one kernel writes and the next adds up (`_partials`)
    scratch: tuple[int, int] | None = None


class Template:
    """The address-free part of a launch: kernel, launch record, where each pointer comes from."""

    __slots__ = ("call", "kernel", "meta", "meta_ptr", "numel", "plain", "views", "words")

    def __init__(self, kernel, meta, numel: int, views: tuple[View, ...], threads: int):
        entry = native.entry(kernel)
        self.kernel = kernel
        self.call = entry.call(threads)  # big calls split over the native pool inside the call
        self.words = entry.words(threads)
        self.meta, self.numel, self.views = meta, numel, views
        self.meta_ptr = meta.ctypes.data  # `.ctypes` costs microseconds: read it once
        self.plain = all(v.offset == 0 and not v.staged and v.scratch is None for v in views)  # the tensors'

    def launch(self, itemsizes) -> native.Launch:
        """What a replay of an unstaged call re-runs (aclgen.codegen.native.Replays): a scratch
        view points into the record's workspace, where `_bind_all` puts it for a call that stages
        no output."""
        assert not any(v.staged for v in self.views), "a replay stages no output"
        sources = tuple((native.WORKSPACE, v.scratch[0]) if v.scratch is not None
                        else (v.tensor, v.offset * itemsizes[v.tensor]) for v in self.views)
        return native.Launch(self.words, sources, self.meta_ptr, self.numel)


class _Args:
    """Where an operator's C arguments are (acl objects, plain attribute values) and its API
    name: what the memo of checked calls needs on every call, computed once per operator."""

    __slots__ = ("api", "n_in", "objects", "values")

    def __init__(self, op):
        from aclgen.declaration import AttrKind

        arrays = {a.name for a in op.attrs if AttrKind(a.kind).is_array}
        kinds = [op.kinds[n] for n in op.arg_names]
        self.api: str = op.api
        self.n_in = len(op.inputs)
        # plain attribute values (bool, int64, float, str): compared by value
        self.values = frozenset(k for k, (n, c) in enumerate(zip(op.arg_names, kinds)) if c == "attr" and n not in arrays)
        # aclTensors, aclScalars and acl arrays: compared by serial, looked at again (destroyed?)
        self.objects = tuple(k for k in range(len(kinds)) if k not in self.values)


_args: dict[object, _Args] = {}
_templates: dict[tuple, tuple[Template, ...]] = {}
_checked: dict[tuple, tuple] = {}  # memo key -> (call, kernel arguments, numel)
_PLAIN = (bool, int, float, str)


def _layout(op) -> _Args:
    a = _args.get(op)
    if a is None:
        a = _args[op] = _Args(op)
    return a


def _memo_key(op, lay: _Args, gen: int, args: tuple) -> tuple | None:
    """(operator, settings, per argument its serial (acl objects) or value (plain attributes)),
    or None when an argument is neither (the full checks report it)."""
    try:
        if not lay.values:
            return (op, gen, *[a.serial for a in args])
        return (op, gen, *[(a if type(a) in _PLAIN else None) if k in lay.values else a.serial
                           for k, a in enumerate(args)])
    except AttributeError:  # None or not an acl object
        return None


def reuse(op, args: tuple) -> Executor | None:
    """The executor of a call already checked and planned with these very objects, or None.

    Everything the checks and the plan read from tensors and scalars is fixed at creation, and
    serial numbers are never reused, so (operator, settings, serials, int attributes) decides
    the outcome; only what can change since (destroyed objects, freed memory) is looked at
    again. The memo keeps no reference to the objects: the executor takes them from this call."""
    if not MEMO or not _checked:
        return None
    lay = _args.get(op) or _layout(op)
    if lay.values:
        key = _memo_key(op, lay, settings().generation, args)
        if key is None:
            return None
    else:  # the common case, inline
        try:
            key = (op, settings().generation, *[a.serial for a in args])
        except AttributeError:  # None or not an acl object: the full checks report it
            return None
    hit = _checked.get(key)
    if hit is None:
        return None
    objects = args if not lay.values else tuple(args[k] for k in lay.objects)
    blocks = []
    for a in objects:
        if a.destroyed:
            return None
        b = a.block
        if b is not None:
            if b.freed:
                return None
            blocks.append(b)
    call, kargs, numel = hit
    return Executor(lay.api, 0, call, kargs, numel, None, objects, tuple(blocks))


def overlaps_badly(o: AclTensor, i: AclTensor) -> bool:
    """Whether writing `o` while reading `i` needs staging: the byte ranges meet and `o` is not
    exactly `i` (an exact alias is a safe in-place update, unless `o` has repeated elements)."""
    if o.hi <= i.lo or i.hi <= o.lo or not o.numel or not i.numel:
        return False
    exact = (o.addr == i.addr and o.dtype == i.dtype and o.view_dims == i.view_dims and o.strides == i.strides)
    if not exact:
        return True
    return any(s == 0 and n > 1 for n, s in zip(o.view_dims, o.strides))


def _slots(op, call: checks.Call, first_input: AclTensor) -> tuple[int, ...]:
    """The kernel parameters' launch-record slots: f32 bits, or trunc(t) as an i64 for a
    like-input scalar next to integer tensors (exact integer compares). An optional scalar left
    out (None) is its declared default."""
    slots = []
    for s in op.scalars:
        v = call.values[s.name]
        f32 = v.f32 if v is not None else float(np.float32(s.default))
        if s.kind == "like-input" and not C.kernel_of(first_input.dtype).is_float:
            slots.append(truncated(f32))
        else:
            slots.append(v.bits if v is not None else int(np.float32(f32).view(np.uint32)))
    return tuple(slots)


def build(call: checks.Call, args: tuple) -> Executor:
    """The executor of a call whose checks passed (`call.shape` set); `args` as the caller
    passed them, to remember a staging-free outcome under (`reuse`)."""
    op, api = call.op, call.api
    lay = _layout(op)
    names = (*op.inputs, *op.outputs)
    tensors = tuple(call.values[n] for n in names)  # None: an optional tensor left out
    n_in = lay.n_in
    empty = True  # nothing to compute when every output is empty (a reduced output may not be)
    for k, t in enumerate(tensors):  # guard first: the message is built only on failure
        if t is None:
            continue
        b = t.block
        if t.problem is not None or (b is not None and b.freed) or (k >= n_in and (t.readonly or t.repeats)):
            checks.view(api, names[k], t, k >= n_in)
        if t.numel and k >= n_in:
            empty = False
    if empty or call.done:
        return Executor(api, 0, None, (), 0, None, (), ())
    blocks = tuple(t.block for t in tensors if t is not None and t.block is not None)  # repeats are harmless
    ins, outs = [t for t in tensors[:n_in] if t is not None], tensors[n_in:]
    # an output sharing memory with an input goes through the workspace when the kernel could read
    # an element after writing it; with several kernels, whenever they share any (RmsNormGrad's dx
    # written over dy, which the dgamma kernel reads next); an output made of reductions too: a
    # row kernel stores it when the row's reductions end, before the row's element outputs read
    # the inputs (PreluBackward's gradWeight written over weight, which gradInput reads)
    several = len(call.groups) > 1
    shared = [o is not None and any(o.lo < i.hi and i.lo < o.hi for i in ins) for o in outs]
    rows = op.graph_for(call.attr_values).row_results() if any(shared) and op.split is None else []
    rows = [*rows, *[False] * (len(outs) - len(rows))]  # (a split operator's kernel reduces nothing)
    staged = tuple(share and (several or row or any(overlaps_badly(o, i) for i in ins))
                   for o, share, row in zip(outs, shared, rows))
    slots = _slots(op, call, ins[0])
    s = settings()
    key = (op, s.generation, call.shape, slots, call.attr_values, staged,
           *[(t.view_dims, t.strides, t.dtype) if t is not None else None for t in tensors])
    tpls = _templates.get(key)
    if tpls is None:
        tpls = _template(call, tensors, staged, slots, s.options, s.threads)
        if len(_templates) >= CACHE_LIMIT:
            _templates.clear()
        _templates[key] = tpls
    if len(tpls) != 1:
        executor = _sequence(api, tpls, tensors, n_in, blocks)
        if executor.staging is None:
            _remember(op, lay, s.generation, args, executor.call, executor.args, executor.numel)
        return executor
    tpl = tpls[0]
    if tpl.plain:
        workspace, staging = 0, None
        kargs = (*[tensors[v.tensor].addr for v in tpl.views], tpl.meta_ptr, 0, tpl.numel)
    else:
        workspace, kargs, staging = _bind(tpl, tensors, n_in)
    if staging is None:
        _remember(op, lay, s.generation, args, tpl.call, kargs, tpl.numel)
    return Executor(api, workspace, tpl.call, kargs, tpl.numel, staging, tensors, blocks, tpl)


def _remember(op, lay: _Args, generation: int, args: tuple, call, kargs: tuple, numel: int) -> None:
    """Memo a call that needs no workspace (`reuse`): its kernel entry (or its kernels' sequence)
    and arguments under the objects' serials and the attributes' values."""
    if not MEMO:
        return
    key = _memo_key(op, lay, generation, args)
    if key is not None and None not in key:
        if len(_checked) >= CACHE_LIMIT:
            _checked.clear()
        _checked[key] = (call, kargs, numel)


def _split_views(op, d, views_in: list[View], views_out: list[View]) -> tuple[list[View], list[View]]:
    """The kernel's operands of a split operator: the split input as its two halves along dim
    `d`, and each output that spans it (`whole`) likewise."""
    names = (*op.inputs, *op.outputs)

    def cut(views: list[View], which) -> list[View]:
        out = []
        for v in views:
            if names[v.tensor] not in which:
                out.append(v)
                continue
            h = v.dims[d] // 2
            dims = tuple(h if k == d else n for k, n in enumerate(v.dims))
            out += [dataclasses.replace(v, dims=dims),
                    dataclasses.replace(v, dims=dims, offset=v.offset + h * v.strides[d])]
        return out

    return cut(views_in, (op.split.input,)), cut(views_out, op.split.whole)


def _broadcast_view(call: checks.Call, name: str, t: AclTensor) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(dims, strides) of input `t` as it broadcasts: a tensor declared `along` a dim gets its
    one dim there (aclgen.runtime.checks.Call.dims); one the checks gave other dims, those
    (`Call.views`)."""
    if name in call.views:
        return call.views[name]
    along = call.op.tensor(name).along
    if along is None:
        return t.view_dims, t.strides
    shape = call.shape or ()
    dims = call.dims(name, len(shape))
    k = along % len(shape)
    stride = t.strides[0] if t.view_dims else 0
    return dims, tuple(stride if j == k else 0 for j in range(len(shape)))


def _output_view(call: checks.Call, name: str, t: AclTensor, staged: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(dims, strides) the kernel writes output `t` through: its own, contiguous where it is
    staged, or with dims the checks gave it (a reduction's output declared keepdims=False)."""
    dims, strides = call.views.get(name, (t.view_dims, t.strides))
    return dims, contiguous_strides(dims) if staged else strides  # (dims of 1 leave the layout alone)


def _bind(tpl: Template, tensors, n_in: int) -> tuple[int, tuple, Staging | None]:
    """(workspace size, kernel arguments, staging) when pointers are not just the tensors'."""
    return _bind_all((tpl,), tensors, n_in)


def _bind_all(tpls: tuple[Template, ...], tensors, n_in: int) -> tuple[int, tuple, Staging | None]:
    """(workspace size, every launch's arguments one after the other, staging): outputs that
    must be staged get one place each in the workspace, whichever launch writes them."""
    offsets: dict[int, int] = {}
    size = 0
    for k, o in enumerate(tensors[n_in:], n_in):
        if o is not None and any(v.staged and v.tensor == k for tpl in tpls for v in tpl.views):
            offsets[k] = size
            size += -(-(o.numel * o.itemsize) // ALIGN) * ALIGN
    scratch = size
    for tpl in tpls:
        for v in tpl.views:
            if v.scratch is not None:
                size = max(size, scratch + v.scratch[0] + v.scratch[1])
    kargs: list = []
    patches = []
    for tpl in tpls:
        for v in tpl.views:
            delta = v.offset * tensors[v.tensor].itemsize
            if v.scratch is not None:
                patches.append((len(kargs), scratch + v.scratch[0]))
                kargs.append(0)
            elif v.staged:
                patches.append((len(kargs), offsets[v.tensor] + delta))
                kargs.append(0)
            else:
                kargs.append(tensors[v.tensor].addr + delta)
        kargs += [tpl.meta_ptr, 0, tpl.numel]
    copies = [(off, tensors[k]) for k, off in offsets.items()]
    return size, tuple(kargs), (Staging(tuple(patches), tuple(copies)) if patches or copies else None)


def _sequence(api: str, tpls: tuple[Template, ...], tensors, n_in: int, blocks) -> Executor:
    """The executor of a call made of several kernels (outputs that reduce different dims),
    run one after the other on the same arguments."""
    workspace, kargs, staging = _bind_all(tpls, tensors, n_in)
    steps = tuple((cast(Callable, tpl.call), len(tpl.views) + 3) for tpl in tpls)

    def run(*args) -> None:
        at = 0
        for call, n in steps:
            call(*args[at : at + n])
            at += n

    return Executor(api, workspace, run, kargs, max(t.numel for t in tpls), staging, tensors, blocks, templates=tpls)


def _template(call: checks.Call, tensors, staged, slots, options: Options, threads: int) -> tuple[Template, ...]:
    """The launches of a call: one kernel per group of outputs that reduce the same dims
    (`call.groups`; one group for an elementwise operator), in order."""
    op = call.op
    n_in = len(op.inputs)
    views_in = [View(k, *_broadcast_view(call, op.inputs[k], t)) for k, t in enumerate(tensors[:n_in]) if t is not None]
    views_out = [
        View(k, *_output_view(call, op.outputs[k - n_in], t, st), staged=st)
        for k, (t, st) in enumerate(zip(tensors[n_in:], staged), n_in) if t is not None
    ]
    shape = call.shape
    assert shape is not None  # aclgen.runtime.api checked that the check set it
    if op.split is not None:
        views_in, views_out = _split_views(op, call.split_dim, views_in, views_out)
    absent = tuple(k for k, t in enumerate(tensors[:n_in]) if t is None)
    groups = call.groups or [(None, tuple(range(len(op.kernel_outputs))))]
    given = [k for k, t in enumerate(tensors[n_in:]) if t is not None]
    fused = _partials(call, groups, given, tensors, views_in, views_out, absent, slots, options, threads)
    if fused is not None:
        return fused
    whole = len(groups) == 1 and len(given) == len(op.outputs)  # one kernel, every output: the common case
    out = []
    for axes, results in groups:
        # a kernel of some outputs (kernel outputs are the API's here: a split operator is one kernel)
        mine = None if whole else [k for k in results if k in given]
        if mine == []:
            continue  # every output of this kernel was left out (optional)
        outs = views_out if mine is None else [views_out[given.index(k)] for k in mine]
        views = (*views_in, *outs)
        p = plan(shape, [broadcast_strides(v.dims, v.strides, shape) for v in views], axes)
        variant = Variant(tuple(C.kernel_of(tensors[v.tensor].dtype) for v in views_in),
                          tuple(C.kernel_of(tensors[v.tensor].dtype) for v in outs), p.rank, p.layouts,
                          call.attr_values, p.reduced, absent, tuple(mine) if mine is not None else (), p.columns)
        moved = p.numel * sum(tensors[v.tensor].itemsize for v in views)
        kernel = op.kernel(variant, options_for(op.options or options, moved))
        meta = pack(kernel.meta_layout, p.shape, p.strides, slots)
        # a reduction kernel's threads split rows; elementwise kernels' split elements
        out.append(Template(kernel, meta, p.rows, views, threads_for(p.numel, threads)))
    return tuple(out)


# Rows per block of a kernel that sums across rows (`_partials`): the pool cuts its range into
# whole blocks (Kernel.chunking), so a block is always one thread's. BLOCK_ROWS, halved down to
# MIN_BLOCK_ROWS until the call has MIN_BLOCKS blocks (fewer rows, longer ones: [256, 65536] in
# blocks of 16); fewer blocks than that, or fewer elements than MIN_NUMEL (its workspace would
# cost the call its replay), keep the column kernel.
BLOCK_ROWS = 64
MIN_BLOCK_ROWS = 8
MIN_BLOCKS = 16
MIN_NUMEL = 1 << 18


def block_rows(rows: int) -> int:
    """Rows per block for a call of `rows` rows (a power of two: few variants)."""
    size = BLOCK_ROWS
    while size > MIN_BLOCK_ROWS and -(-rows // size) < MIN_BLOCKS:
        size //= 2
    return size


def _partials(call: checks.Call, groups, given: list[int], tensors, views_in: list[View], views_out: list[View],
              absent: tuple[int, ...], slots, options: Options, threads: int) -> tuple[Template, ...] | None:
    """The launches of a formula whose outputs reduce the rows' dims, or reduce nothing, and sums
    over the other dims (RmsNormGrad's dx and dgamma; PreluBackward's gradInput and gradWeight),
    or None where that does not apply.

    One kernel runs a row at a time, as for the row outputs alone, and also adds each across-row
    sum's operand into a row of f32 per block of rows (`block_rows`) in the workspace (threads own
    whole blocks, so each block's sums are added in row order by one thread). Then a kernel per
    such output adds the blocks up, a column kernel over [blocks, row] into the output. x and dy
    are read once instead of twice, and the bits are the same for every thread count."""
    if call.op.split is not None:
        return None
    op, n_in = call.op, len(call.op.inputs)
    shape = call.shape
    assert shape is not None
    results = call.op.graph_for(call.attr_values).results
    if len(groups) == 1 and groups[0][0] is not None:
        # sums over some dims next to elementwise outputs (PreluBackward's gradWeight and
        # gradInput): the elementwise ones are row outputs of rows over the other dims
        (across, both), per = groups[0], call.axes
        rows = tuple(d for d in range(len(shape)) if d not in across)
        element = tuple(k for k in both if per[k] is None)
        if not rows or not element:
            return None
        groups = [(rows, element), (across, tuple(k for k in both if per[k] is not None))]
    if len(groups) != 2:
        return None
    for (axes, rowwise), (across, sums) in (groups, groups[::-1]):
        if sorted((*axes, *across)) != list(range(len(shape))):
            continue
        if any(results[k].op != "reduce" or results[k].attr[0] != "sum" for k in sums):  # type: ignore[index]
            continue
        if not any(k in given for k in rowwise) or not any(k in given for k in sums):
            continue
        row_dims = [shape[d] for d in axes]
        row = math.prod(row_dims)
        inner = iter(contiguous_strides(tuple(row_dims)))
        # a partial walks its row contiguously and stays put along the rows (a block's row)
        walk = tuple(next(inner) if d in axes else 0 for d in range(len(shape)))
        summed = [k for k in given if k in sums]
        outs = [View(v.tensor, tuple(shape), walk) if k in sums else v for k, v in zip(given, views_out)]
        p = plan(shape, [broadcast_strides(v.dims, v.strides, shape) for v in (*views_in, *outs)], axes)
        size = block_rows(p.rows)
        blocks = -(-p.rows // size)
        if p.columns or blocks < MIN_BLOCKS or p.numel < MIN_NUMEL:
            return None
        part = -(-blocks * row * 4 // ALIGN) * ALIGN  # each partial: [blocks, row] f32, one after the other
        outs = [dataclasses.replace(v, scratch=(summed.index(k) * part, part)) if k in sums else v
                for k, v in zip(given, outs)]
        views = (*views_in, *outs)
        variant = Variant(tuple(C.kernel_of(tensors[v.tensor].dtype) for v in views_in),
                          tuple(dt.float32 if k in sums else C.kernel_of(tensors[n_in + k].dtype) for k in given),
                          p.rank, p.layouts, call.attr_values, p.reduced, absent, tuple(given), False,
                          tuple(j for j, k in enumerate(given) if k in sums), size)
        moved = p.numel * sum(tensors[v.tensor].itemsize for v in views if v.scratch is None)
        kernel = op.kernel(variant, options_for(op.options or options, moved))
        # its range counts rows, rounded up to whole blocks (as is each chunk of the pool)
        launches = [Template(kernel, pack(kernel.meta_layout, p.shape, p.strides, slots), blocks * size, views,
                             threads_for(p.numel, threads))]
        for k in summed:  # then each output's blocks added up
            j = given.index(k)
            launches.append(_blocks_launch(views_out[j], outs[j].scratch, blocks, row_dims, axes, tensors, options,
                                        threads))
        return tuple(launches)
    return None


def _blocks_launch(out: View, scratch, blocks: int, row_dims: list[int], axes, tensors, options: Options,
                threads: int) -> Template:
    """The launch that adds `blocks` partial rows (contiguous [blocks, *row_dims] f32 at
    `scratch`) into output view `out` (the call's dims, its reduced dims 1)."""
    shape = (blocks, *row_dims)
    src = View(out.tensor, shape, contiguous_strides(shape), scratch=scratch)
    dst = View(out.tensor, (1, *row_dims), (0, *(out.strides[d] for d in axes)))
    p = plan(shape, [src.strides, dst.strides], (0,))
    variant = Variant((dt.float32,), (C.kernel_of(tensors[out.tensor].dtype),), p.rank, p.layouts,
                      reduced=p.reduced, columns=p.columns)
    kernel = _adder(variant, options_for(options, p.numel * 4))
    return Template(kernel, pack(kernel.meta_layout, p.shape, p.strides, ()), p.rows, (src, dst),
                    threads_for(p.numel, threads))


def add_blocks(partials):
    """The formula of `_blocks_launch`'s kernel: the partial sums' blocks (dim 0) added up."""
    from aclgen.frontend.dsl import CORE

    return CORE["sum"](partials, 0)


_adders: dict[tuple, Kernel] = {}


def _adder(variant: Variant, options: Options) -> Kernel:
    """The kernel of `add_blocks` for `variant` (compiled once, or from the compile cache)."""
    key = (variant, options, host().key)  # (a process may change its target: ACLGEN_CPU_NAME)
    k = _adders.get(key)
    if k is None:
        k = _adders[key] = cache.fetch(add_blocks, "add_blocks", variant, (), ("partials", "out"), options)
    return k
