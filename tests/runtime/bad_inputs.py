"""The bad-input matrix's rows: each a `Row` that builds arguments, calls the aclnn API and gives
(status, message), declared with the status it must return and a fragment its message must hold.
tests/runtime/test_bad_inputs.py runs them in subprocess batches (`python -c "from
tests.runtime.bad_inputs import main; main([...])"`), so a crash kills the batch, not pytest.

The generic rows (argument types, None, destroyed objects, SPEC §6's default checks) are made
for every operator of `OPERATORS`; the rest name the operator they exercise.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

import aclgen.acl as acl
import aclgen.aclnn as aclnn
from aclgen.declaration import Operator
from aclgen.runtime.function import function_of
from aclgen.tools.run import input_shapes
from tests import declared_ops
from tests import reference as ref
from tests.registry import builtins, extras, resolve
from tests.runtime.aclnn_calls import gws, run, s, t

# SPEC's status codes
NULL, INVALID, TILING, INNER_NULL, RUNTIME = 161001, 161002, 561002, 561103, 361001
F, I8, B = acl.ACL_FLOAT, acl.ACL_INT8, acl.ACL_BF16
ND = acl.ACL_FORMAT_ND
HUGE = 2**40
HS = "aclnnHardswishBackward:"
# every operator: the built-ins and the suite's own declarations, by Python name
OPERATORS = {op.python_name: op for op in (*builtins(), *declared_ops.OPERATORS)}
SLOTS = ("first-input", "last-input", "last-output")
_keep = []  # host memory of the rows' tensors stays alive for the whole batch


@dataclass(frozen=True, slots=True)
class Row:
    """A bad input: `build()` calls the API and returns (status, message); the status must be
    `status` and the message must contain `message`."""

    name: str
    build: Callable[[], tuple[int | str, str]]
    status: int
    message: str = ""


# ----------------------------------------------------------------------------------------------
# building arguments and calling
# ----------------------------------------------------------------------------------------------

def raw(dims, strides, offset, storage, data, dtype=F, fmt=ND):
    return acl.create_tensor(dims, dtype, strides, offset, fmt, storage, data)


def _host(n):
    buf = np.zeros(n, np.float32)
    _keep.append(buf)
    return buf.ctypes.data


def args(op, g=None, x=None, out=None, p="default"):
    """The GetWorkspaceSize arguments of `op` in its C order (float32 inputs for outputs of [4, 4],
    the outputs of the shapes and dtypes the call writes) with defaults for what is not given: g,
    x and out replace the first input, the last input and the last output; `p` the first scalar
    (aclScalars 0.5, attributes their example for the shape)."""
    o = resolve(op)
    shapes = input_shapes(o, (4, 4))
    ins = [t(sh) for sh in shapes]
    if g is not None:
        ins[0] = g
    if x is not None:
        ins[-1] = x
    scalars = [s(sc.sample) for sc in o.scalars] + [a.example_for((4, 4)) for a in o.attrs]
    if scalars and p != "default":
        scalars[0] = p
    arrays = [np.zeros(sh, np.float32) for sh in shapes]
    written = function_of(o).empty_outputs(*arrays, *[sc.sample for sc in o.scalars], *scalars[len(o.scalars):])
    outs = [t(a.shape, {np.dtype(np.float32): F, np.dtype(np.uint8): acl.ACL_UINT8}.get(a.dtype, F)) for a in written]
    if out is not None:
        outs[-1] = out
    return _ordered(o, ins, outs, scalars)


def _ordered(o: Operator, ins, outs, scalars=None, shape=(4, 4)) -> tuple:
    """Inputs, scalars and attributes (default: aclScalars 0.5, attributes their example for
    `shape`) and outputs in `o`'s C order."""
    if scalars is None:
        scalars = [s(0.5) for _ in o.scalars] + [a.example_for(shape) for a in o.attrs]
    by_name = dict(zip((*o.inputs, *(sc.name for sc in extras(o)), *o.outputs), (*ins, *scalars, *outs)))
    return tuple(by_name[n] for n in o.arg_names)


