"""Kernel handles, importable without the compiler.

A `Kernel` is what a launch needs: the kernel's address (its JIT engine kept alive with it),
the launch-record layout, the variant and options it was built for, per-stage compile seconds,
and the text of every stage (`kernel.ir`). It is built either by the compiler
(aclgen/compiler.py) or from an on-disk cache entry (aclgen/cache.py); the second way loads
neither xDSL nor the pass pipeline, so this module imports neither.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aclgen import dtypes as dt
from aclgen.abi import MetaLayout
from aclgen.dialects.enums import Layout
from aclgen.knobs import FMA_MODES, TILE_RULE, WIDTH_RULE, knobs, tile_ok, width_ok

if TYPE_CHECKING:
    from xdsl.ir import Attribute

#: The pass pipeline, in order (aclgen/passes/pipeline.py makes the passes with their options).
PIPELINE = (
    "legalize-dtypes",
    "tile-elementwise",
    "tile-rows",
    "vectorize-elementwise",
    "expand-math",
    "version-unlikely",
    "cse",
    "convert-scf-to-cf",
    "lower-to-llvm",
)

#: Every stage a kernel keeps the text of (`kernel.ir[stage]`): the traced formula, its `ew`
#: kernel, the module after each pass, then LLVM's forms.
STAGES = ("dsl", "ew", *PIPELINE, "llvm-dialect", "llvm-ir", "llvm", "asm")


class CompileError(Exception):
    """A pass or the LLVM backend failed: a one-line message naming the stage; the IR or the
    backend's full report, when there is one, is in `details`."""

    def __init__(self, message: str, details: str = ""):
        first, _, rest = message.partition("\n")
        super().__init__(first)
        self.details = (rest + "\n" + details).strip()


MODEL_TILE = 8192  # elements per tile where nothing else chose one
#: Where the math functions take their half-type forms (expand-math's `half`; docs/math.md).
HALF_FORMS = ("stored", "off", "all")


@dataclass(frozen=True)
class Options:
    """Schedule knobs: they change the generated code, never the formula's result bits — but for
    `fma` and `half`, which choose between forms of the math functions (each within its bound:
    docs/math.md). Every field enters the compile cache key."""

    tile_size: int = 0  # 0: the schedule's (tuned by `aclgen tune`, else MODEL_TILE; aclgen/schedules.py)
    width: int = 0  # 0: the schedule's (tuned, else vectorize-elementwise's model, model_width)
    fma: str = "auto"
    noalias: bool = False
    opt_level: int = 3
    nontemporal: bool = False  # streaming stores (for outputs larger than the caches)
    half: str = "stored"  # half-type forms of functions: "stored" (where only a half type stores the result), "off", "all"

    def __post_init__(self) -> None:
        for name, choices in (("fma", FMA_MODES), ("half", HALF_FORMS)):
            if getattr(self, name) not in choices:
                raise ValueError(f"compile option {name} must be one of {', '.join(map(repr, choices))}, "
                                 f"not {getattr(self, name)!r}")
        if not width_ok(self.width):
            raise ValueError(f"compile option width must be {WIDTH_RULE}, not {self.width}")
        if not tile_ok(self.tile_size):
            raise ValueError(f"compile option tile_size must be {TILE_RULE}, not {self.tile_size}")

    @staticmethod
    def from_knobs(**overrides) -> Options:
        k = knobs()
        base: dict[str, Any] = dict(tile_size=k.tile_size, width=k.vector_width, fma=k.fma, opt_level=k.opt_level)
        base.update(overrides)
        return Options(**base)


@dataclass(frozen=True)
class Param:
    """A scalar parameter. `kind` "f32": read as f32. "like-input": f32 for float inputs; for
    integer inputs an i64 holding trunc(value) clamped to just outside the input's range, so
    integer compares stay exact (ThresholdBackward)."""

    name: str
    kind: str = "f32"

    def type_name(self, first_input: dt.DType) -> str:
        """"f32" or "i64": the element type of this parameter's launch-record slot."""
        if self.kind == "like-input" and not first_input.is_float:
            return "i64"
        return "f32"

    def graph_type(self, first_input: dt.DType) -> str:
        """The element type the formula sees (aclgen.frontend.tracer): "float32" or "int64"."""
        return "int64" if self.type_name(first_input) == "i64" else "float32"

    def ir_type(self, first_input: dt.DType) -> Attribute:
        from xdsl.dialects.builtin import f32, i64

        return i64 if self.type_name(first_input) == "i64" else f32


