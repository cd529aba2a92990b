"""The bad-input matrix through the aclnn API: every row has its expected status code and
message text (tests/hardening_rows.py builds and calls it). Rows run in batches in fresh
interpreters, so a segfault or abort fails the batch's rows instead of killing pytest.

Covered: wrong argument types (str, float, list, ndarray, aclScalar for a tensor and the other
way round), None, destroyed objects, wrong dtype/shape/format/rank > 8, create_tensor misuse,
negative and huge dims (byte sizes past int64), views outside storage or allocation, freed
memory (before phase 1 and between the phases), foreign pointers, repeated or read-only outputs,
outputs partly overlapping an input (staged, and the result checked), workspace too small /
None / not runtime memory, executors consumed / destroyed / of another operator, bad streams.
"""

from __future__ import annotations

import pytest

from tests.hardening_rows import OPERATORS, ROWS, SLOTS, slot_index
from tests.hardening_support import report, run_json


NULL, INVALID, TILING, INNER_NULL, RUNTIME = 161001, 161002, 561002, 561103, 361001
TYPE = {"str": "str", "float": "float", "list": "list", "ndarray": "ndarray", "scalar": "AclScalar",
        "tensor": "AclTensor"}


def expected() -> dict[str, tuple[int, str]]:
    e = {}
    for op, o in OPERATORS.items():  # the generic rows: every operator of the registry
        for slot in SLOTS:
            name = o.arg_names[slot_index(op, slot)]
            e[f"{op}-{slot}-none"] = (NULL, f"{o.api}: {name} is nullptr")
            e[f"{op}-{slot}-destroyed"] = (INVALID, f"{o.api}: {name} was destroyed")
            for kind in ("str", "float", "list", "ndarray", "scalar"):
                e[f"{op}-{slot}-{kind}"] = (INVALID, f"{o.api}: {name} must be an aclTensor, got {TYPE[kind]}")
        if o.scalars:
            name = o.scalars[0].name
            e[f"{op}-param-none"] = (NULL, f"{o.api}: {name} is nullptr")
            e[f"{op}-param-destroyed"] = (INVALID, f"{o.api}: {name} was destroyed")
            for kind in ("str", "float", "tensor"):
                e[f"{op}-param-{kind}"] = (INVALID, f"{o.api}: {name} must be an aclScalar, got {TYPE[kind]}")
        if o.max_rank == 8:
            e[f"{op}-rank9"] = (INVALID, f"{o.api}: {o.inputs[0]} has 9 dims, at most 8 are supported")
        if o.check is None:  # SPEC §6's default sequence
            first, last, out = o.inputs[0], o.inputs[-1], o.outputs[-1]
            listed = o.dtypes["Ascend910B"]
            e[f"{op}-default-int8"] = (0, "") if "int8" in listed else (
                INVALID, f"{o.api}: {first} dtype ACL_INT8 is not in [")
            e[f"{op}-default-mixed-dtypes"] = (
                (INVALID, f"{o.api}: {o.inputs[1]} dtype ACL_FLOAT must equal {first} dtype ACL_BF16")
                if "bfloat16" in listed else (INVALID, f"{o.api}: {first} dtype ACL_BF16 is not in ["))
            e[f"{op}-default-rank9"] = (0, "") if o.max_rank is None else (
                INVALID, f"{o.api}: {first} has {9} dims, at most {o.max_rank} are supported")
            e[f"{op}-default-shapes"] = (
                (INVALID, f"{o.api}: {first} shape [4, 4] and {last} shape [3, 4] are not broadcastable")
                if o.broadcast and len(o.inputs) == 2 else
                (INVALID, "are not broadcastable") if o.broadcast else
                (INVALID, f"{o.api}: {last} shape [3, 4] must equal {first} shape [4, 4]"))
            want = "the broadcast shape" if o.broadcast else f"{first} shape"
            e[f"{op}-default-out-shape"] = (INVALID, f"{o.api}: {out} shape [8] must equal {want} [4, 4]")
            e[f"{op}-default-view-outside-storage"] = (INVALID, f"{o.api}: {first} view (dims [4, 4], strides [4, 1], "
                                                                f"offset 1) reaches element 16, outside its storage")
            e[f"{op}-default-empty-ok"] = (0, "")
    e["swiglu-dim-none"] = (NULL, "aclnnSwiGluGrad: dim is nullptr")
    for kind, got in (("str", "'1'"), ("float", "1.5")):
        e[f"swiglu-dim-{kind}"] = (INVALID, f"aclnnSwiGluGrad: dim must be an int64 (int64_t), got {got}")
    e["swiglu-dim-big"] = (INVALID, f"aclnnSwiGluGrad: dim {2**70} does not fit an int64")
    e["swiglu-dim-neg-out"] = (TILING, "aclnnSwiGluGrad: dim -3 is outside [-2, 1] for x of 2 dims")
    e["swiglu-dim-out"] = (TILING, "aclnnSwiGluGrad: dim 2 is outside [-2, 1] for x of 2 dims")
    hs = "aclnnHardswishBackward:"
    e.update({
        "hardswish-int8": (INVALID, f"{hs} gradOutput dtype ACL_INT8 is not in [ACL_FLOAT, ACL_FLOAT16, ACL_BF16]"),
        "hardswish-string-dtype": (INVALID, f"{hs} gradOutput dtype ACL_STRING is not in"),
        "hardswish-complex64": (INVALID, f"{hs} gradOutput dtype ACL_COMPLEX64 is not in"),
        "hardswish-dtype-mismatch": (INVALID, f"{hs} self dtype ACL_BF16 must equal gradOutput dtype ACL_FLOAT"),
        "hardswish-bf16-on-910": (INVALID, f"{hs} gradOutput dtype ACL_BF16 is not in [ACL_FLOAT, ACL_FLOAT16]"),
        "selu-uint8": (INVALID, "aclnnSeluBackward: gradOutput dtype ACL_UINT8 is not in"),
        "threshold-int64-on-910b": (INVALID, "aclnnThresholdBackward: gradOutput dtype ACL_INT64 is not in"),
        "threshold-int64-big-t-on-950": (INVALID, "(ACL_INT64 needs |threshold| <= FLT_EPSILON)"),
        "softshrink-out-dtype": (INNER_NULL, "aclnnSoftshrinkBackward: gradInput dtype ACL_BF16 must equal the "
                                             "result dtype ACL_FLOAT"),
        "softshrink-negative-lambd": (INVALID, "aclnnSoftshrinkBackward: lambd must be >= 0, got -0.5"),
        "softshrink-nan-lambd-ok": (0, ""),
        "swiglu-on-910": (INVALID, "aclnnSwiGluGrad: yGrad dtype ACL_FLOAT is not in []"),
        "hardswish-shape": (INVALID, f"{hs} self shape [2, 4] must equal gradOutput shape [4, 2]"),
        "selu-out-shape": (INVALID, "aclnnSeluBackward: gradInput shape [8] must equal gradOutput shape [4, 2]"),
        "threshold-not-broadcastable": (INVALID, "gradOutput shape [4, 2] and self shape [3, 2] are not broadcastable"),
        "softshrink-out-not-broadcast-shape": (INVALID, "gradInput shape [4, 1] must equal the broadcast shape [4, 2]"),
        "swiglu-format": (INVALID, "aclnnSwiGluGrad: x format ACL_FORMAT_FRACTAL_NZ is not in [ACL_FORMAT_ND"),
        "swiglu-odd-dim": (TILING, "aclnnSwiGluGrad: x dim 1 has odd size 5"),
        "swiglu-dim-out-of-range": (TILING, "aclnnSwiGluGrad: dim 2 is outside [-2, 1]"),
        "swiglu-0d": (TILING, "aclnnSwiGluGrad: dim 0 is outside [0, -1] for x of 0 dims"),
        "swiglu-ygrad-shape": (TILING, "aclnnSwiGluGrad: yGrad shape [4, 4] must equal x shape with dim 1 halved"),
        "selu-rank9-ok": (0, ""),
        "swiglu-rank9-ok": (0, ""),
        "create-dims-str": (NULL, "create_tensor: view_dims must be a sequence of ints"),
        "create-dtype-999": (NULL, "create_tensor: data_type 999 is not an aclDataType"),
        "create-format-999": (NULL, "create_tensor: format 999 is not an aclFormat"),
        "create-strides-len": (NULL, "create_tensor: 1 strides for 2 view dims"),
        "create-data-negative": (NULL, "create_tensor: data -8 is not an address"),
        "create-offset-float": (NULL, "create_tensor: offset must be an int, got 0.5"),
        "create-scalar-str": (0, "create_scalar: value must be a real number, got 'x'"),
        "create-scalar-inf-int": (0, "create_scalar: inf has no ACL_INT32 value"),
        "negative-dim": (INVALID, f"{hs} gradOutput view dims [-4, 2] contain a negative dim"),
        "negative-stride": (INVALID, f"{hs} gradOutput strides [-2, 1] contain a negative stride"),
        "negative-offset": (INVALID, f"{hs} gradOutput storage offset -1 is negative"),
        "negative-storage-dim": (INVALID, f"{hs} gradOutput storage dims [-8] contain a negative dim"),
        "huge-dims-overflow-int64": (INVALID, f"{hs} gradOutput view spans 4835703278458516698824704 bytes, more than"),
        "huge-stride": (INVALID, "reaches element 9223372036854775808, outside its storage"),
        "huge-offset": (INVALID, f"{hs} gradOutput view spans 36893488147419103244 bytes"),
        "huge-dims-empty-ok": (0, ""),
        "view-outside-storage": (INVALID, "offset 1) reaches element 8, outside its storage of 8 elements [8]"),
        "view-outside-allocation": (INVALID, f"{hs} gradOutput view ends 16 bytes past its allocation of 32 bytes"),
        "view-offset-outside-allocation": (INVALID, "gradOutput view ends 4 bytes past its allocation of 32 bytes"),
        "freed-memory": (INVALID, "was freed"),
        "freed-between-phases": (RUNTIME, "was freed before the call ran"),
        "foreign-pointer-small": (INVALID, f"{hs} gradOutput data 0x1000 is not runtime memory"),
        "foreign-pointer-random": (INVALID, f"{hs} gradOutput data 0x7f3a12345678 is not runtime memory"),
        "foreign-pointer-out-only": (INVALID, f"{hs} out data 0x5a5a0000 is not runtime memory"),
        "null-data-nonempty": (INVALID, f"{hs} gradOutput data is nullptr but the view has 8 elements"),
        "out-repeated-elements": (INVALID, f"{hs} out strides [0, 1] repeat elements"),
        "out-repeated-inner": (INVALID, f"{hs} out strides [1, 0] repeat elements"),
        "out-read-only": (INVALID, f"{hs} out is read-only"),
        "out-overlaps-input-by-1": (0, "staged workspace 256 bytes, result correct"),
        "out-overlaps-input-by-3": (0, "staged workspace 256 bytes, result correct"),
        "swiglu-out-overlaps-x": (0, "result correct"),
        "workspace-too-small": (INVALID, f"{hs} workspaceSize 255 is smaller than the 256 bytes the executor needs"),
        "workspace-none": (NULL, f"{hs} workspace is nullptr but workspaceSize is 256"),
        "workspace-not-runtime": (INVALID, "does not hold 256 bytes of a runtime allocation"),
        "workspace-size-negative": (INVALID, f"{hs} workspaceSize must be an int >= 0, got -1"),
        "workspace-size-str": (INVALID, f"{hs} workspaceSize must be an int >= 0, got '8'"),
        "executor-none": (NULL, f"{hs} executor is nullptr"),
        "executor-str": (INVALID, f"{hs} executor must be an aclOpExecutor, got str"),
        "executor-consumed": (INVALID, f"{hs} executor was already run and is not repeatable"),
        "executor-destroyed": (INVALID, f"{hs} executor was destroyed"),
        "executor-other-op": (INVALID, "executor was made by aclnnHardswishBackwardGetWorkspaceSize, not "
                                       "aclnnSeluBackwardGetWorkspaceSize"),
        "executor-destroy-twice": (INVALID, "aclDestroyAclOpExecutor: executor was already destroyed"),
        "executor-repeatable-after-run": (INVALID, "aclSetAclOpExecutorRepeatable: executor was already run"),
        "executor-repeatable-destroyed": (INVALID, f"{hs} executor was destroyed"),
        "stream-str": (INVALID, f"{hs} stream must be an aclrtStream, got str"),
        "stream-destroyed": (INVALID, f"{hs} stream was destroyed"),
    })
    return e


EXPECTED = expected()
BATCH = 40
NAMES = list(ROWS)
BATCHES = [NAMES[i:i + BATCH] for i in range(0, len(NAMES), BATCH)]
_results: dict[int, dict] = {}


def batch_result(k: int) -> dict:
    if k not in _results:
        code = f"from tests.hardening_rows import main; main({BATCHES[k]!r})"
        _results[k] = run_json(code, timeout=300)
    return _results[k]


def test_every_row_has_an_expectation(request):
    assert set(EXPECTED) == set(ROWS)
    report(request.config, f"bad-input matrix: {len(ROWS)} rows in {len(BATCHES)} subprocess batches")


@pytest.mark.parametrize("name", NAMES)
def test_bad_input(name):
    status, message = batch_result(NAMES.index(name) // BATCH)[name]
    want_status, want_text = EXPECTED[name]
    assert status == want_status, f"{name}: status {status} ({message}), expected {want_status}"
    assert want_text in message, f"{name}: message {message!r} lacks {want_text!r}"
