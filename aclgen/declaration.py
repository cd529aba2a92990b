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
`split` cuts an input in halves for the kernel (the GLU family), `result` infers the output
shapes the Python call allocates, `input_shapes` the shapes tools make up, and `examples` are
worked examples that `aclgen demo` reproduces.

This module is data: it imports neither the compiler nor the runtime. Kernels are compiled (or
fetched from the compile cache, aclgen/cache.py) by `Operator.kernel(variant, options)`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import inspect
import keyword
import math
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from aclgen import cache
from aclgen import dtypes as dt
from aclgen.dialects.enums import Layout
from aclgen.frontend.tracer import Graph, Signature, trace
from aclgen.kernel import Kernel, Options, Param, Variant

SOCS = ("Ascend910", "Ascend910B", "Ascend910_93", "Ascend310P", "Ascend950")
DEFAULT_SOC = "Ascend910B"
REQUIRED = inspect.Parameter.empty


class DeclarationError(ValueError):
    """A declaration that cannot give a working operator (names the aclnn name and the problem)."""


class ScalarKind(enum.StrEnum):
    """How a kernel reads an aclScalar (CANN's ToFloat, for every kind)."""

    FLOAT = "float"  # an f32 kernel parameter
    LIKE_INPUT = "like-input"  # f32 for float tensors, trunc(value) as an exact i64 for integer ones


class HalfForms(enum.StrEnum):
    """Where the kernels of an operator's float16 and bfloat16 outputs compute the math functions
    in their half-type forms (2^-16 of the value instead of a float32 ulp; docs/math.md)."""

    STORED = "stored"  # where only a half type stores a function's result (expand-math's analysis)
    # every function, in a kernel whose every output is float16 or bfloat16: for an operator whose
    # bound is at the size of its terms (its reference's `scale`), where terms that cancel
    # cannot magnify an error of 2^-16 of each past a half-type ulp of that size
    TERMS = "terms"


@dataclass(frozen=True)
class Scalar:
    """An aclScalar argument of an operator: a kernel parameter, read as f32 like CANN's
    ToFloat ("like-input": an exact trunc(value) next to integer tensors, ThresholdBackward's
    threshold). `default` is the Python call's default; an `optional` scalar may be None/NULL,
    which means `default` (Swish's betaOptional: 1.0)."""

    name: str
    kind: ScalarKind | str = ScalarKind.FLOAT
    default: Any = REQUIRED
    optional: bool = False

    def __post_init__(self):
        try:
            object.__setattr__(self, "kind", ScalarKind(self.kind))
        except ValueError:
            raise DeclarationError(f"scalar {self.name!r}: kind {self.kind!r} is not one of "
                                   f"{[k.value for k in ScalarKind]}") from None
        if self.optional and self.default is REQUIRED:
            raise DeclarationError(f"scalar {self.name!r}: an optional scalar needs the default NULL means")

    @property
    def sample(self):
        """The value tools (`aclgen run`, `demo`, `bench`) give it when none is asked for: its
        default, else 0.5."""
        return 0.5 if self.default is REQUIRED else self.default


class AttrKind(enum.StrEnum):
    """CANN's plain C arguments ("attributes"): compile-time constants of the formula."""

    BOOL = "bool"  # C bool
    INT64 = "int64"  # C int64_t
    FLOAT = "float"  # C float (the value is rounded to f32)
    DOUBLE = "double"  # C double
    STR = "str"  # C const char*, one of the attribute's `choices`
    INT64_ARRAY = "int64[]"  # const aclIntArray*
    FLOAT_ARRAY = "float[]"  # const aclFloatArray*
    BOOL_ARRAY = "bool[]"  # const aclBoolArray*

    @property
    def c_type(self) -> str:
        return _C_TYPES[self]

    @property
    def is_array(self) -> bool:
        return self.value.endswith("[]")


_C_TYPES = {AttrKind.BOOL: "bool", AttrKind.INT64: "int64_t", AttrKind.FLOAT: "float", AttrKind.DOUBLE: "double",
            AttrKind.STR: "const char*", AttrKind.INT64_ARRAY: "const aclIntArray*",
            AttrKind.FLOAT_ARRAY: "const aclFloatArray*", AttrKind.BOOL_ARRAY: "const aclBoolArray*"}


class AttrError(ValueError):
    """An attribute value of the wrong kind (the runtime reports it as 161002, naming it)."""


