"""A declared operator as a Python function: arrays in, arrays out, through the aclnn runtime.

    y = leaky_relu_backward(g, x, 0.01)            # numpy in -> numpy out (bf16 via ml_dtypes)
    leaky_relu_backward(g, x, 0.01, out=g)         # in place; any strides; broadcasting
    t = leaky_relu_backward(tg, tx, 0.01)          # torch (any __dlpack__ CPU tensor) -> torch

A call makes zero-copy aclTensors of its arguments (numpy arrays directly, other libraries'
tensors through DLPack), runs the operator's phase 1 (its checks and the one planner) and its
executor, and raises `OperatorError` with the status code and message the aclnn API would
return. Only what an aclTensor cannot describe is copied: negative strides, which numpy's
reversed views produce. A call of numpy arrays that passed every check and ran unstaged is
recorded as a guarded native replay (aclgen.codegen.native.Replays), and so is one of plain CPU
torch tensors, which runs on numpy views of their memory: a later call with the same
geometry, dtypes, aliasing, parameters and settings re-runs the kernel for well under a
microsecond, and anything else takes this full path again.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from aclgen import dtypes as dt
from aclgen.codegen import native
from aclgen.declaration import DEFAULT_SOC, collect, register, snake
from aclgen.declaration import declare as declare_operator
from aclgen.frontend.dsl import FormulaError
from aclgen.kernel import Kernel
from aclgen.knobs import environ_keys
from aclgen.runtime import api, dlpack, memory
from aclgen.runtime import constants as C
from aclgen.runtime import scalar as scalars
from aclgen.runtime import tensor as tensors
from aclgen.runtime.errors import AclError, OperatorError, OperatorTypeError
from aclgen.runtime.soc import on_settings_change, settings

# Set by aclgen/runtime/torch_library.py once torch is imported: torch.compiler.is_compiling,
# and the operator's torch custom op, which a call traced by torch.compile (or needing autograd)
# becomes
compiling: Callable[[], bool] | None = None
torch_op: Callable | None = None

# the variables a plan depends on (aclgen.knobs); the cache location and policy do not matter
PLAN_KNOBS = ("ACLGEN_TILE_SIZE", "ACLGEN_VECTOR_WIDTH", "ACLGEN_FMA", "ACLGEN_OPT_LEVEL", "ACLGEN_THREADS",
              "ACLGEN_SOC_VERSION", "ACLGEN_CPU_NAME", "ACLGEN_CPU_FEATURES")


def _representable(a: np.ndarray) -> bool:
    """Whether an aclTensor can describe `a` (strides >= 0 wherever a dim steps)."""
    return all((s >= 0 or n <= 1) and s % a.itemsize == 0 for n, s in zip(a.shape, a.strides))


def _names(op, names: Sequence[str] | None) -> list[str]:
    return list(names or [snake(n) for n in op.python_args])


def _after_inputs(op) -> tuple:
    """The declarations of the Python call's arguments after the inputs: scalars, attributes."""
    return (*op.scalars, *op.attrs)


def _call_method(op, names: list[str]):
    """`__call__(this, <inputs>, <scalars>, <attributes>, *, out=None)` with the operator's own parameters,
    generated: the hot path (a replay of a recorded call) then packs no **kwargs. `out` is
    keyword-only, as in torch: a third array passed to a two-input operator is an error naming
    the API, not an output that overwrites it (`*extra` catches it; empty on every good call).

        def __call__(this, grad_output, self, *extra, out=None):
            if extra:
                this._extra(extra)
            if out.__class__ is ndarray:
                done = this.replays.front(grad_output, self, out)
                if done is not None:
                    return done
            elif out is None and grad_output.__class__ is ndarray:
                done = this.replays.front(grad_output, self, this.replays.front_empty())
                if done is not None:
                    return done
            return this._slow((grad_output, self), (), out)
    """
    n_in = len(op.inputs)
    defaults = {f"_default{k}": d.default for k, d in enumerate(_after_inputs(op))
                if d.default is not inspect.Parameter.empty}
    params = list(names[:n_in])
    for k, name in enumerate(names[n_in:]):
        params.append(f"{name}=_default{k}" if f"_default{k}" in defaults else name)
    ins, scalars = names[:n_in], names[n_in:]
    single = len(op.outputs) == 1

    def tup(xs):
        return "(" + "".join(f"{x}, " for x in xs) + ")"

    args = ", ".join(names)
    fast = (f"    if out.__class__ is _ndarray:\n"
            f"        _done = this.replays.front({args}, out)\n"
            f"        if _done is not None:\n"
            f"            return _done\n"
            f"    elif out is None and {names[0]}.__class__ is _ndarray:\n"
            f"        _r = this.replays\n"
            f"        _done = _r.front({args}, _r.front_empty())\n"
            f"        if _done is not None:\n"
            f"            return _done\n") if single else ""
    source = (f"def __call__(this, {', '.join(params)}, *extra, out=None):\n"
              f"    if extra:\n        this._extra(extra)\n{fast}"
              f"    return this._slow({tup(ins)}, {tup(scalars)}, out)\n")
    namespace = {"_ndarray": np.ndarray, **defaults}
    exec(compile(source, f"<aclgen operator {op.python_name}>", "exec"), namespace)
    return namespace["__call__"]


