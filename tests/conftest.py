"""Session-wide test settings, and the fixtures every folder of the suite uses.

The whole suite, and every subprocess it starts (they inherit the environment), uses a
temporary compile cache: tests never read kernels a previous run or the user left in
~/.cache/aclgen, and never write there.

The suite runs on pytest-xdist's workers, one per core (`-n auto` in pyproject.toml; `-n 0`
runs it in one process). The workers share the compile cache, take the longest tests first, and
hand their `report` lines to the controller, which prints them.
"""

import os
import shutil
import tempfile

import pytest

# pytest-xdist's workers inherit the controller's environment: they share its cache (entries are
# written by an atomic rename), so a kernel one worker compiled is a hit for the other
_WORKER = "PYTEST_XDIST_WORKER" in os.environ and "ACLGEN_TEST_CACHE_DIR" in os.environ
_CACHE_DIR = os.environ["ACLGEN_TEST_CACHE_DIR"] if _WORKER else tempfile.mkdtemp(prefix="aclgen-test-cache-")
os.environ["ACLGEN_CACHE_DIR"] = os.environ["ACLGEN_TEST_CACHE_DIR"] = _CACHE_DIR
os.environ.pop("ACLGEN_ALWAYS_COMPILE", None)


# Tests of tens of seconds each (one per built-in operator, ~40 s): first in line, so that the
# workers share them instead of one finishing them alone while the other waits
LONGEST = ("tests/runtime/test_properties.py::", "tests/runtime/test_guard.py::test_no_access_outside_views")


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: not item.nodeid.startswith(LONGEST))  # stable: otherwise as collected


def pytest_sessionfinish(session, exitstatus):
    if not _WORKER:
        shutil.rmtree(_CACHE_DIR, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """A worker's `report` lines, printed by the controller as the worker ends (pytest-xdist's hook)."""
    tr = node.config.pluginmanager.get_plugin("terminalreporter")
    for line in getattr(node, "workeroutput", {}).get("aclgen_report", ()):
        if tr is not None:
            tr.write_line(line)


@pytest.fixture
def soc():
    """`soc(name)` makes `name` the SoC the runtime checks against; the test's end restores the default."""
    import aclgen.acl as acl

    def use(name: str) -> None:
        assert acl.set_soc_version(name) == 0, acl.get_recent_err_msg()

    yield use
    acl.set_soc_version(None)


@pytest.fixture(scope="session")
def report(request):
    """`report(line)` prints a summary line past pytest's capture (shown with -q too); on an
    xdist worker the controller prints it (`pytest_testnodedown`)."""
    config = request.config

    def write(line: str) -> None:
        if hasattr(config, "workeroutput"):
            config.workeroutput.setdefault("aclgen_report", []).append(line)
            return
        tr = config.pluginmanager.get_plugin("terminalreporter")
        capman = config.pluginmanager.get_plugin("capturemanager")
        if tr is None or capman is None:
            print(line)
            return
        with capman.global_and_fixture_disabled():
            tr.write_line(line)

    return write
