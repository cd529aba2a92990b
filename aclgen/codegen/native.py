"""The native entry layer: how Python calls kernels, splits them over threads and replays them.

A ctypes call costs 1.5-2 µs, a Python ThreadPoolExecutor hand-off ~100 µs and the numpy entry
points' checks several µs: more than a 1K-element kernel runs. So, like numba's dispatchers, the
entry points are tiny functions generated in LLVM IR (built in aclgen.codegen.native_ir) and
loaded into one MCJIT engine that this module owns:

- `entry(kernel)`: a typed handle per kernel; `call(threads)` is a METH_FASTCALL builtin
  (~0.1 µs a call) that releases the GIL around the kernel and, for threads > 1, splits its range
  over the native pool; `words(threads)` are the CallWords a replay runs it by.
- The pool: ordinary daemon threads that enter a native loop (GIL released) and never come back
  to Python. They spin briefly, then sleep on a futex; a launch's chunks are claimed by the
  caller and every worker from a shared counter (native_ir.pool_module). One launch at a time:
  a caller that finds the pool busy runs its whole range itself. A pool belongs to one process:
  a forked child makes its own (the parent's workers do not exist there).
- `Replays`: guarded replays of one operator's calls. Once a call has passed every check its
  plan depends only on facts a guard compares cheaply; like a JIT's guarded specialization,
  those facts are recorded next to the kernel launch, and a later call whose guards hold re-runs
  it for a few hundred nanoseconds. Anything else misses (None) and the caller takes the full
  path, which checks, reports errors and records the new geometry. Recorded facts come from
  arrays that passed the full checks, so a hit is a call the full path would have accepted with
  the same plan.

Nothing is generated per kernel or per record: the entry points of all kernels of one arity
(`arity_module`), the pool and the replay are a handful of modules whose object code is the
same in every process (native_ir binds this process's addresses through symbols), made once per
machine: `set_object_store` (the runtime installs the compile cache's disk store) keeps it, so a
process with a warm cache does no LLVM work at all. A kernel's handle is data (CallWords) passed
to those functions; a replay record is an int64 array (native_ir.Header) passed as the replay
builtin's `self`.
"""

from __future__ import annotations

import ctypes
import functools
import os
import struct
import threading
import weakref
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, replace

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from aclgen.codegen import native_ir as nir
from aclgen.codegen.native_ir import ArrayEntry, Header, LaunchEntry, ParamEntry, Relation
from aclgen.codegen.target import code_generator, new_target_machine, real_host

MAX_POINTERS = nir.MAX_POINTERS
GEOMETRIES = 4096  # records a Replays indexes by input geometry (then the index starts over)

# ----------------------------------------------------------------------------------------------
# The engine: one MCJIT for every entry point of the process. Code is never removed; what it
# names (method defs, pools' contexts, the kernels' engines via the call words) is kept.
# ----------------------------------------------------------------------------------------------

_lock = threading.RLock()  # the engine, the pools and every cache of made entry points
_engine: llvm.ExecutionEngine | None = None
_kept: list = []
_loaded: set[str] = set()  # glue modules in the engine
_addresses: dict[str, int] = {}  # their functions' addresses by symbol
_compiles = 0  # modules LLVM compiled in this process (a warm object store: none)
# Modules compiled at -O2 (the replay guard, the pool: every replay and launch runs them); the
# per-arity glue is argument moves and one call, built at -O0 in a third of the time and run as
# fast (a 1K executor re-run measured 0.77-0.79 µs either way; the guard at -O0 cost 30 ns).
_OPTIMIZED = ("aclgen_replay", "aclgen_pool")


def compiled_modules() -> int:
    """How many modules LLVM compiled in this process (loading from the object store and
    recording a replay compile none)."""
    return _compiles


def _build_object(module: ir.Module) -> bytes:
    """Object code of `module` for this machine (native code runs here, whatever ACLGEN_CPU_NAME
    says about kernels)."""
    global _compiles
    ref = llvm.parse_assembly(str(module))
    ref.triple = real_host().triple
    ref.verify()
    _compiles += 1
    with code_generator():
        return new_target_machine(2 if module.name in _OPTIMIZED else 0).emit_object(ref)


