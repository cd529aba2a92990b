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
