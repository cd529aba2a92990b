"""The host CPU as LLVM sees it: triple, CPU name, features and the vector width they give."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import llvmlite.binding as llvm


@functools.cache
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@dataclass(frozen=True)
class Host:
    triple: str
    cpu: str
    features: str  # LLVM feature string: "+avx2,+fma,-avx512f,..."

    def has(self, feature: str) -> bool:
        return f"+{feature}" in self.features.split(",")

    @property
    def f32_lanes(self) -> int:
        """Native vector width in f32 lanes."""
        if self.has("avx512f"):
            return 16
        if self.has("avx"):
            return 8
        return 4

    @property
    def key(self) -> str:
        return f"{self.triple}/{self.cpu}/{self.features}"


@functools.cache
def host() -> Host:
    _init()
    feats = llvm.get_host_cpu_features()
    return Host(llvm.get_process_triple(), llvm.get_host_cpu_name(), feats.flatten())


@functools.cache
def target_machine(opt: int = 3) -> llvm.TargetMachine:
    """A target machine for the host (one per process; engines get their own, see jit.py)."""
    h = host()
    return llvm.Target.from_triple(h.triple).create_target_machine(
        cpu=h.cpu, features=h.features, opt=opt, reloc="default", codemodel="jitdefault"
    )


def new_target_machine(opt: int = 3) -> llvm.TargetMachine:
    h = host()
    _init()
    return llvm.Target.from_triple(h.triple).create_target_machine(
        cpu=h.cpu, features=h.features, opt=opt, reloc="default", codemodel="jitdefault"
    )


@functools.cache
def last_level_cache_bytes() -> int:
    """Size of the host's largest data cache (L3 on this machine), from sysfs; 32 MiB if unknown.

    Above it, streaming stores pay: the output no longer fits in cache anyway, and bypassing it
    saves the read-for-ownership of every output line."""
    import glob

    best = 0
    for d in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            with open(f"{d}/type") as f:
                if f.read().strip() == "Instruction":
                    continue
            with open(f"{d}/size") as f:
                text = f.read().strip().upper()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            best = max(best, int(digits) * scale)
    return best or 32 << 20
