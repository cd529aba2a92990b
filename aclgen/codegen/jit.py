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

from aclgen.codegen.target import Host, code_generator, host, new_target_machine


def optimize(module: llvm.ModuleRef, tm: llvm.TargetMachine, level: int = 3) -> None:
    """LLVM's function simplification pipeline at `level` over each kernel (the whole default
    pipeline at level 0, which is nothing but the always-inliner).

    A module of aclgen is one function calling only intrinsics, already vectorized: the default
    per-module pipeline's module passes (inliner, IPO, global opt) have nothing to do, and its
    late loop passes only reshuffle what codegen schedules anyway. Over the 183 kernels of every
    built-in operator in float32 and bfloat16 (AVX2, Zen 3), the simplification pipeline alone
    gave the same instructions for all 154 elementwise kernels, within +-1% of them for the 29
    row kernels (no time difference beyond the host's noise: LayerNorm, RmsNorm, Softmax,
    LogSoftmax, SoftmaxBackward at 4096 x 256 and 64 x 16384, interleaved in one process), and
    LLVM's optimizer took a third less time: 34 -> 22 ms a kernel on average (code generation
    the same, 45 ms)."""
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
    if level == 0:
        pb.getModulePassManager().run(module, pb)
        return
    fpm = pb.getFunctionPassManager()
    for fn in module.functions:
        if not fn.is_declaration:
            fpm.run(fn, pb)


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


def optimized_module(llvm_ir: str, opt_level: int = 3, target: Host | None = None
                     ) -> tuple[llvm.ModuleRef, llvm.TargetMachine]:
    """Parse, verify and optimize LLVM IR for `target` (default: `host()`); returns the module and
    its target machine."""
    target = target or host()
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


# x86-64 `mov r64, r64` (REX.W 89 /r, both operands registers), ROTATION times in a row
ROTATION = 10
_ROTATION = re.compile(rb"(?:[\x48\x49\x4c\x4d]\x89[\xc0-\xff]){%d}" % ROTATION)
NO_HOISTING = ("-disable-machine-licm",)


def rotates_registers(obj: bytes) -> bool:
    """Whether x86-64 object code `obj` moves ROTATION general registers one after another: the
    register allocator shifting a dozen of them by one to free one inside a loop (and back)."""
    text = b"".join(s.data() for s in llvm.ObjectFileRef.from_data(obj).sections() if s.is_text())
    return _ROTATION.search(text) is not None


def machine_code(mod: llvm.ModuleRef, tm: llvm.TargetMachine) -> tuple[bytes, tuple[str, ...]]:
    """The object code of `mod`, and the LLVM options it was generated with.

    MCJIT's large code model keeps each constant's 64-bit address in a general register, and
    LLVM's machine LICM hoists every one of them out of the loop (rematerializable, so it assumes
    the allocator will cope). A heavy body's dozen constants and the loop's pointers then outnumber
    x86's 15 registers, and the allocator frees one in mid-loop by moving a dozen registers
    along by one and back: 26 of SiluBackward bfloat16's 266 loop instructions on AVX2, with 43
    stack accesses. Where the code shows such a rotation (`rotates_registers`) it is generated
    again with machine LICM off: the addresses are then materialized where they are used, and
    that loop is 239 instructions with 20 stack accesses. The second code is kept if it does not
    rotate. Measured on Zen 3 (AVX2, 1M elements, two threads, both codes in one process,
    interleaved rounds, median time with the second / with the first): SiluBackward bfloat16
    0.91-0.92, Glu bfloat16 0.90-0.91, Swish bfloat16 0.87-0.88, SELU float32 0.90, CELU float16
    0.93, SwiGlu float16 0.89-0.94, FastGeluBackward 0.97, SwiGluGrad 0.97-0.98, Elu 0.97-1.02. For
    code without a rotation LICM pays (Mish float32 1.07 and GELU float32 1.03 without it), and
    runs of 6-8 moves were not worth a second code (LogSigmoid float32 1.09): hence ROTATION.
    A choice of schedule: the results' bits are the same either way."""
    with code_generator():
        obj = tm.emit_object(mod)
        if not host().is_x86 or not rotates_registers(obj):
            return obj, ()
        with code_generator(*NO_HOISTING):
            other = tm.emit_object(mod)
        return (obj, ()) if rotates_registers(other) else (other, NO_HOISTING)


def assembly(mod: llvm.ModuleRef, tm: llvm.TargetMachine) -> str:
    """The assembly of the code `machine_code` gives `mod`, with a first line naming the LLVM
    options it was generated with, if any."""
    with code_generator():
        _, options = machine_code(mod, tm)
        with code_generator(*options):
            text = tm.emit_assembly(mod)
    return f"# generated with {' '.join(options)} (aclgen/codegen/jit.py: machine_code)\n{text}" if options else text


def jit(llvm_ir: str, opt_level: int = 3) -> NativeCode:
    """LLVM IR -> optimized module -> one object file (`machine_code`) -> engine."""
    times = {}
    t = time.perf_counter()
    mod, tm = optimized_module(llvm_ir, opt_level)
    times["llvm-opt"] = time.perf_counter() - t
    t = time.perf_counter()
    obj, _ = machine_code(mod, tm)
    times["codegen"] = time.perf_counter() - t
    t = time.perf_counter()
    if not check_object(obj):
        check_libcalls(assembly(mod, tm))
    native = load_object(obj, opt_level, mod)
    times["mcjit"] = time.perf_counter() - t
    native.seconds = times
    return native
