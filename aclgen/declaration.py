"""Operators as declarations, and the registry every face reads.

    @aclgen.operator("LeakyReluBackward", inputs=("gradOutput", "self"), outputs=("gradInput",),
                     scalars=("negativeSlope",), dtypes=("float32", "float16", "bfloat16"))
    def leaky_relu_backward(g, x, negative_slope):
        return select(x > 0.0, g, g * negative_slope)

An `Operator` is a formula plus what CANN's API says about it: tensor inputs and outputs under
CANN's parameter names, scalar parameters, the dtypes each SoC profile accepts, whether inputs
broadcast. From that one record come every face: the Python call (aclgen/runtime/function.py),
`aclgen.aclnn.aclnn<Name>GetWorkspaceSize` / `aclnn<Name>` (aclgen/aclnn.py), `aclgen ops`,
`compile`, `run` and `demo` (aclgen/cli.py), the C SDK's headers, and the test matrix.

Where CANN's checks differ from SPEC.md §6's default sequence, a declaration names a `check`
function (a sequence of aclgen.runtime.checks steps); `promote` gives a result dtype rule,
`kernel` maps the API's tensors to other kernel operands (SwiGluGrad's halves), `result` infers
the output shapes the Python call allocates, `input_shapes` the shapes tools make up, and
`examples` are worked examples that `aclgen demo` reproduces.

This module is data: it imports neither the compiler nor the runtime. Kernels are compiled (or
fetched from the compile cache, aclgen/cache.py) by `Operator.kernel(variant, options)`.
"""

from __future__ import annotations

import contextlib
import inspect
import keyword
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from aclgen import cache
from aclgen import dtypes as dt
from aclgen.frontend.tracer import Graph, Signature, trace
from aclgen.kernel import Kernel, Options, Param, Variant

SOCS = ("Ascend910", "Ascend910B", "Ascend910_93", "Ascend310P", "Ascend950")
DEFAULT_SOC = "Ascend910B"
SCALAR_KINDS = ("float", "like-input", "int")
REQUIRED = inspect.Parameter.empty


class DeclarationError(ValueError):
    """A declaration that cannot give a working operator (names the aclnn name and the problem)."""


@dataclass(frozen=True)
class Scalar:
    """A scalar parameter of an operator, between its tensor inputs and outputs in C order.

    `kind`: "float" (an aclScalar, read as f32 like CANN's ToFloat: a kernel parameter);
    "like-input" (an aclScalar; f32 for float tensors, trunc(value) as an exact i64 for integer
    tensors: ThresholdBackward); "int" (a C `int64_t` attribute such as SwiGluGrad's `dim`,
    read by the operator's hooks, not by the kernel). `default` is the Python call's default."""

    name: str
    kind: str = "float"
    default: Any = REQUIRED

    def __post_init__(self):
        if self.kind not in SCALAR_KINDS:
            raise DeclarationError(f"scalar {self.name!r}: kind {self.kind!r} is not one of {SCALAR_KINDS}")

    @property
    def is_kernel_param(self) -> bool:
        return self.kind != "int"

    @property
    def sample(self):
        """The value tools (`aclgen run`, `demo`, `bench`) give it when none is asked for: its
        default, else 0.5 (an aclScalar) or 0 (an int attribute)."""
        if self.default is not REQUIRED:
            return self.default
        return 0 if self.kind == "int" else 0.5


@dataclass(frozen=True)
class Example:
    """A worked example: the Python call's arguments and the output's values as printed (row
    major). Each value must be reproduced to every digit it shows, or within `rtol` where the
    math is held to an error bound instead of bits (SwiGluGrad's exp)."""

    args: tuple
    expected: tuple[str, ...]
    rtol: float = 0.0