def _all(op, shape=(4, 4), dtype=F):
    """Every tensor of `shape` and `dtype`, scalars 0.5."""
    o = resolve(op)
    return _ordered(o, [t(shape, dtype) for _ in o.inputs], [t(shape, dtype) for _ in o.outputs], shape=shape)


def slot_index(op, slot) -> int:
    """The position in the C arguments of a slot of SLOTS."""
    o = resolve(op)
    name = {"first-input": o.inputs[0], "last-input": o.inputs[-1], "last-output": o.outputs[-1]}[slot]
    return o.arg_names.index(name)


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


def soc(name, fn):
    acl.set_soc_version(name)
    try:
        return fn()
    finally:
        acl.set_soc_version(None)


# ----------------------------------------------------------------------------------------------
# the generic rows: every operator
# ----------------------------------------------------------------------------------------------

def destroyed_tensor():
    x = t()
    acl.destroy_tensor(x)
    return x


def _destroyed_scalar():
    x = s()
    acl.destroy_scalar(x)
    return x


NOT_TENSORS = (("str", lambda: "tensor", "str"), ("float", lambda: 1.5, "float"), ("list", lambda: [1.0, 2.0], "list"),
               ("ndarray", lambda: np.zeros((4, 2), np.float32), "ndarray"), ("scalar", lambda: s(), "AclScalar"))
NOT_SCALARS = (("str", lambda: "0.5", "str"), ("float", lambda: 0.5, "float"), ("tensor", lambda: t(), "AclTensor"))


def _argument_rows(op: str, o: Operator) -> Iterator[Row]:
    """None, other types and destroyed objects for the first input, last input and last output,
    and for the first aclScalar."""
    for slot in SLOTS:
        name = o.arg_names[slot_index(op, slot)]

        def replaced(v, slot=slot):
            def build():
                a = list(args(op))
                a[slot_index(op, slot)] = v()
                return phase1(op, *a)
            return build

        yield Row(f"{op}-{slot}-none", replaced(lambda: None), NULL, f"{o.api}: {name} is nullptr")
        for kind, v, got in NOT_TENSORS:
            yield Row(f"{op}-{slot}-{kind}", replaced(v), INVALID, f"{o.api}: {name} must be an aclTensor, got {got}")
        yield Row(f"{op}-{slot}-destroyed", replaced(destroyed_tensor), INVALID, f"{o.api}: {name} was destroyed")


def _scalar_rows(op: str, o: Operator) -> Iterator[Row]:
    if not o.scalars:
        return
    name = o.scalars[0].name

    def given(v):
        return lambda: phase1(op, *args(op, p=v()))

    yield Row(f"{op}-param-none", given(lambda: None), NULL, f"{o.api}: {name} is nullptr")
    for kind, v, got in NOT_SCALARS:
        yield Row(f"{op}-param-{kind}", given(v), INVALID, f"{o.api}: {name} must be an aclScalar, got {got}")
    yield Row(f"{op}-param-destroyed", given(_destroyed_scalar), INVALID, f"{o.api}: {name} was destroyed")


def _rank9(op):
    o = resolve(op)
    nine = (1,) * 9
    return _ordered(o, [t(nine) for _ in o.inputs], [t(nine) for _ in o.outputs], shape=nine)


def _rank_rows(op: str, o: Operator) -> Iterator[Row]:
    if o.max_rank == 8:
        yield Row(f"{op}-rank9", lambda: phase1(op, *_rank9(op)), INVALID,
                  f"{o.api}: {o.inputs[0]} has 9 dims, at most 8 are supported")


