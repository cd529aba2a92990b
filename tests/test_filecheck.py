"""Run every tests/filecheck/*.mlir: each `// RUN:` line, with %s = the file, piped to filecheck.

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

HERE = Path(__file__).parent / "filecheck"
FILES = sorted(HERE.glob("*.mlir"))
OUR_PASSES = ("legalize-dtypes", "tile-elementwise", "vectorize-elementwise", "expand-math", "lower-to-llvm")


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
