"""What a run of `aclgen bench` covers: operators, the (dtype, size) matrix, tools and parts,
from the command line's words. A size is a number of elements (an int: a 1-D problem) or a
shape (a tuple, written `4096x4096`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from aclgen.tools import UsageError
from aclgen.tools.bench.peers import TOOLS

PARTS = ("table", "calls", "compile")
DEFAULT_SIZES = "1K,64K,1M,16M"
DEFAULT_DTYPES = "float32,float16,bfloat16"
Size = int | tuple[int, ...]  # elements of a 1-D problem, or a shape

# Without --sizes and --dtypes: float32 at every size, the half types at 1M.
DEFAULT_MATRIX: list[tuple[str, Size]] = [
    *(("float32", n) for n in (1 << 10, 1 << 16, 1 << 20, 1 << 24)),
    ("float16", 1 << 20),
    ("bfloat16", 1 << 20),
]


@dataclass(frozen=True)
class Isa:
    """An instruction set every tool is held to: aclgen through ACLGEN_CPU_NAME=`cpu`, numba
    through NUMBA_CPU_NAME=`cpu` and NUMBA_CPU_FEATURES (that CPU's exact features), torch (eager
    kernels and torch.compile's C++) through ATEN_CPU_CAPABILITY=`aten`. `native`: none is set."""

    name: str
    cpu: str = ""  # LLVM CPU name ("": the host)
    aten: str = ""  # torch's ATEN_CPU_CAPABILITY ("": torch picks the host's best)


ISAS = {
    "native": Isa("native"),
    "avx2": Isa("avx2", "haswell", "avx2"),
    "avx512": Isa("avx512", "skylake-avx512", "avx512"),
}


def isa(name: str) -> Isa:
    if name not in ISAS:
        raise UsageError(f"--isa: unknown instruction set {name!r}; known: {', '.join(ISAS)}")
    return ISAS[name]


def isa_environment(choice: Isa) -> dict[str, str | None]:
    """The variables a process measuring `choice` starts with (None: removed). Raises UsageError
    when this machine cannot run that instruction set."""
    from aclgen.codegen.target import named, real_host

    if not choice.cpu:
        return {}
    target = named(choice.cpu)
    if target.missing:
        raise UsageError(f"--isa {choice.name}: this machine ({real_host().cpu}) lacks {', '.join(target.missing)}, "
                         f"so {choice.cpu} code cannot run here (ACLGEN_CPU_NAME={choice.cpu} aclgen compile OP "
                         "--emit asm prints it)")
    return {"ACLGEN_CPU_NAME": choice.cpu, "ACLGEN_CPU_FEATURES": None,
            "NUMBA_CPU_NAME": choice.cpu, "NUMBA_CPU_FEATURES": target.explicit_features,
            "ATEN_CPU_CAPABILITY": choice.aten, "TORCHINDUCTOR_CACHE_DIR": _inductor_cache(choice)}


def _inductor_cache(choice: Isa) -> str:
    """torch.compile's cache directory for `choice`: one of its own. Inductor's graph cache keys
    the generated C++ without ATEN_CPU_CAPABILITY, so a kernel written for AVX2 (8 lanes a step)
    would later be compiled with the host's AVX-512 flags (16-lane stores: a heap overrun, seen
    with torch 2.13 on Zen 4)."""
    import getpass
    import tempfile

    base = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), f"torchinductor_{getpass.getuser()}")
    return f"{base}-{choice.aten}"


@dataclass
class Config:
    ops: list = field(default_factory=list)  # declared operators (default: the built-ins)
    matrix: list[tuple[str, Size]] = field(default_factory=lambda: list(DEFAULT_MATRIX))
    tools: list[str] = field(default_factory=lambda: list(TOOLS))
    parts: list[str] = field(default_factory=lambda: list(PARTS))
    rounds: int = 7
    target_s: float = 0.02
    compile_reps: int = 3
    isa: str = "native"  # recorded in the result; run() sets the environment it needs
    progress: Callable[[str], None] | None = None


def parse_size(text: str) -> int:
    """`1K` = 1024, `64k`, `1M` = 2**20, `16M`, `1G`, or a plain number of elements."""
    t = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    digits = t[:-1] if scale > 1 else t
    try:
        n = int(digits) * scale
    except ValueError:
        raise UsageError(f"bad size {text!r}: write elements like 1024, 1K, 64K, 1M, 16M") from None
    if n < 2:
        raise UsageError(f"bad size {text!r}: need at least 2 elements")
    return n


def parse_shape(text: str) -> Size:
    """A size as parse_size reads it (a 1-D problem), or a shape `AxB[xC...]` of such sizes
    (`4096x4096`, `64Kx256`: a problem of that shape; each dim at least 1)."""
    dims = text.strip().lower().split("x")
    if len(dims) == 1:
        return parse_size(text)
    try:
        shape = tuple(1 if d.strip() == "1" else parse_size(d) for d in dims)
    except UsageError:
        raise UsageError(f"bad shape {text!r}: write dims like 4096x4096 or 64Kx256") from None
    if shape.count(1) == len(shape):
        raise UsageError(f"bad shape {text!r}: need at least 2 elements")
    return shape


def shape_of(size: Size) -> tuple[int, ...]:
    """The shape of a size: (n,) for n elements."""
    return (size,) if isinstance(size, int) else tuple(size)


def size_label(size: Size) -> str:
    """`1M` for 2**20 elements; `4096x4096` for a shape (its dims as written in full)."""
    if not isinstance(size, int):
        return "x".join(str(d) for d in size)
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)


def _list(spec: str) -> list[str]:
    return [s.strip() for s in spec.split(",") if s.strip()]


def matrix(sizes: str | None, dtypes: str | None) -> list[tuple[str, Size]]:
    """(dtype name, size) pairs to run: the default matrix unless a list was given, else the
    product of the two lists (a size: an int, or a shape for `AxB`)."""
    from aclgen import dtypes as dt

    if sizes is None and dtypes is None:
        return list(DEFAULT_MATRIX)
    names = []
    for name in _list(dtypes or DEFAULT_DTYPES):
        try:
            d = dt.dtype(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if not d.is_float:
            raise UsageError(f"--dtypes: {d.name}: the benchmark covers the float types (float32, float16, bfloat16)")
        names.append(d.name)
    return [(d, n) for d in names for n in (parse_shape(s) for s in _list(sizes or DEFAULT_SIZES))]


def operators(names: Sequence[str]) -> list:
    """The operators `names` resolve to (built-in or aclnn names, FILE.py:NAME); the built-ins
    when none is named."""
    from aclgen.tools.operators import builtins, find

    return [find(name) for name in names] if names else builtins()


def tools(spec: str | None) -> list[str]:
    if spec is None:
        return list(TOOLS)
    chosen = _list(spec)
    for t in chosen:
        if t not in TOOLS:
            raise UsageError(f"--tools: unknown tool {t!r}; known: {', '.join(TOOLS)}")
    return ["aclgen"] + [t for t in TOOLS[1:] if t in chosen]  # aclgen is what is measured


def parts(spec: str | None, named_ops: bool = False) -> list[str]:
    """The parts `spec` lists; by default all of them, or only the table when the command names
    operators (the small calls and compile times are hardswish_backward's and the peers': not
    what was asked about)."""
    default: list[str] = ["table"] if named_ops else list(PARTS)
    chosen = _list(spec) if spec is not None else default
    for p in chosen:
        if p not in PARTS:
            raise UsageError(f"--parts: unknown part {p!r}; known: {', '.join(PARTS)}")
    return chosen
