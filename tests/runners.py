"""Running code away from pytest's own process and thread: a fresh interpreter (a crash or a
hang is a failed test, not a lost run), the `aclgen` command, and a group of threads with a
deadline (a deadlock is a failed test, not a stuck suite)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

from tests import ROOT


def environment(env: dict[str, str | None] | None = None) -> dict[str, str]:
    """os.environ with `env` laid over it; a None value removes that variable."""
    e = {**os.environ, **(env or {})}
    return {k: v for k, v in e.items() if v is not None}


def python(code: str, *args: str, env: dict[str, str | None] | None = None, cwd=ROOT, timeout: float = 300,
           ) -> subprocess.CompletedProcess:
    """`python -c CODE ARGS` (dedented) in this interpreter, with the checkout on PYTHONPATH (so it
    can import `tests`). A cwd other than the checkout keeps its ./aclgen from shadowing the
    PYTHONPATH of a child that must find another aclgen."""
    e = environment(env)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=e)


def run_json(code: str, timeout: float = 300, env: dict[str, str | None] | None = None):
    """Run `code` (which prints one JSON line last) in a fresh interpreter; a crash fails."""
    p = python(code, env=env, timeout=timeout)
    assert p.returncode == 0, f"subprocess died with {p.returncode}:\n{p.stderr[-3000:]}"
    return json.loads(p.stdout.strip().splitlines()[-1])


def aclgen(*args: str, env: dict[str, str | None] | None = None, stdin: str | None = None, cwd=None,
           timeout: float = 300) -> subprocess.CompletedProcess:
    """The `aclgen` command (`python -m aclgen.cli ARGS` of this interpreter), in pytest's directory
    unless `cwd` says otherwise."""
    return subprocess.run([sys.executable, "-m", "aclgen.cli", *args], capture_output=True, text=True, input=stdin,
                          env=environment(env), cwd=cwd, timeout=timeout)


def run_threads(target, count: int, timeout: float = 120) -> None:
    """Run target(0), ..., target(count - 1) on their own threads; fails when one is still running
    after `timeout` (hung) or raised (an assert in `target` is reported with its thread)."""
    errors: list[str] = []

    def guarded(k: int) -> None:
        try:
            target(k)
        except BaseException as e:
            errors.append(f"thread {k}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=guarded, args=(k,), daemon=True) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    hung = [k for k, t in enumerate(threads) if t.is_alive()]
    assert not hung, f"threads {hung} still running after {timeout} s: a deadlock?"
    assert not errors, "\n".join(errors)
