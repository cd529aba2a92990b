"""RmsNorm, LayerNorm and their gradients against PyTorch (float64: F.rms_norm, aten.native_layer_norm
(its mean: torch's mean), autograd, aten.native_layer_norm_backward) over edge rows (equal, ±inf, NaN, huge, tiny, mixed
scales, ±0, length 1) in every dtype combination and with a strided reduced axis, within each
declaration's bound; LayerNormBackward's outputMask and mean/rstd shapes through aclnn; the same
bits for every thread count, vector width and tile size."""

from __future__ import annotations

import numpy as np
import pytest

import aclgen.acl as acl
import aclgen.aclnn as aclnn
import aclgen.ops as ops
from aclgen.knobs import overridden
from aclgen.tools.accuracy import NUMPY, dtype_cases, ulp_error
from tests.ops.reductions import edge_rows, layouts
from tests.oracle import needs_torch, torch

NULL, INVALID = 161001, 161002


def _t(a):
    return None if a is None else torch.from_numpy(np.ascontiguousarray(np.asarray(a, np.float64)))


def _check(op, got, want, scale, what=""):
    dtype = np.dtype(got.dtype).name
    err = ulp_error(got, want, dtype, np.broadcast_to(scale, got.shape))
    worst = int(np.argmax(err)) if err.size else 0
    assert err.size == 0 or err.max() <= op.tolerance, (
        op.api, what, dtype, err.max(), got.ravel()[worst], np.ravel(want)[worst])


def _rows(dtype: str, n: int) -> np.ndarray:
    """Edge rows whose squares and sums stay finite in f32 (x * x of the huge row < FLT_MAX / n)."""
    return edge_rows(dtype, n, huge=min(1e17, float(np.finfo(np.float32).max) ** 0.5 / n))


def _cases(name):
    return [tuple(c.split("+")) for c in dtype_cases(ops.OPERATORS[name])]


@pytest.mark.parametrize("n", [1, 9, 300])
@pytest.mark.parametrize("dtypes", _cases("rms_norm"), ids="+".join)
@needs_torch
def test_rms_norm_matches_torch(dtypes, n):
    op = ops.OPERATORS["rms_norm"]
    rng = np.random.default_rng(n)
    gamma = rng.standard_normal(n).astype(NUMPY[dtypes[1]])
    for layout, (x, dim) in layouts(_rows(dtypes[0], n)).items():
        if dim != -1:
            continue  # the norms reduce trailing dims
        y, rstd = ops.rms_norm(x, gamma, 1e-6)
        want = torch.nn.functional.rms_norm(_t(x), (n,), _t(gamma), 1e-6).numpy()
        want_rstd = torch.rsqrt(_t(x).square().mean(-1, keepdim=True) + 1e-6).numpy()
        with np.errstate(all="ignore"):
            sy, sr = op.reference.scale(x.astype(np.float64), gamma.astype(np.float64), 1e-6)
        _check(op, y, want, sy, layout)
        _check(op, rstd, want_rstd, sr, layout)


@pytest.mark.parametrize("n", [1, 9, 300])
@pytest.mark.parametrize("dtypes", _cases("rms_norm_grad"), ids="+".join)
@needs_torch
def test_rms_norm_grad_matches_autograd(dtypes, n):
    op = ops.OPERATORS["rms_norm_grad"]
    rng = np.random.default_rng(n)
    d = NUMPY[dtypes[0]]
    x = _rows(dtypes[0], n)
    gamma = rng.standard_normal(n).astype(NUMPY[dtypes[3]])
    dy = (rng.standard_normal(x.shape) * 2).astype(d)
    tx, tg = _t(x).requires_grad_(), _t(gamma).requires_grad_()
    rstd = torch.rsqrt(tx.detach().square().mean(-1, keepdim=True) + 1e-6).numpy().astype(np.float32)
    torch.nn.functional.rms_norm(tx, (n,), tg, 1e-6).backward(_t(dy))
    dx, dgamma = ops.rms_norm_grad(dy, x, rstd, gamma)
    assert dgamma.shape == (n,) and dgamma.dtype == np.float32
    with np.errstate(all="ignore"):
        sx, sg = op.reference.scale(*(a.astype(np.float64) for a in (dy, x, rstd, gamma)))
    _check(op, dx, tx.grad.numpy(), sx, "dx")
    _check(op, dgamma, tg.grad.numpy(), sg, "dgamma")


