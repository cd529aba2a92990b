"""The SoC profile whose dtype lists the checks use, and the cached settings of the hot path.

Reading `os.environ` costs about a microsecond per variable here, a tenth of the whole budget of
a two-phase call, so settings are cached and re-derived only when one of the ACLGEN_* variables
they come from changes (`aclgen.knobs.fingerprint`: one dict lookup per variable).
"""

from __future__ import annotations

import os
import threading

from aclgen.declaration import DEFAULT_SOC, SOCS
from aclgen.kernel import Options
from aclgen.knobs import fingerprint, knobs


class Settings:
    """soc (profile name or an error text), kernel Options, thread count, and `generation`,
    which changes whenever the others do (plan caches key on it)."""

    __slots__ = ("generation", "options", "soc", "soc_error", "threads")

    def __init__(self, soc: str, soc_error: str | None, options: Options, threads: int, generation: int):
        self.soc, self.soc_error, self.options = soc, soc_error, options
        self.threads, self.generation = threads, generation


_lock = threading.Lock()
_override: str | None = None
_fingerprint: tuple | None = None
_settings: Settings | None = None
_generation = 0


def _read_fingerprint() -> tuple:
    return (fingerprint(), _override)


def _derive() -> Settings:
    global _generation
    _generation += 1
    try:
        k = knobs()
    except ValueError as exc:
        return Settings(_override or DEFAULT_SOC, str(exc), Options(), 1, _generation)
    name = _override or k.soc_version
    error = None
    if name not in SOCS:
        error = f"ACLGEN_SOC_VERSION={name!r} is not one of {', '.join(SOCS)}"
    options = Options.from_knobs()
    threads = k.threads
    if threads <= 0:
        threads = os.cpu_count() or 1
    return Settings(name, error, options, threads, _generation)


def settings() -> Settings:
    """The current settings; re-derived only when an ACLGEN_* variable or the override changed."""
    global _fingerprint, _settings
    fp = _read_fingerprint()
    if fp != _fingerprint:
        with _lock:
            if fp != _fingerprint:
                _settings = _derive()
                _fingerprint = fp
    assert _settings is not None  # set before _fingerprint, which is no longer None
    return _settings


_listeners: list = []


def on_settings_change(callback) -> None:
    """Call `callback()` whenever `set_soc_version` changes the profile (environment changes
    are seen through the fingerprint instead)."""
    _listeners.append(callback)


def set_soc_version(name: str | None) -> bool:
    """Choose the profile for this process (None: back to the environment). False if unknown."""
    global _override
    if name is not None and name not in SOCS:
        return False
    _override = name
    for callback in _listeners:
        callback()
    return True


def soc_name() -> str:
    return settings().soc
