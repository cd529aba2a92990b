"""The C SDK (`aclgen sdk`): CANN's headers and library names over aclgen's runtime.

One SDK is built per session (with examples/cpp/user_ops.py's operator); every program in
examples/cpp is compiled by CANN's documented g++ line and by the CMake project, then run the
way CANN programs run: a fresh shell, `source DIR/set_env.sh`, the binary. Results are checked
against tests/reference.py (numpy), never against aclgen's Python face.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import aclgen.ops as ops
from aclgen.capi import abi
from aclgen.capi.handles import Handles, UnknownPointer
from tests import ROOT
from tests import reference as ref

EXAMPLES = ROOT / "examples" / "cpp"
USER_OPS = EXAMPLES / "user_ops.py"
BUILTIN_PROGRAMS = ("hardswish_backward", "selu_backward", "softshrink_backward", "swi_glu_grad",
                    "threshold_backward")
PROGRAMS = (*BUILTIN_PROGRAMS, "my_leaky_relu_backward", "threads", "small_call")
# A sample of CANN's family (program: the operator it calls): a forward operator with an optional
# scalar, a backward one with scalars and a bool in CANN's order, a split, an in-place API, a
# reduction, a normalization with two outputs. Built where the operator is declared.
FAMILY_PROGRAMS = {"swish": "Swish", "elu_backward": "EluBackward", "glu": "Glu",
                   "inplace_leaky_relu": "LeakyRelu", "softmax": "Softmax", "rms_norm": "RmsNorm",
                   "rms_norm_grad": "RmsNormGrad"}
OPERATOR_HEADERS = ("aclnn_hardswish_backward.h", "aclnn_selu_backward.h", "aclnn_softshrink_backward.h",
                    "aclnn_swi_glu_grad.h", "aclnn_threshold_backward.h", "aclnn_my_leaky_relu_backward.h")
CANN_LIBRARIES = ("libascendcl.so", "libacl_rt.so", "libnnopbase.so", "libopapi_nn.so", "libopapi_math.so",
                  "libopapi.so")

pytestmark = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("gcc") is None,
                                reason="the C SDK's tests need gcc and g++")


def _check(cmd, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r


class Shell:
    """A fresh shell as `env -i` gives one: PATH=/usr/bin:/bin with another Python's python3 first
    (a virtual environment without cffi or aclgen: such a shell once made the SDK's embedded
    interpreter start from the wrong Python), Python's variables set to mislead, and nothing of
    the test's environment but the suite's temporary compile cache (conftest.py: programs never
    touch ~/.cache) and TMPDIR."""

    def __init__(self, other_bin: Path):
        self.other_bin = other_bin

    def env(self, **extra) -> dict[str, str]:
        env = {k: os.environ[k] for k in ("HOME", "ACLGEN_CACHE_DIR", "TMPDIR") if k in os.environ}
        env.update(PATH=f"{self.other_bin}{os.pathsep}/usr/bin{os.pathsep}/bin", PYTHONHOME=str(self.other_bin.parent),
                   PYTHONPATH=str(self.other_bin), VIRTUAL_ENV=str(self.other_bin.parent))
        env.update(extra)
        return {k: v for k, v in env.items() if v is not None}  # extra's None: unset

    def run(self, sdk: Path, program: Path, *args: str) -> subprocess.CompletedProcess:
        """`source DIR/set_env.sh && ./program` in this shell."""
        script = f'source "{sdk}/set_env.sh" && exec "{program}" "$@"'
        return subprocess.run(["bash", "-c", script, "prog", *args], capture_output=True, text=True,
                              env=self.env(), timeout=300)


@pytest.fixture(scope="session")
def shell(tmp_path_factory) -> Shell:
    venv = tmp_path_factory.mktemp("other") / "venv"
    _check([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    return Shell(venv / "bin")


def _gpp(sdk: Path, source: Path, target: Path) -> list[str]:
    """CANN's documented link line (C_API.md §9), with warnings on."""
    compiler = ["gcc", "-std=c11"] if source.suffix == ".c" else ["g++", "-std=c++11"]
    return [*compiler, "-O2", "-Wall", "-Wextra", "-Werror", str(source), "-o", str(target),
            "-I", f"{sdk}/include", "-I", f"{sdk}/include/aclnnop", "-I", f"{sdk}/include/aclnn",
            "-L", f"{sdk}/lib64", "-lopapi_nn", "-lopapi_math", "-lascendcl", "-lnnopbase", "-pthread"]