@pytest.mark.parametrize("n", [1, 9, 300])
@pytest.mark.parametrize("dtypes", _cases("layer_norm"), ids="+".join)
@needs_torch
def test_layer_norm_matches_torch(dtypes, n):
    op = ops.OPERATORS["layer_norm"]
    rng = np.random.default_rng(n)
    w = rng.standard_normal(n).astype(NUMPY[dtypes[1]])
    b = rng.standard_normal(n).astype(NUMPY[dtypes[2]])
    for layout, (x, dim) in layouts(_rows(dtypes[0], n)).items():
        if dim != -1:
            continue
        for weight, bias in ((w, b), (None, None)):
            out, mean, rstd = ops.layer_norm(x, weight, bias, (n,), 1e-5)
            want = list(torch.ops.aten.native_layer_norm(_t(x), [n], _t(weight), _t(bias), 1e-5))
            want[1] = _t(x).mean(-1, keepdim=True)  # torch's moments make the mean of a row with inf NaN
            with np.errstate(all="ignore"):
                scales = op.reference.scale(x.astype(np.float64), None if weight is None else weight.astype(np.float64),
                                            None if bias is None else bias.astype(np.float64), (n,), 1e-5)
            for what, got, ref, sc in zip(("out", "mean", "rstd"), (out, mean, rstd), want, scales):
                _check(op, got, ref.numpy().reshape(got.shape), sc, f"{layout} {what}")


@pytest.mark.parametrize("n", [1, 9, 300])
@pytest.mark.parametrize("dtypes", _cases("layer_norm_backward")[::2], ids="+".join)
@needs_torch
def test_layer_norm_backward_matches_torch(dtypes, n):
    """aten.native_layer_norm_backward has CANN's signature: given the same (rounded) mean and rstd,
    the two compute the same function."""
    op = ops.OPERATORS["layer_norm_backward"]
    rng = np.random.default_rng(n)
    x = _rows(dtypes[0], n)
    dy = (rng.standard_normal(x.shape) * 2).astype(NUMPY[dtypes[0]])
    w = rng.standard_normal(n).astype(NUMPY[dtypes[4]])
    _, mean64, rstd64 = torch.ops.aten.native_layer_norm(_t(x), [n], None, None, 1e-5)
    mean, rstd = mean64.numpy().astype(NUMPY[dtypes[2]]), rstd64.numpy().astype(NUMPY[dtypes[3]])
    for weight in (w, None):
        got = ops.layer_norm_backward(dy, x, mean, rstd, weight, None, (n,), (True, True, True))
        ones = np.ones(n) if weight is None else weight  # (a missing weight is ones)
        want = torch.ops.aten.native_layer_norm_backward(_t(dy), _t(x), [n], _t(mean), _t(rstd), _t(ones), _t(0 * ones),
                                                         [True, True, True])
        with np.errstate(all="ignore"):
            scales = op.reference.scale(*(a.astype(np.float64) for a in (dy, x, mean, rstd)),
                                        None if weight is None else weight.astype(np.float64), None, (n,))
        for what, g, ref, sc in zip(("dx", "dweight", "dbias"), got, want, scales):
            if ref is not None:
                _check(op, g, ref.numpy(), sc, what)


