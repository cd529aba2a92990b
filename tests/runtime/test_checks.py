"""Every check of SPEC.md §4, per operator, in order: status code and message text.

Each row builds fresh arguments, calls aclnnXxxGetWorkspaceSize and compares the status and the
message left for acl.get_recent_err_msg() (exact text where SPEC gives it, else a fragment).
"""

from __future__ import annotations

import numpy as np
import pytest

import aclgen.acl as acl
from tests.registry import resolve, seeds
from tests.runtime.aclnn_calls import gws, s, t

F, H, B = acl.ACL_FLOAT, acl.ACL_FLOAT16, acl.ACL_BF16
I8, I32, I64, U8 = acl.ACL_INT8, acl.ACL_INT32, acl.ACL_INT64, acl.ACL_UINT8
NULL, INVALID = 161001, 161002
TILING, INNER_NULL = 561002, 561103
D9 = (1, 1, 1, 1, 1, 1, 1, 4, 2)
D8 = (1, 1, 1, 1, 1, 1, 4, 2)

HS = "aclnnHardswishBackward"
SE = "aclnnSeluBackward"
SO = "aclnnSoftshrinkBackward"
SW = "aclnnSwiGluGrad"
TH = "aclnnThresholdBackward"
HS_LIST = "[ACL_FLOAT, ACL_FLOAT16, ACL_BF16]"