@pytest.fixture(scope="module")
def sdk(tmp_path_factory) -> Path:
    prefix = tmp_path_factory.mktemp("sdk") / "cann"
    r = _check([sys.executable, "-m", "aclgen.cli", "sdk", "--prefix", str(prefix), "--ops", str(USER_OPS)])
    import aclgen.ops

    assert f"{len(aclgen.ops.OPERATORS) + 1} operators" in r.stdout and "source" in r.stdout
    return prefix


@pytest.fixture(scope="module")
def binaries(sdk, tmp_path_factory) -> Path:
    """Every example built with CANN's g++ line (gcc for misuse.c), two at a time."""
    out = tmp_path_factory.mktemp("bin")
    programs = [*PROGRAMS, *FAMILY_PROGRAMS]
    jobs = [(EXAMPLES / f"{p}.cpp", out / p) for p in programs] + [(EXAMPLES / "misuse.c", out / "misuse")]
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda job: _check(_gpp(sdk, *job)), jobs))
    return out


def _results(stdout: str, label: str = "result") -> np.ndarray:
    """The `label[i] is: v` lines CANN's examples print, in order."""
    found = re.findall(rf"^{re.escape(label)}\[(\d+)\] is: (\S+)", stdout, re.M)
    assert [int(i) for i, _ in found] == list(range(len(found))), stdout
    return np.array([float(v) for _, v in found], np.float32)


def _printed(values) -> np.ndarray:
    """What `%f` prints of float32 values, read back (six decimals)."""
    return np.array([float(f"{v:f}") for v in np.asarray(values, np.float32).ravel()], np.float32)


# -------------------------------------------------------------------------------- the tree


def test_tree_has_cann_paths_and_library_names(sdk):
    for header in ("acl/acl.h", "aclnn/acl_meta.h", "aclnn/aclnn_base.h", "aclnnop/aclnn_util.h",
                   *(f"aclnnop/{h}" for h in OPERATOR_HEADERS)):
        assert (sdk / "include" / header).is_file(), header
    real = {(sdk / "lib64" / name).resolve() for name in CANN_LIBRARIES}
    assert len(real) == 1, "one implementation behind every CANN library name"
    assert real.pop().is_file()
    env = (sdk / "set_env.sh").read_text()
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "LD_LIBRARY_PATH"):
        assert re.search(rf"^export {var}=", env, re.M), var
    assert (sdk / "bin" / "setenv.bash").read_text() == env


def test_every_builtin_has_canns_header(sdk):
    """Without --ops the SDK declares the whole family: one header per operator, named as CANN's
    doc pages include it (operators sharing a header share the file), declaring both phases."""
    import aclgen.ops
    from aclgen.ops.catalog import HEADERS

    for op in aclgen.ops.OPERATORS.values():
        header = sdk / "include" / "aclnnop" / abi.header_name(op)
        assert abi.header_name(op) == HEADERS.get(op.api, abi.header_name(op))
        text = header.read_text()
        assert f"{op.api}GetWorkspaceSize(" in text and f"aclnnStatus {op.api}(" in text, op.api
        if op.inplace:
            assert f"{op.inplace_api}GetWorkspaceSize(" in text, op.inplace_api


def test_set_env_is_all_a_fresh_shell_needs(sdk, shell):
    script = f'source "{sdk}/set_env.sh" && echo "$ASCEND_HOME_PATH|$ASCEND_OPP_PATH|$LD_LIBRARY_PATH"'
    home, opp, ld = _check(["bash", "-c", script], env=shell.env()).stdout.strip().split("|")
    assert Path(home) == sdk and Path(opp) == sdk / "opp"
    assert ld.split(":")[0] == f"{sdk}/lib64"