@dataclass(frozen=True)
class KernelOperands:
    """Kernel operands other than the API's tensors (SwiGluGrad: yGrad, x's halves A and B in;
    out's halves out). `views(ins, outs, attrs)` maps the API tensors' views (aclgen.runtime.
    planner.View) to the kernel's and returns (iteration shape, kernel inputs, kernel outputs)."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    views: Callable


@dataclass(frozen=True, eq=False)
class Operator:
    """One declared operator (see the module docstring). Compare by identity: two declarations
    with the same name are two operators (kernels and plans are cached per object). The derived
    names are computed once (cached properties): the hot path reads them on every call."""

    name: str  # CANN's name without the prefix: "HardswishBackward"
    formula: Callable
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    scalars: tuple[Scalar, ...] = ()
    dtypes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # SoC profile -> dtype names
    broadcast: bool = True
    max_rank: int | None = 8
    check: Callable | None = None  # check(call): the whole phase-1 sequence (default: SPEC §6)
    promote: Callable | None = None  # promote(*input dtype names) -> the outputs' dtype name
    kernel_operands: KernelOperands | None = None
    result: Callable | None = None  # result(inputs, attrs) -> [(dims, aclDataType)] per output
    input_shapes: Callable | None = None  # input_shapes(shape) -> the inputs' shapes for outputs of `shape`
    examples: tuple[Example, ...] = ()  # worked examples (SPEC.md §4's), checked by `aclgen demo`
    options: Options | None = None  # schedule knobs of this operator's kernels (default: ACLGEN_*)
    python_name: str = ""
    doc: str = ""

    # -- names ---------------------------------------------------------------------------------

    @cached_property
    def api(self) -> str:
        return f"aclnn{self.name}"

    @cached_property
    def arg_names(self) -> tuple[str, ...]:
        """The C arguments before workspaceSize/executor: inputs, scalars, outputs."""
        return (*self.inputs, *(s.name for s in self.scalars), *self.outputs)

    @cached_property
    def signature(self) -> str:
        return f"{self.api}({', '.join(self.arg_names)})"

    @cached_property
    def params(self) -> tuple[Param, ...]:
        """The kernel's scalar parameters (every scalar but the int attributes)."""
        return tuple(Param(s.name, "like-input" if s.kind == "like-input" else "f32")
                     for s in self.scalars if s.is_kernel_param)

    @cached_property
    def kernel_inputs(self) -> tuple[str, ...]:
        return self.kernel_operands.inputs if self.kernel_operands else self.inputs

    @cached_property
    def kernel_outputs(self) -> tuple[str, ...]:
        return self.kernel_operands.outputs if self.kernel_operands else self.outputs

    @cached_property
    def kernel_arg_names(self) -> tuple[str, ...]:
        """The kernel's arguments (also the formula's tensors and parameters, in its order)."""
        return (*self.kernel_inputs, *(p.name for p in self.params), *self.kernel_outputs)

    @cached_property
    def graph(self) -> Graph:
        """The formula traced with the operator's first dtype (its kernels are traced again per
        variant): `declare` takes it at once, so a formula the language cannot express fails
        where it is declared, naming its line."""
        first = next(iter(self.all_dtypes()), dt.float32)
        types = [first.name] * len(self.kernel_inputs) + [p.graph_type(first) for p in self.params]
        kinds = ["input"] * len(self.kernel_inputs) + ["param"] * len(self.params)
        n = len(types)
        return trace(self.formula, Signature(self.kernel_arg_names[:n], types, len(self.kernel_outputs), kinds))

    @cached_property
    def source(self) -> tuple[str, int]:
        """(file, line) of the formula: where the operator was declared."""
        code = inspect.unwrap(self.formula).__code__
        return code.co_filename, code.co_firstlineno

    # -- dtypes ----------------------------------------------------------------------------------

    def supported(self, soc: str = DEFAULT_SOC) -> tuple[dt.DType, ...]:
        return tuple(dt.dtype(n) for n in self.dtypes.get(soc, ()))

    def all_dtypes(self) -> tuple[dt.DType, ...]:
        seen: dict[str, dt.DType] = {}
        for names in self.dtypes.values():
            for n in names:
                seen.setdefault(n, dt.dtype(n))
        return tuple(seen.values())

    def result_dtype(self, *inputs: str) -> str:
        """The outputs' dtype for inputs of these dtype names (the first one's, or `promote`)."""
        return self.promote(*inputs) if self.promote is not None else inputs[0]

    # -- kernels ---------------------------------------------------------------------------------

    def kernel(self, variant: Variant, options: Options | None = None) -> Kernel:
        """The compiled kernel of `variant` (compiled now, or from the compile cache)."""
        return cache.kernels.get(self, variant, options or self.options or Options.from_knobs())

    def variant(self, inputs: Sequence[dt.DType], rank: int = 1, layouts: Sequence[str] | None = None) -> Variant:
        """The kernel variant for kernel-input dtypes `inputs` (one dtype repeats for every input)."""
        ins = tuple(inputs) if len(inputs) > 1 else tuple(inputs) * len(self.kernel_inputs)
        out = dt.dtype(self.result_dtype(*(d.name for d in ins)))
        n = len(self.kernel_inputs) + len(self.kernel_outputs)
        return Variant(ins, (out,) * len(self.kernel_outputs), rank, tuple(layouts or ("contiguous",) * n))

    def __repr__(self) -> str:
        return f"<operator {self.signature}>"