class Function:
    """`op`'s Python face: `fn(*inputs, *scalars, *attributes, out=None)`, parameters named `names`
    (default: CANN's names in snake_case); `dtypes` picks the variant `kernel` shows (default:
    the first dtype of the default SoC profile for every input). Each operator's function is an
    instance of its own subclass, whose `__call__` has the operator's exact signature."""

    def __new__(cls, op, names: Sequence[str] | None = None, dtypes: Sequence[dt.DType] | None = None):
        if cls is Function:
            cls = type(f"Function[{op.python_name}]", (Function,), {"__call__": _call_method(op, _names(op, names))})
        return object.__new__(cls)

    if TYPE_CHECKING:  # each operator's subclass has its own, generated (`_call_method`)
        def __call__(self, *args: Any, out: Any = None, **kwargs: Any) -> Any: ...

    def __init__(self, op, names: Sequence[str] | None = None, dtypes: Sequence[dt.DType] | None = None):
        self.op = op
        self.__name__ = self.__qualname__ = op.python_name
        self.__doc__ = op.doc or op.signature
        self.__module__ = getattr(op.formula, "__module__", __name__)
        self.__wrapped__ = op.formula
        names = _names(op, names)
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [inspect.Parameter(n, kind) for n in names[: len(op.inputs)]]
        params += [inspect.Parameter(n, kind, default=d.default) for n, d in zip(names[len(op.inputs) :], _after_inputs(op))]
        params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
        self.__signature__ = inspect.Signature(params)
        self._n_in = len(op.inputs)
        self._n = self._n_in + len(op.scalars) + len(op.attrs)
        self._single = len(op.outputs) == 1
        self.replays = native.Replays()
        self._dtypes = tuple(dtypes) if dtypes else None

    @property
    def kernel(self) -> Kernel:
        """The kernel of the default variant (rank 1, contiguous): its `ir[stage]`, `asm`."""
        dtypes = self._dtypes or (self.op.supported(DEFAULT_SOC) or self.op.all_dtypes())[:1]
        return self.op.kernel(self.op.variant(dtypes))

    @property
    def ir(self):
        return self.kernel.ir

    @property
    def asm(self) -> str:
        return self.kernel.asm

    def __repr__(self) -> str:
        return f"<operator {self.op.python_name}{self.__signature__}: {self.op.signature}>"

    def _extra(self, extra: tuple) -> None:
        """Positional arguments past the operator's own: refused, naming them."""
        takes = ", ".join(p.name for p in self.__signature__.parameters.values() if p.name != "out")
        raise OperatorTypeError(f"{self.op.api}: {self.op.python_name}() takes {self._n} positional arguments "
                                f"({takes}), got {self._n + len(extra)}; `out` is keyword-only (out=...)")

    def _slow(self, inputs: tuple, params: tuple, out):
        """Past the front replay: the other recorded calls, then the full path. While
        torch.compile traces the call, it is the operator's torch custom op instead. Plain CPU
        torch tensors run as numpy views of their memory, so that their calls are recorded and
        replayed as numpy arrays' are (a small call: 384 -> 25-30 µs); the results come back as
        torch tensors over the same memory, as the full path's do."""
        if compiling is not None:
            if compiling() or (self.op.backward and _needs_grad(inputs)):
                return self._traced(inputs, params, out)
            viewed = _torch_views(inputs, out)
            if viewed is not None:
                arrays, array_out, like = viewed
                return self._viewed(arrays, array_out, like, params, out)
        return self._arrays(inputs, params, out)

    def _arrays(self, inputs: tuple, params: tuple, out):
        done = self.replays.run(inputs, params, out)
        if done is not None:
            return done
        return self._call(inputs + params, out)

    def _viewed(self, arrays: tuple, array_out, like: bool, params: tuple, out):
        """The call on numpy views of its torch tensors (`_torch_views`): `out`'s objects when
        given, else the results, as torch tensors over the same memory where an input is one."""
        result = self._arrays(arrays, params, array_out)
        if out is not None:  # as the full path returns them
            outs = out if isinstance(out, (tuple, list)) else (out,)
            return outs[0] if self._single else tuple(outs)
        if not like:
            return result
        results: list = [result] if self._single else list(result)
        results = [r if r is None else _torch_of(r) for r in results]
        return results[0] if self._single else tuple(results)

    def _traced(self, inputs: tuple, params: tuple, out):
        """The call as torch records it: the torch custom op (one opaque node of a compiled
        graph; differentiable when the operator declares its backward), its results written
        into `out` when one was given."""
        assert torch_op is not None  # set with `compiling`
        result = torch_op(self.op)(*inputs, *params)
        if out is None:
            return result
        outs, results = (out, result) if not self._single else ((out,), (result,))
        for o, r in zip(outs, results):
            o.copy_(r)
        return out

    # `self` positional-only: an operator's input may be named `self` too (CANN's name)
    def replay(self, /, *args, out=None, **kwargs):
        """Run only a recorded replay whose guards hold for these arguments: its result, or None
        (nothing ran). For tests and tools that ask whether a call takes the fast path."""
        args = self._bind(args, kwargs) if kwargs or len(args) != self._n else args
        return self.replays.run(args[: self._n_in], args[self._n_in :], out)

    def kernel_for(self, /, *args, out=None, **kwargs) -> Kernel | None:
        """The kernel a call with these arguments would run (compiled now if it is new), without
        running it; None when the call has nothing to compute (the first of them, for an operator
        that runs several: `kernels_for`). Raises OperatorError as the call would. (`aclgen tune`
        measures schedules of exactly this variant.)"""
        kernels = self.kernels_for(*args, out=out, **kwargs)
        return kernels[0] if kernels else None

    def kernels_for(self, /, *args, out=None, **kwargs) -> tuple[Kernel, ...]:
        """Every kernel a call with these arguments would run, in order (see `kernel_for`)."""
        args = self._bind(args, kwargs) if kwargs or len(args) != self._n else args
        op, n = self.op, self._n_in
        ins = [_tensor(op, name, a) for name, a in zip(op.inputs, args[:n])]
        values = [_scalar(op, s, v) for s, v in zip(op.scalars, args[n:])]
        outs = self.empty_outputs(*args) if out is None else (list(out) if isinstance(out, (tuple, list)) else [out])
        out_tensors = [_output(op, name, o)[1] for name, o in zip(op.outputs, outs)]
        try:
            executor = api.get_workspace_size(op, _c_args(op, ins, values, args[n + len(op.scalars):], out_tensors))
        except AclError as e:
            raise OperatorError(e.message, e.status) from None
        return executor.kernels

    def empty_outputs(self, /, *args, **kwargs) -> list[np.ndarray | None]:
        """Uninitialized numpy outputs of the shapes and dtypes a call with `args` (inputs,
        then scalars) writes: what a call without `out` allocates (None: masked off)."""
        args = self._bind(args, kwargs) if kwargs or len(args) != self._n else args
        ins = [_tensor(self.op, name, a) for name, a in zip(self.op.inputs, args[: self._n_in])]
        return self._allocate(self.infer(ins, args))

    def every_output(self, /, *args, **kwargs) -> list[np.ndarray]:
        """`empty_outputs` for a call that writes all its outputs (tools: `aclgen run`, `bench`);
        ValueError when `args` mask one off."""
        outs = self.empty_outputs(*args, **kwargs)
        off = [n for n, o in zip(self.op.outputs, outs) if o is None]
        if off:
            raise ValueError(f"{self.op.api}: these arguments leave out {', '.join(off)}")
        return [o for o in outs if o is not None]

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.op.python_name}(): {exc}") from None
        bound.apply_defaults()
        bound.arguments.pop("out", None)
        return tuple(bound.arguments.values())

    # -- the full path -----------------------------------------------------------------------

    def _call(self, args: tuple, out):
        op = self.op
        n = self._n_in
        ins = [_tensor(op, name, a) for name, a in zip(op.inputs, args[:n])]
        values = [_scalar(op, s, v) for s, v in zip(op.scalars, args[n:])]
        foreign = next((a for a in args[:n] if a is not None and not isinstance(a, np.ndarray)
                        and hasattr(a, "__dlpack__")), None)
        outs: list
        if out is None:
            outs = self._allocate(self.infer(ins, args))
        else:
            several = isinstance(out, (tuple, list)) and all(o is None or _is_array(o) for o in out)
            outs = list(out) if several else [out]
            if len(outs) != len(op.outputs):
                raise OperatorTypeError(f"{op.api}: out must be {len(op.outputs)} arrays "
                                        f"({', '.join(op.outputs)}), got {len(outs)}")
        targets, out_tensors = [], []
        for name, o in zip(op.outputs, outs):
            target, t = _output(op, name, o) if o is not None else (None, None)
            targets.append(target)
            out_tensors.append(t)
        try:
            executor = api.get_workspace_size(op, _c_args(op, ins, values, args[n + len(op.scalars):], out_tensors))
            _run(executor)
        except AclError as e:
            raise OperatorError(e.message, e.status) from None
        for o, target in zip(outs, targets):
            if target is not o and target is not None:
                o[...] = target
        if all(t is o and o is not None for t, o in zip(targets, outs)):
            self._record(executor, ins, args, outs)
        if out is None and foreign is not None:
            outs = [o if o is None else _as_library_of(foreign, o, t.dtype) for o, t in zip(outs, out_tensors)]
        return outs[0] if self._single else tuple(outs)

    def _allocate(self, shapes: list[tuple[tuple[int, ...], int] | None]) -> list[np.ndarray | None]:
        """New outputs of these (dims, aclDataType); one numpy cannot make (more dims than it
        has) is the API's 161002, named."""
        outs: list = []
        for name, shape in zip(self.op.outputs, shapes):
            if shape is None:  # masked off: not computed, returned as None
                outs.append(None)
                continue
            dims, code = shape
            try:
                outs.append(native.aligned_empty(dims, C.numpy_of(code) or np.float32))
            except ValueError as exc:
                raise OperatorError(f"{self.op.api}: {name} would have {len(dims)} dims, which numpy cannot "
                                    f"allocate ({exc})") from None
        return outs

    def infer(self, ins: list, args: tuple) -> list[tuple[tuple[int, ...], int] | None]:
        """(dims, aclDataType) of each output a call without `out` allocates (None: masked off,
        not written). `ins` are the inputs' aclTensors, or anything with their `view_dims` and
        `dtype` (torch's fake tensors, aclgen/runtime/torch_library.py); `args` the call's inputs
        and scalars."""
        op = self.op
        given = args[self._n_in + len(op.scalars):]
        if op.result is not None:
            return op.result(ins, dict(zip((a.name for a in op.attrs), given)))
        present = [t for t in ins if t is not None]
        if not present:
            return [((), C.ACL_FLOAT)] * len(op.outputs)
        dims = present[0].view_dims
        if op.broadcast:
            dims = _broadcast([t.view_dims for t in present]) or dims  # (None: the API names the failure)
        code: int = present[0].dtype
        if op.promote is not None and len(present) == len(ins) and all(C.kernel_dtype(t.dtype) for t in ins):
            promoted = C.code_of(op.result_dtype(*(C.kernel_of(t.dtype).name for t in ins)))
            code = code if promoted == C.ACL_DT_UNDEFINED else promoted
        shapes = output_shapes(op, tuple(dims), dict(zip(op.inputs, ins)), _attr_values(op, given))
        codes = [C.code_of(d) if (d := op.tensor(name).dtype) else code for name in op.outputs]
        if op.combinations:  # the outputs' column of the first row the inputs match
            names = [k.name if t is not None and (k := C.kernel_dtype(t.dtype)) else None for t in ins]
            row = next((r for rows in op.combinations.values() for r in rows
                        if all(n is None or n == d for n, d in zip(names, r))), None)
            if row is not None:
                codes = [C.code_of(d) for d in row[len(ins):]]
        attrs = dict(zip((a.name for a in op.attrs), given))
        return [None if _masked_off(op, name, attrs) else (shape, c)
                for name, shape, c in zip(op.outputs, shapes, codes)]

    def _record(self, executor, ins: list, args: tuple, outs: list) -> None:
        """Record a call that ran unstaged on numpy arrays, or had nothing to compute, for replays."""
        tpls = executor.templates
        empty = executor.call is None and not executor.numel
        staged = executor.staging is not None and executor.staging.copies  # scratch alone is the record's
        if (not tpls and not empty) or staged or not native.available():
            return
        arrays = args[: self._n_in]
        for t, a in zip(ins, arrays):
            if t is None or t.owner is not a:  # left out, copied (reversed view) or not a numpy array
                return
        env = environ_keys(PLAN_KNOBS)
        if env is None:
            return
        if not tpls:  # an empty output: the replay checks the same guards and runs nothing
            self.replays.record(arrays, args[self._n_in :], outs, native.EMPTY, env, ())
            return
        itemsizes = [t.itemsize for t in executor.tensors]
        launches = tuple(tpl.launch(itemsizes) for tpl in tpls)  # several: one kernel after the other
        self.replays.record(arrays, args[self._n_in :], outs, launches, env,
                            tuple((tpl, tpl.kernel, tpl.meta) for tpl in tpls), executor.workspace_size)