@pytest.mark.parametrize("lang", ["c11", "c++11"])
def test_every_header_compiles_alone_pedantic(sdk, tmp_path, lang):
    """Each header is self-contained, warning-free and valid in C11 and C++11 (-pedantic)."""
    headers = sorted(p.relative_to(sdk / "include") for p in (sdk / "include").rglob("*.h"))
    assert len(headers) >= 10
    compiler = ["gcc", "-x", "c", "-std=c11"] if lang == "c11" else ["g++", "-x", "c++", "-std=c++11"]
    for header in headers:
        src = tmp_path / "t.txt"
        src.write_text(f'#include "{header}"\n#include "{header}"\nint main(void) {{ return 0; }}\n')
        _check([*compiler, "-pedantic", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", f"{sdk}/include",
                str(src)])


# The numeric facts of C_API.md, typed here independently of aclgen's tables.
FACTS = {
    "ACL_FLOAT": 0, "ACL_FLOAT16": 1, "ACL_INT8": 2, "ACL_INT32": 3, "ACL_UINT8": 4, "ACL_INT16": 6,
    "ACL_UINT16": 7, "ACL_UINT32": 8, "ACL_INT64": 9, "ACL_UINT64": 10, "ACL_DOUBLE": 11, "ACL_BOOL": 12,
    "ACL_BF16": 27, "ACL_FORMAT_NCHW": 0, "ACL_FORMAT_NHWC": 1, "ACL_FORMAT_ND": 2,
    "ACL_MEMCPY_HOST_TO_HOST": 0, "ACL_MEMCPY_HOST_TO_DEVICE": 1, "ACL_MEMCPY_DEVICE_TO_HOST": 2,
    "ACL_MEMCPY_DEVICE_TO_DEVICE": 3, "ACL_MEM_MALLOC_HUGE_FIRST": 0, "ACL_MEM_MALLOC_NORMAL_ONLY": 2,
    "ACL_SUCCESS": 0, "ACL_ERROR_INVALID_PARAM": 100000, "ACL_ERROR_BAD_ALLOC": 200000,
    "ACL_ERROR_INVALID_RESOURCE_HANDLE": 200005, "ACLNN_SUCCESS": 0, "ACLNN_ERR_PARAM_NULLPTR": 161001,
    "ACLNN_ERR_PARAM_INVALID": 161002, "ACLNN_ERR_RUNTIME_ERROR": 361001, "ACLNN_ERR_INNER_NULLPTR": 561103,
}


def test_header_values_are_canns(sdk, tmp_path):
    """C++ sees real enums (`aclDataType::ACL_FLOAT`) with CANN's numeric values."""
    scoped = {"ACL_FLOAT": "aclDataType", "ACL_BF16": "aclDataType", "ACL_FORMAT_ND": "aclFormat",
              "ACL_MEMCPY_DEVICE_TO_HOST": "aclrtMemcpyKind", "ACL_MEM_MALLOC_HUGE_FIRST": "aclrtMemMallocPolicy"}
    lines = [f'  std::printf("{k} %ld\\n", static_cast<long>({k}));' for k in FACTS]
    lines += [f'  std::printf("{t}::{k} %ld\\n", static_cast<long>({t}::{k}));' for k, t in scoped.items()]
    src = tmp_path / "values.cpp"
    src.write_text('#include <cstdio>\n#include "acl/acl.h"\n#include "aclnn/acl_meta.h"\n'
                   '#include "aclnn/opdev/op_errno.h"\nint main() {\n' + "\n".join(lines) + "\n}\n")
    _check(["g++", "-std=c++11", "-Wall", "-Werror", "-I", f"{sdk}/include", str(src), "-o", str(tmp_path / "v")])
    printed = dict(line.rsplit(" ", 1) for line in _check([str(tmp_path / "v")]).stdout.splitlines())
    for k, v in FACTS.items():
        assert int(printed[k]) == v, k
    for k, t in scoped.items():
        assert int(printed[f"{t}::{k}"]) == FACTS[k]