def _no_store(name: str, build: Callable[[], bytes]) -> bytes:
    return build()


_store: Callable[[str, Callable[[], bytes]], bytes] = _no_store


def set_object_store(store: Callable[[str, Callable[[], bytes]], bytes]) -> None:
    """Keep the glue's object code in `store(name, build)`: the object code of module `name`,
    from the store or from `build()` (then stored). The compile cache sits above this layer, so
    the runtime installs its disk store (aclgen.cache.glue_object); until then every process
    compiles its own."""
    global _store
    _store = store


def _load(make: Callable[[], ir.Module], name: str, symbols: Sequence[str]) -> list[int]:
    """The addresses of `symbols`, functions of glue module `name` (`make()` builds it), loaded
    into the engine once per process: from the object store, else compiled."""
    global _engine
    with _lock:  # LLVM's global context is not thread-safe: parse and load under the lock too
        if name not in _loaded:
            _bind_symbols()
            obj = _store(name, lambda: _build_object(make()))
            if _engine is None:
                _engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), new_target_machine(0))
            _engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            _engine.finalize_object()
            _loaded.add(name)
        assert _engine is not None
        found = []
        for symbol in symbols:
            address = _addresses.get(symbol) or _engine.get_function_address(symbol)
            if not address:
                raise RuntimeError(f"native glue {name}: no function {symbol} in its object code")
            found.append(_addresses.setdefault(symbol, address))
        return found


def _once(cache: MutableMapping, key, make: Callable):
    """cache[key], made once by make() (under the lock) when missing."""
    value = cache.get(key)
    if value is None:
        with _lock:
            value = cache.get(key)
            if value is None:
                value = cache[key] = make()
    return value


@functools.cache
def _process() -> dict[str, int]:
    """The addresses native_ir.SYMBOLS name in this process, taken through ctypes: never
    resolved by C symbol name (another LLVM user, numba, redefines names like PyExc_TypeError
    for every MCJIT in the process)."""

    def address(fn) -> int:
        value = ctypes.cast(fn, ctypes.c_void_p).value
        assert value is not None, "a resolved C function is never at NULL"
        return value

    # the glue reads an int64 array's data pointer (call words, records) at this offset
    probe = np.zeros(1, np.int64)
    if ctypes.c_void_p.from_address(id(probe) + nir.ARRAY_DATA).value != probe.ctypes.data:
        raise RuntimeError("this numpy's arrays keep their data pointer elsewhere: aclgen's native entry points "
                           "cannot run with it")
    libc = ctypes.CDLL(None)
    found = {name: address(getattr(ctypes.pythonapi, name)) for name in nir.C_API_NAMES}
    found["syscall"] = address(libc.syscall) if hasattr(libc, "syscall") else 0
    found |= {"None": id(None), "TypeError": id(TypeError), "ndarray": id(np.ndarray), "tuple": id(tuple)}
    return found


_bound = False


def _bind_symbols() -> None:
    """Point native_ir's symbols at this process's addresses (before any glue is loaded)."""
    global _bound
    if not _bound:
        for name, address in _process().items():
            llvm.add_symbol(nir.symbol(name), address)
        _bound = True


METH_FASTCALL = 0x80


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


_new_function = ctypes.pythonapi.PyCFunction_NewEx
_new_function.restype = ctypes.py_object
_new_function.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]


def _method(address: int, name: str) -> int:
    """The address of a PyMethodDef (kept for the life of the process) for the METH_FASTCALL
    function at `address`."""
    label = name.encode()
    mdef = _MethodDef(label, address, METH_FASTCALL, None)
    with _lock:
        _kept.append((mdef, label))
    return ctypes.addressof(mdef)


def _builtin(mdef: int, self=None):
    """A builtin function object for the method def at `mdef`; `self` (kept alive by it) is
    passed to every call."""
    return _new_function(mdef, self, None)


# ----------------------------------------------------------------------------------------------
# The pool
# ----------------------------------------------------------------------------------------------