def _needs_grad(inputs: tuple) -> bool:
    return any(getattr(a, "requires_grad", False) is True for a in inputs)


def _broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    """numpy's broadcast shape of `shapes`, or None; for any rank (np.broadcast_shapes stops at
    32 dims, and what happens beyond the operator's own limit is the API's to report)."""
    out = [1] * max(len(d) for d in shapes)
    for dims in shapes:
        for k, n in enumerate(dims, len(out) - len(dims)):
            if n != 1:
                if out[k] not in (1, n):
                    return None
                out[k] = n
    return tuple(out)


def _attr_values(op, given) -> tuple | None:
    """The formula attributes' values as the formula sees them, or None when one is bad (the
    API reports it)."""
    try:
        values = dict((a.name, a.value(v)) for a, v in zip(op.attrs, given))
        return op.kernel_attrs(tuple(values[a.name] for a in op.formula_attrs))
    except (ValueError, TypeError, KeyError):
        return None


def _masked_off(op, name: str, attrs: dict) -> bool:
    """Whether output `name` is masked off (its mask attribute's element false)."""
    mask = op.tensor(name).mask
    if mask is None:
        return False
    try:
        flags = op.attr(mask[0]).value(attrs.get(mask[0]))
    except (ValueError, TypeError):
        return False  # the API names the bad mask
    return not (mask[1] < len(flags) and flags[mask[1]])