def _default_rows(op: str, o: Operator) -> Iterator[Row]:
    """SPEC §6's default checks, in order, for an operator that declares no check of its own."""
    if o.check is not None:
        return
    first, last, out = o.inputs[0], o.inputs[-1], o.outputs[-1]
    listed = o.dtypes["Ascend910B"]

    def called(make):
        return lambda: phase1(op, *make(op))

    def mixed(op):
        """The first input bfloat16, every other tensor float32."""
        a = list(_all(op))
        a[0] = t((4, 4), B)
        return tuple(a)

    ok = (0, "")
    yield Row(f"{op}-default-int8", called(lambda op: _all(op, dtype=I8)),
              *(ok if "int8" in listed else (INVALID, f"{o.api}: {first} dtype ACL_INT8 is not in [")))
    second = (*o.inputs, *o.outputs)[1]  # the first tensor after `first`: an input, or the output
    yield Row(f"{op}-default-mixed-dtypes", called(mixed), INVALID,
              f"{o.api}: {second} dtype ACL_FLOAT must equal {first} dtype ACL_BF16" if "bfloat16" in listed
              else f"{o.api}: {first} dtype ACL_BF16 is not in [")
    yield Row(f"{op}-default-rank9", called(_rank9),
              *(ok if o.max_rank is None else (INVALID, f"{o.api}: {first} has 9 dims, at most {o.max_rank} are "
                                                        "supported")))
    # the last input [3, 4] next to [4, 4]: not broadcastable, and not the same shape (a lone
    # input [3, 4] next to its output [4, 4]: the output's shape is wrong)
    yield Row(f"{op}-default-shapes", called(lambda op: args(op, x=t((3, 4)))), INVALID,
              f"{o.api}: {out} shape [4, 4] must equal {first} shape [3, 4]" if len(o.inputs) == 1
              else f"{o.api}: {first} shape [4, 4] and {last} shape [3, 4] are not broadcastable"
              if o.broadcast and len(o.inputs) == 2 else "are not broadcastable" if o.broadcast
              else f"{o.api}: {last} shape [3, 4] must equal {first} shape [4, 4]")
    want = "the broadcast shape" if o.broadcast else f"{first} shape"
    yield Row(f"{op}-default-out-shape", called(lambda op: args(op, out=t((8,)))), INVALID,
              f"{o.api}: {out} shape [8] must equal {want} [4, 4]")
    # the first input a view reaching one element past its storage
    yield Row(f"{op}-default-view-outside-storage", called(lambda op: args(op, g=raw([4, 4], [4, 1], 1, [16], _host(17)))),
              INVALID, f"{o.api}: {first} view (dims [4, 4], strides [4, 1], offset 1) reaches element 16, outside its "
                       "storage")
    yield Row(f"{op}-default-empty-ok", called(lambda op: _all(op, shape=(0, 3))), *ok)


def _generic(make) -> list[Row]:
    return [row for op, o in OPERATORS.items() for row in make(op, o)]


# ----------------------------------------------------------------------------------------------
# rows of one operator: dtypes, shapes, formats, ranks
# ----------------------------------------------------------------------------------------------

def scalar_in(op, value):
    return phase1(op, *args(op, p=s(value)))


def _swiglu_dim(v):
    return lambda: phase1("swiglu", *args("swiglu", p=v))


SWIGLU_DIM = [
    Row("swiglu-dim-none", _swiglu_dim(None), NULL, "aclnnSwiGluGrad: dim is nullptr"),
    Row("swiglu-dim-str", _swiglu_dim("1"), INVALID, "aclnnSwiGluGrad: dim must be an int64 (int64_t), got '1'"),
    Row("swiglu-dim-float", _swiglu_dim(1.5), INVALID, "aclnnSwiGluGrad: dim must be an int64 (int64_t), got 1.5"),
    Row("swiglu-dim-big", _swiglu_dim(2**70), INVALID, f"aclnnSwiGluGrad: dim {2**70} does not fit an int64"),
    Row("swiglu-dim-neg-out", _swiglu_dim(-3), TILING, "aclnnSwiGluGrad: dim -3 is outside [-2, 1] for x of 2 dims"),
    Row("swiglu-dim-out", _swiglu_dim(2), TILING, "aclnnSwiGluGrad: dim 2 is outside [-2, 1] for x of 2 dims"),
]

