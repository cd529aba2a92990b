"""Codegen properties: vector code, alignment on every access, noalias, no libcalls."""

import itertools
import re

import llvmlite.binding as llvm
import numpy as np
import pytest

import aclgen
from aclgen import dtypes as dt
from aclgen.codegen import jit, native
from aclgen.codegen.jit import check_libcalls
from aclgen.codegen.native import aligned_empty
from aclgen.codegen.target import code_generator, host, new_target_machine
from aclgen.compiler import Options, Variant, compile_variant
from aclgen.knobs import overridden
from aclgen.ops import OPERATORS
from tests.kernels import kernel, meta_for

W = host().f32_lanes


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_every_load_and_store_has_explicit_alignment(dtype):
    ir = kernel("hardswish_backward", dtype).ir["llvm-ir"]
    accesses = [line for line in ir.splitlines() if re.search(r"= load |\bstore ", line)]
    assert accesses
    size = dt.dtype(dtype).itemsize
    for line in accesses:
        m = re.search(r"align (\d+)", line)
        assert m, f"no explicit alignment: {line}"
        assert int(m.group(1)) >= min(size, 4), line  # element size, 8 for the launch record
    # the peeled output's vector stores are aligned to one register (the vector, the model's
    # width, spans two: vectorize_elementwise.model_width)
    assert re.search(rf"store <\d+ x \w+> .*align {4 * W}\b", ir)


def test_vector_width_compare_and_select():
    ir = kernel("hardswish_backward", "float32").ir["llvm"]
    lanes = 2 * W  # vectorize_elementwise.model_width
    assert f"<{lanes} x float>" in ir
    assert re.search(rf"fcmp \w+ <{lanes} x float>", ir) and re.search(rf"select <{lanes} x i1>", ir)


@pytest.mark.skipif(not host().triple.startswith("x86_64"), reason="x86-64 CPU names")
def test_vector_width_follows_the_target_cpu():
    """ACLGEN_CPU_NAME sets the f32 lanes vectorize-elementwise widens (twice them here), and each
    target is its own kernel in memory (aclgen/cache.py's key holds it)."""
    from aclgen.codegen.target import named
    from aclgen.knobs import overridden

    widths = {}
    for cpu in ("generic", "haswell"):
        if named(cpu).missing:
            continue
        with overridden(ACLGEN_CPU_NAME=cpu):
            k = kernel("hardswish_backward", "float32")
            widths[cpu] = k
            assert f"<{2 * named(cpu).f32_lanes} x float>" in k.ir["llvm"], cpu
            assert k.native.target is named(cpu)
    if "generic" in widths:
        assert "ymm" not in widths["generic"].asm and "xmm" in widths["generic"].asm
    if "haswell" in widths:
        assert "ymm" in widths["haswell"].asm and "zmm" not in widths["haswell"].asm
    assert kernel("hardswish_backward", "float32").native.target is host()  # the override ended
    assert len({id(k) for k in widths.values()}) == len(widths)


def test_noalias_variant():
    assert "noalias" in kernel("threshold_backward", "float32", noalias=True).ir["llvm-ir"]
    assert "noalias" not in kernel("threshold_backward", "float32").ir["llvm-ir"]


def test_strided_and_broadcast_variants_compile_to_vector_code():
    k = kernel("softshrink_backward", "float16", ("strided", "broadcast", "contiguous"), rank=3)
    assert "tile.splat" in k.ir["vectorize-elementwise"]
    lanes = 2 * W  # all-f16 memory: twice the f32 lanes (vectorize_elementwise.model_width)
    assert f"<{lanes} x half>" in k.ir["llvm"] or f"<{lanes} x float>" in k.ir["llvm"]


def test_bf16_rounds_with_integer_ops_not_libcalls():
    asm = kernel("selu_backward", "bfloat16").asm
    assert "__truncsfbf2" not in asm and "__extendbfsf2" not in asm


def test_unresolvable_libcall_is_refused():
    with pytest.raises(RuntimeError, match="__no_such_fn"):
        check_libcalls("\tcall\t__no_such_fn@PLT\n")
    check_libcalls("\tcall\tmemcpy@PLT\n\tjmp\t.LBB0_2\n")


def test_width_and_tile_options_change_code_not_results():
    g = np.linspace(-5, 5, 1001, dtype=np.float32)
    x = np.linspace(-4, 4, 1001, dtype=np.float32)[::-1].copy()
    f = lambda g, x: aclgen.select(x < -3.0, 0.0, aclgen.select(x <= 3.0, x * aclgen.f32(1 / 3) + 0.5, 1.0)) * g
    results = [aclgen.compile(f, width=w, tile_size=t)(g, x) for w, t in [(1, 7), (4, 64), (8, 8192), (16, 100)]]
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