class _Pool:
    """`threads - 1` native workers plus the caller, claiming the chunks of one launch at a time."""

    def __init__(self, threads: int):
        self.threads = threads
        # the context (native_ir.Ctx), its fields a cache line apart: start it on one
        self._memory = np.zeros((nir.Ctx.SIZE + 64) // 8, np.int64)
        start = self._memory.ctypes.data
        self.ctx = start + (-start) % 64
        worker, self.launch = _load(nir.pool_module, "aclgen_pool", (nir.POOL_WORKER, nir.POOL_LAUNCH))
        run = _builtin(_method(worker, "aclgen_worker"))
        for w in range(threads - 1):
            threading.Thread(target=run, args=(self.ctx,), daemon=True, name=f"aclgen-{w}").start()


_pools: dict[tuple[int, int], _Pool] = {}  # (pid, threads): kept for good (code names the contexts)


@functools.cache
def _has_pool() -> bool:
    return real_host().triple.startswith("x86_64") and os.uname().sysname == "Linux" and _process()["syscall"] != 0


def _pool(threads: int) -> _Pool | None:
    """This process's pool of `threads` threads in all (None for 1, or off x86-64 Linux)."""
    if threads <= 1 or not _has_pool():
        return None
    return _once(_pools, (os.getpid(), threads), lambda: _Pool(threads))


def _after_fork_in_child() -> None:
    """Fresh locks: a thread that held one at the fork does not exist in the child."""
    global _lock
    _lock = threading.RLock()
    for replays in list(_all_replays):
        replays._lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)

# ----------------------------------------------------------------------------------------------
# Kernel handles
# ----------------------------------------------------------------------------------------------


class _Words(np.ndarray):
    """CallWords (an int64 array) that keep what they name alive (`keep`: the kernel's engine)."""

    keep: object = None


class KernelEntry:
    """The native entry points of one compiled kernel — a typed handle made only by `entry(kernel)`.

    The entry points call the kernel's code, so the handle's call words (and with them its
    builtins and the replays that run them) keep the kernel's engine (`kernel.native`) alive,
    not the Kernel itself."""

    __slots__ = ("__weakref__", "_calls", "_code", "_name", "_words", "address", "chunking", "n_pointers")

    def __init__(self, address: int, n_pointers: int, name: str, code,
                 chunking: tuple[int, int] = (nir.CHUNK_GRAIN, nir.MIN_CHUNK)):
        self.address = address  # void k(ptr p_0, ..., ptr p_{n-1}, ptr meta, i64 begin, i64 end)
        self.n_pointers = n_pointers  # operand pointers (meta not counted)
        self.chunking = chunking  # (grain, least) of the pool's chunks of its range (nir.CHUNK_GRAIN)
        self._name, self._code = name, code
        self._words: dict[_Pool | int, _Words] = {}  # by pool (1: none)
        self._calls: dict[_Pool | int, object] = {}

    def words(self, threads: int = 1) -> np.ndarray:
        """The kernel's CallWords for `threads` threads: split over this process's native pool
        when threads > 1 (x86-64 Linux), else run by the calling thread. Made once per pool."""
        pool = _pool(threads)

        def make() -> _Words:
            n = self.n_pointers + 1
            (packed,) = _load(lambda: nir.arity_module(n), nir.arity_name(n), (nir.packed_name(n),))
            words = np.zeros(nir.CallWords.SIZE, np.int64).view(_Words)
            words[nir.CallWords.KERNEL], words[nir.CallWords.PACKED] = self.address, packed
            if pool is not None:
                words[nir.CallWords.CTX], words[nir.CallWords.THREADS] = pool.ctx, pool.threads
                words[nir.CallWords.LAUNCH] = pool.launch
                words[nir.CallWords.GRAIN], words[nir.CallWords.LEAST] = self.chunking
            words.keep = self._code
            return words

        return _once(self._words, pool or 1, make)

    def call(self, threads: int = 1):
        """A builtin function call(p_0, ..., p_{n-1}, meta, begin, end) taking Python ints that
        runs the kernel over [begin, end) with the GIL released (see `words`); returns None.
        Made once per pool."""
        words = self.words(threads)

        def make():
            n = self.n_pointers + 1
            (address,) = _load(lambda: nir.arity_module(n), nir.arity_name(n), (nir.call_name(n),))
            return _builtin(_method(address, self._name), words)

        return _once(self._calls, _pool(threads) or 1, make)

    def __repr__(self) -> str:
        return f"<KernelEntry {self._name} at {self.address:#x}, {self.n_pointers} pointers>"


