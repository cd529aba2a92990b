"""The bad-input matrix's rows: each builds arguments, calls the aclnn API, and yields
(status, message). Run in a subprocess by tests/test_bad_inputs.py (`python -c "from
tests.hardening_rows import main; main([...])"`), so a crash kills the batch, not pytest.
"""

from __future__ import annotations

import json
import sys

import numpy as np

import aclgen.acl as acl
import aclgen.aclnn as aclnn
from aclgen.runtime.function import function_of
from aclgen.tools.run import input_shapes
from tests import declared_ops
from tests import reference as ref
from tests.registry import builtins, extras, resolve

F, I8, B = acl.ACL_FLOAT, acl.ACL_INT8, acl.ACL_BF16
ND = acl.ACL_FORMAT_ND
# every operator: the built-ins and the suite's own declarations, by Python name
OPERATORS = {op.python_name: op for op in (*builtins(), *declared_ops.OPERATORS)}
_keep = []  # host memory of the rows' tensors stays alive for the whole batch


def t(shape=(4, 2), dtype=F, fmt=ND):
    a = np.linspace(-4, 4, max(int(np.prod(shape)), 1)).astype(np.float32)[: int(np.prod(shape))]
    if dtype == F:
        return acl.from_numpy(a.reshape(shape), fmt)
    buf = np.zeros(max(int(np.prod(shape)), 1) * 8, np.uint8)
    _keep.append(buf)
    x = acl.create_tensor(list(shape), dtype, None, 0, fmt, list(shape), buf.ctypes.data)
    assert x is not None, acl.get_recent_err_msg()
    return x


def raw(dims, strides, offset, storage, data, dtype=F, fmt=ND):
    return acl.create_tensor(dims, dtype, strides, offset, fmt, storage, data)


def sc(v=1.0, dtype=F):
    return acl.create_scalar(v, dtype)


def gws(op):
    return getattr(aclnn, f"{resolve(op).api}GetWorkspaceSize")


def run(op):
    return getattr(aclnn, resolve(op).api)


def args(op, g=None, x=None, out=None, p="default"):
    """The GetWorkspaceSize arguments of `op` in its C order (float32 inputs for outputs of [4, 4],
    the outputs of the shapes and dtypes the call writes) with defaults for what is not given: g,
    x and out replace the first input, the last input and the last output; `p` the first scalar
    (aclScalars 0.5, attributes their example for the shape)."""
    o = resolve(op)
    shapes = input_shapes(o, (4, 4))
    ins = [t(s) for s in shapes]
    if g is not None:
        ins[0] = g
    if x is not None:
        ins[-1] = x
    scalars = [sc(s.sample) for s in o.scalars] + [a.example_for((4, 4)) for a in o.attrs]
    if scalars and p != "default":
        scalars[0] = p
    arrays = [np.zeros(s, np.float32) for s in shapes]
    outs = [t(a.shape, {np.dtype(np.float32): F, np.dtype(np.uint8): acl.ACL_UINT8}.get(a.dtype, F))
            for a in function_of(o).empty_outputs(*arrays, *[s.sample for s in o.scalars], *scalars[len(o.scalars):])]
    if out is not None:
        outs[-1] = out
    by_name = dict(zip((*o.inputs, *(s.name for s in extras(o)), *o.outputs), (*ins, *scalars, *outs)))
    return tuple(by_name[n] for n in o.arg_names)


def phase1(op, *a):
    ws, ex, ret = gws(op)(*a)
    return ret, acl.get_recent_err_msg() if ret else ""


def both(op, *a, workspace="auto", ws_size=None, stream=None):
    """Both phases; a runtime workspace when one is needed ('auto')."""
    ws, ex, ret = gws(op)(*a)
    if ret:
        return ret, acl.get_recent_err_msg()
    ptr = None
    if workspace == "auto" and ws:
        ptr, r = acl.rt.malloc(ws, 0)
    elif workspace != "auto":
        ptr = workspace
    ret = run(op)(ptr, ws if ws_size is None else ws_size, ex, stream)
    if ret == 0 and stream is not None:
        ret = acl.rt.synchronize_stream(stream)
    return ret, acl.get_recent_err_msg() if ret else ""


def freed_tensor():
    ptr, _ = acl.rt.malloc(32, 0)
    x = raw([4, 2], [2, 1], 0, [8], ptr)
    acl.rt.free(ptr)
    return x


def destroyed_tensor():
    x = t()
    acl.destroy_tensor(x)
    return x