def output_shapes(op, dims: tuple[int, ...], ins: dict, attrs: tuple | None = None) -> list[tuple[int, ...]]:
    """Each output's shape for an iteration space of `dims`: outputs the formula makes from
    reductions have the reduced dims 1 (none where declared keepdims=False)."""
    graph = op.graph_for(op.kernel_samples if attrs is None else attrs)
    if not graph.reductions():
        return [dims] * len(op.outputs)
    try:
        per = graph.result_axes(len(dims), op.spans(len(dims), list(ins.values())))
    except ValueError:
        return [dims] * len(op.outputs)  # the API names the bad axis
    out = []
    for name, row, axes in zip(op.outputs, graph.row_results(), per):
        if not row or axes is None:
            out.append(dims)
        elif not op.tensor(name).keepdims:
            out.append(tuple(n for k, n in enumerate(dims) if k not in axes))
        else:
            out.append(tuple(1 if k in axes else n for k, n in enumerate(dims)))
    return out


def _forget_replays() -> None:
    """The SoC profile changed: plans may differ, so no recorded call may replay."""
    native.clear_replays()


on_settings_change(_forget_replays)


def _tensor(op, name: str, a):
    """An input as an aclTensor (None stays None, for the API to report as nullptr). What cannot
    be one, or would silently be something else, raises OperatorError naming the API and the
    parameter: a masked array (its mask would be dropped), an array in the other byte order, a
    torch tensor that requires grad, a string, and a Python number or list whose numpy dtype the
    operator does not take (said as such: "a list becomes float64")."""
    if a is None:
        return None
    api = op.api
    if isinstance(a, np.ndarray):
        _check_array(op, name, a)
    elif hasattr(a, "__dlpack__"):
        if getattr(a, "requires_grad", False):
            raise OperatorError(f"{api}: {name} requires grad, and {op.name} declares no backward operator, so "
                                f"no gradient can flow through it: pass its .detach()")
        try:
            return dlpack.from_dlpack(a)
        except (TypeError, ValueError, RuntimeError, BufferError) as exc:
            raise OperatorError(f"{api}: {name}: {exc}") from None
    else:
        a = _converted(op, name, a)
    if not _representable(a):
        a = np.ascontiguousarray(a)
    try:
        return tensors.from_numpy(a)
    except (TypeError, ValueError) as exc:
        raise OperatorError(f"{api}: {name}: {exc}") from None