@dataclass(frozen=True)
class Attr:
    """A plain C argument of an operator (`bool`, `int64_t`, `float`, `double`, `const char*`,
    or an aclIntArray/aclFloatArray/aclBoolArray). It is a compile-time constant: the formula
    receives its value as a Python value after the inputs and scalars, may branch on it in
    Python (`if approximate == "tanh":`), and each value it takes is its own cached kernel
    variant. `default` is the Python call's default (REQUIRED: none); `choices` lists a `str`
    attribute's accepted values; `kernel` is what of the value the kernel depends on: the formula
    receives kernel(value), and kernels are cached by it (LayerNorm's normalizedShape enters as
    its length, so one kernel serves every hidden size); `example(shape)` is a value that suits
    inputs of `shape` (tools and tests call the operator with it; default: `sample`)."""

    name: str
    kind: AttrKind | str
    default: Any = REQUIRED
    choices: tuple[str, ...] | None = None
    kernel: Callable[[Any], Any] | None = None
    example: Callable[[tuple[int, ...]], Any] | None = None

    def __post_init__(self):
        try:
            object.__setattr__(self, "kind", AttrKind(self.kind))
        except ValueError:
            raise DeclarationError(f"attribute {self.name!r}: kind {self.kind!r} is not one of "
                                   f"{[k.value for k in AttrKind]}") from None
        if self.choices is not None:
            if self.kind is not AttrKind.STR:
                raise DeclarationError(f"attribute {self.name!r}: only a str attribute has choices")
            object.__setattr__(self, "choices", tuple(self.choices))
        if self.default is not REQUIRED:
            try:
                object.__setattr__(self, "default", self.value(self.default))
            except AttrError as exc:
                raise DeclarationError(f"attribute {self.name!r}: default {exc}") from None

    def value(self, v) -> Any:
        """`v` as this attribute's normalized Python value (hashable: arrays become tuples);
        AttrError says what is wrong."""
        k = AttrKind(self.kind)
        text, c_type = k.value, k.c_type
        if k is AttrKind.BOOL:
            if isinstance(v, (bool, np.bool_)):
                return bool(v)
        elif k is AttrKind.INT64:
            if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                if -(2**63) <= int(v) < 2**63:
                    return int(v)
                raise AttrError(f"{v} does not fit an int64")
        elif k in (AttrKind.FLOAT, AttrKind.DOUBLE):
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)):
                return float(np.float32(v)) if k is AttrKind.FLOAT else float(v)
        elif k is AttrKind.STR:
            if isinstance(v, str):
                if self.choices is not None and v not in self.choices:
                    raise AttrError(f"{v!r} is not one of {list(self.choices)}")
                return v
        elif isinstance(v, (list, tuple, np.ndarray)):
            item = Attr(self.name, text.removesuffix("[]").replace("float", "double"))
            try:
                return tuple(item.value(x) for x in np.asarray(v).tolist()) if isinstance(v, np.ndarray) \
                    else tuple(item.value(x) for x in v)
            except AttrError:
                pass
        raise AttrError(f"must be {'an ' if text[0] in 'i' else 'a '}{text} ({c_type}), got {v!r}")

    def example_for(self, shape: Sequence[int]) -> Any:
        """A value of this attribute for inputs of `shape` (`example`, else `sample`)."""
        return self.value(self.example(tuple(shape))) if self.example else self.sample

    @property
    def sample(self):
        """Its default, else a value of its kind (what a declaration traces with, and tools use)."""
        if self.default is not REQUIRED:
            return self.default
        return {AttrKind.BOOL: False, AttrKind.INT64: 0, AttrKind.FLOAT: 0.0, AttrKind.DOUBLE: 0.0,
                AttrKind.STR: (self.choices or ("",))[0]}.get(self.kind, ())  # type: ignore[call-overload]


@dataclass(frozen=True)
class Tensor:
    """A tensor argument when it is more than a name.

    Inputs: `optional` (None/NULL allowed) with `default`, the constant the formula sees in its
    place (None: the formula receives None and decides in Python); `along` broadcasts a 1-D
    input along one dim of the others (Prelu's weight along dim 1, the channels), instead of
    numpy's trailing alignment.
    Outputs: `dtype` fixes its dtype (ReluV2's uint8 mask; default: the result dtype, or its
    column of the operator's dtype combinations); an output made of reductions has the reduced
    dims 1, or none with `keepdims=False` (RmsNormGrad's dgamma has gamma's shape: x's without
    its leading dims); `optional` (LayerNorm's meanOutOptional) lets the caller pass None, and
    nothing is written; `mask=(attribute, k)` writes it only where element k of a bool-array
    attribute is true (LayerNormBackward's outputMask): true with a NULL output is 161001, false
    leaves it out."""

    name: str
    optional: bool = False
    default: float | None = None
    along: int | None = None
    dtype: str | None = None
    keepdims: bool = True
    mask: tuple[str, int] | None = None