def free_between_phases():
    ptr, _ = acl.rt.malloc(32, 0)
    x = raw([4, 2], [2, 1], 0, [8], ptr)
    ws, ex, ret = gws("hardswish")(x, x, x)
    acl.rt.free(ptr)
    ret = run("hardswish")(None, ws, ex, None)
    return ret, acl.get_recent_err_msg()


def staged_call(op="hardswish", shift=1, workspace="auto", ws_delta=0):
    """out = the inputs' storage shifted by `shift` elements: must be staged and correct."""
    buf = np.linspace(-5, 5, 64).astype(np.float32)
    g = buf[:60].copy()
    src = buf.copy()
    x_t = acl.from_numpy(buf[:60])
    out_t = acl.from_numpy(buf[shift:shift + 60])
    ws, ex, ret = gws(op)(acl.from_numpy(g), x_t, out_t)
    if ret:
        return ret, acl.get_recent_err_msg()
    ptr = workspace
    if workspace == "auto":
        ptr = acl.rt.malloc(ws, 0)[0] if ws else None
    ret = run(op)(ptr, ws + ws_delta, ex, None)
    if ret:
        return ret, acl.get_recent_err_msg()
    want = ref.hardswish_backward(g, src[:60])
    ok = np.array_equal(buf[shift:shift + 60].view(np.uint32), want.view(np.uint32))
    return (0 if ok else -1), f"staged workspace {ws} bytes, result {'correct' if ok else 'WRONG'}"


def swiglu_staged():
    buf = np.linspace(-3, 3, 4 * 8 + 5).astype(np.float32)
    x0 = buf[:32].reshape(4, 8).copy()
    g = np.linspace(-1, 1, 16).astype(np.float32).reshape(4, 4)
    out_t = acl.from_numpy(buf[5:37].reshape(4, 8))
    ws, ex, ret = gws("swiglu")(acl.from_numpy(g), acl.from_numpy(buf[:32].reshape(4, 8)), -1, out_t)
    ptr, _ = acl.rt.malloc(max(ws, 1), 0)
    ret = run("swiglu")(ptr, ws, ex, None)
    ok = ret == 0 and ws > 0 and not ref.swi_glu_grad_violations(buf[5:37].reshape(4, 8), g, x0, -1).any()
    return (0 if ok else -1), f"staged workspace {ws} bytes, result {'correct' if ok else 'WRONG'}"


def executor_misuse(kind):
    g = t()
    ws, ex, ret = gws("hardswish")(g, g, t())
    if kind == "consumed":
        run("hardswish")(None, ws, ex, None)
    elif kind == "destroyed":
        aclnn.aclDestroyAclOpExecutor(ex)
    elif kind == "other-op":
        return run("selu")(None, ws, ex, None), acl.get_recent_err_msg()
    elif kind == "destroy-twice":
        aclnn.aclDestroyAclOpExecutor(ex)
        return aclnn.aclDestroyAclOpExecutor(ex), acl.get_recent_err_msg()
    elif kind == "repeatable-after-run":
        run("hardswish")(None, ws, ex, None)
        return aclnn.aclSetAclOpExecutorRepeatable(ex), acl.get_recent_err_msg()
    elif kind == "repeatable-destroyed":
        aclnn.aclSetAclOpExecutorRepeatable(ex)
        run("hardswish")(None, ws, ex, None)
        aclnn.aclDestroyAclOpExecutor(ex)
    return run("hardswish")(None, ws, ex, None), acl.get_recent_err_msg()


def stream_destroyed():
    s, _ = acl.rt.create_stream()
    acl.rt.destroy_stream(s)
    return both("hardswish", *args("hardswish"), stream=s)


def scalar_in(op, value):
    s = sc(value)
    return phase1(op, *args(op, p=s))


def soc(name, fn):
    acl.set_soc_version(name)
    try:
        return fn()
    finally:
        acl.set_soc_version(None)


SLOTS = ("first-input", "last-input", "last-output")


def slot_index(op, slot) -> int:
    """The position in the C arguments of a slot of SLOTS."""
    o = resolve(op)
    name = {"first-input": o.inputs[0], "last-input": o.inputs[-1], "last-output": o.outputs[-1]}[slot]
    return o.arg_names.index(name)


def _replace(op, slot, v):
    a = list(args(op))
    a[slot_index(op, slot)] = v
    return tuple(a)


def _extras(o, shape=(4, 4)) -> list:
    """The C arguments between the tensors: aclScalars 0.5, attributes their example for `shape`."""
    return [sc(0.5) for _ in o.scalars] + [a.example_for(shape) for a in o.attrs]


