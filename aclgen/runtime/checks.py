"""Phase 1's argument checks: SPEC.md §6's default sequence and the steps it is made of.

A `Call` holds one GetWorkspaceSize call's arguments under CANN's parameter names. Each step
checks one thing and raises AclError with CANN's code and one line naming the API, the
parameter, what was expected and what was given. `default(call)` is SPEC §6's order; an
operator whose CANN checks differ (another order, other codes) declares its own `check(call)`
made of the same steps. A check leaves the iteration shape in `call.shape` and the attributes'
values, checked and normalized, in `call.attrs`.

The views' soundness (§1: inside storage and allocation, memory not freed, outputs writable)
is checked by the planner after these steps, before the empty-tensor return.
"""

from __future__ import annotations

import math
import re

from aclgen.declaration import AttrError
from aclgen.runtime import constants as C
from aclgen.runtime.array import AclArray
from aclgen.runtime.errors import AclError, kind_of
from aclgen.runtime.scalar import AclScalar
from aclgen.runtime.soc import settings
from aclgen.runtime.tensor import AclTensor, fmt_dims

NULL, INVALID = C.ACLNN_ERR_PARAM_NULLPTR, C.ACLNN_ERR_PARAM_INVALID
_allowed: dict[tuple, tuple[frozenset, str, tuple[int, ...]]] = {}


def soc() -> str:
    """The current SoC profile name; an unusable ACLGEN_* setting fails the call (561000)."""
    s = settings()
    if s.soc_error:
        raise AclError(C.ACLNN_ERR_INNER, s.soc_error)
    return s.soc


def allowed(op, soc_name: str) -> tuple[frozenset, str, tuple[int, ...]]:
    """(codes, "[ACL_FLOAT, ...]", codes in order) of `op`'s dtypes on `soc_name`; cached."""
    key = (op, soc_name)
    hit = _allowed.get(key)
    if hit is None:
        codes = tuple(C.code_of(n) for n in op.dtypes.get(soc_name, ()))
        hit = _allowed[key] = (frozenset(codes), listing(codes), codes)
    return hit


def listing(codes) -> str:
    return "[" + ", ".join(C.dtype_name(c) for c in codes) + "]"