@dataclass(frozen=True)
class Split:
    """The GLU way: `input` splits in two halves along `dim` (an int64 attribute's name, or a
    fixed dim), the kernel's inputs `into`; the call's other inputs and its outputs span one half,
    except outputs named in `whole`, which span the input and are written as two halves (the
    kernel's outputs `whole_into`). `status`: the code of a bad dim or odd size (CANN's tiling
    error, 561002, for SwiGluGrad; 161002 elsewhere)."""

    input: str
    dim: str | int
    into: tuple[str, str]
    whole: tuple[str, ...] = ()
    whole_into: tuple[str, ...] = ()
    status: int = 161002


@dataclass(frozen=True)
class Example:
    """A worked example: the Python call's arguments and the output's values as printed (row
    major). Each value must be reproduced to every digit it shows, or within `rtol` where the
    math is held to an error bound instead of bits (SwiGluGrad's exp)."""

    args: tuple
    expected: tuple[str, ...]
    rtol: float = 0.0


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
    # SoC profile -> CANN's table of dtype combinations, one dtype per input then output (RmsNorm's
    # x float16 with gamma float32); empty where the operator takes one dtype (or `promote`)
    combinations: Mapping[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    broadcast: bool = True
    max_rank: int | None = 8
    check: Callable | None = None  # check(call): the whole phase-1 sequence (default: SPEC §6)
    promote: Callable | None = None  # promote(*input dtype names) -> the outputs' dtype name
    result: Callable | None = None  # result(inputs, attrs) -> [(dims, aclDataType)] per output
    input_shapes: Callable | None = None  # input_shapes(shape) -> the inputs' shapes for outputs of `shape`
    examples: tuple[Example, ...] = ()  # worked examples (SPEC.md §4's), checked by `aclgen demo`
    options: Options | None = None  # schedule knobs of this operator's kernels (default: ACLGEN_*)
    python_name: str = ""
    doc: str = ""
    attrs: tuple[Attr, ...] = ()  # plain C arguments: compile-time constants of the formula
    order: tuple[str, ...] = ()  # CANN's C argument order (default: inputs, scalars, attrs, outputs)
    tensors: Mapping[str, Tensor] = field(default_factory=dict)  # tensors declared as more than a name
    inplace: str | None = None  # the input aclnnInplace<Name> writes its result into
    split: Split | None = None
    reference: Callable | None = None  # numpy reference of the formula: float inputs come as float64, integers as int64
    tolerance: float = 0.0  # the formula's bound against `reference`, in ulp of the output dtype
    half_forms: HalfForms = HalfForms.STORED  # see HalfForms
    # the operator computing this one's input gradients (aclnn name), given the output gradients,
    # then this one's inputs and scalars: torch autograd runs it (aclgen/runtime/torch_library.py)
    backward: str | None = None

    # -- names ---------------------------------------------------------------------------------

    @cached_property
    def api(self) -> str:
        return f"aclnn{self.name}"

    @cached_property
    def arg_names(self) -> tuple[str, ...]:
        """The C arguments before workspaceSize/executor, in CANN's order (`order`, by default
        inputs, scalars, attributes, outputs)."""
        return self.order or (*self.inputs, *(s.name for s in self.scalars), *(a.name for a in self.attrs),
                              *self.outputs)

    def attr(self, name: str) -> Attr:
        """The declaration of attribute `name`."""
        return next(a for a in self.attrs if a.name == name)

    def tensor(self, name: str) -> Tensor:
        """The declaration of tensor `name` (a plain name declares a required tensor)."""
        return self.tensors.get(name) or Tensor(name)

    @cached_property
    def kinds(self) -> dict[str, str]:
        """Each argument's kind by name: "input", "output", "scalar" or "attr"."""
        return {**{n: "input" for n in self.inputs}, **{n: "output" for n in self.outputs},
                **{s.name: "scalar" for s in self.scalars}, **{a.name: "attr" for a in self.attrs}}

    @cached_property
    def python_args(self) -> tuple[str, ...]:
        """The Python call's positional arguments, by CANN name: inputs, scalars, attributes."""
        return (*self.inputs, *(s.name for s in self.scalars), *(a.name for a in self.attrs))

    @cached_property
    def formula_attrs(self) -> tuple[Attr, ...]:
        """The attributes the formula receives: all but the dim a `split` consumes and the masks
        that pick outputs."""
        used = {self.split.dim if self.split else None}
        used |= {m[0] for n in self.outputs if (m := self.tensor(n).mask) is not None}
        return tuple(a for a in self.attrs if a.name not in used)

    @cached_property
    def attr_samples(self) -> tuple:
        """Each formula attribute's sample value (its default, else a value of its kind)."""
        return tuple(a.sample for a in self.formula_attrs)

    def kernel_attrs(self, values: tuple) -> tuple:
        """The formula attributes' `values` as the formula and the kernel variant see them
        (each attribute's `kernel` of its value)."""
        return tuple(a.kernel(v) if a.kernel else v for a, v in zip(self.formula_attrs, values))

    @cached_property
    def kernel_samples(self) -> tuple:
        """`attr_samples` as the formula sees them."""
        return self.kernel_attrs(self.attr_samples)

    @cached_property
    def inplace_api(self) -> str:
        """aclnnInplace<Name>: the API that writes the result into the `inplace` input."""
        return f"aclnnInplace{self.name}"

    @cached_property
    def inplace_args(self) -> tuple[str, ...]:
        """aclnnInplace<Name>'s C arguments: CANN's order without the outputs, the input written
        in place named <input>Ref (selfRef)."""
        ref = f"{self.inplace}Ref"
        return tuple(ref if n == self.inplace else n for n in self.arg_names if n not in self.outputs)

    def from_inplace(self, args: tuple) -> tuple:
        """aclnnInplace<Name>'s arguments as aclnn<Name>'s: the <input>Ref tensor is both the
        input and the output."""
        assert self.inplace is not None
        given = dict(zip(self.inplace_args, args))
        ref = given.pop(f"{self.inplace}Ref")
        given[self.inplace] = ref
        return tuple(given.get(n, ref) for n in self.arg_names)  # the outputs: the ref tensor

    @cached_property
    def signature(self) -> str:
        return f"{self.api}({', '.join(self.arg_names)})"

    @cached_property
    def params(self) -> tuple[Param, ...]:
        """The kernel's scalar parameters (every scalar but the int attributes)."""
        return tuple(Param(s.name, "like-input" if s.kind == ScalarKind.LIKE_INPUT else "f32") for s in self.scalars)

    @cached_property
    def kernel_inputs(self) -> tuple[str, ...]:
        """The kernel's tensor inputs: the inputs, a split one as its two halves."""
        if self.split:
            return tuple(x for n in self.inputs for x in (self.split.into if n == self.split.input else (n,)))
        return self.inputs

    @cached_property
    def kernel_outputs(self) -> tuple[str, ...]:
        """The kernel's outputs: the outputs, one spanning a split input as its two halves."""
        if self.split and self.split.whole:
            halves = dict(zip(self.split.whole, zip(self.split.whole_into[::2], self.split.whole_into[1::2])))
            return tuple(x for n in self.outputs for x in halves.get(n, (n,)))
        return self.outputs

    @cached_property
    def kernel_arg_names(self) -> tuple[str, ...]:
        """The kernel's arguments (also the formula's tensors and parameters, in its order)."""
        return (*self.kernel_inputs, *(p.name for p in self.params), *self.kernel_outputs)

    def spans(self, rank: int, ins) -> list[tuple[int, ...]]:
        """Per input (`ins`: in order, each with its `view_dims`, None where left out), the dims
        of a `rank`-dim iteration space it spans: those a reduction over it (`aclgen.sum(x,
        gamma)`) reduces and keep=it keeps. A tensor spans the trailing dims, as many as it has
        (one at least); one declared `along` dim k spans dim k, or none where it holds one value
        (Prelu's weight); one left out spans none."""
        out = []
        for name, t in zip(self.inputs, ins):
            along = self.tensor(name).along
            if t is None:
                out.append(())
            elif along is not None:
                out.append((along % rank,) if math.prod(t.view_dims) > 1 and -rank <= along < rank else ())
            else:
                out.append(tuple(range(rank - min(max(len(t.view_dims), 1), rank), rank)))
        return out

    def graph_for(self, attrs: tuple) -> Graph:
        """The formula traced with these attribute values, as the formula sees them
        (`kernel_attrs`: what their variants compute)."""
        if attrs == self.kernel_samples:
            return self.graph
        graphs = self.__dict__.setdefault("_graphs", {})
        g = graphs.get(attrs)
        if g is None:
            g = graphs[attrs] = self._trace(attrs)
        return g

    @cached_property
    def graph(self) -> Graph:
        """The formula traced with the operator's first dtype (its kernels are traced again per
        variant): `declare` takes it at once, so a formula the language cannot express fails
        where it is declared, naming its line."""
        return self._trace(self.kernel_samples)

    def _trace(self, attrs: tuple) -> Graph:
        first = next(iter(self.all_dtypes()), dt.float32)
        types = [first.name] * len(self.kernel_inputs) + [p.graph_type(first) for p in self.params]
        kinds = ["input"] * len(self.kernel_inputs) + ["param"] * len(self.params)
        n = len(types)
        sig = Signature(self.kernel_arg_names[:n], types, len(self.kernel_outputs), kinds, attrs)
        return trace(self.formula, sig)

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

    def combination(self, dtype: str) -> tuple[str, ...] | None:
        """The first combination (inputs then outputs) whose first input is `dtype`, on any SoC
        profile (None: the operator has no table, or no row for it)."""
        return next((row for rows in self.combinations.values() for row in rows if row[0] == dtype), None)

    def result_dtype(self, *inputs: str) -> str:
        """The outputs' dtype for inputs of these dtype names (the first one's, or `promote`)."""
        return self.promote(*inputs) if self.promote is not None else inputs[0]

    # -- kernels ---------------------------------------------------------------------------------

    def formula_for(self, variant: Variant) -> tuple[Callable, tuple[str, ...]]:
        """(formula, kernel argument names) of `variant`: with optional inputs left out, the
        formula receives each one's declared default (or None) in its place."""
        if not variant.absent:
            return self.formula, self.kernel_arg_names
        absent = {self.inputs[k]: self.tensor(self.inputs[k]).default for k in variant.absent}
        names = tuple(n for n in self.kernel_arg_names if n not in absent)
        head = self.kernel_arg_names[: len(self.kernel_inputs) + len(self.params)]  # then the attributes
        formula = self.formula

        def with_defaults(*args):
            given = iter(args)
            return formula(*[absent[n] if n in absent else next(given) for n in head], *given)

        with_defaults.__wrapped__ = formula  # type: ignore[attr-defined]  # the tracer names the user's lines
        with_defaults.__name__ = getattr(formula, "__name__", "formula")
        return with_defaults, names

    def kernel_options(self, variant: Variant, options: Options | None = None) -> Options:
        """What `variant`'s kernel compiles with: `options` (by default the declaration's, else
        ACLGEN_*'s), every function in its half-type form where `half_forms` says so."""
        options = options or self.options or Options.from_knobs()
        if (self.half_forms == HalfForms.TERMS and options.half == "stored"
                and all(d in dt.HALF for d in variant.outputs)):
            return dataclasses.replace(options, half="all")
        return options

    def kernel(self, variant: Variant, options: Options | None = None) -> Kernel:
        """The compiled kernel of `variant` (compiled now, or from the compile cache)."""
        return cache.kernels.get(self, variant, self.kernel_options(variant, options))

    def variant(self, inputs: Sequence[dt.DType], rank: int = 1, layouts: Sequence[str] | None = None,
                attrs: tuple | None = None) -> Variant:
        """The kernel variant for kernel-input dtypes `inputs` (one dtype repeats for every input)
        and attribute values `attrs` (default: their samples). A formula that reduces reduces
        the last dim (the shape tools and `aclgen compile` show)."""
        ins = tuple(inputs) if len(inputs) > 1 else tuple(inputs) * len(self.kernel_inputs)
        out = dt.dtype(self.result_dtype(*(d.name for d in ins)))
        outs = tuple(dt.dtype(d) if (d := self.tensor(n).dtype) else out for n in self.kernel_outputs)
        row = self.combination(ins[0].name) if len(inputs) == 1 else None
        if row is not None:  # a dtype names its first row of the table
            ins = tuple(dt.dtype(d) for d in row[:len(self.inputs)])
            outs = tuple(dt.dtype(d) for d in row[len(self.inputs):])
        attrs = self.kernel_samples if attrs is None else attrs
        graph = self.graph_for(attrs)
        reduced = 1 if graph.reductions() else 0
        if reduced:
            rank = max(rank, 2)
        if layouts:
            lay = tuple(Layout(x) for x in layouts)
        else:
            lay = ((Layout.CONTIGUOUS,) * len(self.kernel_inputs)
                   + tuple(Layout.BROADCAST if row and reduced else Layout.CONTIGUOUS for row in graph.row_results()))
        return Variant(ins, outs, rank, lay, attrs, reduced)

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


def _dtypes(name: str, dtypes, tensors: int) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple]]:
    """`dtypes` as {SoC profile: dtype names} and {SoC profile: combinations}: a plain sequence
    applies to every profile; a profile's entry may be CANN's table of combinations (tuples of
    one dtype per input then output), its dtypes then those the rows name."""
    if isinstance(dtypes, str):
        dtypes = (dtypes,)
    table = dict(dtypes) if isinstance(dtypes, Mapping) else {soc: tuple(dtypes) for soc in SOCS}
    unknown = [s for s in table if s not in SOCS]
    if unknown:
        raise DeclarationError(f"operator {name!r}: unknown SoC profiles {unknown}; known: {', '.join(SOCS)}")
    out, combos = {}, {}
    for soc in SOCS:
        names = table.get(soc, ())
        try:
            if any(not isinstance(n, str) for n in names):
                rows = tuple(tuple(dt.dtype(d).name for d in row) for row in names)
                if any(len(row) != tensors for row in rows):
                    raise ValueError(f"{soc}: each dtype combination names {tensors} dtypes (inputs, then outputs)")
                combos[soc] = rows
                names = [d for row in rows for d in row]
            out[soc] = tuple(dict.fromkeys(dt.dtype(n).name for n in names))
        except (ValueError, TypeError) as exc:
            raise DeclarationError(f"operator {name!r}: {exc}") from None
    if combos and len(combos) != sum(1 for v in out.values() if v):
        raise DeclarationError(f"operator {name!r}: dtype combinations for some SoC profiles and names for others")
    return out, combos