def test_operator_header_declares_cann_signature(sdk):
    text = (sdk / "include" / "aclnnop" / "aclnn_hardswish_backward.h").read_text()
    flat = " ".join(text.split())
    assert ("aclnnStatus aclnnHardswishBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, "
            "aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);") in flat
    assert ("aclnnStatus aclnnHardswishBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, "
            "aclrtStream stream);") in flat
    user = " ".join((sdk / "include" / "aclnnop" / "aclnn_my_leaky_relu_backward.h").read_text().split())
    assert ("aclnnMyLeakyReluBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, "
            "const aclScalar* negativeSlope, aclTensor* gradInput,") in user


# ----------------------------------------------------------------------- the examples, run


def test_hardswish_backward_program(sdk, binaries, shell):
    r = shell.run(sdk, binaries / "hardswish_backward")
    assert r.returncode == 0, r.stdout + r.stderr
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(_results(r.stdout), _printed(ref.hardswish_backward(x, x)))


def test_selu_backward_program_checks_itself(sdk, binaries, shell):
    r = shell.run(sdk, binaries / "selu_backward")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Total: 8 PASS, 0 FAIL" in r.stdout


def test_softshrink_backward_program(sdk, binaries, shell):
    r = shell.run(sdk, binaries / "softshrink_backward")
    assert r.returncode == 0, r.stdout + r.stderr
    g = np.arange(8, dtype=np.float32)
    x = np.array([1, 1, 1, 2, 1, 2, 3, 3], np.float32)
    np.testing.assert_array_equal(_results(r.stdout), _printed(ref.softshrink_backward(g, x, 1.2)))


def test_threshold_backward_program(sdk, binaries, shell):
    r = shell.run(sdk, binaries / "threshold_backward")
    assert r.returncode == 0, r.stdout + r.stderr
    g = np.array([4.5, 4.4, 4.3, 4.2], np.float32)
    x = np.array([0.2, 1.2, 2.2, 3.2], np.float32)
    np.testing.assert_array_equal(_results(r.stdout), _printed(ref.threshold_backward(g, x, 1.0)))


def test_swi_glu_grad_program(sdk, binaries, shell):
    r = shell.run(sdk, binaries / "swi_glu_grad")
    assert r.returncode == 0, r.stdout + r.stderr
    g = (np.arange(32, dtype=np.float32) - 2).reshape(2, 16)
    x = (np.arange(64, dtype=np.float32) - 2).reshape(2, 32)
    got = _results(r.stdout).reshape(2, 32)
    want, size, slack = ref.swi_glu_grad_f64(g, x)
    # SPEC.md §4.4's bound, plus the half-unit in the sixth decimal that %f printing adds
    assert np.all(np.abs(got - want) <= 8 * 2.0**-24 * size + slack + 5e-7 * (1 + np.abs(want))), got - want


# The family's programs, each against its doc page's formula in float64 numpy. They print with
# %f (six decimals); the operators are within a few ulps of float32: 2e-6 relative and 1e-6 absolute.
X8 = np.arange(-4, 4) * 0.5  # -2, -1.5, ..., 1.5


def _family_program(shell, sdk, binaries, program: str) -> str:
    r = shell.run(sdk, binaries / program)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def _close(got, want) -> None:
    np.testing.assert_allclose(got, np.ravel(want), rtol=2e-6, atol=1e-6)


def test_swish_program_optional_beta(sdk, binaries, shell):
    out = _family_program(shell, sdk, binaries, "swish")
    for label, beta in (("beta1", 1.0), ("beta2", 2.0)):
        _close(_results(out, label), X8 / (1 + np.exp(-beta * X8)))


def test_elu_backward_program_scalars_and_bool_in_canns_order(sdk, binaries, shell):
    out = _family_program(shell, sdk, binaries, "elu_backward")
    g, alpha, scale, input_scale = np.arange(1, 9.0), 1.5, 2.0, 0.5
    _close(_results(out), g * np.where(X8 > 0, scale, input_scale * alpha * scale * np.exp(X8 * input_scale)))


def test_glu_program_splits_its_input(sdk, binaries, shell):
    out = _family_program(shell, sdk, binaries, "glu")
    x = (np.arange(-6, 6) * 0.5).reshape(2, 6)
    a, b = x[:, :3], x[:, 3:]
    _close(_results(out), a / (1 + np.exp(-b)))


