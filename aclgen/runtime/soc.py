"""The SoC profile whose dtype lists the checks use, and the cached settings of the hot path.

Reading `os.environ` costs about a microsecond per variable here, a tenth of the whole budget of
a two-phase call, so settings are cached and re-derived only when one of the ACLGEN_* variables
they come from changes (compared through the environment's bytes mapping: one dict lookup each).
"""

from __future__ import annotations

import os
import threading

from aclgen.compiler import Options
from aclgen.ops.operator import DEFAULT_SOC, SOCS

_KEYS = ("ACLGEN_SOC_VERSION", "ACLGEN_TILE_SIZE", "ACLGEN_VECTOR_WIDTH", "ACLGEN_FMA",
         "ACLGEN_OPT_LEVEL", "ACLGEN_THREADS")
_env_data = getattr(os.environ, "_data", None)  # CPython's backing dict; None elsewhere
_env_keys = tuple(os.environ.encodekey(k) for k in _KEYS) if _env_data is not None else _KEYS


class Settings:
    """soc (profile name or an error text), kernel Options, thread count, and `generation`,
    which changes whenever the others do (plan caches key on it)."""

    __slots__ = ("soc", "soc_error", "options", "threads", "generation")

    def __init__(self, soc: str, soc_error: str | None, options: Options, threads: int, generation: int):
        self.soc, self.soc_error, self.options = soc, soc_error, options
        self.threads, self.generation = threads, generation


_lock = threading.Lock()
_override: str | None = None
_fingerprint: tuple | None = None
_settings: Settings | None = None
_generation = 0


def _read_fingerprint() -> tuple:
    d = _env_data if _env_data is not None else os.environ
    k = _env_keys
    return (d.get(k[0]), d.get(k[1]), d.get(k[2]), d.get(k[3]), d.get(k[4]), d.get(k[5]), _override)


def _derive() -> Settings:
    global _generation
    _generation += 1
    name = _override or os.environ.get("ACLGEN_SOC_VERSION") or DEFAULT_SOC
    error = None
    if name not in SOCS:
        error = f"ACLGEN_SOC_VERSION={name!r} is not one of {', '.join(SOCS)}"
    try:
        options = Options.from_knobs()
        threads = int(os.environ.get("ACLGEN_THREADS") or 0)
    except ValueError as exc:
        error = error or str(exc)
        options, threads = Options(), 1
    if threads <= 0:
        threads = os.cpu_count() or 1
    return Settings(name, error, options, threads, _generation)


def settings() -> Settings:
    """The current settings; re-derived only when an ACLGEN_* variable or the override changed."""
    global _fingerprint, _settings
    fp = _read_fingerprint()
    if fp == _fingerprint:
        return _settings
    with _lock:
        if fp != _fingerprint:
            _settings = _derive()
            _fingerprint = fp
    return _settings


def set_soc_version(name: str | None) -> bool:
    """Choose the profile for this process (None: back to the environment). False if unknown."""
    global _override
    if name is not None and name not in SOCS:
        return False
    _override = name
    return True


def soc_name() -> str:
    return settings().soc