def _tensors(name: str, items: Sequence[str | Tensor], what: str) -> tuple[tuple[str, ...], dict[str, Tensor]]:
    names, specs = [], {}
    for t in items:
        if isinstance(t, Tensor):
            specs[t.name] = t
            t = t.name
        if not isinstance(t, str):
            raise DeclarationError(f"operator {name!r}: {what} are names or aclgen.Tensor(...), got {t!r}")
        names.append(t)
    return tuple(names), specs


def _half_forms(name: str, forms: HalfForms | str, reference: Callable | None) -> HalfForms:
    try:
        forms = HalfForms(forms)
    except ValueError:
        raise DeclarationError(f"operator {name!r}: half_forms {forms!r} is not one of "
                               f"{[f.value for f in HalfForms]}") from None
    if forms == HalfForms.TERMS and not callable(getattr(reference, "scale", None)):
        raise DeclarationError(f"operator {name!r}: half_forms='terms' needs a reference with a `scale` "
                               "(the size of the terms its bound is measured at)")
    return forms


def declare(
    name: str,
    formula: Callable,
    *,
    inputs: Sequence[str | Tensor],
    outputs: Sequence[str | Tensor],
    scalars: Sequence[str | Scalar] = (),
    attrs: Sequence[Attr] = (),
    order: Sequence[str] | None = None,
    dtypes=("float32", "float16", "bfloat16"),
    broadcast: bool = True,
    max_rank: int | None = 8,
    inplace: str | None = None,
    split: Split | None = None,
    check: Callable | None = None,
    promote: Callable | None = None,
    result: Callable | None = None,
    input_shapes: Callable | None = None,
    examples: Sequence[Example] = (),
    reference: Callable | None = None,
    tolerance: float = 0.0,
    half_forms: HalfForms | str = HalfForms.STORED,
    options: Options | None = None,
    python_name: str | None = None,
    backward: str | None = None,
) -> Operator:
    """Build (but do not register) the declaration of `formula` as aclnn`name`."""
    name = name.removeprefix("aclnn")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise DeclarationError(f"operator name {name!r} is not a C identifier")
    if not inputs or not outputs:
        raise DeclarationError(f"operator {name!r} needs at least one input and one output")
    in_names, in_specs = _tensors(name, inputs, "inputs")
    out_names, out_specs = _tensors(name, outputs, "outputs")
    table, combinations = _dtypes(name, dtypes, len(in_names) + len(out_names))
    op = Operator(
        name=name,
        formula=formula,
        inputs=in_names,
        outputs=out_names,
        scalars=_scalars(scalars),
        attrs=tuple(attrs),
        order=tuple(order or ()),
        tensors={**in_specs, **out_specs},
        dtypes=table,
        combinations=combinations,
        broadcast=broadcast,
        max_rank=max_rank,
        inplace=inplace,
        split=split,
        check=check,
        promote=promote,
        result=result,
        input_shapes=input_shapes,
        examples=tuple(examples),
        reference=reference,
        tolerance=tolerance,
        half_forms=_half_forms(name, half_forms, reference),
        backward=backward.removeprefix("aclnn") if backward else None,
        options=options,
        python_name=python_name or getattr(formula, "__name__", snake(name)).replace("<lambda>", snake(name)),
        doc=(inspect.getdoc(formula) or "").split("\n\n")[0].replace("\n", " "),
    )
    everything = (*op.inputs, *(s.name for s in op.scalars), *(a.name for a in op.attrs), *op.outputs)
    dup = {n for n in everything if everything.count(n) > 1}
    if dup:
        raise DeclarationError(f"operator {name!r}: parameter names {sorted(dup)} appear twice")
    if op.order and sorted(op.order) != sorted(everything):
        raise DeclarationError(f"operator {name!r}: order {list(op.order)} must name every argument once: "
                               f"{list(everything)}")
    if inplace is not None and (inplace not in op.inputs or len(op.outputs) != 1):
        raise DeclarationError(f"operator {name!r}: inplace names {inplace!r}: it must be an input of an operator "
                               f"with one output")
    if split is not None:
        _check_split(op, split)
    bools = {a.name for a in op.attrs if a.kind is AttrKind.BOOL_ARRAY}
    for out in op.outputs:
        spec = op.tensor(out)
        if spec.mask is not None and (spec.mask[0] not in bools or not spec.optional):
            raise DeclarationError(f"operator {name!r}: output {out!r} masked by {spec.mask[0]!r}: it must be optional "
                                   f"and the mask a bool[] attribute")
    python = [snake(n) for n in (*op.inputs, *(s.name for s in op.scalars), *(a.name for a in op.attrs))]
    if "out" in python or len(set(python)) != len(python) or any(keyword.iskeyword(n) for n in python):
        raise DeclarationError(f"operator {name!r}: inputs, scalars and attributes {python} (as Python parameters) "
                               f"must be distinct, not Python keywords and not 'out', the Python call's output argument")
    _check_arity(op)
    op.graph  # noqa: B018  (traced now: a FormulaError names the user's line at the declaration)
    return op