class Call:
    """One GetWorkspaceSize call: `op` (an aclgen.declaration.Operator) and its arguments by name."""

    __slots__ = ("api", "attrs", "axes", "done", "groups", "op", "shape", "split_dim", "values", "views")

    def __init__(self, op, args, api: str | None = None):
        self.op = op
        self.api: str = api or op.api  # aclnnInplace<Name> for an in-place call
        self.values: dict = dict(zip(op.arg_names, args))
        self.shape: tuple[int, ...] | None = None  # what the outputs span; set by the check
        self.done = False  # the check found nothing to compute (`empty`): no output is looked at
        self.attrs: dict[str, object] = {}
        # the formula's kernels: (dims of `shape` they reduce, the kernel outputs they compute); set with it
        self.groups: list[tuple[tuple[int, ...] | None, tuple[int, ...]]] = []
        self.axes: list[tuple[int, ...] | None] = []  # per kernel output, the dims it reduces (None: none); with it
        self.split_dim: int | None = None  # the split input's dim, in [0, rank) (`split_shape`)
        # tensors the kernel sees with other dims than their own, as (dims, strides): `view_as`,
        # and outputs of reductions declared keepdims=False (their reduced dims 1 again)
        self.views: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}

    @property
    def attr_values(self) -> tuple:
        """The formula attributes' values as the formula and the kernel variant see them, in
        declaration order."""
        return self.op.kernel_attrs(tuple(self.attrs.get(a.name, a.sample) for a in self.op.formula_attrs))

    def error(self, status: int, message: str) -> AclError:
        """An AclError whose message names this call's API first (and, for an in-place call,
        the tensor written in place by its C name, <input>Ref, where the checks say input or
        output)."""
        if self.api != self.op.api and self.op.inplace:
            ref = f"{self.op.inplace}Ref"
            message = re.sub(rf"\b({re.escape(self.op.inplace)}|{re.escape(self.op.outputs[0])})\b(?!Ref)", ref, message)
        return AclError(status, f"{self.api}: {message}")

    def allowed(self) -> tuple[frozenset, str, tuple[int, ...]]:
        """(codes, "[ACL_FLOAT, ...]", codes in order): the operator's dtypes on this SoC."""
        return allowed(self.op, soc())

    # -- presence and kind -----------------------------------------------------------------------

    def tensor(self, name: str) -> AclTensor:
        """A live aclTensor: None -> 161001; another type or a destroyed tensor -> 161002."""
        t = self.values[name]
        if type(t) is AclTensor and not t.destroyed:
            return t
        raise self._not_live(name, t, AclTensor, "an aclTensor")

    def scalar(self, name: str) -> AclScalar:
        """A live aclScalar: None -> 161001; another type or a destroyed scalar -> 161002."""
        s = self.values[name]
        if type(s) is AclScalar and not s.destroyed:
            return s
        raise self._not_live(name, s, AclScalar, "an aclScalar")

    def _not_live(self, name: str, value, kind: type, what: str) -> AclError:
        if value is None:
            return self.error(NULL, f"{name} is nullptr")
        if type(value) is not kind:
            return self.error(INVALID, f"{name} must be {what}, got {kind_of(value)}")
        return self.error(INVALID, f"{name} was destroyed")

    def attr(self, name: str):
        """An attribute's value, checked against its kind and normalized (an aclIntArray & co.
        as a tuple); kept in `attrs` for the plan. None -> 161001; another kind -> 161002."""
        decl = self.op.attr(name)
        v = self.values[name]
        if v is None:
            raise self.error(NULL, f"{name} is nullptr")
        if isinstance(v, AclArray):
            if v.destroyed:
                raise self.error(INVALID, f"{name} was destroyed")
            v = v.values
        try:
            value = decl.value(v)
        except AttrError as exc:
            raise self.error(INVALID, f"{name} {exc}") from None
        self.attrs[name] = value
        return value

    def integer(self, name: str) -> int:
        """An int64 attribute's value (see `attr`)."""
        return self.attr(name)

    def present(self, *names: str) -> None:
        """The named arguments (default: every one, in C order) present and of their kind; an
        optional tensor or scalar may be None."""
        op = self.op
        for name in names or op.arg_names:
            kind = op.kinds[name]
            if kind == "attr":
                self.attr(name)
            elif kind == "scalar":
                if self.values[name] is not None or not self.optional_scalar(name):
                    self.scalar(name)
            elif (mask := op.tensor(name).mask) is not None:
                flags = self.attr(mask[0])
                on = mask[1] < len(flags) and flags[mask[1]]
                if on and self.values[name] is None:
                    raise self.error(NULL, f"{mask[0]}[{mask[1]}] is true but {name} is nullptr")
                if on:
                    self.tensor(name)
                else:
                    self.values[name] = None  # masked off: left out, never written
            elif self.values[name] is not None or not op.tensor(name).optional:
                self.tensor(name)

    def dtype_combination(self, names: tuple[str, ...] = (), combos=None) -> None:
        """The named tensors' dtypes are one of the SoC profile's combinations (CANN's tables of
        supported dtype combinations, e.g. x float16 with gamma float32), else 161002. Default:
        the declaration's table over its inputs and outputs; a left-out optional tensor matches
        any dtype of its column."""
        names = names or (*self.op.inputs, *self.op.outputs)
        combos = self.op.combinations if combos is None else combos
        got = tuple(None if self.values[n] is None else
                    k.name if (k := C.kernel_dtype((t := self.tensor(n)).dtype))
                    else C.dtype_name(t.dtype) for n in names)
        allowed = combos.get(soc(), ())
        if any(g is None for g in got):
            match = [row for row in allowed if all(g is None or g == r for g, r in zip(got, row))]
            got = match[0] if match else got
        if got not in allowed:
            listed = "; ".join(", ".join(c) for c in allowed) or "none on this SoC"
            shown = ", ".join(g or "left out" for g in got)
            raise self.error(INVALID, f"dtypes of ({', '.join(names)}) are ({shown}), not one of the "
                                      f"supported combinations ({listed})")

    def view_as(self, name: str, dims: tuple[int, ...], status: int = INVALID) -> None:
        """Input `name` seen by the kernel with `dims`, which hold as many elements (LayerNormBackward's
        mean: [A] or [A, 1, ...]): its strides for them, as numpy's reshape without a copy finds
        them; a layout no view can give is `status`, named."""
        t = self.tensor(name)
        if t.view_dims == tuple(dims):
            return
        strides = reshaped_strides(t.view_dims, t.strides, dims)
        if strides is None:
            raise self.error(status, f"{name} of shape {fmt_dims(t.view_dims)} and strides {list(t.strides)} cannot be "
                                     f"seen as {fmt_dims(dims)} without a copy")
        self.views[name] = (tuple(dims), strides)

    def dim(self, attr: str, tensor: str) -> int:
        """Int64 attribute `attr` as a dim of `tensor` (negative from the end), in [0, rank):
        outside [-rank, rank - 1] it is 161002."""
        value = self.attr(attr)
        rank = len(self.tensor(tensor).view_dims)
        if not -rank <= value < rank:
            raise self.error(INVALID, f"{attr} {value} is outside [{-rank}, {rank - 1}] for {tensor} of {rank} dims")
        return value % rank

    def empty(self, *names: str) -> bool:
        """Whether one of the named tensors is empty (CANN returns at once for some operators,
        before it looks at the outputs: the call then computes nothing, whatever the outputs'
        shapes, and its shape is the first tensor's)."""
        if any(not self.tensor(n).numel for n in names):
            self.shape = self.tensor(names[0]).view_dims
            self.done = True
            return True
        return False

    def given(self, names) -> tuple[str, ...]:
        """`names` without the optional tensors the call leaves out (None)."""
        return tuple(n for n in names if self.values[n] is not None or not self.op.tensor(n).optional)

    def optional_scalar(self, name: str) -> bool:
        return any(s.name == name and s.optional for s in self.op.scalars)

    # -- dtypes ----------------------------------------------------------------------------------

    def tensors(self, names) -> list[tuple[str, AclTensor]]:
        """The named tensors (default: every tensor given: an optional one may be absent)."""
        names = names or [n for n in (*self.op.inputs, *self.op.outputs)
                          if self.values[n] is not None or not self.op.tensor(n).optional]
        return [(n, self.tensor(n)) for n in names]

    def dtype_in(self, *names: str, allowed_codes: tuple[frozenset, str] | None = None) -> None:
        """Each named tensor's dtype (default: every tensor's) is in the SoC profile's list."""
        codes, text = allowed_codes or self.allowed()[:2]
        for name, t in self.tensors(names):
            if t.dtype not in codes:
                raise self.error(INVALID, f"{name} dtype {C.dtype_name(t.dtype)} is not in {text}")

    def same_dtype(self, *names: str, ref: str | None = None, status: int = INVALID) -> None:
        """Each named tensor (default: every tensor) has the dtype of `ref` (the first input)."""
        ref = ref or self.op.inputs[0]
        r = self.tensor(ref)
        for name, t in self.tensors(names):
            if t.dtype != r.dtype:
                raise self.error(status, f"{name} dtype {C.dtype_name(t.dtype)} must equal {ref} dtype "
                                         f"{C.dtype_name(r.dtype)}")

    def common(self) -> tuple[str, ...]:
        """The tensors given that share the operator's dtypes: all but outputs of their own."""
        return tuple(n for n in self.given((*self.op.inputs, *self.op.outputs)) if not self.op.tensor(n).dtype)

    def own_dtypes(self) -> None:
        """Each output declared with its own dtype (ReluV2's uint8 mask) has it."""
        for name in self.given(self.op.outputs):
            want = self.op.tensor(name).dtype
            if want and self.tensor(name).dtype != C.code_of(want):
                raise self.error(INVALID, f"{name} dtype {C.dtype_name(self.tensor(name).dtype)} must be "
                                          f"{C.dtype_name(C.code_of(want))}")

    def result_dtype(self, status: int = INVALID) -> int:
        """The outputs have the dtype the operator's `promote` gives for its inputs'."""
        ins = [(n, self.tensor(n)) for n in self.given(self.op.inputs)]
        names = [k.name if (k := C.kernel_dtype(t.dtype)) else "" for _, t in ins]
        want = C.code_of(self.op.result_dtype(*names))
        for name in self.given(self.op.outputs):
            if self.op.tensor(name).dtype:
                continue  # its own dtype (own_dtypes)
            t = self.tensor(name)
            if t.dtype != want:
                of = " and ".join(f"{n} {C.dtype_name(x.dtype)}" for n, x in ins)
                raise self.error(status, f"{name} dtype {C.dtype_name(t.dtype)} must equal the result dtype "
                                         f"{C.dtype_name(want)} of {of}")
        return want

    # -- ranks, shapes, formats ---------------------------------------------------------------------

    def max_rank(self, *names: str, limit: int | None = None) -> None:
        limit = limit or self.op.max_rank or 8
        for name, t in self.tensors(names):
            if len(t.view_dims) > limit:
                raise self.error(INVALID, f"{name} has {len(t.view_dims)} dims, at most {limit} are supported")

    def min_rank(self, *names: str, limit: int = 1) -> None:
        """Each named tensor (default: every one given) has at least `limit` dims (GLU-like
        operators refuse a 0-d input before they look at its split dim)."""
        for name, t in self.tensors(names):
            if len(t.view_dims) < limit:
                raise self.error(INVALID, f"{name} has {len(t.view_dims)} dims, at least {limit} are needed")

    def same_shape(self, *names: str, ref: str | None = None) -> tuple[int, ...]:
        """Each named tensor (default: every input) has `ref`'s shape (the first input's)."""
        ref = ref or self.op.inputs[0]
        r = self.tensor(ref)
        for name, t in self.tensors(names or self.given(self.op.inputs)):
            if t.view_dims != r.view_dims:
                raise self.error(INVALID, f"{name} shape {fmt_dims(t.view_dims)} must equal {ref} shape "
                                          f"{fmt_dims(r.view_dims)}")
        return r.view_dims

    def broadcast(self, *names: str) -> tuple[int, ...]:
        """The numpy broadcast shape of the named tensors (default: the inputs given), else 161002."""
        names = names or self.given(self.op.inputs)
        rank = max(len(self.tensor(n).view_dims) for n in names if self.op.tensor(n).along is None)
        shape = self.dims(names[0], rank)
        for k, name in enumerate(names[1:], 1):
            dims = self.dims(name, rank)
            if dims == shape:
                continue
            n = max(len(shape), len(dims))
            pa, pb = (1,) * (n - len(shape)) + shape, (1,) * (n - len(dims)) + dims
            out = []
            for a, b in zip(pa, pb):
                if a != b and a != 1 and b != 1:
                    head = f"{names[0]} shape" if k == 1 else "the broadcast shape of " + ", ".join(names[:k])
                    raise self.error(INVALID, f"{head} {fmt_dims(shape)} and {name} shape {fmt_dims(dims)} "
                                              f"are not broadcastable")
                out.append(b if a == 1 else a)
            shape = tuple(out)
        return shape

    def dims(self, name: str, rank: int) -> tuple[int, ...]:
        """Tensor `name`'s dims as it broadcasts: its own, or for a 1-D tensor declared `along`
        dim k (Prelu's weight), its length at dim k of a `rank`-dim space and 1 elsewhere."""
        t = self.tensor(name)
        along = self.op.tensor(name).along
        if along is None:
            return t.view_dims
        if len(t.view_dims) > 1 or not -rank <= along < rank:
            raise self.error(INVALID, f"{name} shape {fmt_dims(t.view_dims)} must be 1-D, one value per element of "
                                      f"dim {along} (or one value)")
        k = along % rank
        n = t.view_dims[0] if t.view_dims else 1
        return tuple(n if j == k else 1 for j in range(rank))

    def split_shape(self) -> tuple[int, ...]:
        """The split input's shape with its split dim halved (the iteration shape of a GLU-like
        operator): the dim inside [-rank, rank-1] and of even size, else the split's status."""
        split = self.op.split
        x = self.tensor(split.input).view_dims
        dim = self.attr(split.dim) if isinstance(split.dim, str) else split.dim
        rank = len(x)
        if not -rank <= dim < rank:
            raise self.error(split.status, f"{split.dim if isinstance(split.dim, str) else 'dim'} {dim} is outside "
                                           f"[{-rank}, {rank - 1}] for {split.input} of {rank} dims")
        d = dim % rank
        if x[d] % 2:
            raise self.error(split.status, f"{split.input} dim {d} has odd size {x[d]}, it must split into two halves")
        self.split_dim = d
        return tuple(n // 2 if k == d else n for k, n in enumerate(x))

    def halves(self, half: tuple[int, ...], *names: str, status: int | None = None) -> None:
        """Each named tensor has the split input's shape with its dim halved (`half`)."""
        split = self.op.split
        for name, t in self.tensors(names):
            if t.view_dims != half:
                raise self.error(status or split.status, f"{name} shape {fmt_dims(t.view_dims)} must equal "
                                                         f"{split.input} shape with dim {self.split_dim} halved "
                                                         f"{fmt_dims(half)}")

    def out_shape(self, shape: tuple[int, ...], *names: str) -> None:
        """Each named output (default: every output) has exactly `shape`, the iteration shape —
        or, for an output the formula makes from reductions, `shape` with the reduced dims 1
        (or without them, where it is declared keepdims=False)."""
        reduced = self.reductions(shape)
        whole = self.op.split.whole if self.op.split else ()
        for name, t in self.tensors(names or self.given(self.op.outputs)):
            want, what = shape, ("the broadcast shape" if self.op.broadcast else f"{self.op.inputs[0]} shape")
            if name in whole:
                want, what = self.tensor(self.op.split.input).view_dims, f"{self.op.split.input} shape"
            if name in reduced:
                want, what = reduced[name], "the reduced shape"
            if t.view_dims != want:
                raise self.error(INVALID, f"{name} shape {fmt_dims(t.view_dims)} must equal {what} {fmt_dims(want)}")
        self.shape = shape

    def reductions(self, shape: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
        """Sets `groups` (the formula's kernels over `shape`) and returns the outputs made of
        reductions with their shapes (their reduced dims 1, or gone: keepdims=False; `views`
        then gives the kernel the dims 1). A reduction axis outside `shape` is
        161002, naming the attributes the formula was given."""
        graph = self.op.graph_for(self.attr_values)
        given = [self.tensor(n) if self.values[n] is not None else None for n in self.op.inputs]
        spans = self.op.spans(len(shape), given)
        try:
            self.groups = graph.groups(len(shape), spans)
            self.axes = per = graph.result_axes(len(shape), spans)
        except ValueError as exc:
            given = ", ".join(f"{a.name}={self.attrs.get(a.name, a.sample)!r}" for a in self.op.formula_attrs)
            raise self.error(INVALID, f"{exc}" + (f" (attributes: {given})" if given else "")) from None
        out = {}
        for name, row, axes in zip(self.op.kernel_outputs, graph.row_results(), per):
            if row and axes is not None:
                kept = tuple(1 if k in axes else n for k, n in enumerate(shape))
                out[name] = kept
                if not self.op.tensor(name).keepdims:
                    out[name] = tuple(n for k, n in enumerate(shape) if k not in axes)
                    if self.values.get(name) is not None:
                        t = self.tensor(name)
                        strides = iter(t.strides)
                        self.views[name] = (kept, tuple(0 if k in axes else next(strides, 0) for k in range(len(shape))))
        return out

    def format_in(self, formats: tuple[int, ...], *names: str) -> None:
        for name, t in self.tensors(names):
            if t.format not in formats:
                listed = ", ".join(C.format_name(f) for f in formats)
                raise self.error(INVALID, f"{name} format {C.format_name(t.format)} is not in [{listed}]")

    def same_format(self, *names: str, ref: str | None = None) -> None:
        """Each named tensor (default: every tensor given) has `ref`'s format (the first
        input's): FastGelu's self and out must agree."""
        ref = ref or self.op.inputs[0]
        r = self.tensor(ref)
        for name, t in self.tensors(names):
            if t.format != r.format:
                raise self.error(INVALID, f"{name} format {C.format_name(t.format)} must equal {ref} format "
                                          f"{C.format_name(r.format)}")


def reshaped_strides(dims, strides, new) -> tuple[int, ...] | None:
    """Strides that give `new` dims over the elements of a (`dims`, `strides`) view in row-major
    order, or None when none can (numpy's reshape without a copy: each run of old dims that maps
    onto a run of new dims must be evenly spaced)."""
    old = [(n, s) for n, s in zip(dims, strides) if n != 1]
    want = [n for n in new if n != 1]
    if math.prod(n for n, _ in old) != math.prod(want):
        return None
    found: list[int] = []
    i = j = 0
    while i < len(old) and j < len(want):
        i2, j2, a, b = i + 1, j + 1, old[i][0], want[j]
        while a != b:
            if a < b:
                a *= old[i2][0]
                i2 += 1
            else:
                b *= want[j2]
                j2 += 1
        if any(old[k][1] != old[k + 1][0] * old[k + 1][1] for k in range(i, i2 - 1)):
            return None
        stride = old[i2 - 1][1]
        run = []
        for n in reversed(want[j:j2]):
            run.append(stride)
            stride *= n
        found.extend(reversed(run))
        i, j = i2, j2
    it = iter(found)
    return tuple(0 if n == 1 else next(it) for n in new)


def default(call: Call) -> None:
    """SPEC.md §6: presence and kind; dtypes listed for the SoC; one dtype (or the declared
    promotion); rank <= max_rank; inputs broadcast (or share one shape); outputs of that shape.
    A split operator: the split's dim and size, the other inputs and outputs one half (outputs
    it names `whole`: the split input's shape)."""
    op = call.op
    call.present()
    common = call.common()
    if op.combinations:  # CANN's table of combinations (inputs, then outputs)
        call.dtype_combination()
    else:
        call.dtype_in(*common)
        if op.promote is None:
            call.same_dtype(*common)
        else:
            call.result_dtype()
        call.own_dtypes()
    if op.max_rank is not None:
        call.max_rank()
    if op.split is not None:  # the GLU way: the other inputs and the outputs span one half
        half = call.split_shape()
        call.halves(half, *[n for n in call.given(op.inputs) if n != op.split.input])
        call.out_shape(half)
        return
    call.out_shape(call.broadcast() if op.broadcast else call.same_shape())


def view(api: str, name: str, t: AclTensor, is_output: bool) -> None:
    """SPEC §1: the view lies inside its storage and allocation (checked after the op's own
    checks, before the empty-tensor return); memory still allocated; outputs writable."""
    if t.problem is not None:
        raise AclError(INVALID, f"{api}: {name} {t.problem}")
    block = t.block
    if block is not None and block.freed:
        raise AclError(INVALID, f"{api}: {name} memory at 0x{block.start:x} was freed")
    if is_output and t.readonly:
        raise AclError(INVALID, f"{api}: {name} is read-only")
    if is_output and t.repeats:
        raise AclError(INVALID, f"{api}: {name} strides {fmt_dims(t.strides)} repeat elements (stride 0 on a dim "
                                f"of size > 1 in dims {fmt_dims(t.view_dims)}); an output must not")