@pytest.mark.parametrize("width", [1, 4, 8, 16])
@pytest.mark.parametrize("misalign", [0, 1, 3])
def test_peeling_and_streaming_stores_on_misaligned_outputs(width, misalign):
    """Outputs starting at any element offset, odd lengths: peel + vector + tail stay exact."""
    from aclgen.passes import pipeline

    spec = pipeline.spec(pipeline.passes(Options(width=width, nontemporal=True), host()))
    assert "nontemporal=true" in spec and f"width={width}" in spec
    f = aclgen.compile(lambda g, x: aclgen.select(x <= 0.5, 0.0, g), width=width)
    for n in (1, 5, 31, 1000):
        g = np.arange(n + misalign, dtype=np.float32)[misalign:]
        x = np.linspace(-1, 1, n).astype(np.float32)
        buf = np.full(n + 8, -7.0, np.float32)
        out = buf[misalign : misalign + n]
        f(g, x, out=out)
        np.testing.assert_array_equal(out, np.where(x <= 0.5, 0, g))
        assert (buf[:misalign] == -7).all() and (buf[misalign + n :] == -7).all()


def test_nontemporal_variant_emits_streaming_stores_and_a_fence():
    k = kernel("threshold_backward", "float32", nontemporal=True)
    assert "!nontemporal" in k.ir["llvm"]
    assert "vmovntps" in k.asm and "sfence" in k.asm


@pytest.mark.parametrize("width", [1, 8])
@pytest.mark.parametrize("out", ["int8", "uint8", "int32"])
def test_float_to_int_stores_round_to_even_and_saturate(width, out):
    f = aclgen.compile(lambda x: x * 1.0, dtypes="float32", out_dtypes=out, width=width)
    x = np.array([0.5, 1.5, 2.5, -2.5, -0.5, 127.5, 128.0, -128.5, -129.0, 255.5, 256.0, -1.0,
                  2147483520.0, 2147483648.0, -2147483648.0, -3e9, 3e9, np.inf, -np.inf, np.nan, 1e-45, -0.0],
                 np.float32)
    info = np.iinfo(out)
    want = np.clip(np.rint(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf)),
                   info.min, info.max).astype(out)
    np.testing.assert_array_equal(f(x), want)


def test_streaming_stores_only_for_a_lone_output_stream():
    k = kernel("swi_glu_grad", "float32", nontemporal=True)
    assert "!nontemporal" not in k.ir["llvm"] and "vmovntps" not in k.asm


def test_a_pass_that_breaks_the_ir_is_named(monkeypatch):
    """The fast compile verifies nothing itself (LLVM checks the translated module); when it
    fails, the strict re-run with a verify after every pass names the pass that broke the IR."""
    from xdsl.dialects import llvm

    from aclgen.compiler import CompileError, compile_variant
    from aclgen.passes import pipeline
    from aclgen.passes.lower_to_llvm import LowerToLLVMPass

    class MismatchCompare(LowerToLLVMPass):  # lowers, then compares an i64 with a pointer: ill-typed
        def apply(self, ctx, module):
            super().apply(ctx, module)
            func = next(op for op in module.walk() if isinstance(op, llvm.FuncOp))
            cmp = next(op for op in module.walk() if isinstance(op, llvm.ICmpOp))
            cmp.operands[1] = func.body.blocks[0].args[0]

    monkeypatch.setitem(pipeline.PASSES, "lower-to-llvm", lambda: MismatchCompare)
    o = OPERATORS["threshold_backward"]
    d = dt.float32
    variant = Variant((d, d), (d,), 1, ("contiguous",) * 3)
    with pytest.raises(CompileError, match=r"in pass lower-to-llvm: the output does not verify"):
        compile_variant(o.formula, "broken", variant, o.params, o.kernel_arg_names, Options.from_knobs())


@pytest.mark.parametrize("kind, message", [("ew.exp", "ew.exp survived; run expand-math first"),
                                           ("arith.maximumf", "no lowering for arith.maximumf")])
def test_lower_to_llvm_names_an_op_it_cannot_lower(kind, message):
    """An op that no pattern lowers (and that is not LLVM's already) is an error naming it, and a
    formula function that an intrinsic does not serve says which pass should have expanded it."""
    from xdsl.context import Context
    from xdsl.dialects import arith, func
    from xdsl.dialects.builtin import ModuleOp, f32
    from xdsl.ir import Block, Region

    from aclgen.dialects import ew
    from aclgen.passes.lower_to_llvm import LowerToLLVMPass

    block = Block(arg_types=[f32])
    x = block.args[0]
    block.add_ops([ew.function_op("exp")(x) if kind == "ew.exp" else arith.MaximumfOp(x, x), func.ReturnOp()])
    module = ModuleOp([func.FuncOp("f", ([f32], []), Region(block))])
    with pytest.raises(ValueError, match=re.escape(message)):
        LowerToLLVMPass().apply(Context(), module)