# ------------------------------------------------------------------------------------ registry

_registry: dict[str, Operator] = {}
_lock = threading.Lock()
_listeners: list[Callable[[], None]] = []


def on_change(callback: Callable[[], None]) -> None:
    """Call `callback()` after every registration or removal (faces that cache per name)."""
    _listeners.append(callback)


def _changed() -> None:
    for callback in _listeners:
        callback()


def register(op: Operator) -> Operator:
    """Add `op` under its aclnn name. A second declaration of a name is an error naming both
    places, unless it is the same formula declared again (a module executed twice)."""
    with _lock:
        old = _registry.get(op.name)
        if old is not None and old.source != op.source:
            file, line = old.source
            raise DeclarationError(f"operator {op.name!r} is declared twice: first at {file}:{line}, again at "
                                   f"{op.source[0]}:{op.source[1]}")
        taken = [o for o in _registry.values() if o.python_name == op.python_name and o.name != op.name]
        if taken:
            raise DeclarationError(f"operator {op.name!r}: the Python name {op.python_name!r} is already "
                                   f"{taken[0].api}'s")
        _registry[op.name] = op
    _changed()
    return op


def unregister(name: str) -> None:
    """Forget a declared operator (tests and notebooks that declare one again differently)."""
    with _lock:
        _registry.pop(name.removeprefix("aclnn"), None)
    _changed()


def registered() -> dict[str, Operator]:
    """Every declared operator by aclnn name (the built-ins once aclgen.ops is imported)."""
    return dict(_registry)


def lookup(name: str) -> Operator | None:
    """An operator by aclnn name (with or without the `aclnn` prefix) or Python name."""
    op = _registry.get(name) or _registry.get(name.removeprefix("aclnn"))
    if op is not None:
        return op
    key = name.replace("-", "_").lower()
    for o in _registry.values():
        if o.python_name == key or o.name.lower() == key.removeprefix("aclnn"):
            return o
    return None


# --------------------------------------------------------------------------------- declaring

_collecting = threading.local()


@contextlib.contextmanager
def collecting() -> Iterator[list[Exception]]:
    """Within: a declaration whose formula cannot be traced is noted in the yielded list (the
    operator stays undeclared) instead of raised, so a loader can name every broken operator of
    a module, not only the first (`aclgen ops FILE.py`)."""
    outer = getattr(_collecting, "errors", None)
    _collecting.errors = errors = []
    try:
        yield errors
    finally:
        _collecting.errors = outer


def collect(exc: Exception) -> bool:
    """Note `exc` when collecting (see `collecting`); False when it is to be raised."""
    errors = getattr(_collecting, "errors", None)
    if errors is None:
        return False
    errors.append(exc)
    return True



