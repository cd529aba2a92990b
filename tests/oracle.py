"""PyTorch, the optional oracle: the module where it is installed, else None. The tests that compare
with it carry `needs_torch` and skip without it; the rest of their module (codes, boundaries,
schedules) runs everywhere, and every operator meets its numpy `reference=` in tests/ops/test_family.py."""

from __future__ import annotations

import pytest

try:
    import torch
except ImportError:  # not a dependency: CI's fresh environment has none
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the optional oracle) is not installed")