# (id, op, soc, build args, status, message: exact if it starts with "aclnn", else a fragment)
CASES = [
    # --- HardswishBackward §4.1 ---
    ("hs-null-grad", "hardswish", None, lambda: (None, t(), t()), NULL, f"{HS}: gradOutput is nullptr"),
    ("hs-null-self", "hardswish", None, lambda: (t(), None, t()), NULL, f"{HS}: self is nullptr"),
    ("hs-null-out", "hardswish", None, lambda: (t(), t(), None), NULL, f"{HS}: out is nullptr"),
    ("hs-null-first", "hardswish", None, lambda: (None, None, None), NULL, f"{HS}: gradOutput is nullptr"),
    ("hs-grad-int8", "hardswish", None, lambda: (t(dtype=I8), t(), t()), INVALID,
     f"{HS}: gradOutput dtype ACL_INT8 is not in {HS_LIST}"),
    ("hs-self-int32", "hardswish", None, lambda: (t(), t(dtype=I32), t()), INVALID,
     f"{HS}: self dtype ACL_INT32 is not in {HS_LIST}"),
    ("hs-grad-double", "hardswish", None, lambda: (t(dtype=acl.ACL_DOUBLE), t(), t()), INVALID,
     "gradOutput dtype ACL_DOUBLE is not in"),
    ("hs-grad-string", "hardswish", None, lambda: (t(dtype=acl.ACL_STRING), t(), t()), INVALID,
     "gradOutput dtype ACL_STRING is not in"),
    ("hs-self-mismatch", "hardswish", None, lambda: (t(), t(dtype=H), t()), INVALID,
     f"{HS}: self dtype ACL_FLOAT16 must equal gradOutput dtype ACL_FLOAT"),
    ("hs-out-mismatch", "hardswish", None, lambda: (t(), t(), t(dtype=B)), INVALID,
     f"{HS}: out dtype ACL_BF16 must equal gradOutput dtype ACL_FLOAT"),
    ("hs-out-int8", "hardswish", None, lambda: (t(), t(), t(dtype=I8)), INVALID, "out dtype ACL_INT8 must equal"),
    ("hs-910-bf16", "hardswish", "Ascend910", lambda: (t(dtype=B), t(dtype=B), t(dtype=B)), INVALID,
     f"{HS}: gradOutput dtype ACL_BF16 is not in [ACL_FLOAT, ACL_FLOAT16]"),
    ("hs-310p-bf16", "hardswish", "Ascend310P", lambda: (t(dtype=B), t(dtype=B), t(dtype=B)), INVALID,
     "is not in [ACL_FLOAT, ACL_FLOAT16]"),
    ("hs-9-dims", "hardswish", None, lambda: (t(D9), t(D9), t(D9)), INVALID,
     f"{HS}: gradOutput has 9 dims, at most 8 are supported"),
    ("hs-9-dims-self", "hardswish", None, lambda: (t(), t(D9), t()), INVALID, "self has 9 dims"),
    ("hs-9-dims-out", "hardswish", None, lambda: (t(), t(), t(D9)), INVALID, "out has 9 dims"),
    ("hs-self-shape", "hardswish", None, lambda: (t(), t((4, 3)), t()), INVALID,
     f"{HS}: self shape [4, 3] must equal gradOutput shape [4, 2]"),
    ("hs-no-broadcast", "hardswish", None, lambda: (t(), t((1, 2)), t()), INVALID,
     "self shape [1, 2] must equal gradOutput shape [4, 2]"),
    ("hs-out-shape", "hardswish", None, lambda: (t(), t(), t((8,))), INVALID,
     f"{HS}: out shape [8] must equal gradOutput shape [4, 2]"),
    ("hs-dtype-before-shape", "hardswish", None, lambda: (t(), t((3,), I8), t()), INVALID, "self dtype ACL_INT8"),
    ("hs-dims-before-shape", "hardswish", None, lambda: (t(), t(D9), t((3,))), INVALID, "self has 9 dims"),
    ("hs-8-dims-ok", "hardswish", None, lambda: (t(D8), t(D8), t(D8)), 0, None),
    ("hs-empty-ok", "hardswish", None, lambda: (t((0, 2)), t((0, 2)), t((0, 2))), 0, None),
    ("hs-bf16-910b-ok", "hardswish", "Ascend910B", lambda: (t(dtype=B), t(dtype=B), t(dtype=B)), 0, None),
    ("hs-no-format-check", "hardswish", None,
     lambda: (t(fmt=acl.ACL_FORMAT_NC1HWC0), t(fmt=acl.ACL_FORMAT_FRACTAL_NZ), t()), 0, None),
    # --- SeluBackward §4.2 ---
    ("se-null-grad", "selu", None, lambda: (None, t(), t()), NULL, f"{SE}: gradOutput is nullptr"),
    ("se-null-result", "selu", None, lambda: (t(), None, t()), NULL, f"{SE}: result is nullptr"),
    ("se-null-gradInput", "selu", None, lambda: (t(), t(), None), NULL, f"{SE}: gradInput is nullptr"),
    ("se-uint8", "selu", None, lambda: (t(dtype=U8), t(dtype=U8), t(dtype=U8)), INVALID,
     f"{SE}: gradOutput dtype ACL_UINT8 is not in [ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT8, ACL_BF16]"),
    ("se-int64", "selu", None, lambda: (t(dtype=I64), t(dtype=I64), t(dtype=I64)), INVALID, "ACL_INT64 is not in"),
    ("se-result-uint8", "selu", None, lambda: (t(), t(dtype=U8), t()), INVALID, "result dtype ACL_UINT8 is not in"),
    ("se-gradInput-uint8", "selu", None, lambda: (t(), t(), t(dtype=U8)), INVALID,
     "gradInput dtype ACL_UINT8 is not in"),
    ("se-mismatch", "selu", None, lambda: (t(), t(dtype=I32), t()), INVALID,
     f"{SE}: result dtype ACL_INT32 must equal gradOutput dtype ACL_FLOAT"),
    ("se-out-mismatch", "selu", None, lambda: (t(dtype=I8), t(dtype=I8), t(dtype=I32)), INVALID,
     f"{SE}: gradInput dtype ACL_INT32 must equal gradOutput dtype ACL_INT8"),
    ("se-910-bf16", "selu", "Ascend910", lambda: (t(dtype=B), t(dtype=B), t(dtype=B)), INVALID,
     f"{SE}: gradOutput dtype ACL_BF16 is not in [ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT8]"),
    ("se-shape", "selu", None, lambda: (t(), t((2, 4)), t()), INVALID,
     f"{SE}: result shape [2, 4] must equal gradOutput shape [4, 2]"),
    ("se-out-shape", "selu", None, lambda: (t(), t(), t((4, 1))), INVALID,
     f"{SE}: gradInput shape [4, 1] must equal gradOutput shape [4, 2]"),
    ("se-no-dims-limit", "selu", None, lambda: (t((1,) * 10 + (2,)),) * 2 + (t((1,) * 10 + (2,)),), 0, None),
    ("se-int8-ok", "selu", "Ascend310P", lambda: (t(dtype=I8), t(dtype=I8), t(dtype=I8)), 0, None),
    ("se-empty-ok", "selu", None, lambda: (t((3, 0)), t((3, 0)), t((3, 0))), 0, None),
    # --- SoftshrinkBackward §4.3 ---
    ("so-null-grad", "softshrink", None, lambda: (None, t(), s(), t()), NULL, f"{SO}: gradOutput is nullptr"),
    ("so-null-self", "softshrink", None, lambda: (t(), None, s(), t()), NULL, f"{SO}: self is nullptr"),
    ("so-null-lambd", "softshrink", None, lambda: (t(), t(), None, t()), NULL, f"{SO}: lambd is nullptr"),
    ("so-null-gradInput", "softshrink", None, lambda: (t(), t(), s(), None), NULL, f"{SO}: gradInput is nullptr"),
    ("so-lambd-not-scalar", "softshrink", None, lambda: (t(), t(), t(), t()), INVALID,
     f"{SO}: lambd must be an aclScalar, got AclTensor"),
    ("so-int32", "softshrink", None, lambda: (t(dtype=I32), t(), s(), t()), INVALID,
     f"{SO}: gradOutput dtype ACL_INT32 is not in [ACL_FLOAT, ACL_FLOAT16, ACL_BF16]"),
    ("so-self-int8", "softshrink", None, lambda: (t(), t(dtype=I8), s(), t()), INVALID,
     "self dtype ACL_INT8 is not in"),
    ("so-gradInput-double", "softshrink", None, lambda: (t(), t(), s(), t(dtype=acl.ACL_DOUBLE)), INVALID,
     "gradInput dtype ACL_DOUBLE is not in"),
    ("so-910-bf16", "softshrink", "Ascend910", lambda: (t(dtype=B), t(dtype=B), s(), t(dtype=B)), INVALID,
     "gradOutput dtype ACL_BF16 is not in [ACL_FLOAT, ACL_FLOAT16]"),
    ("so-310p-bf16", "softshrink", "Ascend310P", lambda: (t(), t(dtype=B), s(), t()), INVALID,
     "self dtype ACL_BF16 is not in [ACL_FLOAT, ACL_FLOAT16]"),
    ("so-9-dims", "softshrink", None, lambda: (t(D9), t(), s(), t(D9)), INVALID,
     f"{SO}: gradOutput has 9 dims, at most 8 are supported"),
    ("so-9-dims-out", "softshrink", None, lambda: (t(), t(), s(), t(D9)), INVALID, "gradInput has 9 dims"),
    ("so-not-broadcastable", "softshrink", None, lambda: (t((4, 2)), t((3, 2)), s(), t()), INVALID,
     f"{SO}: gradOutput shape [4, 2] and self shape [3, 2] are not broadcastable"),
    ("so-out-shape", "softshrink", None, lambda: (t((4, 1)), t((1, 2)), s(), t((4, 1))), INVALID,
     f"{SO}: gradInput shape [4, 1] must equal the broadcast shape [4, 2]"),
    ("so-lambd-negative", "softshrink", None, lambda: (t(), t(), s(-0.5), t()), INVALID,
     f"{SO}: lambd must be >= 0, got -0.5"),
    ("so-lambd-neg-inf", "softshrink", None, lambda: (t(), t(), s(-np.inf), t()), INVALID, "lambd must be >= 0"),
    ("so-lambd-nan-ok", "softshrink", None, lambda: (t(), t(), s(np.nan), t()), 0, None),
    ("so-lambd-zero-ok", "softshrink", None, lambda: (t(), t(), s(-0.0), t()), 0, None),
    ("so-shape-before-lambd", "softshrink", None, lambda: (t(), t((3,)), s(-1.0), t()), INVALID,
     "are not broadcastable"),
    ("so-promote-561103", "softshrink", None, lambda: (t(dtype=H), t(), s(), t(dtype=H)), INNER_NULL,
     f"{SO}: gradInput dtype ACL_FLOAT16 must equal the result dtype ACL_FLOAT of gradOutput ACL_FLOAT16 "
     "and self ACL_FLOAT"),
    ("so-promote-bf16-f16", "softshrink", None, lambda: (t(dtype=B), t(dtype=H), s(), t(dtype=B)), INNER_NULL,
     "result dtype ACL_FLOAT"),
    ("so-same-561103", "softshrink", None, lambda: (t(dtype=H), t(dtype=H), s(), t()), INNER_NULL,
     "gradInput dtype ACL_FLOAT must equal the result dtype ACL_FLOAT16"),
    ("so-561103-after-lambd", "softshrink", None, lambda: (t(dtype=H), t(), s(-1.0), t(dtype=H)), INVALID,
     "lambd must be >= 0"),
    ("so-561103-after-shape", "softshrink", None, lambda: (t(dtype=H), t(), s(), t((2,), H)), INVALID,
     "must equal the broadcast shape"),
    ("so-promote-ok", "softshrink", None, lambda: (t(dtype=H), t(dtype=B), s(), t()), 0, None),
    ("so-broadcast-ok", "softshrink", None, lambda: (t((5, 1, 2)), t((4, 1)), s(), t((5, 4, 2))), 0, None),
    ("so-empty-ok", "softshrink", None, lambda: (t((0, 2)), t((1, 2)), s(), t((0, 2))), 0, None),
    # --- SwiGluGrad §4.4 ---
    ("sw-null-ygrad", "swiglu", None, lambda: (None, t((2, 4)), -1, t((2, 4))), NULL, f"{SW}: yGrad is nullptr"),
    ("sw-null-x", "swiglu", None, lambda: (t((2, 2)), None, -1, t((2, 4))), NULL, f"{SW}: x is nullptr"),
    ("sw-null-out", "swiglu", None, lambda: (t((2, 2)), t((2, 4)), -1, None), NULL, f"{SW}: out is nullptr"),
    ("sw-int32", "swiglu", None, lambda: (t((2, 2), I32), t((2, 4)), -1, t((2, 4))), INVALID,
     f"{SW}: yGrad dtype ACL_INT32 is not in [ACL_FLOAT16, ACL_FLOAT, ACL_BF16]"),
    ("sw-x-mismatch", "swiglu", None, lambda: (t((2, 2)), t((2, 4), H), -1, t((2, 4))), INVALID,
     f"{SW}: x dtype ACL_FLOAT16 must equal yGrad dtype ACL_FLOAT"),
    ("sw-out-mismatch", "swiglu", None, lambda: (t((2, 2)), t((2, 4)), -1, t((2, 4), B)), INVALID,
     f"{SW}: out dtype ACL_BF16 must equal yGrad dtype ACL_FLOAT"),
    ("sw-910-none", "swiglu", "Ascend910", lambda: (t((2, 2)), t((2, 4)), -1, t((2, 4))), INVALID,
     f"{SW}: yGrad dtype ACL_FLOAT is not in []"),
    ("sw-310p-bf16", "swiglu", "Ascend310P", lambda: (t((2, 2), B), t((2, 4), B), -1, t((2, 4), B)), INVALID,
     "yGrad dtype ACL_BF16 is not in [ACL_FLOAT16, ACL_FLOAT]"),
    ("sw-format-nz", "swiglu", None,
     lambda: (t((2, 2), fmt=acl.ACL_FORMAT_FRACTAL_NZ), t((2, 4)), -1, t((2, 4))), INVALID,
     f"{SW}: yGrad format ACL_FORMAT_FRACTAL_NZ is not in [ACL_FORMAT_ND, ACL_FORMAT_NCHW, ACL_FORMAT_NHWC, "
     "ACL_FORMAT_NCDHW, ACL_FORMAT_NCL]"),
    ("sw-format-x", "swiglu", None, lambda: (t((2, 2)), t((2, 4), fmt=acl.ACL_FORMAT_NC1HWC0), -1, t((2, 4))),
     INVALID, "x format ACL_FORMAT_NC1HWC0 is not in"),
    ("sw-format-out", "swiglu", None, lambda: (t((2, 2)), t((2, 4)), -1, t((2, 4), fmt=acl.ACL_FRACTAL_Z_3D)),
     INVALID, "out format ACL_FRACTAL_Z_3D is not in"),
    ("sw-formats-ok", "swiglu", None,
     lambda: (t((2, 2), fmt=acl.ACL_FORMAT_NCHW), t((2, 4), fmt=acl.ACL_FORMAT_NCL), -1,
              t((2, 4), fmt=acl.ACL_FORMAT_NHWC)), 0, None),
    ("sw-out-shape", "swiglu", None, lambda: (t((2, 2)), t((2, 4)), -1, t((2, 2))), INVALID,
     f"{SW}: out shape [2, 2] must equal x shape [2, 4]"),
    ("sw-dim-high", "swiglu", None, lambda: (t((2, 2)), t((2, 4)), 2, t((2, 4))), TILING,
     f"{SW}: dim 2 is outside [-2, 1] for x of 2 dims"),
    ("sw-dim-low", "swiglu", None, lambda: (t((2, 2)), t((2, 4)), -3, t((2, 4))), TILING, "dim -3 is outside"),
    ("sw-rank0", "swiglu", None, lambda: (t(()), t(()), 0, t(())), TILING, "dim 0 is outside [0, -1]"),
    ("sw-odd", "swiglu", None, lambda: (t((2, 2)), t((2, 5)), -1, t((2, 5))), TILING,
     f"{SW}: x dim 1 has odd size 5, it must split into two halves"),
    ("sw-ygrad-shape", "swiglu", None, lambda: (t((2, 4)), t((2, 4)), -1, t((2, 4))), TILING,
     f"{SW}: yGrad shape [2, 4] must equal x shape with dim 1 halved [2, 2]"),
    ("sw-ygrad-other-dim", "swiglu", None, lambda: (t((2, 2)), t((2, 4)), 0, t((2, 4))), TILING,
     f"{SW}: yGrad shape [2, 2] must equal x shape with dim 0 halved [1, 4]"),
    ("sw-dim-not-int", "swiglu", None, lambda: (t((2, 2)), t((2, 4)), 1.0, t((2, 4))), INVALID,
     f"{SW}: dim must be an int64 (int64_t), got 1.0"),
    ("sw-shape-before-dim", "swiglu", None, lambda: (t((2, 2)), t((2, 4)), 5, t((2, 3))), INVALID,
     "out shape [2, 3] must equal x shape [2, 4]"),
    ("sw-dim0-ok", "swiglu", None, lambda: (t((1, 4)), t((2, 4)), 0, t((2, 4))), 0, None),
    ("sw-rank9-ok", "swiglu", None, lambda: (t((1,) * 8 + (2,)), t((1,) * 8 + (4,)), -1, t((1,) * 8 + (4,))), 0, None),
    ("sw-empty-ok", "swiglu", None, lambda: (t((0, 2)), t((0, 4)), -1, t((0, 4))), 0, None),
    # --- ThresholdBackward §4.5 (CANN's order: threshold, out, gradOutput, self) ---
    ("th-null-threshold", "threshold", None, lambda: (None, None, None, None), NULL,
     f"{TH}: threshold is nullptr"),
    ("th-null-out", "threshold", None, lambda: (None, None, s(), None), NULL, f"{TH}: out is nullptr"),
    ("th-null-grad", "threshold", None, lambda: (None, None, s(), t()), NULL, f"{TH}: gradOutput is nullptr"),
    ("th-null-self", "threshold", None, lambda: (t(), None, s(), t()), NULL, f"{TH}: self is nullptr"),
    ("th-int16", "threshold", None, lambda: (t(dtype=acl.ACL_INT16), t(), s(), t()), INVALID,
     f"{TH}: gradOutput dtype ACL_INT16 is not in [ACL_FLOAT, ACL_INT32, ACL_FLOAT16, ACL_INT8, ACL_UINT8, ACL_BF16]"),
    ("th-int64-910b", "threshold", None, lambda: (t(dtype=I64), t(dtype=I64), s(0.0), t(dtype=I64)), INVALID,
     "gradOutput dtype ACL_INT64 is not in"),
    ("th-int64-950-t0-ok", "threshold", "Ascend950", lambda: (t(dtype=I64), t(dtype=I64), s(0.0), t(dtype=I64)),
     0, None),
    ("th-int64-950-eps-ok", "threshold", "Ascend950",
     lambda: (t(dtype=I64), t(dtype=I64), s(-1.1920928955078125e-07), t(dtype=I64)), 0, None),
    ("th-int64-950-t1", "threshold", "Ascend950", lambda: (t(dtype=I64), t(dtype=I64), s(1.0), t(dtype=I64)),
     INVALID, "gradOutput dtype ACL_INT64 is not in [ACL_FLOAT, ACL_INT32, ACL_FLOAT16, ACL_INT8, ACL_UINT8, "
     "ACL_BF16] (ACL_INT64 needs |threshold| <= FLT_EPSILON)"),
    ("th-int64-950-2eps", "threshold", "Ascend950",
     lambda: (t(dtype=I64), t(dtype=I64), s(2.5e-07), t(dtype=I64)), INVALID, "ACL_INT64 needs"),
    ("th-int64-950-nan", "threshold", "Ascend950",
     lambda: (t(dtype=I64), t(dtype=I64), s(np.nan), t(dtype=I64)), INVALID, "ACL_INT64 needs"),
    ("th-910-bf16", "threshold", "Ascend910", lambda: (t(dtype=B), t(dtype=B), s(), t(dtype=B)), INVALID,
     "gradOutput dtype ACL_BF16 is not in [ACL_FLOAT, ACL_INT32, ACL_FLOAT16, ACL_INT8, ACL_UINT8]"),
    ("th-self-bad", "threshold", None, lambda: (t(), t(dtype=acl.ACL_BOOL), s(), t()), INVALID,
     "self dtype ACL_BOOL is not in"),
    ("th-mismatch", "threshold", None, lambda: (t(dtype=U8), t(dtype=I8), s(), t(dtype=U8)), INVALID,
     f"{TH}: self dtype ACL_INT8 must equal gradOutput dtype ACL_UINT8"),
    ("th-out-mismatch", "threshold", None, lambda: (t(), t(), s(), t(dtype=H)), INVALID,
     f"{TH}: out dtype ACL_FLOAT16 must equal gradOutput dtype ACL_FLOAT"),
    ("th-9-dims", "threshold", None, lambda: (t(D9), t(D9), s(), t(D9)), INVALID,
     f"{TH}: gradOutput has 9 dims, at most 8 are supported"),
    ("th-not-broadcastable", "threshold", None, lambda: (t((2, 3)), t((2, 2)), s(), t((2, 3))), INVALID,
     f"{TH}: gradOutput shape [2, 3] and self shape [2, 2] are not broadcastable"),
    ("th-out-shape", "threshold", None, lambda: (t((2, 1)), t((1, 3)), s(), t((2, 1))), INVALID,
     f"{TH}: out shape [2, 1] must equal the broadcast shape [2, 3]"),
    ("th-broadcast-ok", "threshold", None, lambda: (t((2, 1)), t((3,)), s(), t((2, 3))), 0, None),
    ("th-int-scalar-ok", "threshold", None, lambda: (t(dtype=U8), t(dtype=U8), s(300, I32), t(dtype=U8)), 0, None),
    ("th-empty-ok", "threshold", None, lambda: (t((0,)), t((1,)), s(), t((0,))), 0, None),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_check_table(case, soc):
    _, op, soc_name, build, status, message = case
    soc(soc_name)
    args = build()
    ws, executor, ret = gws(op)(*args)
    if status == 0:
        assert ret == 0, acl.get_recent_err_msg()
        assert executor is not None and ws == 0
        return
    assert (ws, executor, ret) == (0, None, status)
    msg = acl.get_recent_err_msg()
    assert "\n" not in msg
    if message.startswith("aclnn"):
        assert msg == message
    else:
        assert message in msg, msg


def test_every_op_has_null_dtype_and_shape_rows():
    """The table covers, for every operator, nullptr, dtype, and shape checks plus a success."""
    for op in seeds():
        rows = [c for c in CASES if resolve(c[1]) is op]
        assert {161001, 161002, 0} <= {c[4] for c in rows}, op.name


def test_messages_name_the_soc_list_for_each_profile(soc):
    expected = {
        "Ascend910": "[ACL_FLOAT, ACL_FLOAT16]",
        "Ascend310P": "[ACL_FLOAT, ACL_FLOAT16]",
        "Ascend910B": HS_LIST,
        "Ascend910_93": HS_LIST,
        "Ascend950": HS_LIST,
    }
    for name, listing in expected.items():
        soc(name)
        _, _, ret = gws("hardswish")(t(dtype=I32), t(), t())
        assert ret == INVALID
        assert acl.get_recent_err_msg().endswith(listing)


def test_soc_from_environment(monkeypatch, soc):
    monkeypatch.setenv("ACLGEN_SOC_VERSION", "Ascend910")
    assert acl.get_soc_name() == "Ascend910"
    _, _, ret = gws("hardswish")(t(dtype=B), t(dtype=B), t(dtype=B))
    assert ret == INVALID
    assert acl.set_soc_version("Ascend950") == 0  # the explicit choice wins over the environment
    _, _, ret = gws("hardswish")(t(dtype=B), t(dtype=B), t(dtype=B))
    assert ret == 0
    acl.set_soc_version(None)
    monkeypatch.setenv("ACLGEN_SOC_VERSION", "Ascend999")
    _, _, ret = gws("hardswish")(t(), t(), t())
    assert ret == 561000 and "Ascend999" in acl.get_recent_err_msg()
    monkeypatch.delenv("ACLGEN_SOC_VERSION")
    assert acl.get_soc_name() == "Ascend910B"


@pytest.mark.parametrize("name,value,rule", [
    ("ACLGEN_VECTOR_WIDTH", "24", "a power of two up to 256"),
    ("ACLGEN_VECTOR_WIDTH", "4096", "a power of two up to 256"),
    ("ACLGEN_TILE_SIZE", "-8", "up to 4611686018427387904"),
    ("ACLGEN_THREADS", "100000", "up to 1024"),
    ("ACLGEN_FMA", "maybe", "one of auto, on, off"),
    ("ACLGEN_OPT_LEVEL", "4", "0, 1, 2 or 3"),
])
def test_invalid_knob_is_a_status_code_naming_it(monkeypatch, name, value, rule):
    """A setting outside its range answers every call with 561000 and a message naming the
    variable, its value and the range (never a compile of a 4096-lane loop or a pool of 100000
    threads); the call goes through again once the variable is fixed."""
    monkeypatch.setenv(name, value)
    _, _, ret = gws("hardswish")(t(), t(), t())
    assert ret == 561000
    assert f"{name}={value!r}" in acl.get_recent_err_msg() and rule in acl.get_recent_err_msg()
    monkeypatch.delenv(name)
    assert gws("hardswish")(t(), t(), t())[2] == 0


def test_unknown_soc_rejected():
    assert acl.set_soc_version("Ascend123") == acl.ACL_ERROR_INVALID_PARAM
    assert "Ascend123" in acl.get_recent_err_msg()
    assert acl.get_soc_name() == "Ascend910B"


def test_memo_does_not_hide_a_soc_change(soc):
    """A call accepted on one profile is checked again after the profile changes."""
    g, x, o = t(dtype=B), t(dtype=B), t(dtype=B)
    assert gws("hardswish")(g, x, o)[2] == 0
    soc("Ascend910")
    assert gws("hardswish")(g, x, o)[2] == INVALID


def test_memo_does_not_hide_destroyed_objects():
    g, x, o = t(), t(), t()
    lam = s(0.5)
    assert gws("softshrink")(g, x, lam, o)[2] == 0
    assert acl.destroy_scalar(lam) == 0
    assert gws("softshrink")(g, x, lam, o)[2] == INVALID
    assert acl.get_recent_err_msg() == f"{SO}: lambd was destroyed"
    assert acl.destroy_tensor(g) == 0
    _, _, ret = gws("hardswish")(g, x, o)
    assert ret == INVALID and acl.get_recent_err_msg() == f"{HS}: gradOutput was destroyed"


def test_wrong_object_types():
    arr = np.zeros((4, 2), np.float32)
    _, _, ret = gws("hardswish")(arr, t(), t())
    assert ret == INVALID and acl.get_recent_err_msg() == f"{HS}: gradOutput must be an aclTensor, got ndarray"
    _, _, ret = gws("threshold")(t(), t(), 1.0, t())
    assert ret == INVALID and "threshold must be an aclScalar, got float" in acl.get_recent_err_msg()