def test_inplace_leaky_relu_program_writes_self(sdk, binaries, shell):
    out = _family_program(shell, sdk, binaries, "inplace_leaky_relu")
    _close(_results(out), np.where(X8 > 0, X8, X8 * 0.2))


def test_softmax_program_reduces_either_dim(sdk, binaries, shell):
    out = _family_program(shell, sdk, binaries, "softmax")
    e = np.exp(X8.reshape(2, 4))
    _close(_results(out, "dim-1"), e / e.sum(axis=-1, keepdims=True))
    _close(_results(out, "dim0"), e / e.sum(axis=0, keepdims=True))


def test_rms_norm_program_two_outputs(sdk, binaries, shell):
    out = _family_program(shell, sdk, binaries, "rms_norm")
    x, gamma = X8.reshape(2, 4), np.array([1.0, 0.5, 2.0, -1.0])
    rstd = 1 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6)
    _close(_results(out, "y"), x * rstd * gamma)
    _close(_results(out, "rstd"), rstd)


def test_rms_norm_grad_program_allocates_the_workspace(sdk, binaries, shell):
    """At [1024, 256] dgamma rides dx's kernel: phase 1 asks for a float32 row of 256 per 64 rows
    (16 KiB), which the program allocates as CANN's examples do; dgamma and dx's first rows meet
    the declaration's bound against float64 (printed to six decimals)."""
    out = _family_program(shell, sdk, binaries, "rms_norm_grad")
    assert re.search(r"^workspaceSize is: 16384$", out, re.M), out
    i, j = np.arange(1024)[:, None], np.arange(256)[None, :]
    x, dy = ((i * 7 + j * 3) % 17 - 8) / 8.0, ((i * 5 + j) % 13 - 6) / 4.0
    rstd = (0.5 + (np.arange(1024)[:, None] % 5) / 8.0).astype(np.float32).astype(np.float64)
    gamma = 1 + (np.arange(256) % 4) / 4.0
    op = ops.OPERATORS["rms_norm_grad"]
    (dx, dgamma), (sx, sg) = op.reference(dy, x, rstd, gamma), op.reference.scale(dy, x, rstd, gamma)
    for label, want, scale in (("dgamma", dgamma, sg), ("dx", dx[:2], sx[:2])):
        got = _results(out, label)
        bound = op.tolerance * 2.0**-24 * np.ravel(scale) + 1e-6  # (the printed six decimals)
        assert np.all(np.abs(got - np.ravel(want)) <= bound), label


def test_user_declared_operator_from_cpp(sdk, binaries, shell):
    r = shell.run(sdk, binaries / "my_leaky_relu_backward")
    assert r.returncode == 0, r.stdout + r.stderr
    g = np.arange(1, 9, dtype=np.float32).reshape(2, 4)
    x = np.array([-1.5, 0.0, 0.5, 2.0], np.float32)
    want = np.where(x > 0, g, g * np.float32(0.1)).astype(np.float32)
    np.testing.assert_array_equal(_results(r.stdout), _printed(want))


def test_misuse_from_c_gets_every_code_and_never_crashes(sdk, binaries, shell):
    r = shell.run(sdk, binaries / "misuse")
    assert r.returncode == 0, r.stdout + r.stderr
    # `ok   <what, padded> <code>[  <aclGetRecentErrMsg()>]`, one line per check
    found = [re.fullmatch(r"(ok  |FAIL) (.+?) +(-?\d+)(?:  (.+))?", line) for line in r.stdout.splitlines()[:-1]]
    checks = [m for m in found if m is not None]
    assert len(checks) == len(found) and len(checks) >= 60, r.stdout
    assert not [m[0] for m in checks if m[1] == "FAIL"]
    failures = [m for m in checks if int(m[3]) >= 100000]  # status codes (the rest are values)
    assert len(failures) >= 40
    no_message = [m[2].strip() for m in failures if not m[4]]
    assert not no_message, f"failed without a message for aclGetRecentErrMsg: {no_message}"
    assert r.stdout.splitlines()[-1] == "0 failed"


def test_eight_threads_200_calls_none_wrong(sdk, binaries, shell):
    r = shell.run(sdk, binaries / "threads")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "8 threads x 200 calls: 1600 done, 0 wrong results, 0 failed calls" in r.stdout


