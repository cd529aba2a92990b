"""Session-wide test settings, and the fixtures every folder of the suite uses.

The whole suite, and every subprocess it starts (they inherit the environment), uses a
temporary compile cache: tests never read kernels a previous run or the user left in
~/.cache/aclgen, and never write there.
"""

import os
import shutil
import tempfile

import pytest

_CACHE_DIR = tempfile.mkdtemp(prefix="aclgen-test-cache-")
os.environ["ACLGEN_CACHE_DIR"] = _CACHE_DIR
os.environ.pop("ACLGEN_ALWAYS_COMPILE", None)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)


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
    """`report(line)` prints a summary line past pytest's capture (shown with -q too)."""
    config = request.config

    def write(line: str) -> None:
        tr = config.pluginmanager.get_plugin("terminalreporter")
        capman = config.pluginmanager.get_plugin("capturemanager")
        if tr is None or capman is None:
            print(line)
            return
        with capman.global_and_fixture_disabled():
            tr.write_line(line)

    return write