I64 = acl.ACL_INT64
DTYPES_AND_SHAPES = [
    Row("hardswish-int8", lambda: phase1("hardswish", t(dtype=I8), t(dtype=I8), t(dtype=I8)),
        INVALID, f"{HS} gradOutput dtype ACL_INT8 is not in [ACL_FLOAT, ACL_FLOAT16, ACL_BF16]"),
    Row("hardswish-string-dtype", lambda: phase1("hardswish", t(dtype=acl.ACL_STRING), t(), t()),
        INVALID, f"{HS} gradOutput dtype ACL_STRING is not in"),
    Row("hardswish-complex64", lambda: phase1("hardswish", t(dtype=acl.ACL_COMPLEX64), t(), t()),
        INVALID, f"{HS} gradOutput dtype ACL_COMPLEX64 is not in"),
    Row("hardswish-dtype-mismatch", lambda: phase1("hardswish", t(), t(dtype=B), t()),
        INVALID, f"{HS} self dtype ACL_BF16 must equal gradOutput dtype ACL_FLOAT"),
    Row("hardswish-bf16-on-910", lambda: soc("Ascend910", lambda: phase1("hardswish", t(dtype=B), t(dtype=B),
                                                                          t(dtype=B))),
        INVALID, f"{HS} gradOutput dtype ACL_BF16 is not in [ACL_FLOAT, ACL_FLOAT16]"),
    Row("selu-uint8", lambda: phase1("selu", *(t(dtype=acl.ACL_UINT8),) * 3),
        INVALID, "aclnnSeluBackward: gradOutput dtype ACL_UINT8 is not in"),
    Row("threshold-int64-on-910b", lambda: phase1("threshold", t(dtype=I64), t(dtype=I64), s(0.0), t(dtype=I64)),
        INVALID, "aclnnThresholdBackward: gradOutput dtype ACL_INT64 is not in"),
    Row("threshold-int64-big-t-on-950",
        lambda: soc("Ascend950", lambda: phase1("threshold", t(dtype=I64), t(dtype=I64), s(1.0), t(dtype=I64))),
        INVALID, "(ACL_INT64 needs |threshold| <= FLT_EPSILON)"),
    Row("softshrink-out-dtype", lambda: phase1("softshrink", t(), t(dtype=B), s(0.5), t(dtype=B)),
        INNER_NULL, "aclnnSoftshrinkBackward: gradInput dtype ACL_BF16 must equal the result dtype ACL_FLOAT"),
    Row("softshrink-negative-lambd", lambda: scalar_in("softshrink", -0.5),
        INVALID, "aclnnSoftshrinkBackward: lambd must be >= 0, got -0.5"),
    Row("softshrink-nan-lambd-ok", lambda: scalar_in("softshrink", float("nan")), 0),
    Row("swiglu-on-910", lambda: soc("Ascend910", lambda: phase1("swiglu", *args("swiglu", g=t((4, 2))))),
        INVALID, "aclnnSwiGluGrad: yGrad dtype ACL_FLOAT is not in []"),
    Row("hardswish-shape", lambda: phase1("hardswish", t((4, 2)), t((2, 4)), t()),
        INVALID, f"{HS} self shape [2, 4] must equal gradOutput shape [4, 2]"),
    Row("selu-out-shape", lambda: phase1("selu", t(), t(), t((8,))),
        INVALID, "aclnnSeluBackward: gradInput shape [8] must equal gradOutput shape [4, 2]"),
    Row("threshold-not-broadcastable", lambda: phase1("threshold", t((4, 2)), t((3, 2)), s(0.5), t()),
        INVALID, "gradOutput shape [4, 2] and self shape [3, 2] are not broadcastable"),
    Row("softshrink-out-not-broadcast-shape", lambda: phase1("softshrink", t((4, 1)), t((1, 2)), s(0.5), t((4, 1))),
        INVALID, "gradInput shape [4, 1] must equal the broadcast shape [4, 2]"),
    Row("swiglu-format", lambda: phase1("swiglu", t((4, 2)), t((4, 4), fmt=acl.ACL_FORMAT_FRACTAL_NZ), -1, t((4, 4))),
        INVALID, "aclnnSwiGluGrad: x format ACL_FORMAT_FRACTAL_NZ is not in [ACL_FORMAT_ND"),
    Row("swiglu-odd-dim", lambda: phase1("swiglu", t((4, 2)), t((4, 5)), -1, t((4, 5))),
        TILING, "aclnnSwiGluGrad: x dim 1 has odd size 5"),
    Row("swiglu-dim-out-of-range", lambda: phase1("swiglu", t((4, 2)), t((4, 4)), 2, t((4, 4))),
        TILING, "aclnnSwiGluGrad: dim 2 is outside [-2, 1]"),
    Row("swiglu-0d", lambda: phase1("swiglu", t(()), t(()), 0, t(())),
        TILING, "aclnnSwiGluGrad: dim 0 is outside [0, -1] for x of 0 dims"),
    Row("swiglu-ygrad-shape", lambda: phase1("swiglu", t((4, 4)), t((4, 4)), -1, t((4, 4))),
        TILING, "aclnnSwiGluGrad: yGrad shape [4, 4] must equal x shape with dim 1 halved"),
]