def test_small_call_is_timed(sdk, binaries, shell):
    """The numbers are reported (docs/performance.md, closing notes), not judged: wall-clock limits
    do not belong in tests."""
    r = shell.run(sdk, binaries / "small_call", "50")
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"synchronize, 1024 float32\): median ([\d.]+) us, min ([\d.]+) us over 50 rounds", r.stdout)
    assert m and 0 < float(m[2]) <= float(m[1])
    m = re.search(r"synchronously \(stream nullptr\): median ([\d.]+) us, min ([\d.]+) us; "
                  r"stream / synchronous: median ([\d.]+)x", r.stdout)
    assert m and 0 < float(m[2]) <= float(m[1]) and float(m[3]) > 0


CONVERSIONS = r"""
#include <stdio.h>
#include <string.h>
#include "acl/acl.h"

/* Into argv[1]: every half as a float; a stride over all floats as halves; each midpoint between
   adjacent finite halves (and its negation) as a half. aclrtGetSocName() on stdout. */
int main(int argc, char **argv) {
  FILE *out = fopen(argv[argc - 1], "wb");
  for (uint32_t h = 0; h < 65536; h++) {
    float f = aclFloat16ToFloat((aclFloat16)h);
    fwrite(&f, sizeof f, 1, out);
  }
  for (uint64_t i = 0; i < (1ull << 32); i += 65537) {
    uint32_t bits = (uint32_t)i;
    float f;
    memcpy(&f, &bits, sizeof f);
    aclFloat16 h = aclFloatToFloat16(f);
    fwrite(&h, sizeof h, 1, out);
  }
  for (uint32_t h = 0; h < 0x7bff; h++) {
    float m = (aclFloat16ToFloat((aclFloat16)h) + aclFloat16ToFloat((aclFloat16)(h + 1))) / 2;
    aclFloat16 a = aclFloatToFloat16(m), b = aclFloatToFloat16(-m);
    fwrite(&a, sizeof a, 1, out);
    fwrite(&b, sizeof b, 1, out);
  }
  fclose(out);
  const char *soc = aclrtGetSocName();
  printf("%s\n", soc ? soc : "NULL");
  return 0;
}
"""


def test_half_conversions_and_the_soc_name(sdk, shell, tmp_path):
    """aclFloat16ToFloat / aclFloatToFloat16 (CANN's examples print float16 results with them)
    agree with numpy bit for bit, ties to even; aclrtGetSocName is the SoC profile."""
    source, program, data = tmp_path / "conv.c", tmp_path / "conv", tmp_path / "conv.bin"
    source.write_text(CONVERSIONS)
    _check(_gpp(sdk, source, program))
    r = shell.run(sdk, program, str(data))
    assert r.returncode == 0 and r.stdout == "Ascend910B\n", r.stdout + r.stderr
    raw = data.read_bytes()
    halves = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    got = np.frombuffer(raw[: 65536 * 4], np.float32)
    assert np.array_equal(got.view(np.uint32), halves.astype(np.float32).view(np.uint32))
    floats = np.arange(0, 2**32, 65537, dtype=np.uint64).astype(np.uint32).view(np.float32)
    got = np.frombuffer(raw[65536 * 4 : 65536 * 4 + floats.size * 2], np.uint16)
    with np.errstate(over="ignore"):
        want = floats.astype(np.float16)
    nan = np.isnan(floats)
    assert np.array_equal(got[~nan], want.view(np.uint16)[~nan]) and np.isnan(got[nan].view(np.float16)).all()
    h = np.arange(0x7BFF, dtype=np.uint16)
    mid = (h.view(np.float16).astype(np.float32) + (h + 1).astype(np.uint16).view(np.float16).astype(np.float32)) / 2
    want = np.stack([mid.astype(np.float16), (-mid).astype(np.float16)], 1).view(np.uint16).ravel()
    assert np.array_equal(np.frombuffer(raw[65536 * 4 + floats.size * 2 :], np.uint16), want)
    script = f'source "{sdk}/set_env.sh" && ACLGEN_SOC_VERSION=Ascend950 "{program}" "{data}"'
    assert _check(["bash", "-c", script], env=shell.env()).stdout == "Ascend950\n"


