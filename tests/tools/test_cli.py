"""The `aclgen` command, run as a subprocess of this interpreter (python -m aclgen.cli)."""

from __future__ import annotations

import re
import subprocess

import pytest

from aclgen.cli import main
from aclgen.codegen.target import host
from aclgen.tools.demo import check_example
from tests import runners
from tests.registry import builtins, resolve


def aclgen(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The command as a user runs it: ACLGEN_DEBUG unset, so errors are one line."""
    return runners.aclgen(*args, stdin=stdin, timeout=timeout, env={"ACLGEN_DEBUG": ""})


def loop_bodies(asm: str) -> list[str]:
    """The instructions between each backward-branch target label and its branch."""
    lines = asm.splitlines()
    labels = {m.group(1): i for i, text in enumerate(lines) if (m := re.match(r"^(\.LBB\w+):", text))}
    bodies = []
    for i, line in enumerate(lines):
        m = re.match(r"\s+j\w*\s+(\.LBB\w+)", line)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            bodies.append("\n".join(lines[labels[m.group(1)] : i + 1]))
    return bodies


def test_ops_lists_every_operator_with_dtypes():
    r = aclgen("ops")
    assert r.returncode == 0, r.stderr
    for name in ("hardswish_backward", "selu_backward", "softshrink_backward", "swi_glu_grad", "threshold_backward"):
        assert name in r.stdout
    assert "aclnnHardswishBackward(gradOutput, self, out)" in r.stdout
    assert "Ascend950: float32, int32, float16, int8, uint8, bfloat16, int64" in r.stdout


def test_compile_llvm_is_vectorized_with_fcmp_and_select():
    r = aclgen("compile", "hardswish_backward", "--dtype", "float32", "--emit", "llvm")
    assert r.returncode == 0, r.stderr
    assert re.search(r"fcmp \w+ <\d+ x float>", r.stdout)
    assert re.search(r"select <\d+ x i1>", r.stdout)
    if host().f32_lanes == 8:  # twice the f32 lanes by default (vectorize_elementwise.model_width)
        assert "<16 x float>" in r.stdout
        assert "fcmp olt <16 x float>" in r.stdout


def test_compile_asm_has_vector_registers_and_no_calls_in_loops():
    r = aclgen("compile", "hardswish_backward", "--dtype", "float32", "--emit", "asm")
    assert r.returncode == 0, r.stderr
    if host().f32_lanes == 8:
        assert "ymm" in r.stdout
    bodies = loop_bodies(r.stdout)
    assert bodies, "no loop found in the assembly"
    for body in bodies:
        assert "call" not in body, body


def test_compile_swiglu_exp_has_no_calls():
    r = aclgen("compile", "swi_glu_grad", "--dtype", "bfloat16", "--emit", "asm")
    assert r.returncode == 0, r.stderr
    assert "call" not in r.stdout


def test_print_ir_after_all_names_every_pass_and_shows_our_ops():
    r = aclgen("compile", "threshold_backward", "--dtype", "float16", "--print-ir-after-all")
    assert r.returncode == 0, r.stderr
    for name in ("legalize-dtypes", "tile-elementwise", "vectorize-elementwise", "expand-math",
                 "cse", "convert-scf-to-cf", "lower-to-llvm"):  # fmt: skip
        assert f"// -----// IR Dump After {name} //----- //" in r.stdout
    for op in ("ew.kernel", "ew.convert", "ew.cmp", "ew.select", "tile.load", "tile.store", "tile.splat", "llvmx.fcmp"):
        assert op in r.stdout, op


@pytest.mark.parametrize("stage", ["dsl", "ew", "tile-elementwise", "llvm-dialect", "llvm-ir"])
def test_compile_emits_each_stage(stage, tmp_path):
    out = tmp_path / "k.txt"
    r = aclgen("compile", "softshrink_backward", "--dtype", "float16,float32", "--emit", stage, "-o", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "softshrink_backward_f16_f32_f32" in text or stage == "dsl"


def test_compile_user_errors_are_one_line():
    """Wrong arguments and ACLGEN_* settings out of their range are one line naming what was wrong."""
    for args, env, message in (
        (["nope", "--dtype", "float32"], {}, "nope"),
        (["selu_backward", "--dtype", "uint8"], {}, "uint8"),
        (["selu_backward", "--dtype", "float32", "--layout", "diagonal"], {}, "'diagonal' is not one of"),
        (["hardswish_backward", "--dtype", "float32", "--layout", "broadcast,broadcast,broadcast"], {},
         "an output cannot be broadcast"),
        (["selu_backward", "--dtype", "float32", "--width", "24"], {}, "--width 24: must be 0 or a power of two up to 256"),
        (["selu_backward", "--dtype", "float32", "--tile-size", "-1"], {}, "--tile-size -1: must be 0 or"),
        (["selu_backward", "--dtype", "float32"], {"ACLGEN_VECTOR_WIDTH": "4096"}, "ACLGEN_VECTOR_WIDTH='4096': must be 0"),
        (["selu_backward", "--dtype", "float32"], {"ACLGEN_THREADS": "-2"}, "ACLGEN_THREADS='-2': must be 0 (every core)"),
    ):
        r = runners.aclgen("compile", *args, env={"ACLGEN_DEBUG": "", **env})
        assert r.returncode == 1
        assert r.stderr.startswith("aclgen: error:") and message in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "Traceback" not in r.stderr


@pytest.mark.parametrize("source, message", [
    ('import aclgen\n@aclgen.operator("CliNoInputs")\ndef f(x):\n    return x\n',
     ":2: TypeError: declare() missing 2 required keyword-only arguments: 'inputs' and 'outputs'"),
    ("def f(:\n    pass\n", ":1: SyntaxError: invalid syntax"),
    ("x = 1\nraise RuntimeError('the file stops here')\n", ":2: RuntimeError: the file stops here"),
])
def test_a_declaration_file_that_fails_is_one_line_naming_its_line(tmp_path, source, message):
    """The user's own code failing while the file loads is their error, at their line: not an
    internal error of aclgen's."""
    path = tmp_path / "ops_file.py"
    path.write_text(source)
    for args in (["compile", f"{path}:f", "--dtype", "float32"], ["ops", str(path)]):
        r = aclgen(*args)
        assert r.returncode == 1
        assert r.stderr.strip().splitlines() == [f"aclgen: error: {path}{message}"], r.stderr


def test_opt_round_trips_a_compile_stage(tmp_path):
    ir = aclgen("compile", "threshold_backward", "--dtype", "float16", "--emit", "ew").stdout
    r = aclgen("opt", "-", "-p", "legalize-dtypes,tile-elementwise{tile_size=512},vectorize-elementwise{width=4}", stdin=ir)
    assert r.returncode == 0, r.stderr
    assert "vector<4xf16>" in r.stdout or "vector<4xf32>" in r.stdout
    assert "arith.constant 512 : i64" in r.stdout


@pytest.mark.parametrize(
    "args, stdin, message",
    [
        (["-", "-p", "no-such-pass"], "builtin.module {}", "aclgen: error: bad pass pipeline 'no-such-pass'"),
        (["-", "-p", "tile-elementwise{size=3}"], "builtin.module {}", "aclgen: error: bad pass pipeline"),
        (["-", "-p", "cse"], 'builtin.module {\n  %0 = "foo.bar"() : () -> i32\n}', "<stdin>:2:"),
        (["/nonexistent.mlir", "-p", "cse"], None, "aclgen: error: cannot read /nonexistent.mlir"),
        (
            ["-", "-p", "cse"],
            'builtin.module {\n  %0 = "arith.addi"(%1, %1) : (i32, i32) -> i64\n  %1 = "arith.constant"() <{value = 1 : i32}> : () -> i32\n}',
            "error:",
        ),
    ],
)
def test_opt_errors_are_one_line_without_traceback(args, stdin, message):
    r = aclgen("opt", *args, stdin=stdin)
    assert r.returncode == 1
    assert message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr


def test_debug_env_shows_the_traceback():
    r = runners.aclgen("opt", "-", "-p", "cse", stdin='builtin.module {\n  %0 = "foo.bar"() : () -> i32\n}',
                       env={"ACLGEN_DEBUG": "1"})
    assert r.returncode != 0
    assert "Traceback" in r.stderr


def test_run_reports_error_and_time():
    r = aclgen("run", "softshrink_backward", "--shape", "33x17", "--dtype", "bfloat16", "--param", "lambd=1.5", "--seconds", "0.01")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "max error   0  (0 of 561 elements differ" in r.stdout
    assert re.search(r"median\s+[\d.]+ us", r.stdout)


def test_run_rejects_an_odd_swiglu_dim():
    r = aclgen("run", "swi_glu_grad", "--shape", "4x7")
    assert r.returncode == 1 and "must be even" in r.stderr


def test_spec_example_check_catches_a_wrong_digit():
    import numpy as np

    import aclgen.ops as ops

    (example,) = ops.OPERATORS["hardswish_backward"].examples
    out = ops.hardswish_backward(*example.args)
    assert check_example(out, example.expected) is None
    wrong = out.copy()
    wrong[0, 1] = np.nextafter(wrong[0, 1], np.float32(0), dtype=np.float32) - np.float32(1e-7)
    assert check_example(wrong, example.expected) is not None


def test_demo_passes_and_prints_a_row_per_dtype(capsys):
    # the seeds and a sample of the family (`aclgen demo` alone runs every operator)
    sample = ",".join(op.python_name for op in builtins())
    assert main(["demo", "--shape", "37x19", "--only", sample]) == 0
    out = capsys.readouterr().out
    assert out.count("example ok") == sum(len(op.examples) for op in builtins())
    assert "threshold_backward   uint8" in out
    rows = sum(len(op.examples) + len(op.supported("Ascend910B")) for op in builtins())
    assert f"{rows} of {rows} checks ok" in out


@pytest.mark.parametrize(("name", "shape", "fitted"), [
    ("relu", (1000, 1002), (1000, 1002)),
    ("swi_glu_grad", (1000, 1001), (1000, 1002)),   # halves of an even dim
    ("fatrelu_mul", (1000, 1002), (3914, 256)),     # its tiling takes a last dim of at most 1024
    ("gelu_mul", (300000, 2), (2343, 256)),         # ... and at most 200000 rows
])
def test_demo_fits_its_random_shape_to_each_operator(name, shape, fitted):
    from aclgen.tools.demo import fitting_shape
    from aclgen.tools.run import input_shapes
    op = resolve(name)
    assert fitting_shape(op, shape) == fitted
    if fitted != shape:
        with pytest.raises(ValueError):
            input_shapes(op, shape)


RELU = """
import numpy as np
import aclgen


def relu(x):
    return np.where(np.isnan(x), x, np.maximum(x, 0.0))


@aclgen.operator("SelectRelu", inputs=("self",), outputs=("out",), reference=relu)
def select_relu(x):
    return aclgen.select(x > 0.0, x, 0.0)   # 0 at NaN: torch.relu keeps the NaN


@aclgen.operator("MaximumRelu", inputs=("self",), outputs=("out",), reference=relu)
def maximum_relu(x):
    return aclgen.maximum(x, 0.0)
"""


def test_demo_compares_a_users_operators_with_their_reference(tmp_path, capsys):
    path = tmp_path / "my_relu.py"
    path.write_text(RELU)
    assert main(["demo", "--shape", "5x3", "--ops", str(path), "--only", "select_relu,maximum_relu"]) == 1
    out = capsys.readouterr().out
    # the -O0 build shares the formula's mistake; the reference does not
    assert "select_relu          float32   5x3        = scalar -O0 build" in out
    assert "select_relu          float32   edges      reference: out: inf ulp" in out and "want nan" in out
    assert "maximum_relu         float32   edges      reference: 0 <= 0 ulp" in out


def test_opt_help_is_xdsl_opts_and_lists_our_passes():
    r = aclgen("opt", "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: aclgen opt")
    # Flags only xDSLOptMain registers (the old hand-written `opt` had none of them).
    for flag in ("--print-between-passes", "--time-passes", "--print-op-generic", "--allow-unregistered-dialect", "--split-input-file", "--verify-diagnostics", "--output-file"):
        assert flag in r.stdout, flag
    text = "".join(r.stdout.split())  # argparse wraps the -p list, breaking names at hyphens
    passes = set(text.split("Availablepassesare:")[1].split("--print-between-passes")[0].split(","))
    assert {"legalize-dtypes", "tile-elementwise", "vectorize-elementwise", "expand-math", "lower-to-llvm"} <= passes
    assert {"cse", "dce", "canonicalize", "convert-scf-to-cf", "convert-arith-to-riscv"} <= passes  # xDSL's


def test_opt_xdsl_flags_work_on_our_ir():
    ir = aclgen("compile", "hardswish_backward", "--dtype", "float32", "--emit", "ew").stdout
    r = aclgen("opt", "-", "-p", "legalize-dtypes,tile-elementwise{tile_size=512},vectorize-elementwise{width=4}", "--print-between-passes", stdin=ir)
    assert r.returncode == 0, r.stderr
    assert "IR after legalize-dtypes:" in r.stdout and "IR after tile-elementwise:" in r.stdout
    assert "vector<4xf32>" in r.stdout.split("IR after tile-elementwise:")[1]  # the final output follows
    r = aclgen("opt", "-", "-p", "legalize-dtypes", "--print-op-generic", stdin=ir)
    assert r.returncode == 0, r.stderr
    assert '"builtin.module"() ({' in r.stdout and '"ew.kernel"() <{' in r.stdout


def test_opt_pass_failure_names_the_pass():
    ir = aclgen("compile", "hardswish_backward", "--dtype", "float32", "--emit", "ew").stdout
    r = aclgen("opt", "-", "-p", "legalize-dtypes,lower-to-llvm", stdin=ir)
    assert r.returncode == 1
    assert r.stderr.startswith("<stdin>: error: in pass lower-to-llvm: "), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = aclgen("opt", "-", "-p", "legalize-dtypes,lower-to-llvm", "--verify-diagnostics", stdin=ir)
    assert r.returncode == 0 and r.stdout.startswith("<stdin>: error: in pass lower-to-llvm: "), r.stdout + r.stderr


# -- what the commands say -----------------------------------------------------------------------


def test_tune_help_prints_a_percent_sign():
    r = aclgen("tune", "--help")
    assert r.returncode == 0 and "by 3%)" in " ".join(r.stdout.split()) and "%%" not in r.stdout


def test_compile_refuses_a_rank_no_call_runs():
    r = aclgen("compile", "hardswish_backward", "--dtype", "float32", "--rank", "9")
    assert r.returncode == 1
    assert "--rank 9: aclnnHardswishBackward takes tensors of at most 8 dims" in r.stderr


@pytest.mark.parametrize("command", [["run", "hardswish_backward", "--shape", "4x4"], ["demo"]])
def test_a_bad_soc_names_the_option(command):
    r = aclgen(*command, "--soc", "Ascend9")
    assert r.returncode == 1 and r.stdout == ""
    assert "--soc 'Ascend9' is not one of Ascend910, Ascend910B" in r.stderr and "ACLGEN_SOC_VERSION" not in r.stderr


def test_run_says_where_the_variant_came_from(tmp_path):
    notes = []
    for _ in range(2):
        r = runners.aclgen("run", "threshold_backward", "--shape", "64x64", "--seconds", "0.01",
                           env={"ACLGEN_CACHE_DIR": str(tmp_path)})
        assert r.returncode == 0, r.stderr
        notes.append(re.search(r"first call +[\d.]+ ms \((.*)\)", r.stdout)[1])
    assert notes == ["includes compiling the variant", "includes loading the variant from the disk cache"]


def test_demo_rows_say_how_their_variant_came():
    from aclgen.tools.demo import Row

    def row(compile_ms, load_ms):
        return Row("op", "float32", "4", "ok", compile_ms, load_ms, 1.0, True)

    assert [row(41.25, None).kernel, row(None, 0.93).kernel, row(None, None).kernel] == ["41.2", "disk 0.9", "cached"]


def test_counts_read_as_english():
    from aclgen.tools import count

    assert [count(1, "variant"), count(3, "variant"), count(1, "entry", "entries"), count(0, "entry", "entries")] == [
        "1 variant", "3 variants", "1 entry", "0 entries"]


def test_dir_of_aclgen_lists_what_loads_on_first_use():
    import aclgen

    assert {"operator", "compile", "OperatorError", "Function"} <= set(dir(aclgen))