RANK9_OK = [
    Row("selu-rank9-ok", lambda: both("selu", *(t((1,) * 8 + (3,)),) * 3), 0),
    Row("swiglu-rank9-ok", lambda: both("swiglu", t((1,) * 8 + (2,)), t((1,) * 8 + (4,)), -1, t((1,) * 8 + (4,))), 0),
]


# ----------------------------------------------------------------------------------------------
# create_tensor misuse: None tensors then reach the operator
# ----------------------------------------------------------------------------------------------

def _created(x):
    """create_tensor gave None (with a message); the operator then reports nullptr."""
    if x is not None:
        return -1, "create_tensor accepted it"
    msg = acl.get_recent_err_msg()
    ret, msg2 = phase1("hardswish", x, t(), t())
    return ret, f"{msg} | {msg2}"


def _scalar_refused(value, dtype=F):
    return (0 if acl.create_scalar(value, dtype) is None else -1), acl.get_recent_err_msg()


CREATE = [
    Row("create-dims-str", lambda: _created(raw("ab", None, 0, None, 0)),
        NULL, "create_tensor: view_dims must be a sequence of ints"),
    Row("create-dtype-999", lambda: _created(raw([2], [1], 0, [2], 0, dtype=999)),
        NULL, "create_tensor: data_type 999 is not an aclDataType"),
    Row("create-format-999", lambda: _created(raw([2], [1], 0, [2], 0, fmt=999)),
        NULL, "create_tensor: format 999 is not an aclFormat"),
    Row("create-strides-len", lambda: _created(raw([2, 2], [1], 0, [4], 0)),
        NULL, "create_tensor: 1 strides for 2 view dims"),
    Row("create-data-negative", lambda: _created(raw([2], [1], 0, [2], -8)),
        NULL, "create_tensor: data -8 is not an address"),
    Row("create-offset-float", lambda: _created(raw([2], [1], 0.5, [2], 0)),
        NULL, "create_tensor: offset must be an int, got 0.5"),
    Row("create-scalar-str", lambda: _scalar_refused("x"), 0, "create_scalar: value must be a real number, got 'x'"),
    Row("create-scalar-inf-int", lambda: _scalar_refused(float("inf"), acl.ACL_INT32),
        0, "create_scalar: inf has no ACL_INT32 value"),
]


# ----------------------------------------------------------------------------------------------
# views: negative, huge, outside storage or allocation, freed, foreign
# ----------------------------------------------------------------------------------------------

def _hs3(x):
    """HardswishBackward with `x` for all three tensors."""
    return phase1("hardswish", x, x, x)


def freed_tensor():
    ptr, _ = acl.rt.malloc(32, 0)
    x = raw([4, 2], [2, 1], 0, [8], ptr)
    acl.rt.free(ptr)
    return x


def free_between_phases():
    ptr, _ = acl.rt.malloc(32, 0)
    x = raw([4, 2], [2, 1], 0, [8], ptr)
    ws, ex, ret = gws("hardswish")(x, x, x)
    acl.rt.free(ptr)
    ret = run("hardswish")(None, ws, ex, None)
    return ret, acl.get_recent_err_msg()


def _in_runtime(make, size):
    ptr, _ = acl.rt.malloc(size, 0)
    return _hs3(make(ptr))


