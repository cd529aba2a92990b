"""Run every tests/compiler/filecheck/*.mlir: each `// RUN:` line, with %s = the file, piped to filecheck.

`aclgen` in a RUN line is this interpreter's `python -m aclgen.cli`, `filecheck` is the PyPI
package's script next to it, so the tests use the environment pytest runs in.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aclgen.passes import pipeline

HERE = Path(__file__).parent / "filecheck"
FILES = sorted(HERE.glob("*.mlir"))
OUR_PASSES = pipeline.ours()  # the pipeline's passes aclgen defines (xDSL's cse and convert-scf-to-cf are tested there)


def _filecheck() -> str:
    local = Path(sys.executable).parent / "filecheck"
    if local.exists():
        return str(local)
    found = shutil.which("filecheck")
    if found is None:
        pytest.fail("the filecheck executable is not installed: pip install -e \".[test]\" (it is in the test extra)")
    return found


def run_lines(path: Path) -> list[str]:
    return [line.split("RUN:", 1)[1].strip() for line in path.read_text().splitlines() if line.startswith("// RUN:")]


def expand(command: str, path: Path) -> str:
    aclgen = f"{shlex.quote(sys.executable)} -m aclgen.cli"
    words = []
    for word in command.split(" "):
        if word == "aclgen":
            word = aclgen
        elif word == "filecheck":
            word = shlex.quote(_filecheck())
        words.append(word)
    return " ".join(words).replace("%s", shlex.quote(str(path)))


def test_every_pass_of_ours_has_a_filecheck_file():
    names = {p.stem for p in FILES}
    assert set(OUR_PASSES) <= names


def test_opt_output_does_not_depend_on_the_machine():
    """Host facts are pass options the compiler fills in: `aclgen opt` with default options
    prints the same for every target."""
    source = HERE / "vectorize-elementwise.mlir"
    outs = []
    for cpu in ("haswell", "skylake-avx512", "generic"):
        cmd = [sys.executable, "-m", "aclgen.cli", "opt", str(source), "--split-input-file",
               "-p", "vectorize-elementwise,expand-math,convert-scf-to-cf,lower-to-llvm"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "ACLGEN_CPU_NAME": cpu, "ACLGEN_DEBUG": ""})
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1] == outs[2]
    assert "vector<16xf32>" in outs[0]  # lanes=8 by default: two registers of eight


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_filecheck(path: Path):
    lines = run_lines(path)
    assert lines, f"{path.name} has no // RUN: line"
    for line in lines:
        command = expand(line, path)
        proc = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            capture_output=True,
            text=True,
            env={**os.environ, "ACLGEN_DEBUG": ""},
            timeout=120,
        )
        assert proc.returncode == 0, f"RUN: {line}\n{proc.stdout}\n{proc.stderr}"
