"""Records what a C program asks of aclgen's SDK: loaded as an `--ops` module of
`aclgen sdk` by benchmarks/cann_examples.py, it declares no operator and wraps the runtime's
phase 1, so that every aclnn<Name>GetWorkspaceSize call a program makes is appended to the file
ACLGEN_TRACE_FILE names (when set): the API, its status and message, and each argument by its C name
(tensors as numpy copies of their data at that moment, scalars and attributes as values).

A program's embedded interpreter is never finalized, so each record is written at once (one
pickle per call, appended).
"""

from __future__ import annotations

import os
import pickle
import threading

from aclgen.runtime import api
from aclgen.runtime.array import AclArray
from aclgen.runtime.errors import recent
from aclgen.runtime.scalar import AclScalar
from aclgen.runtime.tensor import AclTensor, to_numpy

_lock = threading.Lock()
_original = api.phase1


def _value(v):
    if isinstance(v, AclTensor):
        try:
            return to_numpy(v).copy()
        except Exception:  # a view the checks refuse: its status says why
            return None
    if isinstance(v, AclScalar):
        return v.value
    if isinstance(v, AclArray):
        return v.values
    return v


def traced_phase1(op, args: tuple, inplace: bool = False):
    path = os.environ.get("ACLGEN_TRACE_FILE")
    if not path:
        return _original(op, args, inplace)
    names = op.inplace_args if inplace else op.arg_names
    before = {n: _value(v) for n, v in zip(names, args)}
    result = _original(op, args, inplace)
    record = {"op": op.name, "api": op.inplace_api if inplace else op.api, "inplace": inplace,
              "status": result[2], "message": recent() if result[2] else "", "args": before}
    with _lock, open(path, "ab") as f:
        pickle.dump(record, f)
    return result


api.phase1 = traced_phase1