def _ordered(o, ins, outs, shape=(4, 4)) -> tuple:
    """Inputs, the default scalars and attributes, and outputs in `o`'s C order."""
    by_name = dict(zip((*o.inputs, *(s.name for s in extras(o)), *o.outputs), (*ins, *_extras(o, shape), *outs)))
    return tuple(by_name[n] for n in o.arg_names)


def _all(op, shape=(4, 4), dtype=F):
    """Every tensor of `shape` and `dtype`, scalars 0.5."""
    o = resolve(op)
    return _ordered(o, [t(shape, dtype) for _ in o.inputs], [t(shape, dtype) for _ in o.outputs], shape)


def _mixed(op):
    """The first input bfloat16, every other tensor float32."""
    a = list(_all(op))
    a[0] = t((4, 4), B)
    return tuple(a)


def _bad_shapes(op):
    """The last input [3, 4] next to [4, 4]: not broadcastable, and not the same shape."""
    return args(op, x=t((3, 4)))


def _outside(op):
    """The first input a view reaching one element past its storage."""
    return args(op, g=raw([4, 4], [4, 1], 1, [16], _host(17)))


def _rank9(op):
    o = resolve(op)
    nine = (1,) * 9
    return _ordered(o, [t(nine) for _ in o.inputs], [t(nine) for _ in o.outputs], nine)


