"""Session-wide test settings.

The whole suite, and every subprocess it starts (they inherit the environment), uses a
temporary compile cache: tests never read kernels a previous run or the user left in
~/.cache/aclgen, and never write there.
"""

import os
import shutil
import tempfile

_CACHE_DIR = tempfile.mkdtemp(prefix="aclgen-test-cache-")
os.environ["ACLGEN_CACHE_DIR"] = _CACHE_DIR
os.environ.pop("ACLGEN_ALWAYS_COMPILE", None)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)