NOT_STARTED = r"""
#include <stdio.h>
#include "acl/acl.h"
#include "aclnnop/aclnn_hardswish_backward.h"

int main(void) {
  int ret = aclInit(NULL);
  printf("aclInit %d: %s\n", ret, aclGetRecentErrMsg());
  printf("aclrtSetDevice %d\n", aclrtSetDevice(0));
  void *p = NULL;
  printf("aclrtMalloc %d: %s\n", aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), aclGetRecentErrMsg());
  int64_t dims[1] = {4};
  float data[4] = {0};
  aclTensor *t = aclCreateTensor(dims, 1, ACL_FLOAT, dims, 0, ACL_FORMAT_ND, dims, 1, data);
  printf("aclCreateTensor %s\n", t == NULL ? "NULL" : "a handle");
  uint64_t size = 0;
  aclOpExecutor *executor = NULL;
  printf("aclnnHardswishBackwardGetWorkspaceSize %d\n",
         (int)aclnnHardswishBackwardGetWorkspaceSize(t, t, t, &size, &executor));
  printf("aclrtSynchronizeStream %d\n", aclrtSynchronizeStream(NULL));
  printf("aclFinalize %d\n", aclFinalize());
  return 0;
}
"""


def test_a_runtime_that_cannot_start_fails_every_call(tmp_path, shell, monkeypatch):
    """The interpreter the SDK recorded cannot run aclgen (here: a Python without cffi, as when
    the environment `aclgen sdk` ran in has lost it). cffi alone would answer 0 — success — from
    every function; the C layer answers aclInit with ACL_ERROR_RT_FAILURE and the cause, every
    later call with an error, and handles with NULL."""
    from aclgen.capi import build

    monkeypatch.setattr(sys, "executable", str(shell.other_bin / "python3"))
    prefix = tmp_path / "cann"
    assert build.sdk(str(prefix), workdir=str(tmp_path))["python"] == str(shell.other_bin / "python3")
    source, program = tmp_path / "not_started.c", tmp_path / "not_started"
    source.write_text(NOT_STARTED)
    _check(_gpp(prefix, source, program))
    r = shell.run(prefix, program)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines["aclInit"].startswith("500003: aclgen's C SDK cannot start its Python runtime")
    assert "No module named '_cffi_backend'" in lines["aclInit"]
    assert lines["aclrtSetDevice"] == "100001"
    assert lines["aclrtMalloc"].startswith("100001: aclgen's C SDK cannot start")
    assert lines["aclCreateTensor"] == "NULL"
    assert lines["aclnnHardswishBackwardGetWorkspaceSize"] == "561000"
    assert lines["aclrtSynchronizeStream"] == "100001" and lines["aclFinalize"] == "100001"


def test_a_declaration_file_gone_at_run_time_is_reported(tmp_path, shell):
    """The library loads --ops files when the program starts; one that has gone makes the
    operator's functions answer ACLNN_ERR_INNER with the reason, not crash."""
    ops_file = tmp_path / "gone_ops.py"
    shutil.copy(USER_OPS, ops_file)
    prefix = tmp_path / "cann"
    _check([sys.executable, "-m", "aclgen.cli", "sdk", "--prefix", str(prefix), "--ops", str(ops_file)])
    ops_file.unlink()
    program = tmp_path / "leaky"
    _check(_gpp(prefix, EXAMPLES / "my_leaky_relu_backward.cpp", program))
    r = shell.run(prefix, program)
    assert r.returncode != 0, r.stdout + r.stderr
    assert "ERROR: 561000" in r.stdout and "was not declared" in r.stdout and "gone_ops.py" in r.stdout