_entries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def entry(kernel) -> KernelEntry:
    """The handle of `kernel` (an aclgen.kernel.Kernel: uses kernel.address and
    kernel.meta_layout.n_operands), one per Kernel object."""

    handle = _entries.get(kernel)
    if handle is None:
        handle = _once(_entries, kernel, lambda: KernelEntry(
            kernel.address, kernel.meta_layout.n_operands, getattr(kernel, "name", "kernel"),
            getattr(kernel, "native", None), getattr(kernel, "chunking", (nir.CHUNK_GRAIN, nir.MIN_CHUNK))))
    return handle


# ----------------------------------------------------------------------------------------------
# Guarded replays
# ----------------------------------------------------------------------------------------------


@functools.cache
def available() -> bool:
    """Whether this process's numpy and CPython have the object layouts the replay guards read
    (probed once)."""
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return False

    def word(obj, offset: int, ctype: type[ctypes.c_int64] | type[ctypes.c_int] = ctypes.c_int64) -> int:
        return ctype.from_address(id(obj) + offset).value

    # the data pointer: element [0, ..., 0], also of a view that starts inside its buffer
    for probe in (np.zeros(3, np.float32), np.arange(10, dtype=np.int8)[3:]):
        if word(probe, nir.ARRAY_DATA) != probe.ctypes.data:
            return False
    probe = np.zeros((3, 5), np.float32)[:, 1:4]
    dims = [ctypes.c_int64.from_address(word(probe, nir.ARRAY_DIMS) + 8 * i).value for i in range(2)]
    strides = [ctypes.c_int64.from_address(word(probe, nir.ARRAY_STRIDES) + 8 * i).value for i in range(2)]
    flags = word(probe, nir.ARRAY_FLAGS, ctypes.c_int)
    x = 0.75
    seq, items = (x, True), [None, x]  # a tuple's items inline, a list's through ob_item
    listed = word(items, nir.SEQ_ITEMS)
    if not (word(seq, nir.VAR_SIZE) == 2 and word(seq, nir.SEQ_ITEMS + 8) == id(True)
            and word(items, nir.VAR_SIZE) == 2 and ctypes.c_int64.from_address(listed + 8).value == id(x)):
        return False
    return (word(probe, nir.OB_TYPE) == id(np.ndarray) and word(probe, nir.ARRAY_ND, ctypes.c_int) == 2
            and dims == [3, 3] and strides == [20, 4] and word(probe, nir.ARRAY_DESCR) == id(probe.dtype)
            and flags & (nir.ALIGNED | nir.WRITEABLE) == nir.ALIGNED | nir.WRITEABLE
            and ctypes.c_double.from_address(id(x) + nir.FLOAT_VALUE).value == x and word(x, nir.OB_TYPE) == id(float))


@dataclass(frozen=True, slots=True)
class Launch:
    """What a replay re-runs: the kernel's call words (KernelEntry.words; None for an empty
    call, which runs nothing), its pointers as (array index, byte delta) into the call's arrays
    (inputs, then outputs; WORKSPACE: the record's workspace), the launch record's address and
    the element count."""

    words: np.ndarray | None
    sources: tuple[tuple[int, int], ...]
    meta: int
    numel: int


EMPTY = Launch(None, (), 0, 0)  # a call with nothing to compute
WORKSPACE = nir.WORKSPACE_SOURCE  # a Launch source's array index that names the record's workspace
LINE = 64  # bytes: a cache line, a zmm register; where runtime memory and large results start
LINED_FROM = 1 << 20  # bytes: smaller results are numpy's (no kernel streams into them)


def lined_bytes(nbytes: int) -> np.ndarray:
    """`nbytes` uninitialized bytes starting on a LINE boundary (a view: its base keeps them)."""
    buffer = np.empty(nbytes + LINE, np.uint8)
    start = (-buffer.ctypes.data) % LINE
    return buffer[start : start + nbytes]


