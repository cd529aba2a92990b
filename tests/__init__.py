"""aclgen's test suite, laid out like the code: compiler/, runtime/, capi/, tools/, declaration/
and ops/<family>/, with the modules every folder shares here (reference.py, registry.py, ...)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the checkout: README.md, docs/, examples/, benchmarks/
