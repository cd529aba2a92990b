"""What every operator file declares (`Operator`) and the machinery they share.

An operator is its formula plus a binding: tensor inputs and outputs (CANN's names), scalar
parameters, the dtypes each SoC profile accepts, and whether inputs broadcast. `kernel()`
compiles (or fetches) the variant a call needs; `launch()` runs it on numpy views.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from aclgen import cache
from aclgen import dtypes as dt
from aclgen.kernel import Kernel, Options, Param, Variant
from aclgen.launch import Launch, Operand, broadcast_strides, f32_bits, options_for, plan, threads_for
from aclgen.runtime.soc import settings

SOCS = ("Ascend910", "Ascend910B", "Ascend910_93", "Ascend310P", "Ascend950")
DEFAULT_SOC = "Ascend910B"


@dataclass(frozen=True)
class Operator:
    name: str  # python name, e.g. "hardswish_backward"
    aclnn: str  # CANN name without the prefix, e.g. "HardswishBackward"
    formula: Callable
    inputs: tuple[str, ...]  # CANN parameter names of the formula's tensor inputs
    outputs: tuple[str, ...]
    params: tuple[Param, ...] = ()
    dtypes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # SoC profile -> dtype names
    doc: str = ""

    @property
    def signature(self) -> str:
        args = [*self.inputs, *(p.name for p in self.params), *self.outputs]
        return f"aclnn{self.aclnn}({', '.join(args)})"

    def supported(self, soc: str = DEFAULT_SOC) -> tuple[dt.DType, ...]:
        return tuple(dt.dtype(n) for n in self.dtypes.get(soc, ()))

    def all_dtypes(self) -> tuple[dt.DType, ...]:
        seen: dict[str, dt.DType] = {}
        for names in self.dtypes.values():
            for n in names:
                seen.setdefault(n, dt.dtype(n))
        return tuple(seen.values())

    @property
    def arg_names(self) -> list[str]:
        return [*self.inputs, *(p.name for p in self.params), *self.outputs]

    def kernel(self, variant: Variant, options: Options | None = None) -> Kernel:
        return kernel_cache.get(self, variant, options or Options.from_knobs())

    def param_slot(self, param: Param, value: float, first_input: dt.DType) -> int:
        """The 8-byte launch-record slot of a parameter value."""
        if param.kind == "like-input" and not first_input.is_float:
            return truncated_threshold(value)
        return f32_bits(value)


def truncated_threshold(value: float) -> int:
    """trunc(f32(value)) as an i64, for exact integer compares (NaN compares false: -2^63)."""
    v = float(np.float32(value))
    if v != v:
        return -(2**63)
    if v >= 2.0**63:
        return 2**63 - 1
    if v < -(2.0**63):
        return -(2**63)
    return int(v)


class KernelCache:
    """Kernels of this process, by (operator name, formula, variant, options); a variant not
    seen yet comes from the on-disk compile cache or the compiler (aclgen/cache.py)."""

    def __init__(self):
        self._kernels: dict[tuple, Kernel] = {}
        self._lock = threading.Lock()

    def get(self, op: Operator, variant: Variant, options: Options) -> Kernel:
        key = (op.name, op.formula, variant, options)  # two formulas may share a name
        k = self._kernels.get(key)
        if k is not None:
            cache.stats["memory_hits"] += 1
            return k
        with self._lock:
            k = self._kernels.get(key)
            if k is None:
                k = cache.fetch(op.formula, op.name, variant, op.params, op.arg_names, options)
                self._kernels[key] = k
        return k

    def __len__(self) -> int:
        return len(self._kernels)


kernel_cache = KernelCache()


def _same_view(a: np.ndarray, b: np.ndarray) -> bool:
    return (
        a.ctypes.data == b.ctypes.data
        and a.shape == b.shape
        and a.strides == b.strides
        and a.dtype == b.dtype
    )


# Launches of this process by call geometry (operator, formula, options, threads, parameters and
# every operand's shape, strides and dtype): kernel, packed launch record and element count.
# Addresses are not in the key: the kernel entry reads them from the arrays at each call.
_launches: dict[tuple, tuple] = {}
LAUNCHES_LIMIT = 4096


def launch(
    op: Operator,
    inputs: Sequence[np.ndarray],
    outputs: Sequence[np.ndarray],
    params: Sequence[float] = (),
    options: Options | None = None,
) -> None:
    """Run `op` elementwise over `outputs[0].shape`, inputs broadcast to it, on the native
    thread pool where the call is big enough (ACLGEN_THREADS), with streaming stores where it
    outgrows the last-level cache — as the aclnn executors do.

    An output that overlaps an input other than exactly (in place) is computed into a
    temporary first, so partial overlaps never give wrong results. A repeated call geometry
    costs a key and a dict lookup; the first one plans it (`_plan_launch`).
    """
    inputs = [a if type(a) is np.ndarray else np.asarray(a).view(np.ndarray) for a in inputs]
    staged = [
        any(np.shares_memory(o, i) and not _same_view(o, i) for i in inputs) or o.ndim and not o.flags.writeable
        for o in outputs
    ]
    targets = [np.empty(o.shape, o.dtype) if s else o if type(o) is np.ndarray else o.view(np.ndarray)
               for o, s in zip(outputs, staged)]
    arrays = (*inputs, *targets)
    options = options or Options.from_knobs()
    threads = settings().threads  # ACLGEN_THREADS, 0 = every core
    key = (op.name, op.formula, options, threads, tuple(params), *[(a.shape, a.strides, a.dtype) for a in arrays])
    entry = _launches.get(key)
    if entry is None:
        entry = _plan_launch(op, inputs, targets, params, options, threads)
        if len(_launches) >= LAUNCHES_LIMIT:
            _launches.clear()
        _launches[key] = entry
    cfunc, meta_ptr, numel, _ = entry
    if numel:
        cfunc(*arrays, meta_ptr, 0, numel)
    for o, t, s in zip(outputs, targets, staged):
        if s:
            o[...] = t


def _plan_launch(op: Operator, inputs, targets, params, options: Options, threads: int) -> tuple:
    """(kernel entry taking the arrays, launch record address, element count, the record) for
    one call geometry; the record itself is kept so that its address stays valid."""
    shape = targets[0].shape
    operands = [Operand.of(a) for a in (*inputs, *targets)]
    strides = [broadcast_strides(o.shape, o.strides, shape) for o in operands]
    p = plan(shape, strides)
    if p.numel == 0:
        return None, 0, 0, None
    in_dtypes = tuple(dt.dtype(a.dtype) for a in inputs)
    variant = Variant(in_dtypes, tuple(dt.dtype(t.dtype) for t in targets), p.rank, p.layouts)
    moved = p.numel * sum(o.itemsize for o in operands)
    kernel = op.kernel(variant, options_for(options, moved))
    slots = [op.param_slot(prm, v, in_dtypes[0]) for prm, v in zip(op.params, params)]
    meta = Launch(kernel, p, [0] * len(operands), slots).meta
    cfunc = kernel.call("a" * len(operands) + "iii", threads_for(p.numel, threads))
    return cfunc, meta.ctypes.data, p.numel, meta
