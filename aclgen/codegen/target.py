"""The CPU kernels are generated for, as LLVM sees it: triple, CPU name, features and the vector
width they give.

`real_host()` is this machine. `host()` is the target of generated kernels: this machine unless
ACLGEN_CPU_NAME / ACLGEN_CPU_FEATURES (aclgen/knobs.py) name another, numba's way
(NUMBA_CPU_NAME / NUMBA_CPU_FEATURES):

| ACLGEN_CPU_NAME | ACLGEN_CPU_FEATURES | LLVM cpu | LLVM features |
|---|---|---|---|
| unset, `host` or `native` | unset | this machine's | this machine's (LLVM's host detection) |
| a name (`haswell`) | unset | the name | "": LLVM's own model of that CPU |
| unset, `host` or `native` | `+avx2,-avx512f,...` | this machine's | the string, applied to that CPU's features |
| a name | a string | the name | the string, applied to the name's features |

One difference from numba: NUMBA_CPU_NAME=haswell alone keeps the host's feature string (AVX-512
code for a "haswell" on an AVX-512 machine); here a named CPU brings its own features, so
ACLGEN_CPU_NAME=haswell gives AVX2 code on any machine. `generic` is LLVM's baseline (x86-64:
SSE2) in both. As with LLVM's -mattr, a feature string edits the CPU's features: `-avx` removes
AVX and everything built on it (AVX2, FMA, AVX-512), a `+` adds; a name missing from the string
keeps the CPU's setting (ACLGEN_CPU_NAME=generic makes the string the whole set).

A named CPU's features. LLVM takes them from its CPU model when it builds a subtarget, and
llvmlite lists only the host's (`get_host_cpu_features`). `_probe` asks LLVM itself: for every
feature name of the host's list, a tiny function carrying `"target-features"="+F"` (on the
baseline CPU `generic`) is called from a function compiled for the target. LLVM's inliner inlines
a callee only when its features are a subset of the caller's (X86's `areInlineCompatible`), so the
calls left after the O1 pipeline name exactly the features the target lacks: ~40 ms, once per
target and process. The result is the target's `flags`, which `has()` and `f32_lanes` read
(vectorize-elementwise's width, expand-math's FMA choice): the model sees what LLVM will use.

Names are checked before LLVM sees them: an unknown CPU name, or on x86-64 a 32-bit-only one, or
a feature string that turns off x86-64's baseline, makes LLVM end the process ("LLVM ERROR:
64-bit code requested on a subtarget that doesn't support it!") when it first generates code. The
known names are what LLVM prints for the CPU name `help` (read once, from its stderr).

Running. A kernel may use every feature of its target, so `missing` lists the target's features
this machine lacks (minus `NEVER_EMITTED`: system and intrinsic-only instructions LLVM never
selects for a kernel, and which virtual machines often hide: this VM hides znver3's mwaitx and
rdpru). `check_runnable` raises UnsupportedTarget for such a target. Every kernel that runs comes
from the compile cache (aclgen/cache.py), which calls it; compiling and printing code for any
target (`aclgen compile --emit asm`, aclgen.compiler) does not, and never runs the code.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import llvmlite.binding as llvm

from aclgen.kernel import CompileError
from aclgen.knobs import cpu_target

# ACLGEN_CPU_NAME values meaning this machine (numba's AOT "host"; llc's "native").
HOST_NAMES = ("host", "native")

# Instruction sets LLVM emits only for their own intrinsics (privileged, system, TSX, crypto
# key locker...), never for kernel arithmetic: a target may have them where this machine (or its
# VM) does not, and its kernels still run here.
NEVER_EMITTED = frozenset({
    "cldemote", "clflushopt", "clwb", "clzero", "enqcmd", "fsgsbase", "hreset", "invpcid", "kl",
    "lwp", "movdir64b", "movdiri", "mwaitx", "pconfig", "pku", "prefetchi", "ptwrite", "rdpid",
    "rdpru", "rdrnd", "rdseed", "rtm", "serialize", "sgx", "shstk", "tsxldtrk", "uintr", "usermsr",
    "waitpkg", "wbnoinvd", "widekl", "xsave", "xsavec", "xsaveopt", "xsaves",
})

# x86 CPUs LLVM knows without 64-bit mode (LLVM 22; each ends the process on an x86-64 triple).
# Every x86 CPU newer than these has it.
X86_32BIT_ONLY = frozenset({
    "athlon", "athlon-4", "athlon-mp", "athlon-tbird", "athlon-xp", "c3", "c3-2", "geode", "i386",
    "i486", "i586", "i686", "k6", "k6-2", "k6-3", "lakemont", "pentium", "pentium-m", "pentium-mmx",
    "pentium2", "pentium3", "pentium3m", "pentium4", "pentium4m", "pentium_4", "pentium_4_sse3",
    "pentium_ii", "pentium_iii", "pentium_iii_no_xmm_regs", "pentium_m", "pentium_mmx",
    "pentium_pro", "pentiumpro", "prescott", "winchip-c6", "winchip2", "yonah",
})
# Features x86-64 code cannot do without, and the mode bits the triple sets.
X86_64_BASELINE = ("64bit", "sse", "sse2")
X86_MODES = ("16bit-mode", "32bit-mode", "64bit-mode")


class BadTarget(CompileError, ValueError):
    """ACLGEN_CPU_NAME / ACLGEN_CPU_FEATURES name a CPU or a feature LLVM does not know, or one
    that LLVM cannot generate code for on this machine's triple."""


