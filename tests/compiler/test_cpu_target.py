"""ACLGEN_CPU_NAME / ACLGEN_CPU_FEATURES: the CPU kernels are generated for (aclgen/codegen/target.py).

The override changes the code (vector registers, width, FMA), follows numba's conventions, is
checked before LLVM sees it (an unknown or 32-bit CPU would end the process inside LLVM), and
code for a CPU this machine cannot run compiles and prints but is refused when run, with an
error, never a SIGILL. Anything that could run such code runs in a child process.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile

import numpy as np
import pytest

from aclgen import dtypes as dt
from aclgen import knobs as knobs_module
from aclgen.codegen import target as T
from aclgen.compiler import Options, Variant, compile_variant
from aclgen.kernel import CompileError
from aclgen.knobs import cpu_target, fingerprint, knobs, overridden
from aclgen.ops import OPERATORS
from tests import ROOT, runners

HSB = OPERATORS["hardswish_backward"]
F32 = Variant((dt.float32, dt.float32), (dt.float32,), 1, ("contiguous",) * 3)

x86_64 = pytest.mark.skipif(not T.real_host().triple.startswith("x86_64"), reason="x86-64 CPU names")


def runnable(cpu: str) -> bool:
    return not T.named(cpu).missing


def asm_for(**env: str) -> str:
    """hardswish_backward float32's assembly for the target `env` names (compiled, never run)."""
    with overridden(**env):
        return compile_variant(HSB.formula, "hsb_target", F32, HSB.params, HSB.kernel_arg_names, Options()).asm


def _only(env: dict[str, str]) -> dict[str, str | None]:
    """`env` in place of this process's ACLGEN_CPU_* settings."""
    return {k: None for k in os.environ if k.startswith("ACLGEN_CPU_")} | env