def _check_array(op, name: str, a: np.ndarray) -> None:
    """Refuse a numpy array whose elements an aclTensor would misread. (A masked array exists
    only once numpy.ma is imported: `np.ma` itself would import it, ~12 ms of a first call.)"""
    ma = sys.modules.get("numpy.ma")
    if ma is not None and isinstance(a, ma.MaskedArray):
        raise OperatorTypeError(f"{op.api}: {name} is a masked array, whose mask the operator would ignore: "
                                f"pass its .filled(value), or its .data for every element")
    if not a.dtype.isnative:
        native = a.dtype.newbyteorder("=")
        raise OperatorError(f"{op.api}: {name} is a {native.name} array in the other byte order ({a.dtype.str}): "
                            f"pass it as .astype('{native.str}')")


def _converted(op, name: str, a) -> np.ndarray:
    """A Python number, list or other array-like as numpy makes it, when the operator takes the
    dtype numpy gives it; else the OperatorError that says what became what."""
    if isinstance(a, (str, bytes)):
        raise OperatorTypeError(f"{op.api}: {name} must be an array, got the string {a!r}")
    try:
        array = np.asarray(a)
    except (TypeError, ValueError) as exc:
        raise OperatorTypeError(f"{op.api}: {name} must be an array, got a {type(a).__name__} ({exc})") from None
    if array.dtype == object:
        raise OperatorTypeError(f"{op.api}: {name} must be an array, got a {type(a).__name__} numpy cannot "
                                f"convert to numbers")
    s = settings()
    accepted = [d.name for d in op.supported(s.soc)] if s.soc_error is None else []
    if accepted and array.dtype.name not in accepted:
        what = f"a Python {type(a).__name__}" if isinstance(a, (bool, int, float, complex)) else f"a {type(a).__name__}"
        raise OperatorError(f"{op.api}: {name}: {what} becomes {array.dtype.name}; {op.name} takes "
                            f"{', '.join(accepted)} (pass a numpy array of one of them)")
    return array