@pytest.mark.skipif(not host().triple.startswith("x86_64"), reason="x86 vector stores")
def test_llvm_does_not_unroll_our_loops():
    """Our vector width is the unroll; LLVM's unroller would only multiply our loops (it cost
    35-40% of LLVM's time): the output is stored by the vector loop and by the masked store of
    a head or tail from its scratch vector, each a value of two registers, and nowhere else (the
    stores into the frame are the scratch vectors': two inputs' copies in)."""
    asm = kernel("threshold_backward", "float32").asm
    stores = re.findall(r"\bv(?:mov\w+\s+|maskmov\w+\s+%[xyz]mm\d+, )%[xyz]mm\d+, (-?\w*\(%r\w+)", asm)
    assert len([s for s in stores if not s.endswith("(%rsp")]) == 2 * 2, stores
    assert len([s for s in stores if s.endswith("(%rsp")]) == 2 * 2, stores


def test_vector_constants_of_one_value_are_splats():
    """LLVM IR writes a vector constant whose lanes have one bit pattern as `splat (T v)`, made
    from the attribute's bytes (formatting every lane of 32-lane kernels took a fifth of a cold
    compile): NaNs of one pattern too; lanes that differ only in sign keep the lanes' list."""
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, VectorType, f32

    from aclgen.codegen.llvm_ir import _vector_constant

    v4 = VectorType(f32, [4])

    def vec(*xs):
        return _vector_constant(v4, DenseIntOrFPElementsAttr.from_list(v4, list(xs)))

    assert vec(1.5, 1.5, 1.5, 1.5).get_reference() == "splat (float 0x3ff8000000000000)"
    assert str(vec(1.5, 1.5, 1.5, 1.5)) == "<4 x float> splat (float 0x3ff8000000000000)"
    assert vec(*(float("nan"),) * 4).get_reference() == "splat (float 0x7ff8000000000000)"
    for lanes in [(0.0, -0.0, 0.0, 0.0), (1.0, 2.0, 1.0, 1.0)]:
        assert "splat" not in vec(*lanes).get_reference(), lanes
    ir_text = kernel("hardswish_backward", "float32").ir["llvm-ir"]
    assert "splat (float" in ir_text and not re.search(r"<\d+ x float> <float", ir_text)


def _log2_of_exp(x):
    return aclgen.log2(aclgen.exp(x * 0.25) + x * x) + aclgen.rsqrt(x) + aclgen.exp2(x * 0.5)


@pytest.mark.parametrize("width", [1, 2, 4, 8, 32, 64])
@pytest.mark.parametrize("fma", ["on", "off"])
def test_avx512_instructions_serve_every_lane_count(width, fma):
    """`llvmx.avx512ps` becomes the x86 intrinsics on chunks of 16, 8 or 4 lanes (a scalar in a
    4-lane vector, 2 lanes padded to 4), and `llvmx.lookup` (exp2's table, without FMA) vpermps
    or a load by index: every vector width gives the 16-lane code's bits (on a host without
    AVX-512F, the integer forms, selects and 8-entry tables run at both widths)."""
    rng = np.random.default_rng(width)
    x = np.concatenate([np.float32([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 1e30, 88.0, -3.0]),
                        (rng.standard_normal(4099) * 30).astype(np.float32)])
    want = aclgen.compile(_log2_of_exp, name=f"avx512_w16_{fma}", width=16, fma=fma)(x)
    f = aclgen.compile(_log2_of_exp, name=f"avx512_w{width}_{fma}", width=width, fma=fma)
    np.testing.assert_array_equal(f(x).view(np.uint32), want.view(np.uint32))
    if host().is_x86 and host().has("avx512f"):
        assert "llvm.x86.avx512.mask.scalef" in f.ir["llvm"] and "vgetmantps" in f.asm
        assert "llvm.x86.avx512.mask.fixupimm" in f.ir["llvm"] and "vfixupimmps" in f.asm
        assert ("vrsqrt14ps" in f.asm) == (fma == "on")
        assert width < 8 or ("vpermps" in f.asm) == (fma == "off")


