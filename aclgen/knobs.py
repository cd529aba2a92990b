"""Every aclgen setting, typed, read from ACLGEN_* environment variables.

| variable | type | default | in the kernel cache key |
|---|---|---|---|
| ACLGEN_TILE_SIZE | int | 8192 | yes |
| ACLGEN_VECTOR_WIDTH | int (0 = host native) | 0 | yes |
| ACLGEN_FMA | auto/on/off | auto | yes |
| ACLGEN_OPT_LEVEL | int 0-3 | 3 | yes |
| ACLGEN_THREADS | int (0 = all cores) | 0 | no (a launch parameter) |
| ACLGEN_SOC_VERSION | str | Ascend910B | no |
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields


def _env(name: str, default, cast):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return cast(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a valid {cast.__name__}") from None


@dataclass(frozen=True)
class Knobs:
    tile_size: int
    vector_width: int
    fma: str
    opt_level: int
    threads: int
    soc_version: str

    @staticmethod
    def from_env() -> "Knobs":
        k = Knobs(
            tile_size=_env("ACLGEN_TILE_SIZE", 8192, int),
            vector_width=_env("ACLGEN_VECTOR_WIDTH", 0, int),
            fma=_env("ACLGEN_FMA", "auto", str),
            opt_level=_env("ACLGEN_OPT_LEVEL", 3, int),
            threads=_env("ACLGEN_THREADS", 0, int),
            soc_version=_env("ACLGEN_SOC_VERSION", "Ascend910B", str),
        )
        if k.tile_size < 1 or k.vector_width < 0 or not 0 <= k.opt_level <= 3 or k.fma not in ("auto", "on", "off"):
            raise ValueError(f"invalid ACLGEN_* setting: {k}")
        return k

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def knobs() -> Knobs:
    return Knobs.from_env()