def aligned_empty(shape: tuple[int, ...], dtype) -> np.ndarray:
    """A new uninitialized C-ordered array (strides as np.empty's) whose data start on a LINE
    boundary when it is LINED_FROM bytes or more (numpy starts its large arrays 16 bytes past
    one): a row kernel streams its output past the caches only into rows that start on a line
    (aclgen/passes/vectorize_elementwise.py)."""
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize
    for n in shape:
        nbytes *= n
    if nbytes < LINED_FROM:
        return np.empty(shape, dtype)
    return lined_bytes(nbytes).view(dtype).reshape(shape)


@dataclass(frozen=True, slots=True)
class _Record:
    call: Callable | None  # the native replay bound to `words` (None: not bound yet, see `_wake`)
    words: np.ndarray
    outputs: tuple[tuple[tuple[int, ...], np.dtype], ...]  # (shape, dtype) per output, for out=None
    keep: tuple  # objects whose identity the words name, and what the launch needs
    generation: int  # its Replays' clear() count when recorded

    def bound(self) -> _Record:
        """This record with its native replay (compiling the process's replay function once)."""
        return self if self.call is not None else replace(self, call=_builtin(_replay_method(), self.words))

    def fresh(self) -> list[np.ndarray]:
        """New outputs like the recorded ones (the call passed out=None)."""
        return [aligned_empty(shape, dtype) for shape, dtype in self.outputs]

    def empty(self) -> np.ndarray:
        """A new first output (one-output records: the call passed out=None)."""
        shape, dtype = self.outputs[0]
        return aligned_empty(shape, dtype)


def _replay_method() -> int:
    def make() -> int:
        (address,) = _load(nir.replay_module, nir.REPLAY, (nir.REPLAY,))
        return _method(address, "replay")

    return _once(_methods, "replay", make)


_methods: dict[str, int] = {}  # method defs of the process-wide builtins
_all_replays: weakref.WeakSet = weakref.WeakSet()


