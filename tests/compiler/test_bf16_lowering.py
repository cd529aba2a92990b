"""bf16 lowering: bits in the upper half of i32 lanes, deinterleaved vector loops, and the
rounding steps `aclgen.passes.low_bits` lets lower-to-llvm drop (and must not)."""

import re

import ml_dtypes
import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

import aclgen
from aclgen.codegen.target import host
from aclgen.dialects import tile
from aclgen.frontend import select
from aclgen.knobs import overridden
from tests.kernels import kernel
from tests.reference import HALF_BOUND, half_ulps, sigmoid64

BF16 = ml_dtypes.bfloat16
SIZES = (1, 15, 16, 17, 37, 1000, 4099)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16)


def _same(got: np.ndarray, want: np.ndarray) -> None:
    """Bit-equal, except that any NaN matches any NaN."""
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)
    np.testing.assert_array_equal(_bits(got)[~nan], _bits(want)[~nan])


SPECIAL_F32 = np.array(
    [
        0x00000000, 0x80000000, 0x3F808000, 0x3F818000, 0x3F808001, 0x3F817FFF,  # ±0, ties, near ties
        0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF, 0x7F800000, 0xFF800000,  # max, rounding to inf, ±inf
        0x00008000, 0x00018000, 0x807FFFFF,  # subnormals
        0x7F800001, 0x7F80FFFF, 0x7FBFFFFF, 0x7FC00000, 0x7FFF8000, 0x7FFFFFFF, 0xFFFFFFFF,  # NaNs
    ],
    np.uint32,
)


@pytest.mark.parametrize("n", SIZES)
def test_f32_to_bf16_rounds_to_nearest_even_and_keeps_nans(n):
    op = aclgen.compile(lambda x: x, dtypes="float32", out_dtypes="bfloat16")
    rng = np.random.default_rng(n)
    bits = np.concatenate([SPECIAL_F32, rng.integers(0, 2**32, 20_000, dtype=np.uint32)])
    x = np.resize(bits, max(n, bits.size)).view(np.float32)[: max(n, bits.size)]
    with np.errstate(invalid="ignore"):
        _same(op(x), x.astype(BF16))


@pytest.mark.parametrize("n", SIZES)
def test_bf16_products_round_like_numpy_in_deinterleaved_loops(n):
    op = aclgen.compile(lambda a, b: a * b, dtypes="bfloat16")
    rng = np.random.default_rng(n)
    a = rng.integers(0, 2**16, n, dtype=np.uint16).view(BF16)
    b = rng.integers(0, 2**16, n, dtype=np.uint16).view(BF16)
    assert "deinterleaved" in op.ir["vectorize-elementwise"]
    with np.errstate(all="ignore"):
        _same(op(a, b), (a.astype(np.float32) * b.astype(np.float32)).astype(BF16))


@pytest.mark.parametrize("n", SIZES)
def test_a_nan_parameter_with_a_low_payload_stays_nan(n):
    """0x7FFFFFFF rounded without the NaN guard would carry into the sign: -0."""
    op = aclgen.compile(lambda g, p: g * p, dtypes="bfloat16", params=("p",))
    assert "fcmp uno" in op.ir["llvm"]  # a parameter may be any f32 bit pattern
    p = float(np.uint32(0x7FFFFFFF).view(np.float32))
    got = op(np.ones(n, BF16), p=p)
    assert np.isnan(got.astype(np.float32)).all()