def _c_args(op, ins, scalars, attrs, outs) -> tuple:
    """The API's arguments in CANN's C order (the operator's `arg_names`)."""
    if not op.order and not op.attrs:
        return (*ins, *scalars, *outs)
    by_name = dict(zip(op.inputs, ins)) | dict(zip((s.name for s in op.scalars), scalars)) \
        | dict(zip((a.name for a in op.attrs), attrs)) | dict(zip(op.outputs, outs))
    return tuple(by_name[n] for n in op.arg_names)


def _scalar(op, decl, value):
    """A scalar argument as the API takes it: an aclScalar (ACL_DOUBLE, read back as f32 like
    CANN); None stays None (an optional scalar's NULL). One number: not a string, not an array
    of several."""
    if value is None:
        return value
    api = op.api
    if isinstance(value, (str, bytes)):
        raise OperatorTypeError(f"{api}: {decl.name} must be a number, got the string {value!r}")
    size = getattr(value, "size", None)
    if isinstance(size, int) and size != 1:
        raise OperatorError(f"{api}: {decl.name} must be one number, got an array of {size} elements "
                            f"(shape {tuple(value.shape)})")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise OperatorTypeError(f"{api}: {decl.name} must be a number, got {type(value).__name__}") from None
    try:
        return scalars.create(number, C.ACL_DOUBLE)
    except AclError as exc:
        raise OperatorError(f"{api}: {decl.name}: {exc.message}", exc.status) from None