class Replays:
    """Guarded replays of one operator's Python calls: up to `size` records, most recently used
    first, plus an index by input geometry (bounded, GEOMETRIES) consulted only after the MRU
    list misses (a hint: the record's own guards still decide).

    The list is an immutable tuple replaced under a lock, so readers iterate a snapshot without
    one; a hit moves to the front (a loop's calls then hit at once)."""

    def __init__(self, size: int = 8):
        self.size = size
        self._records: tuple[_Record, ...] = ()
        # the most recent record's native replay, called directly by the operators' Python
        # functions when `out` is one array: `front(*inputs, *params, out)` -> out or None
        self.front: Callable = _miss
        self.front_empty: Callable = _miss  # new outputs like the front record's (`out=None`)
        # keyed by _geometry(): never by its None, which lookups may pass (a miss)
        self._by_geometry: dict[tuple | None, _Record] = {}
        self._generation = 0  # clear() count: a hit on a cleared record must not bring it back
        self._lock = threading.Lock()
        with _lock:
            _all_replays.add(self)

    def run(self, inputs: tuple, params: tuple, out):
        """Re-run a recorded call whose guards hold for these arguments. `out` is None (then the
        replay allocates numpy.empty outputs like the record's), one ndarray (one-output records),
        or a tuple/list of ndarrays (several outputs). Returns the output (one output) or a tuple
        of outputs, or None on a miss — never raises for ordinary bad input (a miss)."""
        records = self._records
        if not records:
            return None
        if records[0].call is None:
            records = self._wake()
        try:
            # the front record first, without a loop: a loop's calls hit it at once
            first = records[0]
            call = first.call
            assert call is not None  # bound above
            if type(out) is np.ndarray:
                done = call(*inputs, *params, out)
            elif out is None:
                done = call(*inputs, *params, *first.fresh())
            elif type(out) is tuple or type(out) is list:
                done = call(*inputs, *params, *out)
            else:
                return None  # no output the guards accept
            if done is not None:
                return done
            for rec in records[1:]:  # the rest of the snapshot
                done = self._retry(rec, inputs, params, out)
                if done is not None:
                    return done
            rec = self._by_geometry.get(_geometry(inputs, params))  # only once the list missed
            return None if rec is None else self._retry(rec, inputs, params, out)
        except TypeError:  # inputs or params are not sequences
            return None

    def _retry(self, rec: _Record, inputs, params, out):
        if rec.call is None:  # an unbound record from the geometry index: use its bound copy
            self._wake()
            rec = next((r for r in (*self._records, *self._by_geometry.values()) if r.words is rec.words), rec.bound())
        assert rec.call is not None
        done = rec.call(*inputs, *params, *(rec.fresh() if out is None else _outputs(out)))
        if done is not None:
            self._to_front(rec)  # most recently used first: a loop's next calls hit at once
        return done

    def record(self, inputs, params, outputs, launch: Launch | tuple[Launch, ...], env: tuple[dict, list],
               keep, workspace: int = 0) -> bool:
        """Record a call that passed every check and ran unstaged: `inputs` and `outputs` are the
        exact numpy.ndarray objects of the call (the outputs pairwise disjoint), `params` the
        call's scalar and attribute arguments in order (Python floats, ints, True/False/None, or
        tuples and lists of those), `env` = aclgen.knobs.environ_keys(...) (os.environ's own dict
        and the encoded keys whose value objects must stay the same), `launch` the kernel run, or
        the kernels run in order (an operator of several kernels), `keep` objects that must live
        as long as the record (the launch records, the kernels). An input that partly overlaps an
        output is never recorded. Returns False (and records nothing) when it cannot: more than
        MAX_POINTERS pointers for a kernel, a param of another type (a nested sequence, a numpy
        scalar), an int beyond int64, non-ndarray or unaligned arrays, replays not available().
        `workspace`: the bytes of scratch the launches' WORKSPACE sources point into (partial
        sums across rows); the record owns them, and one replay at a time uses them. Such a
        record stays out of the geometry index, so that an operator holds at most `size`
        workspaces (calls of many shapes would otherwise keep thousands)."""
        if isinstance(outputs, np.ndarray):
            outputs = (outputs,)
        inputs, params, outputs = tuple(inputs), tuple(params), tuple(outputs)
        encoded = _encode(inputs, params, outputs, launch, env)
        if encoded is None:
            return False
        words, kept = encoded
        if workspace:
            scratch = lined_bytes(workspace)
            words[Header.WORKSPACE] = scratch.ctypes.data
            kept.append(scratch)
        array = np.array(words, np.int64)
        # Bound now if the process has its replay function; else at the first replay (`_wake`):
        # a process that never repeats a call never compiles it (~20 ms of a first call).
        call = _builtin(_replay_method(), array) if "replay" in _methods else None
        geometry = _geometry(inputs, params)
        with self._lock:
            rec = _Record(call, array, tuple((o.shape, o.dtype) for o in outputs), (*kept, keep), self._generation)
            self._records = (rec, *self._records)[: self.size]
            self.front = rec.call if rec.call is not None else self._front_wake
            self.front_empty = rec.empty
            if geometry is not None and not workspace:  # a workspace's bytes stay in `size` records at most
                if len(self._by_geometry) >= GEOMETRIES:
                    self._by_geometry = {}
                self._by_geometry[geometry] = rec
        return True

    def _wake(self) -> tuple[_Record, ...]:
        """Bind every record to the native replay (compiled on the first need) and return them."""
        with self._lock:
            woken = {id(r): r.bound() for r in self._records}
            woken.update({id(r): r.bound() for r in self._by_geometry.values() if id(r) not in woken})
            self._records = tuple(woken[id(r)] for r in self._records)
            self._by_geometry = {k: woken[id(r)] for k, r in self._by_geometry.items()}
            if self._records:
                front = self._records[0]
                assert front.call is not None
                self.front, self.front_empty = front.call, front.empty
            return self._records

    def _front_wake(self, *args):
        """`front` while the most recent record is not bound yet: bind, then replay."""
        self._wake()
        return self.front(*args)

    def __len__(self) -> int:
        return len(self._records)

    def output_shapes(self) -> list[tuple[int, ...]]:
        """The first output's shape of each record, most recently used first (for inspection)."""
        return [rec.outputs[0][0] for rec in self._records]

    def clear(self) -> None:
        with self._lock:
            self._records = ()
            self.front = self.front_empty = _miss
            self._by_geometry = {}
            self._generation += 1

    def _to_front(self, rec: _Record) -> None:
        with self._lock:
            if rec.generation == self._generation:  # (a snapshot taken before a clear() may hit)
                self._records = (rec, *(r for r in self._records if r is not rec))[: self.size]
                self.front = rec.call if rec.call is not None else self._front_wake
                self.front_empty = rec.empty