def test_lookup_is_a_permute_on_x86_and_verifies_its_operands():
    """exp2's table of 8 (its form without FMA) is one vpermps a vector with AVX2 and AVX-512
    (`llvmx.lookup`) and a tree of selects without a vector permute (SSE2: `generic`), the same
    values; the op takes 8 or 16 f32 entries and i32 keys."""
    from xdsl.dialects.builtin import VectorType, f32, i32
    from xdsl.dialects.test import TestOp
    from xdsl.utils.exceptions import VerifyException

    from aclgen.dialects.llvmx import LookupOp

    if not host().is_x86:
        pytest.skip("haswell names an x86-64 CPU: this machine cannot run its code")
    x = np.linspace(-150.0, 130.0, 100_003, dtype=np.float32)
    host_code = aclgen.compile(lambda v: aclgen.exp2(v), name="lookup_host", fma="off")
    assert "vpermps" in host_code.asm
    for cpu, permute in (("haswell", True), ("generic", False)):
        with overridden(ACLGEN_CPU_NAME=cpu):
            f = aclgen.compile(lambda v: aclgen.exp2(v), name=f"lookup_{cpu}", fma="off")
            got = f(x)
            assert ("vpermps" in f.asm) == permute and ("llvmx.lookup" in f.ir["expand-math"]) == permute
        np.testing.assert_array_equal(got.view(np.uint32), host_code(x).view(np.uint32), err_msg=cpu)
    keys = TestOp(result_types=[VectorType(i32, [8])]).results[0]
    LookupOp([1.0] * 16, keys).verify()
    with pytest.raises(VerifyException, match="8 or 16 f32 values"):
        LookupOp([1.0] * 4, keys).verify()
    with pytest.raises(VerifyException, match="i32 keys"):
        LookupOp([1.0] * 8, TestOp(result_types=[VectorType(f32, [8])]).results[0]).verify()


def test_avx512_op_verifies_its_operands():
    from xdsl.dialects.builtin import VectorType, f32, i32
    from xdsl.dialects.test import TestOp
    from xdsl.utils.exceptions import VerifyException

    from aclgen.dialects.llvmx import AVX512Function, AVX512Op, Fixup, fixup_table

    v = TestOp(result_types=[VectorType(f32, [8])]).results[0]
    AVX512Op(AVX512Function.SCALEF, v, v).verify()
    AVX512Op(AVX512Function.FIXUPIMM, v, v, table=fixup_table(zero=Fixup.NEG_INF)).verify()
    with pytest.raises(VerifyException, match="takes 2 operands"):
        AVX512Op(AVX512Function.SCALEF, v).verify()
    for op in (AVX512Op(AVX512Function.FIXUPIMM, v, v), AVX512Op(AVX512Function.SCALEF, v, v, table=0)):
        with pytest.raises(VerifyException, match="table for fixupimm, and only there"):
            op.verify()
    assert fixup_table(qnan=Fixup.SOURCE, zero=Fixup.NEG_INF, positive=Fixup.NAN) == 0x3000_0401
    with pytest.raises(VerifyException, match="f32 values of one shape"):
        AVX512Op(AVX512Function.GETEXP, TestOp(result_types=[VectorType(i32, [8])]).results[0]).verify()


@pytest.mark.parametrize("misalign", [0, 1, 4])
def test_row_kernels_stream_whole_aligned_rows_and_store_the_others(misalign):
    """A row kernel's streaming variant: rows whose output starts on a line and is whole vectors
    take aligned streaming stores, the others ordinary ones; either way the same values, and
    nothing outside the output written (every row length, row starts on and off a line)."""
    plain = aclgen.compile(lambda x: aclgen.exp(x - aclgen.amax(x, -1)), name="rows_plain")
    streamed = aclgen.compile(lambda x: aclgen.exp(x - aclgen.amax(x, -1)), name="rows_streamed", nontemporal=True)
    rng = np.random.default_rng(misalign)
    for rows, n in ((3, 1), (4, 5), (2, 31), (5, 32), (3, 256), (2, 1000), (3, 4096)):
        x = rng.standard_normal((rows, n)).astype(np.float32)
        size = rows * n
        buf = aligned_empty((size + 32,), np.float32)
        buf[:] = -7.0
        out = buf[misalign : misalign + size].reshape(rows, n)
        streamed(x, out=out)
        np.testing.assert_array_equal(out, plain(x))
        assert (buf[:misalign] == -7).all() and (buf[misalign + size :] == -7).all()
    if host().is_x86 and host().has("avx512f"):  # the aligned branch: whole zmm streaming stores
        assert "vmovntps\t%zmm" in streamed.kernel_for(x, out=out).asm


