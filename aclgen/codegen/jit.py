"""LLVM IR -> native code: O3 for the host CPU, MCJIT, and the kernel handle that owns it all."""

from __future__ import annotations

import ctypes
import re
import time
from dataclasses import dataclass, field

import llvmlite.binding as llvm

from aclgen.codegen.target import host, new_target_machine


def optimize(module: llvm.ModuleRef, tm: llvm.TargetMachine, level: int = 3) -> None:
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    # Our passes already vectorized the column loop; LLVM's vectorizers would only re-vectorize
    # the short scalar tail behind runtime alias checks.
    pto.loop_vectorization = False
    pto.slp_vectorization = False
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(module, pb)


@dataclass
class NativeCode:
    """An MCJIT engine with one finalized module; owns its target machine (MCJIT takes it)."""

    engine: llvm.ExecutionEngine
    module: llvm.ModuleRef
    optimized_ir: str
    asm: str
    seconds: dict[str, float] = field(default_factory=dict)

    def address(self, name: str) -> int:
        addr = self.engine.get_function_address(name)
        if not addr:
            raise RuntimeError(f"kernel symbol {name} not found in the JIT module")
        return addr


_CALL = re.compile(r"^\s*(?:call|jmp)q?\s+\*?([A-Za-z_$][\w.$]*)(?:@\w+)?\s*$", re.M)


_PROCESS = ctypes.CDLL(None)  # dlsym over what the process has loaded, as MCJIT resolves


def _resolvable(symbol: str) -> bool:
    return bool(llvm.address_of_symbol(symbol)) or hasattr(_PROCESS, symbol)


def check_libcalls(asm: str) -> None:
    """Refuse code that calls a function this process cannot resolve.

    LLVM may lower an instruction to a runtime call (e.g. `__extendhfsf2` for fp16 without
    F16C); MCJIT aborts the whole process on an unresolved symbol, so check first.
    """
    missing = sorted({m for m in _CALL.findall(asm) if not _resolvable(m)})
    if missing:
        raise RuntimeError(f"generated code calls {', '.join(missing)}, which this process cannot resolve")


def jit(llvm_ir: str, opt_level: int = 3) -> NativeCode:
    times = {}
    t = time.perf_counter()
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    tm = new_target_machine(opt_level)
    mod.triple = host().triple
    mod.data_layout = str(tm.target_data)
    optimize(mod, tm, opt_level)
    times["llvm-opt"] = time.perf_counter() - t
    t = time.perf_counter()
    asm = tm.emit_assembly(mod)
    check_libcalls(asm)
    engine = llvm.create_mcjit_compiler(mod, new_target_machine(opt_level))
    engine.finalize_object()
    times["mcjit"] = time.perf_counter() - t
    return NativeCode(engine, mod, str(mod), asm, times)




def kernel_cfunc(n_pointers: int):
    """The ctypes prototype of `void k(ptr x n, ptr meta, i64 begin, i64 end)`."""
    return ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * (n_pointers + 1)), ctypes.c_int64, ctypes.c_int64)
