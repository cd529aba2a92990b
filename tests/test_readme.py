"""The README's examples run: every ```python block is executed (in order, each in a fresh
namespace) and the quick start's commands are the ones .ci/run uses, so the docs cannot drift."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def blocks(language: str) -> list[tuple[int, str]]:
    """(line number, code) of every fenced block in `language`."""
    out = []
    for m in re.finditer(rf"^```{language}\n(.*?)^```", README, re.S | re.M):
        out.append((README.count("\n", 0, m.start()) + 2, m.group(1)))
    return out


PYTHON = blocks("python")


def test_readme_has_python_examples():
    assert len(PYTHON) >= 3


@pytest.mark.parametrize("line, code", PYTHON, ids=[f"README.md:{n}" for n, _ in PYTHON])
def test_python_block_runs(line, code, capsys):
    exec(compile("\n" * (line - 1) + code, str(ROOT / "README.md"), "exec"), {"__name__": "readme"})


def test_quick_start_is_two_commands_used_by_ci():
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^```sh\n(.*?)\n```", quick, re.S | re.M)
    assert len(commands) == 2, commands
    install, test = commands
    assert 'pip install -e ".[test]"' in install and install.endswith("aclgen demo")
    assert "-m pytest -q" in test
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -e ".[test]"' in ci
    assert "-m pytest -q" in ci


@pytest.mark.parametrize("command", ["ops", "compile", "opt", "run", "demo", "sdk", "tune"])
def test_every_cli_command_is_documented(command):
    assert f"aclgen {command}" in README
    r = subprocess.run([sys.executable, "-m", "aclgen.cli", command, "--help"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_adding_an_operator_shows_a_declaration_file_in_full():
    """The README's "Adding an operator" is that one file (its code, after the module docstring)."""
    section = README.split("## Adding an operator", 1)[1].split("\n## ", 1)[0]
    (listing,) = re.findall(r"^```py\n(.*?)^```", section, re.S | re.M)
    source = (ROOT / "aclgen" / "ops" / "hardswish_backward.py").read_text()
    code = source.split('"""', 2)[2].lstrip("\n")  # after the module docstring
    assert listing == code
