"""Property-based tests of the built-in operators (the registry's) through the aclnn API (hypothesis).

Every case draws a dtype of the operator, a rank 0..8 and shape (0 to ~100k elements), a view
per operand (contiguous, transposed, stepped with gaps, random or zero strides, storage offsets,
size-1 dims with odd strides, broadcast shapes where the operator broadcasts), storage in numpy
or runtime memory (sometimes shared by the inputs), in-place `out`, scalar dtypes, streams and
repeatable executors, and values drawn to hit the edges (±0, ±inf, NaN, subnormals, ±3, λ and t
and their neighbours, integer extremes). The whole storage of every output is compared with
tests/reference.py: bit-exact (NaN payloads aside) inside the view, untouched outside it;
SwiGluGrad within SPEC §4.4's bound.

Profiles (ACLGEN_HYPOTHESIS_PROFILE): `ci` (default) is derandomized, ~20,500 cases in all, and
bounds the distinct kernel variants it compiles per operator (a case over the budget is rerun
with a plain contiguous layout, and counted); `long` is random, 10x the cases and no budget:

    ACLGEN_HYPOTHESIS_PROFILE=long python -m pytest -q tests/runtime/test_properties.py

ACLGEN_HYPOTHESIS_EXAMPLES=N overrides the cases per operator.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aclgen.acl as acl
import aclgen.aclnn as aclnn
from tests import reference as ref
from tests.edges import values
from tests.reference import same_or_nan
from tests.registry import resolve
from tests.runtime.hardening import BUDGET, CODE, NP, OPS, TALLY, Storage, View, make_tensor, np_view, scalar_value

PROFILE = os.environ.get("ACLGEN_HYPOTHESIS_PROFILE", "ci")
_common = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=list(HealthCheck))
settings.register_profile("ci", derandomize=True, **_common)
settings.register_profile("long", derandomize=False, **_common)
if PROFILE not in ("ci", "long"):
    raise ValueError(f"ACLGEN_HYPOTHESIS_PROFILE={PROFILE!r}: use ci or long")

# Cases and kernel-variant budgets per operator in the ci profile: these defaults, or a tuned value
# for an operator named here (by tests/registry.py's names). Every operator of the registry runs.
CI_EXAMPLES, CI_VARIANTS = 4200, 35
CI_TUNED = {"swiglu": (3700, 20), "hardswish": (4200, 25), "threshold": (4200, 40)}
_override = os.environ.get("ACLGEN_HYPOTHESIS_EXAMPLES")
# the operators this file's cases fit: two tensor inputs and one output
KEYS = [k for k, info in OPS.items() if info.n_in == 2 and len(info.op.outputs) == 1]


def _tuned(key: str) -> tuple[int, int]:
    for name, tuned in CI_TUNED.items():
        if resolve(name).python_name == key:
            return tuned
    return CI_EXAMPLES, CI_VARIANTS


def examples(key: str) -> int:
    if _override:
        return int(_override)
    return _tuned(key)[0] * (10 if PROFILE == "long" else 1)


def variant_limit(key: str) -> int:
    return _tuned(key)[1] if PROFILE == "ci" else 10**9


def splits(info) -> bool:
    """Kernel operands that are halves of a tensor along an int attribute `dim` (SwiGluGrad)."""
    return info.op.split is not None


def profile(key: str):
    return settings(settings.get_profile(PROFILE), max_examples=examples(key))


FORMATS_ANY = [acl.ACL_FORMAT_ND, acl.ACL_FORMAT_NCHW, acl.ACL_FORMAT_NHWC, acl.ACL_FORMAT_NC1HWC0,
               acl.ACL_FORMAT_FRACTAL_NZ, acl.ACL_FORMAT_NCDHW, acl.ACL_FORMAT_NCL, acl.ACL_FORMAT_UNDEFINED]
FORMATS_SPLIT = [acl.ACL_FORMAT_ND, acl.ACL_FORMAT_NCHW, acl.ACL_FORMAT_NHWC, acl.ACL_FORMAT_NCDHW,
                  acl.ACL_FORMAT_NCL]
LAMBDAS = [0.0, 0.5, 1.2, 3.0, 2.9999998, np.inf, np.nan, 1e-40, 65504.0, 1e30, 7.0]
THRESHOLDS = [0.0, -0.0, 1.0, -1.0, 1.2, -1.2, 2.9, -2.9, 3.0, 127.5, -128.0, 254.99, 255.0, 1000.0, -1000.0,
              3e9, -3e9, 1e20, -1e20, np.inf, -np.inf, np.nan, 1e-40, 0.5]
INT64_THRESHOLDS = [0.0, -0.0, 1e-8, -1e-8, float(np.finfo(np.float32).eps), -float(np.finfo(np.float32).eps)]


# ----------------------------------------------------------------------------------------------
# strategies
# ----------------------------------------------------------------------------------------------

# Hypothesis draws the structure of a case (rank, size class, kind of each view, aliasing...);
# the details (each dim, permutation, gaps, offsets) come from a numpy generator seeded by a
# drawn integer. Fewer draws keep a case at a few milliseconds; shrinking still works on both.

def shape_of(rng, rank: int, cap: int) -> tuple[int, ...]:
    kinds = rng.choice(["one", "one", "small", "small", "small", "mid", "big", "zero"], rank)
    dims = []
    for kind in kinds:
        if kind == "zero":
            dims.append(0 if rng.integers(10) == 0 else 1)  # empty tensors now and then
        elif kind == "one":
            dims.append(1)
        elif kind == "small":
            dims.append(int(rng.integers(2, 6)))
        elif kind == "mid":
            dims.append(int(rng.integers(6, 41)))
        else:
            dims.append(int(rng.integers(41, 1001)))
    while math.prod(dims) > cap:
        k = max(range(rank), key=lambda i: dims[i])
        dims[k] = max(1, dims[k] // 2)
    return tuple(dims)


def nested(dims, order, base, gaps):
    """Strides that nest dims in `order` (last = innermost), `base` apart, with `gaps` per level."""
    strides = [0] * len(dims)
    acc = base
    for level, k in enumerate(reversed(order)):
        strides[k] = acc
        acc = acc * max(dims[k], 1) + gaps[level]
    return strides


VIEW_KINDS_IN = ["contig", "perm", "gapped", "random", "zero"]
VIEW_KINDS_OUT = ["contig", "perm", "gapped"]


def view_of(rng, dims, kind: str) -> View:
    r = len(dims)
    ident = list(range(r))
    if kind == "contig":
        s = nested(dims, ident, 1, [0] * r)
    elif kind == "perm":
        s = nested(dims, list(rng.permutation(r)), 1, [0] * r)
    elif kind == "gapped":
        order = list(rng.permutation(r)) if rng.integers(2) else ident
        s = nested(dims, order, int(rng.integers(1, 4)), list(rng.integers(0, 4, r)))
    elif kind == "random":
        s = list(rng.integers(0, 8, r))
    else:  # zero strides (repeated elements) on some dims
        s = [0 if rng.integers(3) == 0 else v for v in nested(dims, ident, 1, [0] * r)]
    # a size-1 dim never steps: any stride is legal there, even a huge one
    s = tuple(int(rng.choice([v, 0, 7, 10**6])) if n == 1 else int(v) for n, v in zip(dims, s))
    offset = int(rng.choice([0, 0, 1, 3, 17])) if kind != "contig" or rng.integers(2) else 0
    v = View(tuple(dims), s, offset, 0)
    v.storage = v.extent() + int(rng.choice([0, 0, 1, 5]))
    return v


def broadcast_dims(rng, shape):
    """A shape that broadcasts to `shape`: some dims 1, leading ones sometimes dropped."""
    dims = [1 if rng.integers(3) == 0 else n for n in shape]
    drop = int(rng.integers(0, len(dims) + 1))
    while drop and dims and dims[0] == 1:
        dims.pop(0)
        drop -= 1
    return tuple(dims)


@st.composite
def cases(draw, key: str):
    info = OPS[key]
    c = {"key": key}
    dtypes = info.dtypes
    c["dtype"] = dtype = draw(st.sampled_from(dtypes))
    c["x_dtype"] = dtype
    if info.op.promote is not None and draw(st.integers(0, 3)) == 0:
        c["x_dtype"] = draw(st.sampled_from(dtypes))  # mixed dtypes promote (to float32)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rank = draw(st.integers(1 if splits(info) else 0, 8))
    cap = draw(st.sampled_from([8, 64, 64, 512, 512, 2048, 2048, 8192, 100_000]))
    if splits(info):
        half = shape_of(rng, rank, cap)
        dim = draw(st.integers(-rank, rank - 1))
        full = list(half)
        full[dim % rank] *= 2
        c["dim"] = dim
        g_dims, x_dims, out_dims = half, tuple(full), tuple(full)
    else:
        out_dims = shape_of(rng, rank, cap)
        g_dims = x_dims = out_dims
        if info.broadcast and draw(st.booleans()):
            g_dims, x_dims = broadcast_dims(rng, out_dims), broadcast_dims(rng, out_dims)
            out_dims = tuple(np.broadcast_shapes(g_dims, x_dims))
    # half the cases keep every view contiguous (few kernel variants, many values)
    if draw(st.booleans()):
        kinds = ["contig"] * 3
    else:
        kinds = [draw(st.sampled_from(VIEW_KINDS_IN)), draw(st.sampled_from(VIEW_KINDS_IN)),
                 draw(st.sampled_from(VIEW_KINDS_OUT))]
    views = [view_of(rng, d, k) for d, k in zip((g_dims, x_dims, out_dims), kinds)]
    # buffers: one each; x sometimes inside g's storage; out sometimes exactly an input (in place)
    buffers = [0, 1, 2]
    if c["x_dtype"] == dtype and draw(st.integers(0, 4)) == 0:
        buffers[1] = 0
    out_dtype = info.op.result_dtype(dtype, c["x_dtype"])
    c["out_dtype"] = out_dtype
    alias = draw(st.sampled_from([None, None, 0, 1]))
    src_dtype = dtype if alias == 0 else c["x_dtype"]
    if alias is not None and src_dtype == out_dtype and views[alias].dims == out_dims and views[alias].injective():
        a = views[alias]
        views[2] = View(a.dims, a.strides, a.offset, a.storage)
        buffers[2] = buffers[alias]
    c["views"], c["buffers"] = views, buffers
    c["runtime"] = draw(st.booleans())
    c["formats"] = [int(f) for f in rng.choice(FORMATS_SPLIT if splits(info) else FORMATS_ANY, 3)]
    c["seed"] = int(rng.integers(0, 2**32))
    c["mix"] = draw(st.sampled_from([0.0, 0.05, 0.3, 1.0]))
    c["stream"] = draw(st.sampled_from([False, False, True]))
    c["repeat"] = buffers[2] == 2 and draw(st.integers(0, 5)) == 0  # run a repeatable executor twice
    if info.param_kind == "float":  # softshrink's lambd: >= 0
        c["param"] = draw(st.sampled_from(LAMBDAS) | st.floats(0, 10, allow_nan=False))
        c["param_code"] = draw(st.sampled_from([acl.ACL_FLOAT, acl.ACL_DOUBLE, acl.ACL_FLOAT16, acl.ACL_BF16]
                                               + ([acl.ACL_INT32] if np.isfinite(c["param"]) else [])))
    elif info.param_kind == "like-input":  # threshold's t: compared with the tensor's own dtype
        if dtype == "int64":
            c["param"] = draw(st.sampled_from(INT64_THRESHOLDS))
            c["param_code"] = draw(st.sampled_from([acl.ACL_FLOAT, acl.ACL_DOUBLE]))
        else:
            c["param"] = draw(st.sampled_from(THRESHOLDS) | st.floats(-300, 300, allow_nan=False))
            c["param_code"] = draw(st.sampled_from([acl.ACL_FLOAT, acl.ACL_DOUBLE, acl.ACL_FLOAT16]
                                                   + ([acl.ACL_INT32] if abs(c["param"]) < 2e9 else [])))
    return c


# ----------------------------------------------------------------------------------------------
# running a case and checking it
# ----------------------------------------------------------------------------------------------

_stream = None


def shared_stream():
    global _stream
    if _stream is None:
        _stream, ret = acl.rt.create_stream()
        assert ret == 0
    return _stream


def plain(c: dict) -> dict:
    """The same case with every operand contiguous in its own buffer (few kernel variants)."""
    p = dict(c)
    p["views"] = [View(v.dims, tuple(nested(v.dims, list(range(len(v.dims))), 1, [0] * len(v.dims))), 0,
                       math.prod(v.dims)) for v in c["views"]]
    p["buffers"] = [0, 1, 2]
    p["runtime"] = False
    return p


def run_case(c: dict) -> None:
    info = OPS[c["key"]]
    with BUDGET.active(info.key, variant_limit(info.key)):
        done = _run(c, info)
    if not done:  # the planner asked for a kernel variant over the budget
        TALLY.plain[info.key] += 1
        assert _run(plain(c), info), "the plain layout must not need a new variant"
    TALLY.cases[info.key] += 1


def _run(c: dict, info) -> bool:
    rng = np.random.default_rng(c["seed"])
    views, buffers = c["views"], c["buffers"]
    dts = [NP[c["dtype"]], NP[c["x_dtype"]], NP[c["out_dtype"]]]
    param = c.get("param")
    pvals = () if param is None else (param,)
    # initial storage content: the inputs' edge values; out's storage a random pattern
    sizes = {}
    for k, v in enumerate(views):
        sizes[buffers[k]] = max(sizes.get(buffers[k], 0), v.storage)
    hosts = {}
    for b, n in sizes.items():
        k = buffers.index(b)
        mix = c["mix"] if k < 2 else 0.3
        hosts[b] = values(dts[k], n, rng, mix, pvals)
    stores = {b: Storage(h, c["runtime"]) for b, h in hosts.items()}
    try:
        tensors = [make_tensor(stores[buffers[k]], v, CODE[NAME[dts[k]]], c["formats"][k])
                   for k, v in enumerate(views)]
        ins = [np_view(hosts[buffers[k]], views[k]) for k in range(2)]
        args = list(tensors[:2])
        scalar = None
        if info.param_kind == "int64":
            args.append(c["dim"])
        elif info.param is not None:
            scalar = acl.create_scalar(param, c["param_code"])
            assert scalar is not None, acl.get_recent_err_msg()
            args.append(scalar)
        args.append(tensors[2])
        if c["dtype"] == "int64":
            acl.set_soc_version("Ascend950")
        try:
            ws, ex, ret = info.gws(*args)
        finally:
            if c["dtype"] == "int64":
                acl.set_soc_version(None)
        if ret != 0:
            if BUDGET.take_trip():
                return False
            raise AssertionError(f"{info.api}GetWorkspaceSize returned {ret}: {acl.get_recent_err_msg()}")
        workspace = None
        if ws:
            TALLY.staged[info.key] += 1
            workspace, r = acl.rt.malloc(ws, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            assert r == 0
        stream = shared_stream() if c["stream"] else None
        runs = 2 if c["repeat"] else 1
        if runs == 2:
            assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
        for _ in range(runs):
            assert info.run(workspace, ws, ex, stream) == 0, acl.get_recent_err_msg()
        if stream is not None:
            assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
        if runs == 2:
            assert aclnn.aclDestroyAclOpExecutor(ex) == 0
        if workspace is not None:
            acl.rt.free(workspace)
        got = stores[buffers[2]].read()
        expect = _expected(c, info, ins, hosts[buffers[2]], views[2], scalar)
        if math.prod(views[2].dims) == 0:
            TALLY.empty[info.key] += 1
        if info.exact:
            bad = ~same_or_nan(got, expect)
        else:
            bad = _bound_bad(c, info, got, expect, ins, views[2])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise AssertionError(f"{info.api}: {int(bad.sum())} storage elements wrong, first at {i}: "
                                 f"got {got[i]!r} want {expect[i]!r}; case {summary(c)}")
        return True
    finally:
        for s in stores.values():
            s.free()


NAME = {v: k for k, v in NP.items()}


def _expected(c, info, ins, out_host, out_view, scalar) -> np.ndarray:
    """The output storage as it must be: the initial bytes, the reference in the view."""
    expect = out_host.copy()
    if math.prod(out_view.dims) == 0:
        return expect
    g, x = ins
    if info.exact:
        params = [scalar_value(c["param"], c["param_code"])] if c.get("param") is not None else []
        r = getattr(ref, info.key)(g, x, *params)
    else:
        r = np.zeros(out_view.dims, expect.dtype)  # placeholder: checked by its bound (`_bound_bad`)
    w = np.lib.stride_tricks.as_strided(expect[out_view.offset:], out_view.dims,
                                        [s * expect.itemsize for s in out_view.strides])
    w[...] = r
    return expect


def _bound_bad(c, info, got, expect, ins, out_view) -> np.ndarray:
    """Outside the view: untouched bits; inside: the reference's bound (SPEC §4.4's)."""
    inside = np.zeros(len(got), bool)
    idx = np_view(np.arange(len(got)), out_view)
    inside[idx.ravel()] = True
    bad = ~same_or_nan(got, expect) & ~inside
    if idx.size:
        g, x = ins
        o = np_view(got, out_view)
        viol = getattr(ref, f"{info.key}_violations")(o, g, x, c["dim"])
        bad[idx[viol]] = True
    return bad


def summary(c: dict) -> str:
    v = c["views"]
    return (f"{c['dtype']}/{c['x_dtype']} dims {[x.dims for x in v]} strides {[x.strides for x in v]} "
            f"offsets {[x.offset for x in v]} buffers {c['buffers']} runtime={c['runtime']} "
            f"param={c.get('param')} dim={c.get('dim')} stream={c['stream']}")


# ----------------------------------------------------------------------------------------------
# the tests, one per operator, and the count of cases tried
# ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module", autouse=True)
def _summary(report):
    t0 = time.perf_counter()
    yield
    total = sum(TALLY.cases.values())
    per = ", ".join(f"{k} {n}" for k, n in sorted(TALLY.cases.items()))
    report(f"\nproperty tests ({PROFILE} profile): {total} cases in {time.perf_counter() - t0:.0f} s "
                           f"[{per}]; reran with a plain layout (variant budget): {sum(TALLY.plain.values())}; "
                           f"empty: {sum(TALLY.empty.values())}; staged through a workspace: "
                           f"{sum(TALLY.staged.values())}; kernel variants: "
                           f"{sum(len(s) for s in BUDGET.seen.values())}")


@pytest.mark.parametrize("key", KEYS)
def test_operator_matches_reference(key, report):
    @profile(key)
    @given(c=cases(key))
    def prop(c):
        run_case(c)

    before = TALLY.cases[key]
    prop()
    report(f"{key}: {TALLY.cases[key] - before} cases, 0 mismatches")
