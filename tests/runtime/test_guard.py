"""Guard tests: no kernel reads or writes outside its views, for every operator, dtype and
vector width (1, 4, 8, 16 lanes), odd sizes and tails, contiguous and strided views.

Two modes, each width in its own interpreter (ACLGEN_VECTOR_WIDTH is read per process):
- canaries: every operand's storage sits between canary bytes; after the call the canaries
  and the gaps between strided elements are unchanged;
- guard pages: each operand is placed in an mmap'ed region flush against a PROT_NONE page
  (once ending at it, once starting after it), so any read or write past the view faults and
  kills the subprocess, which fails the test instead of hiding it.
"""

from __future__ import annotations

import pytest

from tests.runners import run_json

WIDTHS = (1, 4, 8, 16)

DRIVER = r'''
import ctypes, json, mmap
import numpy as np
from tests.registry import extras
import aclgen.acl as acl, aclgen.aclnn as aclnn
from aclgen.tools.run import input_shapes
from tests.edges import values
from tests.runtime.hardening import OPS, NP, CODE
from tests import reference as ref

libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
PAGE = mmap.PAGESIZE
SIZES = (1, 3, 7, 15, 17, 33, 63, 65, 127, 129, 1003)
CANARY = 0xA5
regions = []

def guarded(nbytes, at_end):
    """Memory for nbytes flush against a PROT_NONE page (after it if not at_end)."""
    pages = -(-max(nbytes, 1) // PAGE)
    m = mmap.mmap(-1, (pages + 2) * PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    assert libc.mprotect(base, PAGE, 0) == 0
    assert libc.mprotect(base + (pages + 1) * PAGE, PAGE, 0) == 0
    regions.append(m)
    start = base + PAGE
    return start + pages * PAGE - nbytes if at_end else start

def call(key, dtype, n, mode, strided):
    info = OPS[key]
    npd = NP[dtype]
    rng = np.random.default_rng(n)
    step = 2 if strided else 1
    op = info.op
    n_in = len(op.inputs)
    out = (2 * n,) if op.input_shapes else (n,)  # SwiGluGrad: x and out 2n, yGrad n
    dims = [*input_shapes(op, out), *[out] * len(op.outputs)]
    hosts, ptrs, tensors, keep = [], [], [], []
    for k, d in enumerate(dims):
        count = (d[0] - 1) * step + 1
        host = values(npd, count, rng, 0.3, (0.5,))
        nbytes = host.nbytes
        if mode == "canary":
            pad = 64
            raw = np.full(nbytes + 2 * pad, CANARY, np.uint8)
            keep.append(raw)
            addr = raw.ctypes.data + pad
        else:
            addr = guarded(nbytes, mode == "end")
        ctypes.memmove(addr, host.ctypes.data, nbytes)
        if k >= n_in and strided:  # the gaps of a strided output hold canaries too
            ctypes.memset(addr, CANARY, nbytes)
        t = acl.create_tensor(list(d), CODE[dtype], [step], 0, acl.ACL_FORMAT_ND, [count], addr)
        assert t is not None, acl.get_recent_err_msg()
        hosts.append(host); ptrs.append(addr); tensors.append(t)
    t = 0.0 if dtype == "int64" else 0.5  # INT64 thresholds: Ascend950, |t| <= FLT_EPSILON
    scalars = [s.default if s.kind == "int64" else acl.create_scalar(t, acl.ACL_FLOAT) for s in extras(op)]
    a = [*tensors[:n_in], *scalars, *tensors[n_in:]]
    if dtype == "int64":
        acl.set_soc_version("Ascend950")
    ws, ex, ret = getattr(aclnn, info.api + "GetWorkspaceSize")(*a)
    acl.set_soc_version(None)
    assert ret == 0, acl.get_recent_err_msg()
    assert getattr(aclnn, info.api)(None, ws, ex, None) == 0, acl.get_recent_err_msg()
    problems = []
    if mode == "canary":
        for k, raw in enumerate(keep):
            what = f"input {k}" if k < n_in else f"output {k - n_in}"
            if (raw[:64] != CANARY).any() or (raw[-64:] != CANARY).any():
                problems.append(f"{what} canary overwritten")
            if k >= n_in and strided:
                body = raw[64:-64].view(npd)
                if (np.ascontiguousarray(body[1::2]).view(np.uint8) != CANARY).any():
                    problems.append(f"gap between strided {what} elements written")
    return problems

failures, count = [], 0
for key, info in OPS.items():
    for dtype in info.dtypes:
        for n in SIZES:
            for mode in ("canary", "end", "start"):
                for strided in (False, True) if dtype == "float32" or n == 17 else (False,):
                    p = call(key, dtype, n, mode, strided)
                    regions.clear()  # unmapped once the tensors are gone: keeps /proc/self/maps short
                    count += 1
                    if p:
                        failures.append(f"{key} {dtype} n={n} {mode} strided={strided}: {p}")
print(json.dumps({"count": count, "failures": failures}))
'''


@pytest.mark.parametrize("width", WIDTHS)
def test_no_access_outside_views(width, report):
    r = run_json(DRIVER, timeout=300, env={"ACLGEN_VECTOR_WIDTH": str(width)})
    assert not r["failures"], r["failures"][:10]
    report(f"guard width {width}: {r['count']} calls (canaries, guard page at the end and at the start), no access "
           "outside the views")