def _readonly():
    a = np.zeros((4, 2), np.float32)
    a.flags.writeable = False
    return acl.from_numpy(a)


VIEWS = [
    Row("negative-dim", lambda: _hs3(raw([-4, 2], [2, 1], 0, [8], _host(8))),
        INVALID, f"{HS} gradOutput view dims [-4, 2] contain a negative dim"),
    Row("negative-stride", lambda: _hs3(raw([4, 2], [-2, 1], 6, [8], _host(8))),
        INVALID, f"{HS} gradOutput strides [-2, 1] contain a negative stride"),
    Row("negative-offset", lambda: _hs3(raw([4, 2], [2, 1], -1, [8], _host(8))),
        INVALID, f"{HS} gradOutput storage offset -1 is negative"),
    Row("negative-storage-dim", lambda: _hs3(raw([4, 2], [2, 1], 0, [-8], _host(8))),
        INVALID, f"{HS} gradOutput storage dims [-8] contain a negative dim"),
    Row("huge-dims-overflow-int64", lambda: _hs3(raw([HUGE, HUGE], None, 0, None, _host(8))),
        INVALID, f"{HS} gradOutput view spans 4835703278458516698824704 bytes, more than"),
    Row("huge-stride", lambda: _hs3(raw([3], [2**62], 0, [2**63], _host(8))),
        INVALID, "reaches element 9223372036854775808, outside its storage"),
    Row("huge-offset", lambda: _hs3(raw([3], [1], 2**63, [2**64], _host(8))),
        INVALID, f"{HS} gradOutput view spans 36893488147419103244 bytes"),
    Row("huge-dims-empty-ok", lambda: both("hardswish", *(raw([0, HUGE, HUGE], None, 0, None, _host(8)),) * 3), 0),
    Row("view-outside-storage", lambda: _hs3(raw([4, 2], [2, 1], 1, [8], _host(9))),
        INVALID, "offset 1) reaches element 8, outside its storage of 8 elements [8]"),
    Row("view-outside-allocation", lambda: _in_runtime(lambda p: raw([4, 3], [3, 1], 0, [12], p), 32),
        INVALID, f"{HS} gradOutput view ends 16 bytes past its allocation of 32 bytes"),
    Row("view-offset-outside-allocation", lambda: _in_runtime(lambda p: raw([2], [1], 7, [9], p), 32),
        INVALID, "gradOutput view ends 4 bytes past its allocation of 32 bytes"),
    Row("freed-memory", lambda: phase1("hardswish", freed_tensor(), t(), t()), INVALID, "was freed"),
    Row("freed-between-phases", free_between_phases, RUNTIME, "was freed before the call ran"),
    Row("foreign-pointer-small", lambda: both("hardswish", *(raw([4, 2], [2, 1], 0, [8], 0x1000),) * 3),
        INVALID, f"{HS} gradOutput data 0x1000 is not runtime memory"),
    Row("foreign-pointer-random", lambda: both("hardswish", *(raw([4, 2], [2, 1], 0, [8], 0x7F3A_1234_5678),) * 3),
        INVALID, f"{HS} gradOutput data 0x7f3a12345678 is not runtime memory"),
    Row("foreign-pointer-out-only", lambda: both("hardswish", t(), t(), raw([4, 2], [2, 1], 0, [8], 0x5A5A_0000)),
        INVALID, f"{HS} out data 0x5a5a0000 is not runtime memory"),
    Row("null-data-nonempty", lambda: _hs3(raw([4, 2], [2, 1], 0, [8], None)),
        INVALID, f"{HS} gradOutput data is nullptr but the view has 8 elements"),
    Row("out-repeated-elements", lambda: phase1("hardswish", t((4, 3)), t((4, 3)), raw([4, 3], [0, 1], 0, [3], _host(3))),
        INVALID, f"{HS} out strides [0, 1] repeat elements"),
    Row("out-repeated-inner", lambda: phase1("hardswish", t((4, 3)), t((4, 3)), raw([4, 3], [1, 0], 0, [4], _host(4))),
        INVALID, f"{HS} out strides [1, 0] repeat elements"),
    Row("out-read-only", lambda: phase1("hardswish", t(), t(), _readonly()), INVALID, f"{HS} out is read-only"),
]