def snake(name: str) -> str:
    """CANN's camelCase parameter name as a Python one: gradOutput -> grad_output."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _scalars(scalars: Sequence[str | Scalar]) -> tuple[Scalar, ...]:
    return tuple(s if isinstance(s, Scalar) else Scalar(s) for s in scalars)


def _dtypes(name: str, dtypes) -> dict[str, tuple[str, ...]]:
    """`dtypes` as {SoC profile: dtype names}: a plain sequence applies to every profile."""
    if isinstance(dtypes, str):
        dtypes = (dtypes,)
    table = dict(dtypes) if isinstance(dtypes, Mapping) else {soc: tuple(dtypes) for soc in SOCS}
    unknown = [s for s in table if s not in SOCS]
    if unknown:
        raise DeclarationError(f"operator {name!r}: unknown SoC profiles {unknown}; known: {', '.join(SOCS)}")
    out = {}
    for soc in SOCS:
        names = table.get(soc, ())
        try:
            out[soc] = tuple(dt.dtype(n).name for n in names)
        except ValueError as exc:
            raise DeclarationError(f"operator {name!r}: {exc}") from None
    return out


def declare(
    name: str,
    formula: Callable,
    *,
    inputs: Sequence[str],
    outputs: Sequence[str],
    scalars: Sequence[str | Scalar] = (),
    dtypes=("float32", "float16", "bfloat16"),
    broadcast: bool = True,
    max_rank: int | None = 8,
    check: Callable | None = None,
    promote: Callable | None = None,
    kernel: KernelOperands | None = None,
    result: Callable | None = None,
    input_shapes: Callable | None = None,
    examples: Sequence[Example] = (),
    options: Options | None = None,
    python_name: str | None = None,
) -> Operator:
    """Build (but do not register) the declaration of `formula` as aclnn`name`."""
    name = name.removeprefix("aclnn")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise DeclarationError(f"operator name {name!r} is not a C identifier")
    if not inputs or not outputs:
        raise DeclarationError(f"operator {name!r} needs at least one input and one output")
    op = Operator(
        name=name,
        formula=formula,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        scalars=_scalars(scalars),
        dtypes=_dtypes(name, dtypes),
        broadcast=broadcast,
        max_rank=max_rank,
        check=check,
        promote=promote,
        kernel_operands=kernel,
        result=result,
        input_shapes=input_shapes,
        examples=tuple(examples),
        options=options,
        python_name=python_name or getattr(formula, "__name__", snake(name)).replace("<lambda>", snake(name)),
        doc=(inspect.getdoc(formula) or "").split("\n\n")[0].replace("\n", " "),
    )
    names = op.arg_names
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise DeclarationError(f"operator {name!r}: parameter names {sorted(dup)} appear twice")
    python = [snake(n) for n in (*op.inputs, *(s.name for s in op.scalars))]
    if "out" in python or len(set(python)) != len(python) or any(keyword.iskeyword(n) for n in python):
        raise DeclarationError(f"operator {name!r}: inputs and scalars {python} (as Python parameters) must be "
                               f"distinct, not Python keywords and not 'out', the Python call's output argument")
    _check_arity(op)
    op.graph  # noqa: B018  (traced now: a FormulaError names the user's line at the declaration)
    return op


def _check_arity(op: Operator) -> None:
    """The formula takes the kernel's tensors, then its scalar parameters (SPEC §6)."""
    try:
        sig = inspect.signature(op.formula)
    except (TypeError, ValueError):
        return  # a builtin or C function: the tracer reports what it cannot call
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
        return
    want = len(op.kernel_inputs) + len(op.params)
    if len(sig.parameters) != want:
        file, line = op.source
        takes = ", ".join([*op.kernel_inputs, *(p.name for p in op.params)])
        raise DeclarationError(f"{file}:{line}: formula {op.formula.__qualname__}{sig} must take {want} arguments "
                               f"({takes}) for operator {op.name!r}")
