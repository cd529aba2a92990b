"""The README and docs/ run as written: every ```python block is executed (in order, each in a
fresh namespace; a block whose first line is `# needs torch` only where torch is installed),
the quick start's commands are the ones .ci/run uses, and the pages point at nothing outside the
repository, so the docs cannot drift."""

from __future__ import annotations

import importlib.util
import itertools
import re
import shlex
from pathlib import Path

import pytest

from tests import ROOT, runners

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README = (ROOT / "README.md").read_text()


def blocks(page: Path, language: str) -> list[tuple[int, str]]:
    """(line number, code) of every fenced block in `language` on `page`."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(1))
            for m in re.finditer(rf"^```{language}\n(.*?)^```", text, re.S | re.M)]


PYTHON = [(page, line, code) for page in PAGES for line, code in blocks(page, "python")]


def test_pages_have_python_examples():
    assert len(blocks(ROOT / "README.md", "python")) >= 3
    assert len(PYTHON) >= 10


# torch.compile's own machinery still calls a deprecated torch.jit API (torch 2.13)
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("page, line, code", PYTHON,
                         ids=[f"{p.relative_to(ROOT)}:{n}" for p, n, _ in PYTHON])
def test_python_block_runs(page, line, code, capsys):
    if code.startswith("# needs torch") and importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    exec(compile("\n" * (line - 1) + code, str(page), "exec"), {"__name__": "docs"})


def test_quick_start_is_two_commands_used_by_ci():
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^```sh\n(.*?)\n```", quick, re.S | re.M)
    assert len(commands) == 2, commands
    install, test = commands
    assert "pip install -e . " in install and install.endswith("aclgen demo")  # no test or lint tools
    assert 'pip install -e ".[test]"' in test and "-m pytest -q" in test
    ci = (ROOT / ".ci" / "run").read_text()
    for step in ("pip install -e .\n", "aclgen demo", 'pip install -e ".[test', "python -m pytest -q"):
        assert step in ci, step


def test_the_extras_keep_lint_tools_apart():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    everything = " ".join(project["dependencies"] + extras["test"])
    assert "ruff" not in everything and "pyright" not in everything and "nodejs" not in everything
    assert any(d.startswith("ruff") for d in extras["lint"]) and any(d.startswith("pyright") for d in extras["lint"])


@pytest.mark.parametrize("command", ["ops", "compile", "opt", "run", "demo", "bench", "tune", "sdk", "cache", "docs"])
def test_every_cli_command_is_documented(command):
    assert f"aclgen {command}" in (ROOT / "docs" / "cli.md").read_text()
    r = runners.aclgen(command, "--help")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_pages_point_at_nothing_outside_the_repository(page):
    text = page.read_text()
    for outside in ("SPEC.md", "DESIGN.md", "C_API.md", "STYLE.md", "../", "/work/", "Issue 4", "issue 4",
                    "run_issue4"):
        assert outside not in text, f"{page.name} mentions {outside}"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):  # relative links resolve
        if not target.startswith(("http://", "https://")):
            assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_shell_commands_write_nothing_into_the_checkout(page):
    """A command that writes a file names a path outside the repository, unless its block first
    changes into a scratch directory."""
    for line, block in blocks(page, "sh"):
        if block.startswith('cd "$(mktemp -d)"'):
            continue
        for command in block.splitlines():
            words = shlex.split(command.split("#", 1)[0]) if command.strip() else []
            for flag, path in itertools.pairwise(words):
                if flag in ("-o", ">", "-B", "--prefix"):
                    assert path.startswith(("/", "$")), f"{page.name}:{line}: {command}"


def test_adding_a_builtin_shows_its_declaration():
    """docs/operators.md shows hard_swish_grad.py's declaration and formula as they are."""
    section = (ROOT / "docs" / "operators.md").read_text().split("## Adding a built-in operator", 1)[1]
    (listing,) = re.findall(r"^```py\n(.*?)^```", section, re.S | re.M)
    source = (ROOT / "aclgen" / "ops" / "activation" / "hard_swish_grad.py").read_text()
    assert listing == source[source.index("@aclgen.operator(") :]