@dataclass(frozen=True)
class Variant:
    """What one compiled kernel is specialized for (shapes and strides stay runtime values)."""

    inputs: tuple[dt.DType, ...]
    outputs: tuple[dt.DType, ...]
    rank: int
    layouts: tuple[Layout, ...]  # per operand: inputs then outputs
    attrs: tuple = ()  # the operator's attribute values (compile-time constants of the formula)
    reduced: int = 0  # the trailing dims the formula's reductions reduce (0: an elementwise kernel)
    absent: tuple[int, ...] = ()  # the optional inputs left out (their indices among the inputs)
    results: tuple[int, ...] = ()  # the formula's results this kernel computes (indices; (): all of them)
    # a reducing kernel that runs `lanes` rows at a time, vectorized along the innermost kept dim
    # (`layouts` then describe that dim): RmsNormGrad's dgamma sums down the columns of x
    columns: bool = False
    # results that add up across rows (`partials`, indices among `results`): the kernel writes,
    # per block of `blocks` rows, the block's sum of each one's operand as an f32 row; a second
    # kernel adds the blocks (RmsNormGrad's dgamma computed in dx's pass over x and dy)
    partials: tuple[int, ...] = ()
    blocks: int = 0

    def __post_init__(self):
        if len(self.layouts) != len(self.inputs) + len(self.outputs):
            raise ValueError("one layout per operand (inputs then outputs)")

    @property
    def tag(self) -> str:
        ts = "_".join(d.short for d in (*self.inputs, *self.outputs))
        ls = "".join(x[0] for x in self.layouts)
        shape = f"r{self.rank}" + (f"x{self.reduced}" if self.reduced else "") + ("c" if self.columns else "")
        if self.partials:
            shape += f"p{self.blocks}"
        if not self.attrs and not self.absent and not self.results and not self.partials:
            return f"{ts}_{shape}_{ls}"
        digest = hashlib.sha256(repr((self.attrs, self.absent, self.results, self.partials)).encode()).hexdigest()[:8]
        return f"{ts}_{shape}_{ls}_a{digest}"


class StageTexts(Mapping):
    """`kernel.ir`: stage name -> text, in pipeline order. Texts that were not kept when the
    kernel was built (printing every stage costs more than compiling it) are produced on the
    first access by `fill()`, which returns every stage; `on_complete` then sees the full dict
    (the compile cache uses it to store the texts with the entry)."""

    def __init__(self, texts: dict[str, str], fill: Callable[[], dict[str, str]] | None = None,
                 on_complete: Callable[[dict[str, str]], Any] | None = None):
        self._texts = dict(texts)
        self._fill = fill
        self._on_complete = on_complete
        self._lock = threading.Lock()

    @property
    def complete(self) -> bool:
        return self._fill is None

    def known(self) -> dict[str, str]:
        """The texts held now, without producing the missing ones."""
        return dict(self._texts)

    def _all(self) -> dict[str, str]:
        if self._fill is None:
            return self._texts
        with self._lock:
            if self._fill is not None:
                full = self._fill()
                full.update(self._texts)  # keep the fill's (pipeline) order
                self._texts, self._fill = full, None
                if self._on_complete is not None:
                    self._on_complete(dict(full))
        return self._texts

    def __getitem__(self, stage: str) -> str:
        text = self._texts.get(stage)
        if text is not None:
            return text
        return self._all()[stage]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __contains__(self, stage: object) -> bool:
        return stage in self._texts or stage in self._all()

    def __repr__(self) -> str:
        held = ", ".join(self._texts)
        return f"StageTexts({held}{', ...' if self._fill else ''})"


@dataclass(eq=False)
class Kernel:
    """A compiled kernel variant: owns its JIT engine and gives the text of every stage.

    `native` is an aclgen.codegen.jit.NativeCode (engine + module or object code); `source`
    says where the kernel came from: "compiled" or "disk" (the on-disk compile cache)."""

    name: str
    variant: Variant
    params: tuple[Param, ...]
    param_types: tuple[str, ...]  # "f32" / "i64" per parameter
    ir: StageTexts
    native: Any
    options: Options
    seconds: dict[str, float] = field(default_factory=dict)
    source: str = "compiled"

    def __post_init__(self):
        if not isinstance(self.ir, StageTexts):
            self.ir = StageTexts(self.ir)
        self.address = self.native.address(self.name)
        n_ptrs = len(self.variant.inputs) + len(self.variant.outputs)
        self.meta_layout = MetaLayout(self.variant.rank, n_ptrs, len(self.params))

    @property
    def chunking(self) -> tuple[int, int]:
        """(grain, least) of the native pool's chunks of this kernel's range (see
        aclgen.codegen.native_ir.CHUNK_GRAIN): elements for an elementwise kernel (and for a
        `columns` one, whose rows go in vectors of 64), single rows for one a row at a time,
        whole blocks for one whose blocks of rows sum across rows (`partials`)."""
        from aclgen.codegen.native_ir import CHUNK_GRAIN, MIN_CHUNK

        v = self.variant
        if v.partials:
            return v.blocks, 1
        if v.reduced and not v.columns:
            return 1, 1
        return CHUNK_GRAIN, MIN_CHUNK

    @property
    def asm(self) -> str:
        return self.ir["asm"]

    @property
    def stages(self) -> list[str]:
        return list(self.ir)


__all__ = ["PIPELINE", "STAGES", "CompileError", "Kernel", "Options", "Param", "StageTexts", "Variant"]
