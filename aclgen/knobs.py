"""Every aclgen setting, typed, read from ACLGEN_* environment variables.

| variable | type | default | in the kernel cache key |
|---|---|---|---|
| ACLGEN_TILE_SIZE | int 0 to 2^62 (0 = the schedule's: tuned, else 8192) | 0 | yes |
| ACLGEN_VECTOR_WIDTH | 0 or a power of two up to 256 (0 = the schedule's: tuned, else the model's) | 0 | yes |
| ACLGEN_FMA | auto/on/off | auto | yes |
| ACLGEN_OPT_LEVEL | int 0-3 | 3 | yes |
| ACLGEN_CPU_NAME | LLVM CPU name ("" or host: this machine's) | "" | yes (as the target CPU) |
| ACLGEN_CPU_FEATURES | LLVM feature string (+avx2,-avx512f,...) | "" | yes (as the target features) |
| ACLGEN_THREADS | int 0 to 1024 (0 = all cores) | 0 | no (a launch parameter) |
| ACLGEN_SOC_VERSION | str | Ascend910B | no |
| ACLGEN_CACHE_DIR | path | $XDG_CACHE_HOME/aclgen or ~/.cache/aclgen | no (where the cache lives) |
| ACLGEN_ALWAYS_COMPILE | 0/1 | 0 | no (1: never read the on-disk cache; entries are still written) |
| ACLGEN_DEBUG | 0/1 | 0 | no (1: the CLI shows Python tracebacks instead of one-line errors) |

ACLGEN_CPU_NAME and ACLGEN_CPU_FEATURES follow numba's NUMBA_CPU_NAME and NUMBA_CPU_FEATURES:
the CPU kernels are generated for (an LLVM name: haswell, skylake-avx512, znver4, x86-64-v3,
generic; "host" or unset: this machine) and an LLVM feature string applied on top of that CPU's
own features (unset: this machine's features when the CPU is the host's, else the named CPU's own,
as LLVM models it; numba would keep the host's). Kernels for a target whose features this machine
lacks can be compiled and printed (`aclgen compile --emit asm`) but are refused when run
(aclgen/codegen/target.py).

The cache key also holds what no knob sets: the formula's bytecode, dtypes, rank, layouts,
parameter types, the target's triple/CPU/features (above), a hash of aclgen's own sources and the xdsl and
llvmlite versions (aclgen/cache.py).

A value outside its range is a `KnobError` naming the variable and the range: the CLI prints it
as a one-line error, an aclnn call answers it with a status code and that message
(aclgen/runtime/soc.py). The bounds keep a setting from turning into a hang: a vector step of 4096
lanes took 11 s to compile one GELU kernel, and every thread of ACLGEN_THREADS is a thread of
the native pool.

`knobs()` is cheap: the parsed settings are kept and re-read only when one of the variables
above changes (one dict lookup per variable), so hot paths may call it freely.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, fields

FMA_MODES = ("auto", "on", "off")  # ACLGEN_FMA and the compile option fma: the target's, fused, unfused
MAX_WIDTH = 256  # lanes of one vector step
MAX_TILE = 2**62  # an i64 loop bound; "one tile" builds (aclgen run's reference) ask for 2^40
MAX_THREADS = 1024
WIDTH_RULE = f"0 or a power of two up to {MAX_WIDTH}"  # the setting's, the compile option's and the pass option's
TILE_RULE = f"0 or a number of elements up to {MAX_TILE}"


def width_ok(w: int) -> bool:
    return 0 <= w <= MAX_WIDTH and not w & (w - 1)


def tile_ok(t: int) -> bool:
    return 0 <= t <= MAX_TILE


NAMES = (
    "ACLGEN_TILE_SIZE",
    "ACLGEN_VECTOR_WIDTH",
    "ACLGEN_FMA",
    "ACLGEN_OPT_LEVEL",
    "ACLGEN_CPU_NAME",
    "ACLGEN_CPU_FEATURES",
    "ACLGEN_THREADS",
    "ACLGEN_SOC_VERSION",
    "ACLGEN_CACHE_DIR",
    "ACLGEN_ALWAYS_COMPILE",
    "XDG_CACHE_HOME",  # the default cache directory follows it
)

# CPython's os.environ keeps a dict of encoded names; looking names up there directly skips
# os.environ's per-call encoding (a microsecond a variable). Elsewhere: plain os.environ.
_env_data = getattr(os.environ, "_data", None)
_env_keys = tuple(os.environ.encodekey(k) for k in NAMES) if _env_data is not None else NAMES
_CPU_KEYS = _env_keys[NAMES.index("ACLGEN_CPU_NAME") : NAMES.index("ACLGEN_CPU_FEATURES") + 1]


class KnobError(ValueError):
    """An ACLGEN_* variable's value is not one it takes (the message names both)."""