def test_layer_norm_backward_mask_and_mean_shapes():
    """outputMask through aclnn: a masked-off output is not written even when given; a wanted one
    that is NULL is 161001; mean and rstd as [A] or [A, 1] (any shape of as many elements)."""
    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal((2, 3, 8)).astype(np.float32), rng.standard_normal((2, 3, 8)).astype(np.float32)
    _, mean, rstd = ops.layer_norm(x, None, None, (8,))
    ref = ops.layer_norm_backward(dy, x, mean, rstd, None, None, (8,), (True, True, True))
    dw = np.full(8, 7.0, np.float32)
    outs = [np.empty_like(x), dw, np.empty(8, np.float32)]
    for m in (mean.reshape(6), mean.reshape(2, 3)):
        tensors = [acl.from_numpy(a) for a in (dy, x, m, rstd.reshape(m.shape))]
        shape, mask = acl.create_int_array([8]), acl.create_bool_array([True, False, True])
        args = (*tensors[:2], shape, *tensors[2:], None, None, mask, *(acl.from_numpy(o) for o in outs))
        ws, executor, ret = aclnn.aclnnLayerNormBackwardGetWorkspaceSize(*args)
        assert ret == 0, acl.get_recent_err_msg()
        assert aclnn.aclnnLayerNormBackward(None, ws, executor, None) == 0
        assert np.array_equal(outs[0], ref[0]) and np.array_equal(outs[2], ref[2])
        assert (dw == 7.0).all()  # masked off: untouched
    nulls = (*tensors[:2], shape, *tensors[2:], None, None, acl.create_bool_array([True, True, True]),
             acl.from_numpy(outs[0]), None, acl.from_numpy(outs[2]))
    ws, executor, ret = aclnn.aclnnLayerNormBackwardGetWorkspaceSize(*nulls)
    assert ret == NULL and "outputMask[1] is true but gradWeightOut is nullptr" in acl.get_recent_err_msg()
    bad = (*tensors[:2], shape, acl.from_numpy(mean[:1]), tensors[3], None, None, mask,
           *(acl.from_numpy(o) for o in outs))
    assert aclnn.aclnnLayerNormBackwardGetWorkspaceSize(*bad)[2] == INVALID


@pytest.mark.parametrize("shape", [(3, 40001), (257, 33), (1000, 64)])
def test_same_bits_for_every_schedule(shape):
    """Threads split rows (and columns of dgamma), widths and tiles change the code: no sum's order
    changes."""
    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32)
    n = shape[-1]
    g = rng.standard_normal(n).astype(np.float32)
    _, rstd = ops.rms_norm(x, g, 1e-6)
    _, mean, rstd2 = ops.layer_norm(x, g, g, (n,))
    calls = [lambda: ops.rms_norm(x, g, 1e-6), lambda: ops.rms_norm_grad(dy, x, rstd, g),
             lambda: ops.layer_norm(x, g, g, (n,)), lambda: ops.layer_norm_backward(dy, x, mean, rstd2, g, g, (n,))]
    with overridden(ACLGEN_THREADS="1"):
        base = [c() for c in calls]
    for knobs in ({"ACLGEN_THREADS": "2"}, {"ACLGEN_VECTOR_WIDTH": "4"}, {"ACLGEN_TILE_SIZE": "96"}):
        with overridden(**knobs):
            for c, b in zip(calls, base):
                assert all(u.tobytes() == v.tobytes() for u, v in zip(c(), b)), knobs


def test_an_output_over_an_input_of_a_later_kernel_goes_through_the_workspace():
    """RmsNormGrad runs two kernels: dx written over dy (gradient buffers are reused in place) must
    not change the dy that the dgamma kernel reads next: phase 1 asks for a workspace and the
    results are those of separate buffers."""
    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal((6, 10)).astype(np.float32), rng.standard_normal((6, 10)).astype(np.float32)
    g = rng.standard_normal(10).astype(np.float32)
    _, rstd = ops.rms_norm(x, g, 1e-6)
    dx, dgamma = ops.rms_norm_grad(dy, x, rstd, g)
    shared, dg = dy.copy(), np.empty(10, np.float32)
    ops.rms_norm_grad(shared, x, rstd, g, out=(shared, dg))
    assert np.array_equal(shared, dx) and np.array_equal(dg, dgamma)
    t = acl.from_numpy(dy.copy())
    ws, executor, ret = aclnn.aclnnRmsNormGradGetWorkspaceSize(t, acl.from_numpy(x), acl.from_numpy(rstd),
                                                                acl.from_numpy(g), t, acl.from_numpy(dg))
    assert ret == 0 and ws >= dx.nbytes  # (rounded up to an alignment)
    assert aclnn.aclnnRmsNormGrad(None, ws, executor, None) == NULL  # the bytes it asked for are needed
    assert aclnn.aclnnRmsNormGrad(None, 0, executor, None) == INVALID  # (none given when some are needed)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(1100, 300), (300, 1024), (24, 50, 250)])
