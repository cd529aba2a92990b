"""aclTensor: a strided view (dims, strides and offset in elements) into storage at `data`.

Everything an operator call needs to know about a tensor that cannot change after creation is
computed once here: the address of element [0, ..., 0], the byte range the view touches, and
whether the view is sound (inside its storage and, for runtime memory, inside its allocation).
`aclnnXxxGetWorkspaceSize` then pays one attribute read per tensor, not a walk over dims.
"""

from __future__ import annotations

import itertools
import math
import operator

import numpy as np

from aclgen.runtime import constants as C
from aclgen.runtime import memory
from aclgen.runtime.errors import AclError

# Serial numbers of tensors and scalars (one sequence for both): never reused, unlike id(), so
# they can key the planner's memo of checked calls.
next_serial = itertools.count(1).__next__
MAX_EXTENT = 1 << 62  # bytes; larger views could overflow the kernels' i64 address arithmetic



class AclTensor:
    """An aclTensor. Treat as immutable: the derived fields below are computed at creation."""

    __slots__ = (
        "addr",
        "block",
        "data",
        "destroyed",
        "dtype",
        "format",
        "hi",
        "itemsize",
        "lo",
        "numel",
        "offset",
        "owner",
        "problem",
        "readonly",
        "repeats",
        "serial",
        "storage_dims",
        "strides",
        "view_dims",
    )

    def __init__(self, view_dims, dtype, strides, offset, format, storage_dims, data, owner=None, readonly=False):
        self.view_dims: tuple[int, ...] = view_dims
        self.dtype: int = dtype
        self.strides: tuple[int, ...] = strides
        self.offset: int = offset
        self.format: int = format
        self.storage_dims: tuple[int, ...] = storage_dims
        self.data: int = data
        self.owner = owner  # keeps host memory (a numpy array, a DLPack capsule) alive
        self.block = memory.find(data) if data else None  # runtime allocation holding `data`
        self.readonly = readonly
        self.destroyed = False
        self.serial = next_serial()
        self.itemsize = C.itemsize(dtype)
        self.numel = math.prod(view_dims)
        self.addr = self.lo = self.hi = 0
        # a dim that steps by 0: fine to read, but as an output its elements would be written twice
        self.repeats = self.numel > 0 and any(n > 1 and st == 0 for n, st in zip(view_dims, strides))
        self.problem = self._check_view()

    def _check_view(self) -> str | None:
        """Why the view is unusable (a phrase after the parameter name), or None if sound."""
        dims, strides = self.view_dims, self.strides
        last = self.offset  # index of the view's last element in storage
        negative = empty = False
        for n, st in zip(dims, strides):
            if n < 0 or st < 0:
                negative = True
            elif n == 0:
                empty = True
            else:
                last += (n - 1) * st
        if negative:
            if any(n < 0 for n in dims):
                return f"view dims {fmt_dims(dims)} contain a negative dim"
            return f"strides {fmt_dims(strides)} contain a negative stride"
        if self.offset < 0:
            return f"storage offset {self.offset} is negative"
        storage = 1
        for n in self.storage_dims:
            if n < 0:
                return f"storage dims {fmt_dims(self.storage_dims)} contain a negative dim"
            storage *= n
        if empty:
            return None
        size = self.itemsize
        if size is None:
            return f"dtype {C.dtype_name(self.dtype)} has no whole-byte element size"
        if not self.data:
            return f"data is nullptr but the view has {self.numel} elements"
        if last >= storage:
            return (
                f"view (dims {fmt_dims(dims)}, strides {fmt_dims(strides)}, offset {self.offset}) reaches "
                f"element {last}, outside its storage of {storage} elements {fmt_dims(self.storage_dims)}"
            )
        self.addr = self.data + self.offset * size
        self.lo = self.addr
        self.hi = self.data + (last + 1) * size
        if self.hi - self.data > MAX_EXTENT:
            return f"view spans {self.hi - self.data} bytes, more than {MAX_EXTENT}"
        block = self.block
        if block is None and self.owner is None and not memory.host_mapped(self.lo, self.hi):
            return (f"data 0x{self.data:x} is not runtime memory, and bytes [0x{self.lo:x}, 0x{self.hi:x}) "
                    f"are not mapped readable and writable in this process")
        if block is not None and self.hi > block.end:
            return (
                f"view ends {self.hi - block.end} bytes past its allocation of {block.size} bytes "
                f"at 0x{block.start:x}"
            )
        return None

    def __repr__(self) -> str:
        return (
            f"aclTensor(dims={fmt_dims(self.view_dims)}, dtype={C.dtype_name(self.dtype)}, "
            f"strides={fmt_dims(self.strides)}, offset={self.offset}, format={C.format_name(self.format)}, "
            f"storage={fmt_dims(self.storage_dims)}, data=0x{self.data or 0:x})"
        )


