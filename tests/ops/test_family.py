"""Every built-in operator that declares a reference (CANN's family members) against it: edge
values (±0, ±inf, NaN, subnormals, the boundaries its formula compares with; for operators that
reduce, values below 1e4 so that no sum overflows f32), every dtype it takes on any SoC, its
attributes' values, within the bound its declaration states: ulps of the output dtype at the
reference's value, or at its `.scale` (the size of the terms, where the result cancels)."""

import numpy as np
import pytest

import aclgen.ops
from aclgen.runtime.function import function_of
from tests.ops.family import attr_cases, dtype_cases, inputs_for, ulp_error

REFERENCED = [op for op in aclgen.ops.OPERATORS.values() if op.reference is not None]
CASES = [(op.python_name, d) for op in REFERENCED for d in dtype_cases(op)]


def _cases_or_skip():
    return CASES or [pytest.param("none", "float32", marks=pytest.mark.skip(reason="no family operator yet"))]


@pytest.mark.parametrize("name,dtype", _cases_or_skip())
def test_matches_its_reference(name, dtype):
    op = aclgen.ops.OPERATORS[name]
    fn = function_of(op)
    ins = inputs_for(op, dtype if "+" not in dtype else tuple(dtype.split("+")))
    scalars = [s.sample for s in op.scalars]
    for attrs in attr_cases(op, ins[0].shape):
        got = fn(*ins, *scalars, *attrs)
        args = [None if a is None else a.astype(np.float64) for a in ins]
        with np.errstate(all="ignore"):
            want = op.reference(*args, *scalars, *attrs)
            scales = op.reference.scale(*args, *scalars, *attrs) if hasattr(op.reference, "scale") else None
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        scales = scales if isinstance(scales, tuple) else (scales,) * len(want)
        for out_name, g, w, sc in zip(op.outputs, got, want, scales):
            sc = None if sc is None else np.broadcast_to(sc, g.shape)
            err = ulp_error(g, np.broadcast_to(w, g.shape), np.dtype(g.dtype).name, sc)
            worst = int(np.argmax(err)) if err.size else 0
            assert err.size == 0 or err.max() <= op.tolerance, (
                f"{op.api} {out_name} {dtype} attrs {attrs}: {err.max()} ulp > {op.tolerance} at element {worst}: "
                f"got {g.ravel()[worst]!r}, want {np.asarray(w).ravel()[worst]!r}")
