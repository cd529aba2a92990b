"""LLVM IR -> native code: O3 for the target CPU, one object file, loaded into MCJIT.

The target is `host()` (aclgen/codegen/target.py): this machine, or the CPU ACLGEN_CPU_NAME /
ACLGEN_CPU_FEATURES name. Loading an object into MCJIT only places and relocates it, so code for
any target may be loaded and printed; running it is the compile cache's decision (aclgen/cache.py).

The object file is what the compile cache stores: `load_object` turns it back into a callable
engine without LLVM's optimizer or code generator (and without xDSL).
"""

from __future__ import annotations

import ctypes
import functools
import re
import struct
import time
from dataclasses import dataclass, field

import llvmlite.binding as llvm

from aclgen.codegen.target import Host, host, new_target_machine


def optimize(module: llvm.ModuleRef, tm: llvm.TargetMachine, level: int = 3) -> None:
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    # Our passes already vectorized the column loop (its remainders are masked vector steps);
    # LLVM's vectorizers would only add runtime alias checks.
    pto.loop_vectorization = False
    pto.slp_vectorization = False
    # The vector width is our unroll (vectorize-elementwise picks it). LLVM's unroller left every
    # vector loop as it was and only multiplied the scalar peel and remainder loops of the time (8x, with a
    # prologue) and doubled the tile loop: 35-40% of LLVM's time (threshold f32 opt+codegen
    # 39 -> 20 ms, SwiGluGrad 59 -> 43 ms) for no measurable speed.
    pto.loop_unrolling = False
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(module, pb)


@dataclass
class NativeCode:
    """An MCJIT engine holding one object file; owns its target machine (MCJIT takes it).
    `module` is the optimized LLVM module when the code was compiled in this process."""

    engine: llvm.ExecutionEngine
    object_code: bytes
    module: llvm.ModuleRef | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    target: Host | None = None  # the CPU the code was generated for

    def address(self, name: str) -> int:
        addr = self.engine.get_function_address(name)
        if not addr:
            raise RuntimeError(f"kernel symbol {name} not found in the JIT module")
        return addr


_CALL = re.compile(r"^\s*(?:call|jmp)q?\s+\*?([A-Za-z_$][\w.$]*)(?:@\w+)?\s*$", re.M)


_PROCESS = ctypes.CDLL(None)  # dlsym over what the process has loaded, as MCJIT resolves

# Where the CPU has no F16C (generic x86-64, x86-64-v2, ACLGEN_CPU_FEATURES=-f16c), LLVM lowers
# fp16 conversions to the runtime calls __extendhfsf2 / __truncsfhf2: GCC >= 12's libgcc_s has
# them (round to nearest even, NaNs quieted, as vcvtps2ph). Made visible to MCJIT's resolver.
HALF_RUNTIME = ("__extendhfsf2", "__truncsfhf2")


@functools.cache
def _load_half_runtime() -> None:
    """Once, and only for code that calls them: finding the library costs milliseconds of a
    process's first call (ctypes.util runs ldconfig), which F16C machines never need."""
    try:
        libgcc = ctypes.CDLL("libgcc_s.so.1")
    except OSError:
        from ctypes import util

        try:
            libgcc = ctypes.CDLL(util.find_library("gcc_s") or "libgcc_s.so")
        except OSError:
            return  # then such code is refused by check_object / check_libcalls, never run
    for name in HALF_RUNTIME:
        if hasattr(libgcc, name) and not llvm.address_of_symbol(name):
            llvm.add_symbol(name, ctypes.cast(getattr(libgcc, name), ctypes.c_void_p).value)


def _resolvable(symbol: str) -> bool:
    if symbol in HALF_RUNTIME:
        _load_half_runtime()
    return bool(llvm.address_of_symbol(symbol)) or hasattr(_PROCESS, symbol)


def check_libcalls(asm: str) -> None:
    """Refuse code that calls a function this process cannot resolve.

    LLVM may lower an instruction to a runtime call (e.g. `__extendhfsf2` for fp16 without
    F16C); MCJIT aborts the whole process on an unresolved symbol, so check first.
    """
    missing = sorted({m for m in _CALL.findall(asm) if not _resolvable(m)})
    if missing:
        raise RuntimeError(f"generated code calls {', '.join(missing)}, which this process cannot resolve")


def undefined_symbols(obj: bytes) -> list[str] | None:
    """The undefined symbols of a 64-bit little-endian ELF object (None: not one)."""
    if len(obj) < 64 or obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return None
    try:
        shoff, = struct.unpack_from("<Q", obj, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + k * shentsize) for k in range(shnum)]
        names = []
        for sec in sections:
            if sec[1] != 2:  # SHT_SYMTAB
                continue
            off, size, link, entsize = sec[4], sec[5], sec[6], sec[9] or 24
            str_off = sections[link][4]
            for e in range(off, off + size, entsize):
                st_name, _info, _other, shndx = struct.unpack_from("<IBBH", obj, e)
                if shndx == 0 and st_name:
                    end = obj.index(b"\0", str_off + st_name)
                    names.append(obj[str_off + st_name : end].decode())
        return names
    except (struct.error, IndexError, ValueError, UnicodeDecodeError):
        return None


def check_object(obj: bytes) -> bool:
    """Refuse an object that needs a symbol this process cannot resolve (MCJIT would abort).
    False when the object's symbols cannot be read (not ELF): the caller checks the assembly."""
    undefined = undefined_symbols(obj)
    if undefined is None:
        return False
    missing = sorted({s for s in undefined if not _resolvable(s)})
    if missing:
        raise RuntimeError(f"generated code calls {', '.join(missing)}, which this process cannot resolve")
    return True


def optimized_module(llvm_ir: str, opt_level: int = 3) -> tuple[llvm.ModuleRef, llvm.TargetMachine]:
    """Parse, verify and optimize LLVM IR for the target; returns the module and its target machine."""
    target = host()
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    tm = new_target_machine(opt_level, target)
    mod.triple = target.triple
    mod.data_layout = str(tm.target_data)
    optimize(mod, tm, opt_level)
    return mod, tm


def load_object(obj: bytes, opt_level: int = 3, module: llvm.ModuleRef | None = None,
                seconds: dict[str, float] | None = None) -> NativeCode:
    """An engine holding object code made by `jit` (in this process or read from the cache) for
    the current target."""
    target = host()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), new_target_machine(opt_level, target))
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    return NativeCode(engine, obj, module, dict(seconds or {}), target)


def jit(llvm_ir: str, opt_level: int = 3) -> NativeCode:
    """LLVM IR -> optimized module -> one object file (code generation runs once) -> engine."""
    times = {}
    t = time.perf_counter()
    mod, tm = optimized_module(llvm_ir, opt_level)
    times["llvm-opt"] = time.perf_counter() - t
    t = time.perf_counter()
    obj = tm.emit_object(mod)
    times["codegen"] = time.perf_counter() - t
    t = time.perf_counter()
    if not check_object(obj):
        check_libcalls(tm.emit_assembly(mod))
    native = load_object(obj, opt_level, mod)
    times["mcjit"] = time.perf_counter() - t
    native.seconds = times
    return native