def _output(op, name: str, o):
    """(the array the kernel writes, its aclTensor): `o` itself, or a contiguous temporary when
    an aclTensor cannot describe `o` (negative strides), copied back after the call."""
    if isinstance(o, np.ndarray):
        _check_array(op, name, o)
        target = o if _representable(o) else np.empty(o.shape, o.dtype)
        return target, _tensor(op, name, target)
    if _is_array(o):  # another library's tensor, through DLPack
        return None, _tensor(op, name, o)
    raise OperatorTypeError(f"{op.api}: {name} must be a numpy array or a DLPack tensor, got {type(o).__name__}")


def _is_array(o) -> bool:
    return isinstance(o, np.ndarray) or hasattr(o, "__dlpack__")


def _run(executor) -> None:
    """Run now, with a workspace from the runtime when the plan stages data."""
    block = memory.malloc(executor.workspace_size, 0) if executor.workspace_size else None
    try:
        executor.run(block.start if block else 0)
    finally:
        if block is not None:
            memory.free(block.start)


def _torch_view(torch, a):
    """A numpy view of a plain CPU torch tensor's memory (bfloat16 through int16, which numpy's
    own conversion lacks), `a` itself when it is not a torch tensor, or None when it is one
    that only the DLPack path takes (another device, a subclass, grad, conjugate or negative
    bits, sparse or quantized)."""
    if type(a) is not torch.Tensor:
        return a
    if a.device.type != "cpu" or a.requires_grad or a.is_conj() or a.is_neg() or a.layout is not torch.strided:
        return None
    try:
        if a.dtype is torch.bfloat16:
            return a.view(torch.int16).numpy().view(dt.bfloat16.np_dtype)
        return a.numpy()
    except (TypeError, RuntimeError):
        return None


def _torch_views(inputs: tuple, out) -> tuple[tuple, Any, bool] | None:
    """(inputs, out, like): every torch tensor of the call as a numpy view (`_torch_view`) and
    whether an input is one (then the results are torch tensors, as the full path makes them),
    or None when the call has no torch tensor or one that only the DLPack path takes."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if not any(type(a) is torch.Tensor for a in (*inputs, *outs)):
        return None
    arrays = tuple(_torch_view(torch, a) for a in inputs)
    array_outs = tuple(None if o is None else _torch_view(torch, o) for o in outs)
    if any(v is None and a is not None for v, a in zip((*arrays, *array_outs), (*inputs, *outs))):
        return None
    like = any(type(a) is torch.Tensor for a in inputs)
    array_out = array_outs if isinstance(out, (tuple, list)) else array_outs[0]
    return arrays, array_out, like


def _torch_of(array: np.ndarray):
    """A result as a torch tensor over its memory (bfloat16 through int16); one of a dtype torch
    lacks stays a numpy array, as `_as_library_of` leaves it."""
    torch = sys.modules["torch"]
    if array.dtype == dt.bfloat16.np_dtype:
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    try:
        return torch.from_numpy(array)
    except TypeError:
        return array


def _as_library_of(like, array: np.ndarray, code: int):
    """`array` as a tensor of `like`'s library, over the same memory (DLPack), when it has one."""
    from_dlpack = dlpack.library_of(like)
    if from_dlpack is None or code not in dlpack.KDL_CODE:
        return array
    return from_dlpack(dlpack.Exported(array, code))


# ------------------------------------------------------------------------------ declaring

_by_operator: dict[object, Function] = {}


def function_of(op) -> Function:
    """The Python function of a declared operator (one per declaration)."""
    f = _by_operator.get(op)
    if f is None:
        f = _by_operator[op] = Function(op)
    return f


def operator(name: str, **declaration):
    """`@aclgen.operator(NAME, inputs=..., outputs=..., scalars=..., dtypes=..., broadcast=...)`:
    declare the decorated formula as aclnn`NAME`, register it, and return its Python function
    (aclgen.declaration.declare lists every field)."""

    def declare(formula):
        try:
            op = register(declare_operator(name, formula, **declaration))
        except FormulaError as exc:
            if collect(FormulaError(f"{name.removeprefix('aclnn')}: {exc}")):  # a loader names every
                return formula  # broken operator of a module (aclgen ops FILE.py)
            raise
        return function_of(op)

    return declare