def _check_split(op: Operator, split: Split) -> None:
    if split.input not in op.inputs:
        raise DeclarationError(f"operator {op.name!r}: split input {split.input!r} is not an input")
    if isinstance(split.dim, str) and split.dim not in {a.name for a in op.attrs if a.kind is AttrKind.INT64}:
        raise DeclarationError(f"operator {op.name!r}: split dim {split.dim!r} is not an int64 attribute")
    if len(split.whole) != len(split.whole_into) // 2 or any(w not in op.outputs for w in split.whole):
        raise DeclarationError(f"operator {op.name!r}: split.whole names outputs, two kernel outputs each "
                               f"in whole_into")


def _check_arity(op: Operator) -> None:
    """The formula takes the kernel's tensors, then its scalar parameters, then its attributes."""
    try:
        sig = inspect.signature(op.formula)
    except (TypeError, ValueError):
        return  # a builtin or C function: the tracer reports what it cannot call
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
        return
    want = len(op.kernel_inputs) + len(op.params) + len(op.formula_attrs)
    if len(sig.parameters) != want:
        file, line = op.source
        takes = ", ".join([*op.kernel_inputs, *(p.name for p in op.params), *(a.name for a in op.formula_attrs)])
        raise DeclarationError(f"{file}:{line}: formula {op.formula.__qualname__}{sig} must take {want} arguments "
                               f"({takes}) for operator {op.name!r}")