class UnsupportedTarget(CompileError):
    """Kernels for the target ACLGEN_CPU_NAME / ACLGEN_CPU_FEATURES name would use instructions
    this machine lacks (they could be compiled and printed, not run)."""


@functools.cache
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


_CODEGEN = threading.RLock()


@contextlib.contextmanager
def code_generator(*options: str) -> Iterator[None]:
    """Hold LLVM's code generator for the body, with LLVM command-line `options` ("-name", set to
    true) in force. LLVM's options are process-wide, so every generation of machine code
    (kernels, the runtime's glue) runs under this lock, and an option set here is unset before
    another thread generates code."""
    with _CODEGEN:
        for o in options:
            llvm.set_option("aclgen", f"{o}=true")
        try:
            yield
        finally:
            for o in options:
                llvm.set_option("aclgen", f"{o}=false")


@dataclass(frozen=True)
class Host:
    triple: str
    cpu: str
    features: str  # the LLVM feature string given with the CPU: "+avx2,+fma,-avx512f,..." ("": the CPU's own)
    flags: frozenset[str] = frozenset()  # the features LLVM enables for this CPU and string
    override: str = ""  # "" for this machine; else the setting that named it ("ACLGEN_CPU_NAME=haswell")
    missing: tuple[str, ...] = ()  # features of the target this machine lacks (see NEVER_EMITTED)

    def has(self, feature: str) -> bool:
        return feature in self.flags

    @property
    def f32_lanes(self) -> int:
        """Native vector width in f32 lanes."""
        if self.has("avx512f"):
            return 16
        if self.has("avx"):
            return 8
        return 4

    @property
    def is_x86(self) -> bool:
        return self.triple.startswith(("x86_64", "i686"))

    @functools.cached_property
    def key(self) -> str:
        """What the compile cache keys on (in memory on every kernel lookup: made once)."""
        return f"{self.triple}/{self.cpu}/{self.features}"

    @property
    def explicit_features(self) -> str:
        """Every feature of the host's list as +name/-name: the exact feature set as one string
        (what NUMBA_CPU_FEATURES needs for numba to generate code for this target)."""
        return ",".join(("+" if n in self.flags else "-") + n for n in _feature_names())

    def check_runnable(self) -> None:
        """Raise UnsupportedTarget when kernels for this target may use instructions this machine lacks."""
        if self.missing:
            real = real_host()
            raise UnsupportedTarget(
                f"kernels for {self.override} (LLVM cpu {self.cpu}) may use {', '.join(self.missing)}, which this "
                f"machine ({real.cpu}) lacks: running them would stop the process (SIGILL). Compiling and printing "
                "them works (aclgen compile OP --emit asm); unset ACLGEN_CPU_NAME/ACLGEN_CPU_FEATURES (or name a "
                "CPU this machine can run) to run kernels here"
            )


@functools.cache
def real_host() -> Host:
    """This machine, as LLVM's host detection sees it."""
    _init()
    feats = llvm.get_host_cpu_features()
    flags = frozenset(k for k, v in feats.items() if v)
    return Host(llvm.get_process_triple(), llvm.get_host_cpu_name(), feats.flatten(), flags)


@functools.cache
def _feature_names() -> tuple[str, ...]:
    """The feature names LLVM's host detection reports on (enabled or not): the ones compared."""
    _init()
    return tuple(sorted(llvm.get_host_cpu_features()))


def host() -> Host:
    """The target of generated kernels: this machine, or what ACLGEN_CPU_NAME / ACLGEN_CPU_FEATURES
    name (raises BadTarget, a ValueError, for a name or feature LLVM does not know)."""
    return named(*cpu_target())