def _miss(*args) -> None:
    """The front replay of an empty table: every call misses."""
    return None


def _outputs(out) -> tuple | list:
    return (out,) if type(out) is np.ndarray else out


def clear_replays() -> None:
    """Forget every record of every Replays object in the process (the SoC profile changed:
    plans may differ)."""
    with _lock:
        every = list(_all_replays)
    for replays in every:
        replays.clear()


def _geometry(inputs: tuple, params: tuple) -> tuple | None:
    """The index key of a call: parameters and each input's shape, strides and dtype."""
    try:
        key = (params, *[(a.shape, a.strides, a.dtype) for a in inputs])
        hash(key)
    except (AttributeError, TypeError):  # not arrays, or unhashable parameters: no record matches
        return None
    return key


# ----------------------------------------------------------------------------------------------
# Record encoding (the layout: native_ir.Header and the entry classes after it)
# ----------------------------------------------------------------------------------------------

INT64 = range(-(1 << 63), 1 << 63)


def _extent(a: np.ndarray) -> tuple[int, int]:
    """Byte range [lo, hi) around the data pointer that an array's elements occupy."""
    if a.size == 0:
        return 0, 0
    lo = sum(min(0, (n - 1) * s) for n, s in zip(a.shape, a.strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(a.shape, a.strides)) + a.itemsize
    return lo, hi


def _apart(a: np.ndarray, b: np.ndarray) -> bool:
    (alo, ahi), (blo, bhi) = _extent(a), _extent(b)
    if alo == ahi or blo == bhi:
        return True
    pa, pb = a.ctypes.data, b.ctypes.data
    return pa + ahi <= pb + blo or pb + bhi <= pa + alo


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """The same elements at the same places: an exact in-place update."""
    return (a.ctypes.data == b.ctypes.data and a.shape == b.shape and a.strides == b.strides
            and a.itemsize == b.itemsize)


def _relations(inputs: tuple, outputs: tuple) -> list[tuple[int, int, int]] | None:
    """(array, array, SAME or DISJOINT) for every (input, output) and (output, output) pair;
    None when some pair partly overlaps."""
    n_in = len(inputs)
    found = []
    for o, out in enumerate(outputs, n_in):
        for i, a in enumerate(inputs):
            if _same(a, out):
                found.append((i, o, Relation.SAME))
            elif _apart(a, out):
                found.append((i, o, Relation.DISJOINT))
            else:
                return None
        for p in range(n_in, o):
            if not _apart(outputs[p - n_in], out):
                return None
            found.append((p, o, Relation.DISJOINT))
    return found


def _float_bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _param_entry(arg: int, p, item: int = -1) -> list[int] | None:
    """The entry of a float, an int64, True, False, None or a str (None: not one of those). A
    str is guarded by identity (the record keeps it alive): the same object is the same value,
    and an equal string in another object misses, to the full path (a literal or a parameter's
    default is the same object call after call)."""
    e = [0] * ParamEntry.SIZE
    e[ParamEntry.ARG], e[ParamEntry.TYPE], e[ParamEntry.ITEM] = arg, id(type(p)), item
    if type(p) is float:
        e[ParamEntry.KIND], e[ParamEntry.VALUE] = ParamEntry.FLOAT_BITS, _float_bits(p)
    elif type(p) is int and p in INT64:
        e[ParamEntry.KIND], e[ParamEntry.VALUE] = ParamEntry.INT, p
    elif p is True or p is False or p is None or type(p) is str:
        e[ParamEntry.KIND], e[ParamEntry.VALUE] = ParamEntry.SAME, id(p)
    else:
        return None
    return e


def _param_entries(params: tuple, first_arg: int) -> list[list[int]] | None:
    """The params' entries (a tuple or list of scalars: its own entry, then one per item), or
    None when one cannot be guarded (another type, an int beyond int64, a nested sequence)."""
    entries = []
    for arg, p in enumerate(params, first_arg):
        if type(p) is tuple or type(p) is list:
            head = [0] * ParamEntry.SIZE
            head[ParamEntry.ARG], head[ParamEntry.TYPE], head[ParamEntry.ITEM] = arg, id(type(p)), -1
            head[ParamEntry.KIND], head[ParamEntry.VALUE] = ParamEntry.SEQUENCE, len(p)
            items = [_param_entry(arg, v, k) for k, v in enumerate(p)]
            if any(i is None for i in items):
                return None
            entries += [head, *items]  # type: ignore[list-item]
            continue
        e = _param_entry(arg, p)
        if e is None:
            return None
        entries.append(e)
    return entries


def _encode(inputs: tuple, params: tuple, outputs: tuple, launch: Launch | tuple[Launch, ...],
            env) -> tuple[list[int], list] | None:
    """(the record's words, the objects they name by identity), or None when the call cannot
    be recorded."""
    arrays = inputs + outputs
    launches = [x for x in (launch if isinstance(launch, tuple) else (launch,)) if x.words is not None]
    if (not available() or env is None or not outputs or len(arrays) > nir.MAX_ARRAYS
            or any(len(x.sources) + 1 > MAX_POINTERS for x in launches)):
        return None
    if any(type(a) is not np.ndarray or not a.flags.aligned for a in arrays):
        return None
    if any(not o.flags.writeable for o in outputs):
        return None
    param_entries = _param_entries(params, len(inputs))
    if param_entries is None:
        return None
    for x in launches:
        if any(not 0 <= src < len(arrays) and src != WORKSPACE for src, _ in x.sources):
            raise ValueError(f"a kernel pointer names array {x.sources}, the call has {len(arrays)}")
    relations = _relations(inputs, outputs)
    if relations is None:
        return None
    n_in, n_params = len(inputs), len(params)
    env_dict, keys = env
    words = [0] * Header.SIZE
    kept: list = [env_dict, *(x.words for x in launches)]  # (the call words name the kernels' engines)
    kept += [p for p in params if type(p) is str]  # guarded by identity (`_param_entry`)
    kept += [v for p in params if type(p) is tuple or type(p) is list for v in p if type(v) is str]
    header = {Header.NARGS: len(arrays) + n_params, Header.N_OUTPUTS: len(outputs),
              Header.OUTPUTS_ARG: n_in + n_params, Header.ENV_DICT: id(env_dict)}

    def section(count: int, at: int, entries) -> None:
        header[count], header[at] = len(entries), len(words)
        for e in entries:
            words.extend(e)

    values = [env_dict.get(k) for k in keys]
    kept += [*keys, *values]  # alive, so that no other object takes a recorded identity
    section(Header.N_ENV, Header.ENV_AT, [(id(k), 0 if v is None else id(v)) for k, v in zip(keys, values)])

    size = ArrayEntry.DIMS + 2 * max(a.ndim for a in arrays)
    entries = []
    for index, a in enumerate(arrays):
        is_output = index >= n_in
        arg = index + n_params if is_output else index
        flags = nir.ALIGNED | (nir.WRITEABLE if is_output else 0)
        e = [arg, id(a.dtype), a.ndim, flags, *_extent(a), *a.shape, *a.strides]
        entries.append(e + [0] * (size - len(e)))
        kept.append(a.dtype)
    header[Header.ARRAY_WORDS] = size
    section(Header.N_ARRAYS, Header.ARRAYS_AT, entries)
    section(Header.N_RELATIONS, Header.RELATIONS_AT, relations)

    section(Header.N_PARAMS, Header.PARAMS_AT, param_entries)
    entries, first = [], 0
    for x in launches:
        e = [0] * LaunchEntry.SIZE
        assert x.words is not None  # (empty launches were left out)
        e[LaunchEntry.CALL], e[LaunchEntry.META], e[LaunchEntry.NUMEL] = x.words.ctypes.data, x.meta, x.numel
        e[LaunchEntry.FIRST_SOURCE], e[LaunchEntry.N_SOURCES] = first, len(x.sources)
        entries.append(e)
        first += len(x.sources)
    section(Header.N_LAUNCHES, Header.LAUNCHES_AT, entries)
    section(Header.N_SOURCES, Header.SOURCES_AT, [(src, delta) for x in launches for src, delta in x.sources])
    for index, value in header.items():
        words[index] = value
    return words, kept