HUGE = 2**40
ROWS = {
    # --- wrong argument types and None: first input, last input, last output of every operator --
    **{f"{op}-{slot}-{kind}": (lambda op=op, slot=slot, v=v: phase1(op, *_replace(op, slot, v())))
       for op in OPERATORS for slot in SLOTS
       for kind, v in (("none", lambda: None), ("str", lambda: "tensor"), ("float", lambda: 1.5),
                       ("list", lambda: [1.0, 2.0]), ("ndarray", lambda: np.zeros((4, 2), np.float32)),
                       ("scalar", lambda: sc()), ("destroyed", destroyed_tensor))},
    # --- ... and of every aclScalar parameter ---------------------------------------------------
    **{f"{op}-param-{kind}": (lambda op=op, v=v: phase1(op, *args(op, p=v())))
       for op, o in OPERATORS.items() if o.scalars
       for kind, v in (("none", lambda: None), ("str", lambda: "0.5"), ("float", lambda: 0.5),
                       ("tensor", lambda: t()), ("destroyed", lambda: _destroyed_scalar()))},
    **{f"swiglu-dim-{kind}": (lambda v=v: phase1("swiglu", *args("swiglu", p=v)))
       for kind, v in (("none", None), ("str", "1"), ("float", 1.5), ("big", 2**70), ("neg-out", -3), ("out", 2))},
    # --- dtypes, shapes, formats, ranks --------------------------------------------------------
    "hardswish-int8": lambda: phase1("hardswish", t(dtype=I8), t(dtype=I8), t(dtype=I8)),
    "hardswish-string-dtype": lambda: phase1("hardswish", t(dtype=acl.ACL_STRING), t(), t()),
    "hardswish-complex64": lambda: phase1("hardswish", t(dtype=acl.ACL_COMPLEX64), t(), t()),
    "hardswish-dtype-mismatch": lambda: phase1("hardswish", t(), t(dtype=B), t()),
    "hardswish-bf16-on-910": lambda: soc("Ascend910", lambda: phase1("hardswish", t(dtype=B), t(dtype=B),
                                                                         t(dtype=B))),
    "selu-uint8": lambda: phase1("selu", t(dtype=acl.ACL_UINT8), t(dtype=acl.ACL_UINT8), t(dtype=acl.ACL_UINT8)),
    "threshold-int64-on-910b": lambda: phase1("threshold", t(dtype=acl.ACL_INT64), t(dtype=acl.ACL_INT64),
                                              sc(0.0), t(dtype=acl.ACL_INT64)),
    "threshold-int64-big-t-on-950": lambda: soc("Ascend950", lambda: phase1(
        "threshold", t(dtype=acl.ACL_INT64), t(dtype=acl.ACL_INT64), sc(1.0), t(dtype=acl.ACL_INT64))),
    "softshrink-out-dtype": lambda: phase1("softshrink", t(), t(dtype=B), sc(0.5), t(dtype=B)),
    "softshrink-negative-lambd": lambda: scalar_in("softshrink", -0.5),
    "softshrink-nan-lambd-ok": lambda: scalar_in("softshrink", float("nan")),
    "swiglu-on-910": lambda: soc("Ascend910", lambda: phase1("swiglu", *args("swiglu", g=t((4, 2))))),
    "hardswish-shape": lambda: phase1("hardswish", t((4, 2)), t((2, 4)), t()),
    "selu-out-shape": lambda: phase1("selu", t(), t(), t((8,))),
    "threshold-not-broadcastable": lambda: phase1("threshold", t((4, 2)), t((3, 2)), sc(0.5), t()),
    "softshrink-out-not-broadcast-shape": lambda: phase1("softshrink", t((4, 1)), t((1, 2)), sc(0.5), t((4, 1))),
    "swiglu-format": lambda: phase1("swiglu", t((4, 2)), t((4, 4), fmt=acl.ACL_FORMAT_FRACTAL_NZ), -1, t((4, 4))),
    "swiglu-odd-dim": lambda: phase1("swiglu", t((4, 2)), t((4, 5)), -1, t((4, 5))),
    "swiglu-dim-out-of-range": lambda: phase1("swiglu", t((4, 2)), t((4, 4)), 2, t((4, 4))),
    "swiglu-0d": lambda: phase1("swiglu", t(()), t(()), 0, t(())),
    "swiglu-ygrad-shape": lambda: phase1("swiglu", t((4, 4)), t((4, 4)), -1, t((4, 4))),
    **{f"{op}-rank9": (lambda op=op: phase1(op, *_rank9(op))) for op, o in OPERATORS.items() if o.max_rank == 8},
    # --- SPEC §6's default checks, in order, for every operator that declares no check of its own -
    **{f"{op}-default-{kind}": (lambda op=op, make=make: phase1(op, *make(op)))
       for op, o in OPERATORS.items() if o.check is None
       for kind, make in (("int8", lambda op: _all(op, dtype=I8)), ("mixed-dtypes", _mixed),
                          ("rank9", _rank9), ("shapes", _bad_shapes), ("out-shape", lambda op: args(op, out=t((8,)))),
                          ("view-outside-storage", _outside), ("empty-ok", lambda op: _all(op, shape=(0, 3))))},
    "selu-rank9-ok": lambda: both("selu", t((1,) * 8 + (3,)), t((1,) * 8 + (3,)), t((1,) * 8 + (3,))),
    "swiglu-rank9-ok": lambda: both("swiglu", t((1,) * 8 + (2,)), t((1,) * 8 + (4,)), -1, t((1,) * 8 + (4,))),
    # --- create_tensor misuse: None tensors then reach the operator -----------------------------
    "create-dims-str": lambda: _created(raw("ab", None, 0, None, 0)),
    "create-dtype-999": lambda: _created(raw([2], [1], 0, [2], 0, dtype=999)),
    "create-format-999": lambda: _created(raw([2], [1], 0, [2], 0, fmt=999)),
    "create-strides-len": lambda: _created(raw([2, 2], [1], 0, [4], 0)),
    "create-data-negative": lambda: _created(raw([2], [1], 0, [2], -8)),
    "create-offset-float": lambda: _created(raw([2], [1], 0.5, [2], 0)),
    "create-scalar-str": lambda: (0 if sc("x") is None else -1, acl.get_recent_err_msg()),
    "create-scalar-inf-int": lambda: (0 if sc(float("inf"), acl.ACL_INT32) is None else -1, acl.get_recent_err_msg()),
    # --- views: negative, huge, outside storage or allocation, freed, foreign ------------------
    "negative-dim": lambda: phase1("hardswish", *(raw([-4, 2], [2, 1], 0, [8], _host(8)),) * 3),
    "negative-stride": lambda: phase1("hardswish", *(raw([4, 2], [-2, 1], 6, [8], _host(8)),) * 3),
    "negative-offset": lambda: phase1("hardswish", *(raw([4, 2], [2, 1], -1, [8], _host(8)),) * 3),
    "negative-storage-dim": lambda: phase1("hardswish", *(raw([4, 2], [2, 1], 0, [-8], _host(8)),) * 3),
    "huge-dims-overflow-int64": lambda: phase1("hardswish", *(raw([HUGE, HUGE], None, 0, None, _host(8)),) * 3),
    "huge-stride": lambda: phase1("hardswish", *(raw([3], [2**62], 0, [2**63], _host(8)),) * 3),
    "huge-offset": lambda: phase1("hardswish", *(raw([3], [1], 2**63, [2**64], _host(8)),) * 3),
    "huge-dims-empty-ok": lambda: both("hardswish", *(raw([0, HUGE, HUGE], None, 0, None, _host(8)),) * 3),
    "view-outside-storage": lambda: phase1("hardswish", *(raw([4, 2], [2, 1], 1, [8], _host(9)),) * 3),
    "view-outside-allocation": lambda: _in_runtime(lambda p: raw([4, 3], [3, 1], 0, [12], p), 32),
    "view-offset-outside-allocation": lambda: _in_runtime(lambda p: raw([2], [1], 7, [9], p), 32),
    "freed-memory": lambda: phase1("hardswish", freed_tensor(), t(), t()),
    "freed-between-phases": free_between_phases,
    "foreign-pointer-small": lambda: both("hardswish", *(raw([4, 2], [2, 1], 0, [8], 0x1000),) * 3),
    "foreign-pointer-random": lambda: both("hardswish", *(raw([4, 2], [2, 1], 0, [8], 0x7F3A_1234_5678),) * 3),
    "foreign-pointer-out-only": lambda: both("hardswish", t(), t(), raw([4, 2], [2, 1], 0, [8], 0x5A5A_0000)),
    "null-data-nonempty": lambda: phase1("hardswish", *(raw([4, 2], [2, 1], 0, [8], None),) * 3),
    "out-repeated-elements": lambda: phase1("hardswish", t((4, 3)), t((4, 3)), raw([4, 3], [0, 1], 0, [3], _host(3))),
    "out-repeated-inner": lambda: phase1("hardswish", t((4, 3)), t((4, 3)), raw([4, 3], [1, 0], 0, [4], _host(4))),
    "out-read-only": lambda: phase1("hardswish", t(), t(), _readonly()),
    # --- out overlapping an input: staged and correct, or rejected ------------------------------
    "out-overlaps-input-by-1": lambda: staged_call(shift=1),
    "out-overlaps-input-by-3": lambda: staged_call(shift=3),
    "swiglu-out-overlaps-x": swiglu_staged,
    # --- phase 2: workspace, executor, stream ---------------------------------------------------
    "workspace-too-small": lambda: staged_call(ws_delta=-1),
    "workspace-none": lambda: staged_call(workspace=None),
    "workspace-not-runtime": lambda: staged_call(workspace=_host(64)),
    "workspace-size-negative": lambda: both("hardswish", *args("hardswish"), ws_size=-1),
    "workspace-size-str": lambda: both("hardswish", *args("hardswish"), ws_size="8"),
    "executor-none": lambda: (run("hardswish")(None, 0, None, None), acl.get_recent_err_msg()),
    "executor-str": lambda: (run("hardswish")(None, 0, "ex", None), acl.get_recent_err_msg()),
    "executor-consumed": lambda: executor_misuse("consumed"),
    "executor-destroyed": lambda: executor_misuse("destroyed"),
    "executor-other-op": lambda: executor_misuse("other-op"),
    "executor-destroy-twice": lambda: executor_misuse("destroy-twice"),
    "executor-repeatable-after-run": lambda: executor_misuse("repeatable-after-run"),
    "executor-repeatable-destroyed": lambda: executor_misuse("repeatable-destroyed"),
    "stream-str": lambda: both("hardswish", *args("hardswish"), stream="stream"),
    "stream-destroyed": stream_destroyed,
}


def _destroyed_scalar():
    s = sc()
    acl.destroy_scalar(s)
    return s


def _created(x):
    """create_tensor gave None (with a message); the operator then reports nullptr."""
    if x is not None:
        return -1, "create_tensor accepted it"
    msg = acl.get_recent_err_msg()
    ret, msg2 = phase1("hardswish", x, t(), t())
    return ret, f"{msg} | {msg2}"


def _host(n):
    buf = np.zeros(n, np.float32)
    _keep.append(buf)
    return buf.ctypes.data


def _in_runtime(make, size):
    ptr, _ = acl.rt.malloc(size, 0)
    x = make(ptr)
    return phase1("hardswish", x, x, x)


def _readonly():
    a = np.zeros((4, 2), np.float32)
    a.flags.writeable = False
    return acl.from_numpy(a)


def main(names):
    out = {}
    for name in names:
        try:
            ret, msg = ROWS[name]()
        except Exception as e:
            ret, msg = "raised", f"{type(e).__name__}: {e}"
        out[name] = [ret, msg]
    sys.stdout.write(json.dumps(out) + "\n")