def named(cpu: str, features: str = "") -> Host:
    """The target ACLGEN_CPU_NAME=cpu ACLGEN_CPU_FEATURES=features would give, whatever they are now."""
    if not features and (not cpu or cpu.lower() in HOST_NAMES):
        return real_host()
    return _target(cpu, features)


@functools.cache
def _target(name: str, features: str) -> Host:
    real = real_host()
    named = bool(name) and name.lower() not in HOST_NAMES
    cpu = name if named else real.cpu
    cpus, known = _catalog()
    x86_64 = real.triple.startswith("x86_64")
    if named and (cpu not in cpus or (x86_64 and cpu in X86_32BIT_ONLY)):
        why = "a 32-bit CPU" if cpu in cpus else "not a CPU LLVM knows"
        near = sorted(c for c in cpus if c[:3].lower() == cpu[:3].lower() and c not in X86_32BIT_ONLY)[:12]
        hint = f" (LLVM knows e.g. {', '.join(near)})" if near else ""
        raise BadTarget(f"ACLGEN_CPU_NAME={name!r} is {why} for {real.triple}{hint}")
    if features:
        for item in (f.strip() for f in features.split(",")):
            flag = item[1:]
            if item[:1] not in ("+", "-") or flag not in known:
                raise BadTarget(f"ACLGEN_CPU_FEATURES: {item!r} is not +feature or -feature with a feature LLVM "
                                 f"knows for {real.triple} (e.g. +avx2,+fma,-avx512f)")
            if x86_64 and (flag in X86_MODES or (item[0] == "-" and flag in X86_64_BASELINE)):
                raise BadTarget(f"ACLGEN_CPU_FEATURES: {item!r}: x86-64 code needs {', '.join(X86_64_BASELINE)} "
                                 "and the triple's mode")
    elif not named:
        features = real.features
    flags = _probe(real.triple, cpu, features)
    setting = " ".join(f"{k}={v}" for k, v in (("ACLGEN_CPU_NAME", name), ("ACLGEN_CPU_FEATURES", features)) if v)
    missing = tuple(sorted(flags - real.flags - NEVER_EMITTED))
    return Host(real.triple, cpu, features, flags, setting, missing)


@functools.cache
def _catalog() -> tuple[frozenset[str], frozenset[str]]:
    """(CPU names, feature names) LLVM knows for this machine's target: the lists LLVM prints to
    stderr when asked for the CPU "help", captured here. (While it prints, another thread's
    writes to stderr would land in the capture too: this runs once, when a target is named.)"""
    _init()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        try:
            os.dup2(out.fileno(), 2)
            llvm.Target.from_triple(real_host().triple).create_target_machine(cpu="help")
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode(errors="replace")
    lists: list[set[str]] = []
    for line in text.splitlines():
        if line.startswith("Available "):
            lists.append(set())
        elif lists and (m := re.match(r"^\s+(\S+)\s+- ", line)):
            lists[-1].add(m.group(1))
    if len(lists) < 2 or not lists[0]:
        raise BadTarget("cannot read LLVM's list of CPUs to check ACLGEN_CPU_NAME / ACLGEN_CPU_FEATURES")
    return frozenset(lists[0]), frozenset(lists[1])


def _probe(triple: str, cpu: str, features: str) -> frozenset[str]:
    """The features LLVM enables for `cpu` with `features` (see the module's docstring)."""
    names = _feature_names()
    lines = [f'target triple = "{triple}"']
    for i, n in enumerate(names):
        lines += [f"define internal void @f{i}(ptr %p) #{i} {{", f"  store volatile i32 {i}, ptr %p", "  ret void", "}",
                  f'attributes #{i} = {{ "target-cpu"="generic" "target-features"="+{n}" }}']
    lines += ["define void @probe(ptr %p) {", *(f"  call void @f{i}(ptr %p)" for i in range(len(names))), "  ret void", "}"]
    mod = llvm.parse_assembly("\n".join(lines))
    tm = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features, opt=1)
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=1))
    pb.getModulePassManager().run(mod, pb)
    left = {int(i) for i in re.findall(r"call[^@\n]*@f(\d+)\(", str(mod.get_function("probe")))}
    return frozenset(n for i, n in enumerate(names) if i not in left)


@functools.cache
def target_machine(opt: int = 3) -> llvm.TargetMachine:
    """A target machine for this machine (one per process; engines get their own, see jit.py)."""
    return new_target_machine(opt)


def new_target_machine(opt: int = 3, target: Host | None = None) -> llvm.TargetMachine:
    """A new target machine for `target`, by default this machine (the runtime's own glue,
    aclgen/codegen/native.py, always runs here); kernels pass `host()`."""
    h = target or real_host()
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