# --------------------------------------------------------------------------- the CMake route


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
@pytest.mark.parametrize("route", ["ASCEND_CUSTOM_PATH", "ASCEND_HOME_PATH"])
def test_cmake_route(sdk, tmp_path, route, shell):
    """CANN's CMake route: the root from ASCEND_CUSTOM_PATH, or from ASCEND_HOME_PATH as
    set_env.sh sets it; CMAKE_SKIP_RPATH, so the programs find the libraries through set_env.sh."""
    build = tmp_path / "build"
    custom = f'export ASCEND_CUSTOM_PATH="{sdk}"; ' if route == "ASCEND_CUSTOM_PATH" else ""
    script = (f'{custom}source "{sdk}/set_env.sh" && cmake -S "{EXAMPLES}" -B "{build}" -DCMAKE_CXX_COMPILER=g++ '
              f'-DCMAKE_SKIP_RPATH=TRUE -DCMAKE_BUILD_TYPE=Release && make -C "{build}" -j2 '
              "hardswish_backward selu_backward my_leaky_relu_backward misuse")
    assert f"CANN install root: {sdk}\n" in _check(["bash", "-c", script], env=shell.env()).stdout
    for program in ("hardswish_backward", "selu_backward", "my_leaky_relu_backward", "misuse"):
        r = shell.run(sdk, build / "bin" / program)
        assert r.returncode == 0, f"{program}: {r.stdout}{r.stderr}"
    assert "Total: 8 PASS, 0 FAIL" in shell.run(sdk, build / "bin" / "selu_backward").stdout


# ------------------------------------------------------------------ handles, in Python


def test_handles_are_checked_and_never_reused():
    h = Handles(7)
    a, b = object(), object()
    ha, hb = h.add(a), h.add(b)
    assert ha != hb and h.get(ha) is a and len(h) == 2
    assert isinstance(h.get(ha + 8), UnknownPointer)  # inside no handle
    assert isinstance(Handles(8).get(ha), UnknownPointer)  # another kind's
    dead = object()
    h.kill(ha, dead)
    assert h.get(ha) is dead and len(h) == 1
    assert h.add(a) not in (ha, hb)


def test_abi_names_every_documented_function():
    names = {f.name for f in abi.FUNCTIONS}
    for name in ("aclGetRecentErrMsg", "aclrtMemset", "aclrtGetDevice", "aclDataTypeSize",
                 "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor", "aclGetViewShape",
                 "aclGetStorageShape", "aclGetViewStrides", "aclnnInit", "aclnnFinalize", "aclInit",
                 "aclrtSetDevice", "aclrtCreateStream", "aclrtMalloc", "aclrtMemcpy", "aclCreateTensor",
                 "aclFloat16ToFloat", "aclFloatToFloat16", "aclrtGetSocName",
                 "aclCreateScalar", "aclrtSynchronizeStream", "aclDestroyTensor", "aclDestroyScalar",
                 "aclrtFree", "aclrtDestroyStream", "aclrtResetDevice", "aclFinalize"):
        assert name in names, name


def test_docs_three_commands(tmp_path, shell):
    """docs/c-sdk.md's three commands, as written, in a fresh shell (the prefix moved to tmp)."""
    page = (ROOT / "docs" / "c-sdk.md").read_text()
    block = re.findall(r"^```sh\n(.*?)^```", page, re.S | re.M)[0]
    commands = block.strip().splitlines()
    assert len(commands) == 3 and commands[0].startswith("aclgen sdk --prefix /tmp/aclgen-cann")
    script = block.replace("/tmp/aclgen-cann", str(tmp_path / "cann"))
    env = shell.env(PYTHONHOME=None, PYTHONPATH=None)  # (they would break the shell's `aclgen` itself)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # where `aclgen` is installed
    r = subprocess.run(["bash", "-euc", script], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "result[7] is: 7.000000" in r.stdout


def test_an_exception_escaping_into_c_is_an_internal_error(monkeypatch):
    """cffi's `onerror` hook: the status (or NULL) and a message for aclGetRecentErrMsg, never 0."""
    from aclgen.capi import library

    messages = []

    class Lib:
        def aclgen_set_error(self, message: bytes) -> None:
            messages.append(message.decode())

    monkeypatch.setattr(library, "_lib", Lib())
    assert library._on_error("aclrtMemcpy", 500000)(ValueError, ValueError("boom"), None) == 500000
    assert messages[-1] == "aclrtMemcpy: internal error: ValueError: boom"
    assert library._on_error("aclCreateTensor", 0)(KeyError, KeyError("k"), None) is None  # NULL
    assert messages[-1].startswith("aclCreateTensor: internal error: KeyError")