@pytest.mark.parametrize("cpu", ["", "haswell"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_views_at_every_offset_write_only_their_elements(cpu, dtype):
    """The masked remainder steps read and write only their columns: with 16-bit masked
    instructions (AVX-512BW, natively here) and without (AVX2: 32-bit words and an odd last
    column, lower_to_llvm.load_halves), deinterleaved (bf16) or not (f16)."""
    if cpu and not host().triple.startswith("x86_64"):
        pytest.skip("haswell names an x86-64 CPU, and this machine is not x86-64")
    np_dtype = BF16 if dtype == "bfloat16" else np.float16
    rng = np.random.default_rng(0)
    with overridden(ACLGEN_CPU_NAME=cpu):
        op = aclgen.compile(lambda a, b: select(a <= b, a * 0.5, b - a), dtypes=dtype, name=f"views_{cpu or 'host'}")
        assert ("deinterleaved" in op.ir["vectorize-elementwise"]) == (dtype == "bfloat16")
        for n in (1, 2, 16, 33, 100):
            for off in range(4):
                a = rng.standard_normal(n).astype(np_dtype)
                b = rng.standard_normal(n).astype(np_dtype)
                buf = np.full(n + 8, 7.0, np_dtype)
                op(a, b, out=[buf[off : off + n]])
                a32, b32 = a.astype(np.float32), b.astype(np.float32)
                _same(buf[off : off + n], np.where(a32 <= b32, a32 * 0.5, b32 - a32).astype(np_dtype))
                assert (buf[:off] == 7).all() and (buf[off + n :] == 7).all(), (n, off)


def test_rounding_steps_follow_provenance():
    # selu: every NaN comes from a bf16 input, so no NaN guard; the result still rounds
    selu = kernel("selu_backward", "bfloat16").ir["llvm"]
    assert "fcmp uno" not in selu and "32767" in selu
    # threshold and softshrink select between an input and 0: already bf16, no rounding at all
    for name in ("threshold_backward", "softshrink_backward"):
        ir = kernel(name, "bfloat16").ir["llvm"]
        assert "32767" not in ir and "fcmp uno" not in ir, name
    # SwiGluGrad's sigmoid scales by a power of two made of bits shifted into the exponent field
    # (their low half clear): a NaN in it can only be a bf16 input's, quieted: no guard
    assert "fcmp uno" not in kernel("swi_glu_grad", "bfloat16").ir["llvm"]


def test_parameters_of_a_bf16_kernel_are_read_quieted():
    """A kernel that stores only bf16 reads a NaN parameter quieted, its low payload bits clear
    (once per call), so its loops round without the NaN guard; the bits are those the guard
    would give: the parameter's upper half with the quiet bit. A kernel with an f32 output keeps
    the parameter's bits."""
    leaky = aclgen.compile(lambda x, p: select(x > 0.0, x, x * p), dtypes="bfloat16", params=("p",),
                           name="quiet_params")
    signaling = float(np.uint32(0x7FA12345).view(np.float32))
    got = leaky(np.float32([-1.0, 2.0, -3.5] * 11).astype(BF16), p=signaling)
    assert "fcmp uno <" not in leaky.ir["llvm"] and "fcmp uno float" in leaky.ir["llvm"]
    assert list(_bits(got)[:3]) == [0x7FE1, 0x4000, 0x7FE1]
    wide = aclgen.compile(lambda x, p: select(x > 0.0, x, x * p), dtypes="bfloat16", out_dtypes="float32",
                          params=("p",), name="quiet_params_f32")
    assert "fcmp uno" not in wide.ir["llvm"]
    assert wide(np.float32([-1.0]).astype(BF16), p=signaling).view(np.uint32)[0] == 0x7FE12345


def _unary(fn):
    return lambda v: fn(v)


@pytest.mark.parametrize("cpu", ["", "haswell"])
def test_nan_guard_follows_the_expansions(cpu):
    """exp ends in vscalefps (AVX-512) or a multiply by powers of two built from shifted bits
    (AVX2): neither makes a NaN with a low payload, so its bf16 result rounds without the NaN
    guard. log's significand is x's bits minus a shifted exponent on AVX2, where x may be any
    f32 (the subnormal scaling): guarded; with AVX-512 it is vgetmantps's: not. Every bf16 input,
    NaNs included, still gives its result rounded once: within HALF_BOUND of the exact value (exp,
    sigmoid and log take their half-type forms, docs/math.md), NaN for NaN."""
    if cpu and not host().triple.startswith("x86_64"):
        pytest.skip("haswell names an x86-64 CPU, and this machine is not x86-64")
    x = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(BF16)
    with overridden(ACLGEN_CPU_NAME=cpu):
        avx512 = host().is_x86 and host().has("avx512f")
        for name, guarded, ref in (("exp", False, np.exp), ("sigmoid", False, sigmoid64),
                                   ("tanh", False, np.tanh), ("log", not avx512, np.log)):
            formula = _unary(getattr(aclgen, name))
            op = aclgen.compile(formula, dtypes="bfloat16", name=f"guard_{name}_{cpu or 'host'}")
            got = op(x)
            assert ("fcmp uno" in op.ir["llvm"]) == guarded, name
            with np.errstate(all="ignore"):
                err = half_ulps(got, ref(x.astype(np.float64)))
            assert err.max() <= HALF_BOUND[np.dtype(BF16)], (name, x[err.argmax()])


def vector_loops(asm: str) -> list[list[str]]:
    """The instructions of each single-block loop that stores a vector aligned (the unmasked
    vector loops; a remainder's masked stores are not aligned, and on AVX2 its 16-bit masked
    accesses become branches)."""
    blocks: list[tuple[str, list[str]]] = []
    for line in asm.splitlines():
        if m := re.match(r"^(\.?[\w$.]+):", line):
            blocks.append((m.group(1), []))
        elif blocks and line.startswith("\t") and not line.startswith("\t."):
            blocks[-1][1].append(line.strip())
    return [body for label, body in blocks
            if body and re.fullmatch(rf"j\w+\s+{re.escape(label)}", body[-1])
            and any(re.match(r"vmov(dqa|aps)\w*\s+%[xyz]mm\d+, ", insn) for insn in body)]


def test_bf16_vector_loop_has_no_cross_lane_packing():
    k = kernel("hardswish_backward", "bfloat16")
    assert "{deinterleaved}" in k.ir["vectorize-elementwise"]
    loops = vector_loops(k.asm)
    assert len(loops) == 1
    for insn in ("vpackusdw", "vpermq", "vpmovzxwd"):
        assert not any(insn in line for line in loops[0]), insn


def test_deinterleaved_is_bf16_only():
    from xdsl.dialects.builtin import VectorType, f32, i64
    from xdsl.dialects.test import TestOp

    row, col = TestOp(result_types=[tile.PTR]), TestOp(result_types=[i64])
    load = tile.LoadOp(row.results[0], col.results[0], col.results[0], "contiguous", f32, VectorType(f32, [8]),
                       deinterleaved=True)
    with pytest.raises(VerifyException, match="deinterleaved needs a contiguous even-width bf16 vector"):
        load.verify_()
