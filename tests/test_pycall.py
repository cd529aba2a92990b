"""The CPython entry points generated in LLVM IR (aclgen.codegen.pycall)."""

import threading

import numpy as np
import pytest

import aclgen
from aclgen.codegen.pycall import array_data_offset, fastcall


@pytest.fixture(scope="module")
def double():
    f = aclgen.compile(lambda x: x * 2.0)
    return f.kernel


def meta_for(kernel, n):
    from aclgen.launch import Launch, plan

    return Launch(kernel, plan((n,), [(1,), (1,)]), [0, 0], []).meta


def test_array_layout_probe():
    assert array_data_offset() == 16  # CPython 3.11 / numpy: data follows PyObject_HEAD


@pytest.mark.parametrize("kinds", ["iiiii", "aaiii", "aiiii"])
def test_calls_with_ints_or_arrays(double, kinds):
    f = fastcall(double.address, kinds)
    x = np.arange(11, dtype=np.float32)[1:]  # an offset view: data pointer != buffer start
    out = np.zeros(10, np.float32)
    meta = meta_for(double, 10)
    args = [x if k == "a" else x.ctypes.data for k in kinds[:1]] + [out if kinds[1] == "a" else out.ctypes.data]
    f(*args, meta.ctypes.data, 0, 10)
    np.testing.assert_array_equal(out, x * 2)


@pytest.mark.parametrize(
    "args",
    [
        (), (1, 2, 3, 4), (1, 2, 3, 4, 5, 6),  # wrong counts
        ("x", 2, 3, 0, 1), (1.5, 2, 3, 0, 1), (None, 2, 3, 0, 1), (2**70, 2, 3, 0, 1),  # not i64 ints
    ],
)
def test_bad_arguments_raise_not_crash(double, args):
    f = fastcall(double.address, "iiiii")
    with pytest.raises((TypeError, OverflowError)):
        f(*args)


def test_array_kind_rejects_non_arrays(double):
    f = fastcall(double.address, "aaiii")
    meta = meta_for(double, 4)
    x = np.zeros(4, np.float32)
    for bad in ([0.0] * 4, np.matrix(np.zeros(4, np.float32)), 12345, None):
        with pytest.raises(TypeError):
            f(bad, x, meta.ctypes.data, 0, 4)


def test_concurrent_calls_from_threads(double):
    """Two threads calling a long kernel at once both finish with correct results (the call
    releases the GIL around the kernel so the runtime can split work across threads)."""
    f = fastcall(double.address, "aaiii")
    n = 1 << 22
    xs = [np.ones(n, np.float32) for _ in range(2)]
    outs = [np.empty(n, np.float32) for _ in range(2)]
    meta = meta_for(double, n)
    threads = [threading.Thread(target=f, args=(x, o, meta.ctypes.data, 0, n)) for x, o in zip(xs, outs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert all((o == 2).all() for o in outs)


def test_symbols_redefined_by_other_llvm_users_do_not_matter():
    """numba registers PyExc_TypeError as the object, not the variable, for every MCJIT in the
    process; our entry points must not resolve C API names through symbols at all."""
    import subprocess
    import sys

    code = (
        "import llvmlite.binding as llvm, aclgen\n"
        "from aclgen.codegen.pycall import fastcall\n"
        "llvm.add_symbol('PyExc_TypeError', id(TypeError))\n"
        "llvm.add_symbol('_Py_NoneStruct', 8)\n"
        "f = fastcall(aclgen.compile(lambda x: x * 2.0).kernel.address, 'iiiii')\n"
        "try:\n    f()\nexcept TypeError:\n    print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
