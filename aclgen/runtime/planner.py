"""From checked tensors to an executor: views, staging, kernel variant, packed launch record.

The expensive part of planning (broadcast strides, dim merging, picking the variant, fetching
the kernel, packing the launch record) depends only on the geometry of the call: dims, strides,
dtypes, parameters and which outputs are staged, never on addresses. It is cached under that
key, so a repeated call shape costs a tuple build and a dict lookup; addresses are bound per call.

Operand sources. A kernel pointer is "tensor k plus a byte delta" (SwiGluGrad's halves are
views of x and out) or, for a staged output, "workspace offset plus delta".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aclgen.kernel import Variant
from aclgen.launch import Launch, broadcast_strides, options_for, plan, threads_for
from aclgen.ops.operator import Operator
from aclgen.runtime import checks
from aclgen.runtime import constants as C
from aclgen.runtime.executor import Executor, Staging
from aclgen.runtime.soc import settings
from aclgen.runtime.tensor import AclTensor, contiguous_strides

ALIGN = 64
CACHE_LIMIT = 4096
MEMO = True  # remember checked calls (`reuse`); benchmarks turn it off to time the full checks

# An operand view before addresses: (source, byte delta, dims, element strides).
# source >= 0: tensor index; source < 0: staged output -1 - source (in the workspace).
View = tuple[int, int, tuple[int, ...], tuple[int, ...]]
Split = Callable[[list[View], list[View], int, object], tuple[tuple[int, ...], list[View], list[View]]]


class Template:
    """The address-free part of a launch: kernel, launch record, where each pointer comes from."""

    __slots__ = ("kernel", "cfunc", "threads", "meta", "meta_ptr", "numel", "sources", "plain")

    def __init__(self, kernel, meta, numel, sources, threads):
        # big calls run on the native pool inside the call (threads only where they pay)
        self.threads = threads_for(numel, threads)
        self.kernel, self.cfunc = kernel, kernel.call("i" * (kernel.meta_layout.n_operands + 1) + "ii", self.threads)
        self.meta, self.numel, self.sources = meta, numel, sources
        self.meta_ptr = meta.ctypes.data  # `.ctypes` costs microseconds: read it once
        self.plain = all(d == 0 and s >= 0 for s, d in sources)  # pointers = the tensors' addresses


_templates: dict[tuple, Template] = {}


class Checked:
    """A memo of a call that passed every check: what its executor needs, minus the objects."""

    __slots__ = ("cfunc", "args", "numel", "threads")

    def __init__(self, cfunc, args, numel, threads):
        self.cfunc, self.args, self.numel, self.threads = cfunc, args, numel, threads


_checked: dict[tuple, Checked] = {}


def reuse(api: str, args: tuple, extra: int | None = None) -> Executor | None:
    """The executor of a call already checked and planned with these very objects, or None.

    Everything the checks and the plan read from tensors and scalars is fixed at creation, and
    serial numbers are never reused, so (API, settings, serials, `extra`) decides the outcome;
    only what can change since (destroyed objects, freed memory) is looked at again. The memo
    keeps no reference to the objects: the executor takes them from this call."""
    if not MEMO:
        return None
    gen = settings().generation
    try:
        key = (api, gen, extra, *[a.serial for a in args])
    except AttributeError:  # None or not an acl object: the full checks report it
        return None
    hit = _checked.get(key)
    if hit is None:
        return None
    blocks = []
    for a in args:
        if a.destroyed:
            return None
        b = a.block
        if b is not None:
            if b.freed:
                return None
            blocks.append(b)
    return Executor(api, 0, hit.cfunc, hit.args, hit.numel, hit.threads, None, args, tuple(blocks))


def overlaps_badly(o: AclTensor, i: AclTensor) -> bool:
    """Whether writing `o` while reading `i` needs staging: the byte ranges meet and `o` is not
    exactly `i` (an exact alias is a safe in-place update, unless `o` has repeated elements)."""
    if o.hi <= i.lo or i.hi <= o.lo or not o.numel or not i.numel:
        return False
    exact = (o.addr == i.addr and o.dtype == i.dtype and o.view_dims == i.view_dims and o.strides == i.strides)
    if not exact:
        return True
    return any(s == 0 and n > 1 for n, s in zip(o.view_dims, o.strides))


def build(
    api: str,
    op: Operator,
    names: Sequence[str],
    tensors: Sequence[AclTensor],
    n_in: int,
    shape: tuple[int, ...],
    slots: tuple[int, ...] = (),
    split: Split | None = None,
    split_key=None,
    memo: tuple | None = None,
) -> Executor:
    """The executor of a checked call. `tensors` = inputs then outputs; `shape` = what the
    outputs span; `split(views_in, views_out, itemsize, split_key)` maps tensor views to the
    kernel's operands and iteration shape (default: one operand per tensor, broadcast to shape).
    `memo` = (arguments, extra) as `reuse` saw them, to remember a staging-free outcome under."""
    empty = False
    for k, t in enumerate(tensors):  # guard first: the message is built only on failure
        b = t.block
        if t.problem is not None or (b is not None and b.freed) or (k >= n_in and (t.readonly or t.repeats)):
            checks.view(api, names[k], t, k >= n_in)
        if not t.numel and k >= n_in:
            empty = True
    if empty:
        return Executor(api, 0, None, (), 0, 1, None, (), ())
    ins, outs = tensors[:n_in], tensors[n_in:]
    staged = []
    for o in outs:
        st = False
        for i in ins:
            if o.lo < i.hi and i.lo < o.hi and overlaps_badly(o, i):
                st = True
                break
        staged.append(st)
    staged = tuple(staged)
    s = settings()
    key = (op.name, s.generation, shape, slots, split_key, staged,
           *[(t.view_dims, t.strides, t.dtype) for t in tensors])
    tpl = _templates.get(key)
    if tpl is None:
        tpl = _template(op, tensors, n_in, shape, slots, split, split_key, staged, s.options, s.threads)
        if len(_templates) >= CACHE_LIMIT:
            _templates.clear()
        _templates[key] = tpl
    threads = 1  # the template's cfunc already splits big calls over the native pool
    blocks = tuple(t.block for t in tensors if t.block is not None)  # repeats are harmless
    if tpl.plain and True not in staged:
        workspace, staging = 0, None
        args = (*[tensors[src].addr for src, _ in tpl.sources], tpl.meta_ptr, 0, tpl.numel)
    else:
        workspace, args, staging = _bind(tpl, tensors, n_in, staged)
    if memo is not None and staging is None and MEMO:
        if len(_checked) >= CACHE_LIMIT:
            _checked.clear()
        margs, extra = memo
        _checked[(api, s.generation, extra, *[a.serial for a in margs])] = Checked(tpl.cfunc, args, tpl.numel, threads)
    executor = Executor(api, workspace, tpl.cfunc, args, tpl.numel, threads, staging, tuple(tensors), blocks)
    executor.template = tpl
    return executor


def _bind(tpl: Template, tensors, n_in, staged) -> tuple[int, tuple, Staging | None]:
    """(workspace size, kernel arguments, staging) when pointers are not just the tensors'."""
    offsets, size = [], 0
    for o, st in zip(tensors[n_in:], staged):
        offsets.append(size if st else None)
        if st:
            size += -(-(o.numel * o.itemsize) // ALIGN) * ALIGN
    pointers, patches = [], []
    for pos, (src, delta) in enumerate(tpl.sources):
        if src >= 0:
            pointers.append(tensors[src].addr + delta)
        else:
            pointers.append(0)
            patches.append((pos, offsets[-1 - src] + delta))
    copies = [(offsets[k], o) for k, o in enumerate(tensors[n_in:]) if staged[k]]
    args = (*pointers, tpl.meta_ptr, 0, tpl.numel)
    return size, args, (Staging(patches, copies) if patches or copies else None)


def _template(op, tensors, n_in, shape, slots, split, split_key, staged, options, threads) -> Template:
    views_in = [(k, 0, t.view_dims, t.strides) for k, t in enumerate(tensors[:n_in])]
    views_out = []
    for k, (t, st) in enumerate(zip(tensors[n_in:], staged)):
        if st:
            views_out.append((-1 - k, 0, t.view_dims, contiguous_strides(t.view_dims)))
        else:
            views_out.append((n_in + k, 0, t.view_dims, t.strides))
    if split is not None:
        shape, views_in, views_out = split(views_in, views_out, tensors[0].itemsize, split_key)
    operands = [*views_in, *views_out]
    strides = [broadcast_strides(dims, st, shape) for _, _, dims, st in operands]
    p = plan(shape, strides)
    dtypes_in = tuple(C.KERNEL_DTYPE[tensors[v[0]].dtype] for v in views_in)
    dtypes_out = tuple(C.KERNEL_DTYPE[tensors[n_in + (-1 - v[0] if v[0] < 0 else v[0] - n_in)].dtype]
                       for v in views_out)
    variant = Variant(dtypes_in, dtypes_out, p.rank, p.layouts)
    kernel = op.kernel(variant, options_for(options, p.numel * sum(t.itemsize for t in tensors)))
    meta = Launch(kernel, p, [0] * len(operands), slots).meta
    return Template(kernel, meta, p.numel, tuple((src, delta) for src, delta, _, _ in operands), threads)
