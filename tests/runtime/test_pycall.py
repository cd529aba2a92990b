"""The kernels' CPython entry points, generated in LLVM IR (aclgen.codegen.native: KernelEntry)."""

import ctypes
import gc

import numpy as np
import pytest

from aclgen.codegen import native
from aclgen.codegen import native_ir as nir
from tests.kernels import formula_kernel, meta_for
from tests.runners import python, run_threads


@pytest.fixture(scope="module")
def double():
    return formula_kernel(lambda x: x * 2.0, "double_pycall_test")


def test_layout_probe():
    assert native.available()  # CPython 3.11 / numpy on 64-bit: the layouts the guards read


def test_one_handle_per_kernel_and_nothing_attached(double):
    before = dict(vars(double))
    e = native.entry(double)
    assert native.entry(double) is e
    assert e.address == double.address and e.n_pointers == double.meta_layout.n_operands == 2
    words = e.words(1)
    assert words[nir.CallWords.KERNEL] == double.address and words[nir.CallWords.CTX] == 0  # no pool
    assert e.words(1) is words and e.call(1) is e.call(1)
    assert vars(double).keys() == before.keys()


def test_handle_goes_with_its_kernel():
    k = formula_kernel(lambda x: x + 1.0, "short_lived_pycall_test")
    native.entry(k)
    assert k in native._entries
    n = len(native._entries)
    del k
    gc.collect()
    assert len(native._entries) == n - 1


def test_calls_with_ints(double):
    call = native.entry(double).call()
    x = np.arange(11, dtype=np.float32)[1:]  # an offset view: data pointer != buffer start
    out = np.zeros(10, np.float32)
    meta = meta_for(double, (x, out))
    assert call(x.ctypes.data, out.ctypes.data, meta.ctypes.data, 0, 10) is None
    np.testing.assert_array_equal(out, x * 2)


def test_packed_entry_takes_an_argv(double):
    e = native.entry(double)
    x = np.linspace(-3, 3, 100, dtype=np.float32)
    out = np.full(100, -7.0, np.float32)
    meta = meta_for(double, (x, out))
    argv = np.array([x.ctypes.data, out.ctypes.data, meta.ctypes.data, e.address], np.int64)  # then the kernel
    packed_address = int(e.words()[nir.CallWords.PACKED])
    packed = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(packed_address)
    packed(argv.ctypes.data, 10, 90)
    np.testing.assert_array_equal(out[10:90], x[10:90] * 2)
    assert (out[:10] == -7).all() and (out[90:] == -7).all()


@pytest.mark.parametrize(
    "args",
    [
        (), (1, 2, 3, 4), (1, 2, 3, 4, 5, 6),  # wrong counts
        ("x", 2, 3, 0, 1), (1.5, 2, 3, 0, 1), (None, 2, 3, 0, 1), (2**70, 2, 3, 0, 1),  # not i64 ints
        (1, 2, 3, 0, np.zeros(1)), (1, 2, 3, 0, [1]),
    ],
)
def test_bad_arguments_raise_not_crash(double, args):
    call = native.entry(double).call()
    with pytest.raises((TypeError, OverflowError)):
        call(*args)


def test_wrong_count_is_a_type_error(double):
    call = native.entry(double).call()
    assert call.__name__ == double.name  # (one entry point serves every kernel of its arity)
    with pytest.raises(TypeError, match=r"takes 5 int arguments"):
        call(1, 2)


def test_concurrent_calls_from_threads(double):
    """Two threads calling a long kernel at once both finish with correct results (the call
    releases the GIL around the kernel so the runtime can split work across threads)."""
    call = native.entry(double).call()
    n = 1 << 22
    xs = [np.ones(n, np.float32) for _ in range(2)]
    outs = [np.empty(n, np.float32) for _ in range(2)]
    meta = meta_for(double, (xs[0], outs[0]))
    run_threads(lambda k: call(xs[k].ctypes.data, outs[k].ctypes.data, meta.ctypes.data, 0, n), 2, timeout=60)
    assert all((o == 2).all() for o in outs)


def test_symbols_redefined_by_other_llvm_users_do_not_matter():
    """numba registers PyExc_TypeError as the object, not the variable, for every MCJIT in the
    process; our entry points must not resolve C API names through symbols at all."""
    code = (
        "import llvmlite.binding as llvm, numpy as np\n"
        "from aclgen.codegen import native\n"
        "from tests.kernels import formula_kernel\n"
        "llvm.add_symbol('PyExc_TypeError', id(TypeError))\n"
        "llvm.add_symbol('_Py_NoneStruct', 8)\n"
        "llvm.add_symbol('PyEval_SaveThread', 8)\n"
        "k = formula_kernel(lambda x: x * 2.0, 'f')\n"
        "e = native.entry(k)\n"
        "try:\n    e.call()()\nexcept TypeError:\n    print('ok')\n"
        "x, out = np.ones(8, np.float32), np.zeros(8, np.float32)\n"
        "meta = np.array([8, 1, 1], np.int64)\n"
        "assert e.call()(x.ctypes.data, out.ctypes.data, meta.ctypes.data, 0, 8) is None and (out == 2).all()\n"
        "r = native.Replays()\n"
        "launch = native.Launch(e.words(), ((0, 0), (1, 0)), meta.ctypes.data, 8)\n"
        "assert r.record((x,), (), (out,), launch, ({}, []), (meta, k))\n"
        "assert r.run((np.ones(9, np.float32),), (), None) is None\n"
        "print('replayed', r.run((x,), (), None).tolist())\n"
    )
    proc = python(code, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[:2] == ["ok", "replayed " + str([2.0] * 8)], proc.stdout