def fmt_dims(dims) -> str:
    return "[" + ", ".join(str(n) for n in dims) + "]"


def _ints(v, what: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(n) for n in v)
    except TypeError:
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"create_tensor: {what} must be a sequence of ints, got {v!r}") from None


def _int(v, what: str) -> int:
    if isinstance(v, bool):
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"create_tensor: {what} must be an int, got {v!r}")
    try:
        return operator.index(v)
    except TypeError:
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"create_tensor: {what} must be an int, got {v!r}") from None


def contiguous_strides(dims) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(dims):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def create(view_dims, data_type, strides, offset, format, storage_dims, data) -> AclTensor:
    """aclCreateTensor. Malformed arguments raise AclError; unsound views are recorded in
    `problem` and rejected by the operator call (SPEC §1: after its own checks)."""
    dims = _ints(view_dims, "view_dims")
    strides = contiguous_strides(dims) if strides is None else _ints(strides, "strides")
    if len(strides) != len(dims):
        raise AclError(C.ACLNN_ERR_PARAM_INVALID,
                       f"create_tensor: {len(strides)} strides for {len(dims)} view dims")
    storage = dims if storage_dims is None else _ints(storage_dims, "storage_dims")
    code = _int(data_type, "data_type")
    if code not in C.DATA_TYPES:
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"create_tensor: data_type {code} is not an aclDataType")
    fmt = _int(format, "format")
    if fmt not in C.FORMAT_NAMES:
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"create_tensor: format {fmt} is not an aclFormat")
    addr = 0 if data is None else _int(data, "data")
    if addr < 0:
        raise AclError(C.ACLNN_ERR_PARAM_INVALID, f"create_tensor: data {addr} is not an address")
    return AclTensor(dims, code, strides, _int(offset, "offset"), fmt, storage, addr)


def from_layout(elem0: int, shape, strides, code: int, fmt: int, owner, readonly: bool) -> AclTensor:
    """A tensor over memory the caller owns, given element 0's address and element strides
    (possibly negative: then `data` is the lowest address and `offset` reaches element 0)."""
    shape = tuple(shape)
    # A dim of size 0 or 1 never steps, so its stride is irrelevant: a negative one (numpy's
    # a[::-1] of one element) must not make the tensor unusable.
    strides = tuple([st if st >= 0 or n > 1 else 0 for n, st in zip(shape, strides)])
    below = above = 0
    empty = False
    for n, st in zip(shape, strides):
        if n == 0:
            empty = True
        elif st < 0:
            below -= (n - 1) * st
        else:
            above += (n - 1) * st
    if empty:
        below, storage = 0, (0,)
    else:
        storage = (below + above + 1,)
    return AclTensor(shape, code, strides, below, fmt, storage, elem0 - below * (C.itemsize(code) or 0), owner, readonly)


def from_numpy(array: np.ndarray, format: int = C.ACL_FORMAT_ND) -> AclTensor:
    """A zero-copy aclTensor over `array` (which the tensor keeps alive)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy array, got {type(array).__name__}")
    code = C.code_of_numpy(array.dtype)
    if code is None:
        raise TypeError(f"from_numpy: numpy dtype {array.dtype} has no aclDataType")
    size = array.itemsize
    strides = tuple([s // size for s in array.strides])
    if any(s % size for s in array.strides):
        raise ValueError(f"from_numpy: strides {array.strides} are not multiples of the item size {size}")
    if format not in C.FORMAT_NAMES:
        raise ValueError(f"from_numpy: format {format!r} is not an aclFormat")
    return from_layout(array.ctypes.data, array.shape, strides, code, format, array, not array.flags.writeable)


def to_numpy(t: AclTensor) -> np.ndarray:
    """A zero-copy numpy view of the tensor's elements (kept alive by the view)."""
    if not isinstance(t, AclTensor) or t.destroyed:
        raise ValueError("to_numpy: expected a live aclTensor")
    npd = C.numpy_of(t.dtype)
    if npd is None:
        raise TypeError(f"to_numpy: {C.dtype_name(t.dtype)} has no numpy dtype")
    if t.problem:
        raise ValueError(f"to_numpy: {t.problem}")
    if t.block is not None and t.block.freed:
        raise ValueError("to_numpy: the tensor's memory was freed")
    view = memory.raw_view(t.addr, t.view_dims, t.strides, npd, owner=(t.owner, t.block))
    if t.readonly:
        view.flags.writeable = False
    return view