def aclgen(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return runners.aclgen(*args, env=_only(env), cwd=tempfile.gettempdir())


def python(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return runners.python(code, *args, env=_only(env), cwd=tempfile.gettempdir())


def foreign_cpu() -> str | None:
    """A CPU whose kernels this machine cannot run (None on a machine that has them all)."""
    for cpu in ("skylake-avx512", "sapphirerapids", "znver5", "diamondrapids"):
        if not runnable(cpu):
            return cpu
    return None


# ------------------------------------------------------------------------------------ the model


def test_unset_and_host_are_this_machine(monkeypatch):
    monkeypatch.delenv("ACLGEN_CPU_NAME", raising=False)
    monkeypatch.delenv("ACLGEN_CPU_FEATURES", raising=False)
    real = T.real_host()
    assert T.host() is real and not real.override and not real.missing
    for name in ("host", "native", "HOST", " host "):
        monkeypatch.setenv("ACLGEN_CPU_NAME", name)
        assert T.host() is real
    assert real.features == T.real_host().features and (real.has("sse2") or not real.triple.startswith("x86_64"))


@x86_64
def test_a_named_cpu_brings_its_own_features():
    hsw = T.named("haswell")
    assert (hsw.cpu, hsw.features) == ("haswell", "")  # LLVM's own model of haswell, not the host's features
    assert hsw.has("avx2") and hsw.has("fma") and hsw.has("f16c") and not hsw.has("avx512f")
    assert hsw.f32_lanes == 8
    skx = T.named("skylake-avx512")
    assert skx.has("avx512f") and skx.has("avx512bw") and skx.f32_lanes == 16
    gen = T.named("generic")
    assert gen.has("sse2") and not gen.has("sse4.1") and not gen.has("fma") and gen.f32_lanes == 4


@x86_64
def test_a_feature_string_edits_the_cpus_features_as_llvm_does():
    # on this machine's CPU (numba's NUMBA_CPU_FEATURES without NUMBA_CPU_NAME)
    no_avx = T.named("", "-avx")
    assert no_avx.cpu == T.real_host().cpu
    assert not no_avx.has("avx") and not no_avx.has("avx2") and not no_avx.has("fma") and no_avx.f32_lanes == 4
    # on a named CPU: generic plus the string is exactly the string
    sse = T.named("generic", "+sse4.2,+popcnt")
    assert sse.has("sse4.2") and sse.has("sse4.1") and sse.has("popcnt") and not sse.has("avx")
    fma = T.named("generic", "+avx2,+fma")
    assert fma.has("avx") and fma.has("fma") and fma.f32_lanes == 8


@x86_64
def test_explicit_features_reproduce_the_target():
    """What `aclgen bench --isa` gives numba as NUMBA_CPU_FEATURES: the exact set, on any CPU."""
    for cpu in ("haswell", "skylake-avx512", "x86-64-v3"):
        h = T.named(cpu)
        assert T.named("generic", h.explicit_features).flags == h.flags
        assert T.named("", h.explicit_features).flags == h.flags


@pytest.mark.parametrize("name, features, message", [
    ("not-a-cpu", "", "not a CPU LLVM knows"),
    ("i686", "", "32-bit CPU"),
    ("", "+avx3", "'+avx3' is not +feature or -feature"),
    ("", "avx2", "'avx2' is not +feature or -feature"),
    ("", "-sse2", "x86-64 code needs"),
    ("haswell", "-64bit", "x86-64 code needs"),
    ("", "+32bit-mode", "x86-64 code needs"),
])
@x86_64
def test_bad_names_are_errors_not_llvm_aborts(name, features, message):
    with pytest.raises(T.BadTarget, match=re.escape(message)) as info:
        T.named(name, features)
    assert isinstance(info.value, ValueError) and isinstance(info.value, CompileError)


@x86_64
def test_the_cli_reports_a_bad_name_on_one_line():
    r = aclgen("compile", "hardswish_backward", "--dtype", "float32", env={"ACLGEN_CPU_NAME": "i686"})
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip() == "aclgen: error: ACLGEN_CPU_NAME='i686' is a 32-bit CPU for " + T.real_host().triple


def test_knobs_read_the_override(monkeypatch):
    monkeypatch.setenv("ACLGEN_CPU_NAME", " haswell ")
    monkeypatch.setenv("ACLGEN_CPU_FEATURES", "+fma")
    assert cpu_target() == ("haswell", "+fma")
    assert (knobs().cpu_name, knobs().cpu_features) == ("haswell", "+fma")
    before = fingerprint()
    monkeypatch.setenv("ACLGEN_CPU_NAME", "znver3")  # settings (and so plans) follow the override
    assert fingerprint() != before
    assert {"ACLGEN_CPU_NAME", "ACLGEN_CPU_FEATURES"} <= set(knobs_module.NAMES)
    monkeypatch.setenv("ACLGEN_TILE_SIZE", "not a number")  # the target does not depend on other knobs
    assert cpu_target() == ("znver3", "+fma")


def test_every_knob_is_documented():

    settings = (ROOT / "docs" / "settings.md").read_text()
    for name in knobs_module.NAMES:
        if name.startswith("ACLGEN_"):
            assert f"| `{name}` |" in settings, name
            assert f"| {name} |" in (knobs_module.__doc__ or ""), name


# ----------------------------------------------------------------------------------- the code


@x86_64
def test_haswell_code_is_avx2():
    asm = asm_for(ACLGEN_CPU_NAME="haswell")
    assert "ymm" in asm and "zmm" not in asm
    assert "vfmadd" in asm or "vmulps" in asm


@x86_64
def test_avx512_code_compiles_anywhere():
    """Compiling (and printing) code for a CPU this machine lacks is fine: it never runs."""
    asm = asm_for(ACLGEN_CPU_NAME="skylake-avx512")
    assert "zmm" in asm


@x86_64
def test_avx512_half_and_bfloat_forms():
    """On Zen 4 (AVX-512F/BW/VL/BF16, no FP16) f16 converts in zmm (vcvtph2ps / vcvtps2ph) and
    compares write mask registers; bf16 rounds by integer ops in zmm, never vcvtneps2bf16, which
    flushes subnormal inputs to zero (Intel SDM: "input denormals are always treated as zero")
    where SPEC.md's round-to-nearest-even keeps them (lower_to_llvm's from_f32)."""
    half = Variant((dt.float16, dt.float16), (dt.float16,), 1, ("contiguous",) * 3)
    bf16 = Variant((dt.bfloat16, dt.bfloat16), (dt.bfloat16,), 1, ("contiguous",) * 3)
    with overridden(ACLGEN_CPU_NAME="znver4"):
        f16 = compile_variant(HSB.formula, "hsb_f16", half, HSB.params, HSB.kernel_arg_names, Options()).asm
        b16 = compile_variant(HSB.formula, "hsb_bf16", bf16, HSB.params, HSB.kernel_arg_names, Options()).asm
    assert re.search(r"vcvtph2ps\s+[^\n]*%zmm", f16) and re.search(r"vcvtps2ph\s+\$4, %zmm", f16)
    assert re.search(r"vcmp\w+ps\s+[^\n]*%zmm[^\n]*%k\d", f16)
    assert "vcvtneps2bf16" not in b16 and re.search(r"vpaddd\s+[^\n]*%zmm", b16)


@x86_64
def test_features_without_avx_give_sse_code():
    asm = asm_for(ACLGEN_CPU_FEATURES="-avx")
    assert "xmm" in asm and "ymm" not in asm and "zmm" not in asm
    with overridden(ACLGEN_CPU_FEATURES="-avx"):
        llvm = compile_variant(HSB.formula, "hsb_target", F32, HSB.params, HSB.kernel_arg_names, Options()).ir["llvm"]
    assert "<8 x float>" in llvm and "<16 x float>" not in llvm  # 2 x 4 lanes (vectorize_elementwise.model_width)


@x86_64
def test_fma_auto_follows_the_target():
    """expand-math's ACLGEN_FMA=auto asks the target: SwiGluGrad's sigmoid has FMAs on haswell, none
    on generic (no FMA there)."""
    swi = OPERATORS["swi_glu_grad"]
    variant = Variant((dt.float32,) * 3, (dt.float32,) * 2, 1, ("contiguous",) * 5, swi.attr_samples)

    def asm(**env):
        with overridden(**env):
            return compile_variant(swi.formula, "swi_target", variant, swi.params, swi.kernel_arg_names, Options()).asm

    assert "vfmadd" in asm(ACLGEN_CPU_NAME="haswell")
    generic = asm(ACLGEN_CPU_NAME="generic")
    assert "vfmadd" not in generic and "ymm" not in generic and "xmm" in generic


@x86_64
@pytest.mark.skipif(not runnable("haswell"), reason="this machine cannot run AVX2 code")
def test_haswell_kernels_run_and_agree_in_a_fresh_process():
    r = python("""
        import numpy as np, aclgen.ops
        from aclgen.codegen.target import host
        g = np.linspace(-2, 2, 4099, dtype=np.float32); x = np.linspace(-5, 5, 4099, dtype=np.float32)
        y = aclgen.ops.hardswish_backward(g, x)
        d = np.where(x < -3, 0, np.where(x <= 3, x * np.float32(1 / 3) + np.float32(0.5), 1)).astype(np.float32)
        asm = aclgen.ops.hardswish_backward.kernel.asm
        print(host().cpu, np.array_equal(y, g * d), "ymm" in asm, "zmm" in asm)
    """, {"ACLGEN_CPU_NAME": "haswell"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["haswell", "True", "True", "False"]


@x86_64
@pytest.mark.skipif(not runnable("x86-64-v2"), reason="this machine cannot run x86-64-v2 code")
def test_half_without_f16c_runs_through_libgcc_and_agrees(tmp_path):
    """Without F16C LLVM calls __extendhfsf2 / __truncsfhf2 (libgcc_s, GCC >= 12): the kernels
    run and give the F16C kernels' bits, every f16 pattern round-tripped and computed values."""
    script = """
        import sys, numpy as np, aclgen.ops
        h = np.arange(65536, dtype=np.uint16).view(np.float16)
        g = (np.linspace(-70000, 70000, 65536, dtype=np.float32) / 7).astype(np.float16)
        copy = aclgen.ops.threshold_backward(h, h, float("nan"))  # x <= NaN never: g
        hsb = aclgen.ops.hardswish_backward(g, h)
        asm = aclgen.ops.hardswish_backward.kernel_for(g, h).asm
        np.savez(sys.argv[1], copy=copy.view(np.uint16), hsb=hsb.view(np.uint16))
        print("__truncsfhf2" in asm)
    """
    no_f16c = python(script, {"ACLGEN_CPU_NAME": "x86-64-v2"}, str(tmp_path / "v2.npz"))
    native = python(script, {}, str(tmp_path / "native.npz"))
    if no_f16c.returncode != 0 and "cannot resolve" in no_f16c.stderr:
        pytest.skip("no libgcc_s with __truncsfhf2 here (GCC < 12): such kernels are refused, as tested below")
    assert no_f16c.returncode == 0 and native.returncode == 0, no_f16c.stderr + native.stderr
    assert no_f16c.stdout.split() == ["True"] and native.stdout.split() == ["False"]
    a, b = np.load(tmp_path / "v2.npz"), np.load(tmp_path / "native.npz")
    numbers = ~np.isnan(np.arange(65536, dtype=np.uint16).view(np.float16))
    assert np.array_equal(a["copy"][numbers], np.arange(65536, dtype=np.uint16)[numbers])
    assert np.array_equal(a["copy"], b["copy"]) and np.array_equal(a["hsb"], b["hsb"])


# ------------------------------------------------------------------------------ the refusal


@x86_64
def test_kernels_for_a_cpu_this_machine_lacks_are_refused_when_run():
    cpu = foreign_cpu()
    if cpu is None:
        pytest.skip("this machine runs every CPU tried")
    missing = T.named(cpu).missing
    # the Python call: an exception naming the features, the process goes on
    r = python("""
        import numpy as np, aclgen.ops
        from aclgen.codegen.target import UnsupportedTarget
        x = np.ones(100, np.float32)
        try:
            aclgen.ops.hardswish_backward(x, x)
        except UnsupportedTarget as e:
            print("refused:", e)
        from aclgen import aclnn
        print("alive")
    """, {"ACLGEN_CPU_NAME": cpu})
    assert r.returncode == 0, r.stderr
    assert "refused: kernels for ACLGEN_CPU_NAME=" + cpu in r.stdout and missing[0] in r.stdout
    assert r.stdout.rstrip().endswith("alive")
    # the CLI: one line, exit 1
    r = aclgen("run", "hardswish_backward", "--dtype", "float32", "--shape", "64", env={"ACLGEN_CPU_NAME": cpu})
    assert r.returncode == 1 and r.stderr.startswith(f"aclgen: error: kernels for ACLGEN_CPU_NAME={cpu}")
    assert "SIGILL" in r.stderr and ", ".join(missing) in r.stderr
    # ... while compiling and printing works
    r = aclgen("compile", "hardswish_backward", "--dtype", "float32", "--emit", "asm", env={"ACLGEN_CPU_NAME": cpu})
    assert r.returncode == 0, r.stderr
    assert "zmm" in r.stdout or not T.named(cpu).has("avx512f")


@x86_64
def test_the_aclnn_api_returns_an_error_status_for_a_foreign_target():
    cpu = foreign_cpu()
    if cpu is None:
        pytest.skip("this machine runs every CPU tried")
    r = python("""
        import numpy as np
        import aclgen.acl as acl
        import aclgen.aclnn as aclnn
        acl.init(); acl.rt.set_device(0)
        x = np.ones(64, np.float32); out = np.zeros(64, np.float32)
        ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(acl.from_numpy(x), acl.from_numpy(x), acl.from_numpy(out))
        print(ret, ex is None, acl.get_recent_err_msg())
    """, {"ACLGEN_CPU_NAME": cpu})
    assert r.returncode == 0, r.stderr
    status, no_executor, message = r.stdout.split(" ", 2)
    assert status != "0" and no_executor == "True"
    assert f"kernels for ACLGEN_CPU_NAME={cpu}" in message


def test_a_runnable_target_is_not_refused(monkeypatch):
    monkeypatch.setenv("ACLGEN_CPU_NAME", "host")
    T.host().check_runnable()
    if T.real_host().triple.startswith("x86_64"):
        monkeypatch.setenv("ACLGEN_CPU_NAME", "generic")  # x86-64's baseline runs on every x86-64
        T.host().check_runnable()
        # a VM often hides system instructions (here znver3's mwaitx, rdpru): they do not count
        assert not (set(T.named(T.real_host().cpu).missing) & T.NEVER_EMITTED)
