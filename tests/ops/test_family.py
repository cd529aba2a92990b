"""Every built-in operator that declares a reference (CANN's family members) against it: edge
values (±0, ±inf, NaN, subnormals, the boundaries its formula compares with; for operators that
reduce, values below 1e4 so that no sum overflows f32), every dtype it takes on any SoC, its
attributes' values, within the bound its declaration states: ulps of the output dtype at the
reference's value, or at its `.scale` (the size of the terms, where the result cancels)."""

import pytest

import aclgen.ops
from aclgen.tools.accuracy import check, dtype_cases

REFERENCED = [op for op in aclgen.ops.OPERATORS.values() if op.reference is not None]
CASES = [(op.python_name, d) for op in REFERENCED for d in dtype_cases(op)]


@pytest.mark.parametrize("name,dtype", CASES)
def test_matches_its_reference(name, dtype):
    op = aclgen.ops.OPERATORS[name]
    for f in check(op, dtype if "+" not in dtype else tuple(dtype.split("+"))):
        assert f.ulp <= op.tolerance, f"{op.api} {dtype} {f} > {op.tolerance}"