# ----------------------------------------------------------------------------------------------
# out overlapping an input (staged and correct), and phase 2: workspace, executor, stream
# ----------------------------------------------------------------------------------------------

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
    stream, _ = acl.rt.create_stream()
    acl.rt.destroy_stream(stream)
    return both("hardswish", *args("hardswish"), stream=stream)


def _executor(kind):
    return lambda: executor_misuse(kind)


STAGED = "staged workspace 256 bytes, result correct"
PHASE2 = [
    Row("out-overlaps-input-by-1", lambda: staged_call(shift=1), 0, STAGED),
    Row("out-overlaps-input-by-3", lambda: staged_call(shift=3), 0, STAGED),
    Row("swiglu-out-overlaps-x", swiglu_staged, 0, "result correct"),
    Row("workspace-too-small", lambda: staged_call(ws_delta=-1),
        INVALID, f"{HS} workspaceSize 255 is smaller than the 256 bytes the executor needs"),
    Row("workspace-none", lambda: staged_call(workspace=None), NULL, f"{HS} workspace is nullptr but workspaceSize is 256"),
    Row("workspace-not-runtime", lambda: staged_call(workspace=_host(64)),
        INVALID, "does not hold 256 bytes of a runtime allocation"),
    Row("workspace-size-negative", lambda: both("hardswish", *args("hardswish"), ws_size=-1),
        INVALID, f"{HS} workspaceSize must be an int >= 0, got -1"),
    Row("workspace-size-str", lambda: both("hardswish", *args("hardswish"), ws_size="8"),
        INVALID, f"{HS} workspaceSize must be an int >= 0, got '8'"),
    Row("executor-none", lambda: (run("hardswish")(None, 0, None, None), acl.get_recent_err_msg()),
        NULL, f"{HS} executor is nullptr"),
    Row("executor-str", lambda: (run("hardswish")(None, 0, "ex", None), acl.get_recent_err_msg()),
        INVALID, f"{HS} executor must be an aclOpExecutor, got str"),
    Row("executor-consumed", _executor("consumed"), INVALID, f"{HS} executor was already run and is not repeatable"),
    Row("executor-destroyed", _executor("destroyed"), INVALID, f"{HS} executor was destroyed"),
    Row("executor-other-op", _executor("other-op"), INVALID,
        "executor was made by aclnnHardswishBackwardGetWorkspaceSize, not aclnnSeluBackwardGetWorkspaceSize"),
    Row("executor-destroy-twice", _executor("destroy-twice"),
        INVALID, "aclDestroyAclOpExecutor: executor was already destroyed"),
    Row("executor-repeatable-after-run", _executor("repeatable-after-run"),
        INVALID, "aclSetAclOpExecutorRepeatable: executor was already run"),
    Row("executor-repeatable-destroyed", _executor("repeatable-destroyed"), INVALID, f"{HS} executor was destroyed"),
    Row("stream-str", lambda: both("hardswish", *args("hardswish"), stream="stream"),
        INVALID, f"{HS} stream must be an aclrtStream, got str"),
    Row("stream-destroyed", stream_destroyed, INVALID, f"{HS} stream was destroyed"),
]


def _by_name(rows: list[Row]) -> dict[str, Row]:
    named = {row.name: row for row in rows}
    assert len(named) == len(rows), "two rows share a name"
    return named


ROWS = _by_name([
    *_generic(_argument_rows), *_generic(_scalar_rows), *SWIGLU_DIM, *DTYPES_AND_SHAPES,
    *_generic(_rank_rows), *_generic(_default_rows), *RANK9_OK, *CREATE, *VIEWS, *PHASE2,
])


def main(names):
    """Run the rows `names`; print {name: [status, message]} as one JSON line."""
    out = {}
    for name in names:
        try:
            ret, msg = ROWS[name].build()
        except Exception as e:
            ret, msg = "raised", f"{type(e).__name__}: {e}"
        out[name] = [ret, msg]
    sys.stdout.write(json.dumps(out) + "\n")