def _env(name: str, default, cast):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return cast(raw)
    except ValueError:
        raise KnobError(f"{name}={raw!r} is not a valid {cast.__name__}") from None


def _require(name: str, value, ok: bool, rule: str) -> None:
    if not ok:
        raise KnobError(f"{name}={os.environ.get(name, value)!r}: {rule}")


def _flag(raw: str) -> bool:
    if raw.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if raw.strip().lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)


_flag.__name__ = "flag (0/1)"


def default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "aclgen")


@dataclass(frozen=True)
class Knobs:
    tile_size: int
    vector_width: int
    fma: str
    opt_level: int
    cpu_name: str
    cpu_features: str
    threads: int
    soc_version: str
    cache_dir: str
    always_compile: bool

    @staticmethod
    def from_env() -> Knobs:
        k = Knobs(
            tile_size=_env("ACLGEN_TILE_SIZE", 0, int),
            vector_width=_env("ACLGEN_VECTOR_WIDTH", 0, int),
            fma=_env("ACLGEN_FMA", "auto", str),
            opt_level=_env("ACLGEN_OPT_LEVEL", 3, int),
            cpu_name=_env("ACLGEN_CPU_NAME", "", str).strip(),
            cpu_features=_env("ACLGEN_CPU_FEATURES", "", str).strip(),
            threads=_env("ACLGEN_THREADS", 0, int),
            soc_version=_env("ACLGEN_SOC_VERSION", "Ascend910B", str),
            cache_dir=_env("ACLGEN_CACHE_DIR", "", str) or default_cache_dir(),
            always_compile=_env("ACLGEN_ALWAYS_COMPILE", False, _flag),
        )
        _require("ACLGEN_TILE_SIZE", k.tile_size, tile_ok(k.tile_size), f"must be {TILE_RULE} (0: the schedule's)")
        _require("ACLGEN_VECTOR_WIDTH", k.vector_width, width_ok(k.vector_width),
                 f"must be {WIDTH_RULE} (0: the schedule's)")
        _require("ACLGEN_FMA", k.fma, k.fma in FMA_MODES, f"must be one of {', '.join(FMA_MODES)}")
        _require("ACLGEN_OPT_LEVEL", k.opt_level, 0 <= k.opt_level <= 3, "must be 0, 1, 2 or 3")
        _require("ACLGEN_THREADS", k.threads, 0 <= k.threads <= MAX_THREADS,
                 f"must be 0 (every core) or a number of threads up to {MAX_THREADS}")
        return k

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def debug() -> bool:
    """ACLGEN_DEBUG: the CLI re-raises errors (tracebacks) instead of printing one line. Read on
    its own, so that it works even while another ACLGEN_* variable is invalid."""
    return os.environ.get("ACLGEN_DEBUG", "") not in ("", "0")


def cpu_target() -> tuple[str, str]:
    """(ACLGEN_CPU_NAME, ACLGEN_CPU_FEATURES), stripped ("" when unset). Read on their own, like
    `debug`: code generation for the glue and the target's validation (aclgen/codegen/target.py)
    must not fail because another ACLGEN_* variable is invalid."""
    d = _env_data if _env_data is not None else os.environ
    name, feats = d.get(_CPU_KEYS[0]), d.get(_CPU_KEYS[1])
    if name is None and feats is None:  # the common case: two dict lookups
        return "", ""
    return (os.environ.get("ACLGEN_CPU_NAME") or "").strip(), (os.environ.get("ACLGEN_CPU_FEATURES") or "").strip()


def environ_keys(names) -> tuple[dict, list] | None:
    """(os.environ's own dict, its keys for `names`), for code that watches the variables
    without os.environ's per-lookup encoding; None where that dict is not available."""
    if _env_data is None:
        return None
    return _env_data, [os.environ.encodekey(n) for n in names]


def fingerprint() -> tuple:
    """The raw values of every variable a setting comes from: equal tuples, equal settings."""
    d = _env_data if _env_data is not None else os.environ
    return tuple(map(d.get, _env_keys))


_lock = threading.Lock()
_cached: tuple[tuple, Knobs] | None = None


def knobs() -> Knobs:
    """The current settings (raises KnobError on an invalid value, every call until fixed)."""
    global _cached
    fp = fingerprint()
    c = _cached
    if c is not None and c[0] == fp:
        return c[1]
    k = Knobs.from_env()
    with _lock:
        _cached = (fp, k)
    return k


@contextlib.contextmanager
def overridden(**values: str) -> Iterator[None]:
    """Temporarily set ACLGEN_* variables (settings follow the environment at each call)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