X86 = pytest.mark.skipif(not host().is_x86, reason="x86-64 machine code")
REGISTERS = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"]


def _object_of(assembly: str) -> bytes:
    """The object code of a function whose body is `assembly` (AT&T, one instruction a line)."""
    clobbers = ",".join(f"~{{{r}}}" for r in REGISTERS)
    text = assembly.replace("\n", "\\0A")
    mod = llvm.parse_assembly(f'define void @f() {{\n  call void asm sideeffect "{text}", "{clobbers}"()\n  ret void\n}}')
    mod.triple = host().triple
    llvm.initialize_native_asmparser()  # inline assembly in an object file
    with code_generator():
        return new_target_machine().emit_object(mod)


@X86
def test_a_run_of_register_moves_is_a_rotation():
    """`rotates_registers` finds ROTATION 64-bit register-to-register moves in a row, in any
    registers (REX prefixes 48, 49, 4c, 4d), and nothing shorter or interrupted."""
    moves = [f"movq %{a}, %{b}" for a, b in itertools.pairwise(REGISTERS)]
    assert len(moves) > jit.ROTATION
    assert jit.rotates_registers(_object_of("\n".join(moves[: jit.ROTATION])))
    assert jit.rotates_registers(_object_of("\n".join(moves[::-1][: jit.ROTATION])))
    assert not jit.rotates_registers(_object_of("\n".join(moves[: jit.ROTATION - 1])))
    half = jit.ROTATION // 2
    interrupted = [*moves[:half], "movq %rax, 8(%rsp)", *moves[half: jit.ROTATION]]
    assert not jit.rotates_registers(_object_of("\n".join(interrupted)))
    assert not jit.rotates_registers(_object_of("\n".join(f"movl %e{r[1:]}, %e{r[1:]}" for r in REGISTERS[:6])
                                                + "\n" + "\n".join(moves[: jit.ROTATION - 1])))


@X86
def test_code_that_rotates_registers_is_generated_again_without_hoisting(monkeypatch):
    """SELU float32 for an AVX2 CPU (haswell: x86's 16 vector registers): LLVM's first code moves
    a dozen registers along in its loop; the kernel takes the code made with machine LICM off,
    which does not, says so at the top of its assembly, and computes the same bits."""
    with overridden(ACLGEN_CPU_NAME="haswell"):
        if host().missing:
            pytest.skip(f"this machine cannot run haswell code (lacks {', '.join(host().missing)})")
        op = OPERATORS["selu"]
        variant = Variant((dt.float32,), (dt.float32,), 1, ("contiguous",) * 2, op.attr_samples)
        options = op.kernel_options(variant, Options.from_knobs())
        chosen = compile_variant(op.formula, "selu_chosen", variant, op.params, op.kernel_arg_names, options)
        monkeypatch.setattr(jit, "rotates_registers", lambda obj: False)
        first = compile_variant(op.formula, "selu_first", variant, op.params, op.kernel_arg_names, options)
        monkeypatch.undo()
        if not jit.rotates_registers(first.native.object_code):
            pytest.skip("this LLVM's code for SELU float32 on haswell does not rotate registers")
        assert not jit.rotates_registers(chosen.native.object_code)
        assert chosen.asm.startswith("# generated with -disable-machine-licm")
        x = np.concatenate([np.linspace(-90, 90, 4093, dtype=np.float32),
                            np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 88.7])])
        results = []
        for k in (first, chosen):
            out = np.full_like(x, 7.0)
            native.entry(k).call()(x.ctypes.data, out.ctypes.data, meta_for(k, (x, out)).ctypes.data, 0, x.size)
            results.append(out.view(np.uint32))
        np.testing.assert_array_equal(results[0], results[1])


@X86
def test_a_kernels_texts_show_its_own_target_whatever_the_settings_when_read():
    """A kernel's stage texts are made when first read; they follow the CPU the kernel was made
    for, not ACLGEN_CPU_NAME at that moment (an AVX-512 kernel read under `generic` showed SSE
    code)."""
    op = OPERATORS["hardswish_backward"]
    variant = Variant((dt.float32,) * 2, (dt.float32,), 1, ("contiguous",) * 3, op.attr_samples)
    k = compile_variant(op.formula, "hs_texts", variant, op.params, op.kernel_arg_names,
                        op.kernel_options(variant, Options.from_knobs()))  # a new kernel: no texts yet
    lanes = 2 * W
    with overridden(ACLGEN_CPU_NAME="generic"):
        ir, asm = k.ir["llvm"], k.asm
    assert f"<{lanes} x float>" in ir
    assert ("ymm" in asm or "zmm" in asm) == (W >= 8)  # (generic: xmm only)
