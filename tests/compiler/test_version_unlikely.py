"""`aclgen.unlikely` and `version-unlikely`: a promise changes the code, never a bit."""

from __future__ import annotations

import numpy as np
import pytest

import aclgen
from aclgen import FormulaError, exp, logical_not, select, unlikely
from aclgen.knobs import overridden
from tests.reference import same_bits


def care(x):
    """A rare branch worth skipping: exp of a shifted x, scaled back (so it is not x itself)."""
    return exp(x + 100.0) * 2.0


def promised(x):
    return select(unlikely(x < -80.0), care(x), x * 3.0 + 1.0)


def plain(x):
    return select(x < -80.0, care(x), x * 3.0 + 1.0)


def inputs(n: int, rng) -> dict[str, np.ndarray]:
    """No rare lane; one rare lane in a few vector steps; every lane rare; edge values."""
    common = rng.uniform(-50, 50, n).astype(np.float32)
    sparse = common.copy()
    k = min(n, 5)
    sparse[rng.choice(n, k, replace=False)] = rng.uniform(-120, -80.5, k).astype(np.float32)
    rare = rng.uniform(-120, -80.5, n).astype(np.float32)
    below = float(np.nextafter(np.float32(-80), np.float32(-100)))
    edges = np.resize(np.array([-80.0, below, -0.0, 0.0, np.inf, -np.inf, np.nan, -1e-45, 3e38, -3e38], np.float32), n)
    return {"common": common, "sparse": sparse, "rare": rare, "edges": edges}


def reference(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        care64 = np.float32(np.exp(np.float32(x64 + 100.0))) * np.float32(2.0)
        return np.where(x < -80.0, care64, np.float32(np.float32(x * np.float32(3.0)) + np.float32(1.0)))


def test_the_versions_agree_with_the_plain_formula_and_the_schedule_never_changes_bits():
    ours = aclgen.compile(promised, name="promised")
    theirs = aclgen.compile(plain, name="plain_formula")
    rng = np.random.default_rng(7)
    for n in (1, 7, 8, 33, 1000, 70001):
        for what, x in inputs(n, rng).items():
            want = theirs(x)
            assert same_bits(ours(x), want), (n, what)
            if what != "edges":  # exp's own rounding is not numpy's: the select is what is tested
                finite = np.isfinite(want)
                np.testing.assert_allclose(want[finite], reference(x)[finite], rtol=2e-7)
            for knobs in ({"ACLGEN_THREADS": "1"}, {"ACLGEN_THREADS": "2"}, {"ACLGEN_VECTOR_WIDTH": "4"},
                          {"ACLGEN_VECTOR_WIDTH": "32"}, {"ACLGEN_TILE_SIZE": "96"}):
                with overridden(**knobs):
                    assert same_bits(ours(x), want), (n, what, knobs)


def test_a_vector_step_takes_one_test_and_two_versions():
    """The kernel's IR after the pass: the step tests its mask once, and the version for no rare
    lane has none of the care's arithmetic (its shift by 100); no promise is left."""
    op = aclgen.compile(promised, name="promised_ir").op
    k = op.kernel(op.variant([aclgen.dtypes.float32]))
    text = k.ir["version-unlikely"]
    assert text.count("tile.any") == 1 and "ew.unlikely" not in text
    then, otherwise = text.split("} else {")
    assert "100.0" in then and "100.0" not in otherwise.split("} {tile.vector}")[0]
    assert "ew.unlikely" in k.ir["vectorize-elementwise"]


def test_half_type_results_never_depend_on_a_rare_neighbour():
    """Both versions narrow alike: the same expansions (a function whose only other use is in the
    care keeps its float32 form in the copy too) and the same bf16 fix-ups (a signaling NaN input
    passed through is quieted in both, as the care's float16 operand makes the rare version do)."""
    import ml_dtypes

    bf16 = ml_dtypes.bfloat16
    f = aclgen.compile(lambda x: (lambda e: select(unlikely(x < -80.0), e - 1.0, e))(exp(x)), dtypes="bfloat16",
                       name="half_promised")
    g = aclgen.compile(lambda x: (lambda e: select(x < -80.0, e - 1.0, e))(exp(x)), dtypes="bfloat16", name="half_plain")
    x = np.arange(65536, dtype=np.uint16).view(bf16)
    assert same_bits(f(x), g(x))
    v = bf16(6.84375)  # exp = 938.00005: 936 from the half-type form, 940 correctly rounded
    alone, beside = f(np.array([v] * 8, bf16)), f(np.array([v] * 7 + [-90.0], bf16))
    assert alone[0] == beside[0] == bf16(940.0)

    h = aclgen.compile(lambda x, y: select(unlikely(x < -80.0), y, x), dtypes=("bfloat16", "float16"),
                       out_dtypes="bfloat16", name="twin_promised")
    snan = np.array([0x7F81], np.uint16).view(bf16)[0]
    for neighbour in (1.0, -90.0):
        got = h(np.array([snan] + [neighbour] * 7, bf16), np.ones(8, np.float16))
        assert got.view(np.uint16)[0] == 0x7FC1, neighbour


def test_a_row_kernel_versions_its_elementwise_step_only():
    """A row kernel's accumulating loop carries its sums from step to step: a promise there is
    the mask itself; its elementwise step (x - s) is versioned like any other."""
    def rows(x):
        s = aclgen.sum(select(unlikely(x < -80.0), care(x), x), -1)
        return select(unlikely(x > 1e30), x, x - s)

    f = aclgen.compile(rows, name="promised_rows")
    g = aclgen.compile(lambda x: (lambda s: select(x > 1e30, x, x - s))(aclgen.sum(select(x < -80.0, care(x), x), -1)),
                       name="plain_rows")
    x = np.random.default_rng(3).uniform(-100, 10, (5, 37)).astype(np.float32)
    assert same_bits(f(x), g(x))
    op = f.op
    assert op.kernel(op.variant([aclgen.dtypes.float32], rank=2)).ir["version-unlikely"].count("tile.any") == 1


def test_one_promise_on_several_masks_and_nested_promises():
    """unlikely(a, b) tests a | b once and gives a and b back; a mask the formula expects to hold
    is promised through its negation; a later promise versions the common copy again."""
    def both(x):
        low, not_small = unlikely(x < -80.0, logical_not(x < 1e30))
        y = select(low, care(x), select(not_small, x * 0.5, x * 3.0 + 1.0))
        return select(unlikely(y > 100.0), y - 100.0, y)

    def plain_both(x):
        y = select(x < -80.0, care(x), select(logical_not(x < 1e30), x * 0.5, x * 3.0 + 1.0))
        return select(y > 100.0, y - 100.0, y)

    f, g = aclgen.compile(both, name="promised_both"), aclgen.compile(plain_both, name="plain_both")
    op = f.op
    text = op.kernel(op.variant([aclgen.dtypes.float32])).ir["version-unlikely"]
    assert text.count("tile.any") == 2
    rng = np.random.default_rng(11)
    for x in (*inputs(4096, rng).values(), np.float32([3e38, 1e30, 40.0, -90.0] * 100), np.float32([40.0] * 333)):
        assert same_bits(f(x), g(x))
        with overridden(ACLGEN_VECTOR_WIDTH="8"):
            assert same_bits(f(x), g(x))


def test_a_promise_takes_a_mask():
    with pytest.raises(FormulaError, match="unlikely needs a mask"):
        aclgen.compile(lambda x: select(unlikely(x), x, 0.0), name="not_a_mask")
