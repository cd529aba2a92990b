"""The schedule a kernel variant compiles with: measured on this host by `aclgen tune`, else the model.

A schedule is what Options may change without changing a result bit: `width`, the elements one
vector step of the column loop takes (0: the model, vectorize-elementwise's `model_width`), and
`tile_size`, the elements of one tile (0: the model, MODEL_TILE). An explicit value
(ACLGEN_VECTOR_WIDTH, ACLGEN_TILE_SIZE, `aclgen compile --width`, Options(...)) is used as it is;
a 0 is filled by `choose` from the tuned schedules of the current target, when `aclgen tune`
measured that variant, and otherwise left to the model.

Tuned schedules live in the cache directory, one JSON file per target (ACLGEN_CPU_NAME and
ACLGEN_CPU_FEATURES included: a schedule measured for one ISA says nothing about another):

    schedules-<crc32 of the target key>.json
    {"target": "x86_64-unknown-linux-gnu/znver3/+avx2,...",
     "entries": {"swi_glu_grad/f32.f32.f32-f32.f32-r2-ccccc": {"width": 16, "tile_size": 0,
                 "formula": "<digest>", "us": {"64K": 31.2, "1M": 470.0}, "model_us": {...}}}}

Entries are keyed by operator and variant tag (and `/nt` for the streaming-store variant big
calls use); one whose formula digest differs from the operator's current formula is ignored.
An unreadable file is ignored with one warning: tuning only ever makes code faster, never fails.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import warnings
import zlib
from typing import Any

from aclgen.kernel import Options, Variant
from aclgen.knobs import knobs

_lock = threading.Lock()
_loaded: dict[str, tuple[int, dict[str, Any]]] = {}  # path -> (mtime_ns, entries)
_warned: set[str] = set()


def path(cache_dir: str | None = None) -> str:
    """The schedule file of the current target."""
    from aclgen.codegen.target import host

    digest = zlib.crc32(host().key.encode())  # the file names its target too: a collision reads as none
    return os.path.join(cache_dir or knobs().cache_dir, f"schedules-{digest:08x}.json")


def entry_key(name: str, variant: Variant, nontemporal: bool) -> str:
    return f"{name}/{variant.tag}" + ("/nt" if nontemporal else "")


def entries(file: str | None = None) -> dict[str, Any]:
    """The tuned entries of the current target ({} when none were measured), re-read when the
    file changes (another process ran `aclgen tune`)."""
    file = file or path()
    try:
        mtime = os.stat(file).st_mtime_ns
    except OSError:
        return {}
    with _lock:
        cached = _loaded.get(file)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        try:
            with open(file) as f:
                data = json.load(f)
            found = data["entries"]
            if not isinstance(found, dict):
                raise ValueError("entries is not an object")
            from aclgen.codegen.target import host

            if data.get("target") != host().key:
                found = {}  # another target's (the file name is a short hash of it)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            if file not in _warned:
                _warned.add(file)
                warnings.warn(f"aclgen: ignoring the tuned schedules in {file}: {exc}", RuntimeWarning, stacklevel=2)
            found = {}
        _loaded[file] = (mtime, found)
        return found


def tuned(name: str, digest: str, variant: Variant, nontemporal: bool) -> tuple[int, int] | None:
    """(width, tile_size) `aclgen tune` chose for this variant on this target (0: the model's),
    or None when it was not measured or its formula (`digest`, aclgen.cache.formula_digest) has
    changed since."""
    found = entries().get(entry_key(name, variant, nontemporal))
    if not isinstance(found, dict) or found.get("formula") != digest:
        return None
    width, tile = found.get("width"), found.get("tile_size")
    if not (isinstance(width, int) and isinstance(tile, int) and width >= 0 and tile >= 0):
        return None
    if width & (width - 1):
        return None
    return width, tile


def choose(name: str, digest: str, variant: Variant, options: Options) -> Options:
    """`options` with the schedule fields it leaves at 0 filled from the tuned schedules."""
    if options.width and options.tile_size:
        return options
    found = tuned(name, digest, variant, options.nontemporal)
    if found is None:
        return options
    width = options.width or found[0]
    tile = options.tile_size or found[1]
    if (width, tile) == (options.width, options.tile_size):
        return options
    return dataclasses.replace(options, width=width, tile_size=tile)


def save(updates: dict[str, dict[str, Any]], file: str | None = None) -> str:
    """Merge `updates` into the current target's schedule file (atomically); returns its path."""
    from aclgen.codegen.target import host

    file = file or path()
    os.makedirs(os.path.dirname(file), exist_ok=True)
    with _lock:
        try:
            with open(file) as f:
                data = json.load(f)
            if not isinstance(data.get("entries"), dict) or data.get("target") != host().key:
                raise ValueError
        except (OSError, ValueError, AttributeError):
            data = {"target": host().key, "entries": {}}
        data["entries"].update(updates)
        tmp = f"{file}.tmp-{os.getpid()}-{threading.get_ident()}"
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, file)
        _loaded.pop(file, None)
    return file


def forget(file: str | None = None) -> bool:
    """Delete the current target's tuned schedules; True when there were some."""
    file = file or path()
    with _lock:
        _loaded.pop(file, None)
        try:
            os.remove(file)
        except FileNotFoundError:
            return False
    return True