def test_sums_across_rows_ride_the_row_kernel(dtype, shape):
    """From 16 blocks (of 64 rows, or down to 8 where fewer rows would make fewer blocks) and 2^18
    elements, dgamma (and gradWeight, gradBias) are added in dx's pass over x and dy, a row of
    f32 per block in the workspace, then the blocks added up: phase 1 asks for those rows, and
    the values meet the bound against the float64 reference with the same bits for every thread
    count, width and tile (1100 rows: the last block has 12; 300 rows: blocks of 16, the last of
    12; [24, 50, 250]: the rows span two dims), and for every mask of LayerNormBackward's outputs
    (without dx nothing rides a row kernel: the column kernels run)."""
    rng = np.random.default_rng(7)
    n, rows = shape[-1], int(np.prod(shape[:-1]))
    x = (rng.standard_normal(shape) * 3).astype(NUMPY[dtype])
    dy = rng.standard_normal(shape).astype(NUMPY[dtype])
    g = rng.standard_normal(n).astype(np.float32)
    rstd = (rng.random((*shape[:-1], 1)) + 0.5).astype(np.float32)
    mean = rng.standard_normal((*shape[:-1], 1)).astype(np.float32)
    blocks = -(-rows // (64 if rows >= 16 * 64 else 16))
    outs = np.empty_like(dy), np.empty(n, np.float32)
    ws, executor, ret = aclnn.aclnnRmsNormGradGetWorkspaceSize(*map(acl.from_numpy, (dy, x, rstd, g, *outs)))
    assert ret == 0 and ws == -(-blocks * n * 4 // 64) * 64
    assert [k.name.split("_f32")[0].split("_bf16")[0] for k in executor.kernels] == ["rms_norm_grad", "add_blocks"]
    assert aclnn.aclnnRmsNormGrad(None, ws, executor, None) == NULL  # the bytes it asked for are needed
    assert aclnn.aclnnRmsNormGrad(None, 0, executor, None) == INVALID  # (none given when some are needed)
    ptr, code = acl.rt.malloc(ws, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert code == 0 and aclnn.aclnnRmsNormGrad(ptr, ws - 1, executor, None) == INVALID
    assert aclnn.aclnnRmsNormGrad(ptr, ws, executor, None) == 0 and outs[1].tobytes() == ops.rms_norm_grad(
        dy, x, rstd, g)[1].tobytes()  # the executor survived the refusals; the Python call gives its bits
    acl.rt.free(ptr)
    calls = {"rms_norm_grad": lambda: ops.rms_norm_grad(dy, x, rstd, g)}
    for mask in ((True, True, True), (True, False, True), (False, True, True)):
        calls[f"layer_norm_backward {mask}"] = (
            lambda mask=mask: ops.layer_norm_backward(dy, x, mean, rstd, g, g, (n,), mask))
    with overridden(ACLGEN_THREADS="1"):
        base = {what: c() for what, c in calls.items()}
    for what, got in base.items():
        op = ops.OPERATORS[what.split()[0]]
        args = (dy, x, rstd, g) if op.name == "RmsNormGrad" else (dy, x, mean, rstd, g, g, (n,))
        wide = [a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args]
        with np.errstate(all="ignore"):
            want, scales = op.reference(*wide), op.reference.scale(*wide)
        for k, (u, v, sc) in enumerate(zip(got, want, scales)):
            if u is not None:
                _check(op, u, np.reshape(v, u.shape), sc, f"{what} output {k}")
    for knobs in ({"ACLGEN_THREADS": "2"}, {"ACLGEN_VECTOR_WIDTH": "4"}, {"ACLGEN_TILE_SIZE": "96"}):
        with overridden(**knobs):
            for what, c in calls.items():
                assert all(u is None or u.tobytes() == v.tobytes() for u, v in zip(c(), base[what])), (what, knobs)


@pytest.mark.parametrize("axis", [0, 1])
def test_sums_beside_an_output_that_reduces_nothing(axis):
    """A formula whose other output reduces nothing (PreluBackward's gradInput beside gradWeight;
    here x * 2 beside a sum over either axis): sums down the columns of a large enough call run
    as x * 2's rows with the sums in per-block rows of the workspace, sums along the rows as one
    row kernel (the kernel names say which); every layout gives the float64 sum within f32's
    rounding and the same bits for 1 and 2 threads."""
    import aclgen
    from aclgen.runtime.api import phase1

    f = aclgen.compile(lambda x: (x * 2.0, aclgen.sum(x, axis)), "float32", name=f"double_and_sum_{axis}")
    rng = np.random.default_rng(axis)
    for shape in ((1024, 512), (3000, 7), (7, 3000)):
        x = rng.standard_normal(shape).astype(np.float32)
        for a in (x, np.asfortranarray(x)):
            with overridden(ACLGEN_THREADS="1"):
                y1, s1 = f(a)
            with overridden(ACLGEN_THREADS="2"):
                y2, s2 = f(a)
            assert np.array_equal(y2, x * 2) and s1.tobytes() == s2.tobytes()
            want = x.astype(np.float64).sum(axis, keepdims=True)
            assert np.abs(s2 - want).max() <= 2.0**-20 * np.abs(x).sum(axis).max()
    x = rng.standard_normal((1024, 512)).astype(np.float32)
    outs = np.empty_like(x), np.empty((1, 512) if axis == 0 else (1024, 1), np.float32)
    ws, executor, ret = phase1(f.op, tuple(map(acl.from_numpy, (x, *outs))))
    assert ret == 0 and executor is not None
    names = [k.name.split("_f32")[0] for k in executor.kernels]
    if axis == 0:  # sums down the columns: x * 2's rows, the sums per block in the workspace
        assert ws > 0 and names == ["double_and_sum_0", "add_blocks"]
    else:  # sums along the rows: one row kernel, x * 2 in its final pass
        assert ws == 0 and names == ["double_and_sum_1"]


def test_a_single_row_sums_each_column_of_one_element():
    """A single row's dgamma and dbeta are its own products, each "summed" as a column of one
    element (`columns`-wise, geometry.plan): the bits of the same row above a row of zeros."""
    rng = np.random.default_rng(4)
    n = 3000
    two = rng.standard_normal((2, n)).astype(np.float32), rng.standard_normal((2, n)).astype(np.float32)
    for a in two:
        a[1] = 0.0
    dy, x = two
    dy[0, :7] = -0.0
    mean, rstd = x.mean(1, keepdims=True), (1 / np.sqrt(x.var(1, keepdims=True) + 1e-5)).astype(np.float32)
    w, b = np.ones(n, np.float32), np.zeros(n, np.float32)
    one = ops.layer_norm_backward(dy[:1], x[:1], mean[:1], rstd[:1], w, b, [n])
    both = ops.layer_norm_backward(dy, x, mean, rstd, w, b, [n])
    assert one[1].tobytes() == both[1].tobytes() and one[2].tobytes() == both[2].tobytes()
    assert one[0].tobytes() == both[0][:1].tobytes()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(257, 333), (70, 129), (1000, 64), (40, 2100), (2, 333), (7, 2100), (31, 129)])
def test_columns_kernels_give_the_bits_of_rows(dtype, shape):
    """dgamma sums down the columns of row-major dy and x in a `columns` kernel (blocks of 64 or
    128 adjacent columns, 32 stack accumulators a lane, the runs walked for 1024 columns at once:
    2100 makes two such groups and a third of a full and a masked block; fewer than 32 rows
    reach only as many accumulators, and the fold skips the others); the same values in
    column-major memory make it a kernel a row at a time (and dx's rows strided): every sum
    keeps its bits, a column of -0 products included."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(NUMPY[dtype])
    dy = rng.standard_normal(shape).astype(NUMPY[dtype])
    dy[:, 0] = -0.0
    g = rng.standard_normal(shape[-1]).astype(np.float32)
    rstd = rng.random((shape[0], 1)).astype(np.float32) + 0.5
    want = ops.rms_norm_grad(dy, x, rstd, g)
    got = ops.rms_norm_grad(np.asfortranarray(dy), np.asfortranarray(x), rstd, g)
    assert all(u.tobytes() == np.ascontiguousarray(v).tobytes() for u, v in zip(want, got))
