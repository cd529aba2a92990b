"""The compile cache: kernels in memory (`kernels`) and on disk (`ACLGEN_CACHE_DIR`).

Key (sha256 of a JSON document, `key_material`): operator name, a digest of the formula's
bytecode (constants, names, the values of the globals and closure cells it reads, and the
helper functions it calls, recursively), argument names, dtypes, rank after merging, per-operand
layout classes, parameter kinds and slot types, every `Options` field, the target's triple, CPU
and feature string (this machine's, or what ACLGEN_CPU_NAME / ACLGEN_CPU_FEATURES name: a kernel
for haswell and one for this machine are two entries), the compiler version (a hash of every
aclgen/**/*.py), and the xdsl and llvmlite versions. Knobs that do not change code (threads, SoC profile, the cache's own) stay out.

Entry file `<name>-<variant>-<key prefix>.aclk`:

    b"ACLGENKC" | u32 header length | header (JSON) | object code | zlib(JSON stage texts) | sha256

The header holds the format version, the full key, the kernel symbol, the launch-record layout,
the parameter slot types, per-stage compile seconds and the payload's sections. The trailing
sha256 covers everything before it. A file with a bad magic, version, checksum, key or layout,
or any parse error, is ignored (and replaced by the recompiled entry): an entry is never
trusted beyond what it proves. Writes go to a temporary file in the same directory and
`os.replace` into place, so readers see an old entry or a new one, never half of one.

Every kernel that runs comes from here, so this is where a target this machine cannot run is
refused (`fetch`: UnsupportedTarget, aclgen/codegen/target.py), before anything is compiled or
loaded; aclgen.compiler compiles for any target without running.

A hit loads the object code into MCJIT (aclgen/codegen/jit.py) without importing xDSL or the
compiler; the stage texts are decompressed on the first access of `kernel.ir`. An entry written
by a compile holds the texts the compile made (dsl, llvm-ir); the first time anyone reads a
kernel's other stages the pipeline is re-run to print them (aclgen/compiler.py) and the entry is
rewritten with all of them.

`ACLGEN_ALWAYS_COMPILE=1` skips disk reads (entries are still written). A directory that cannot
be created or written (read-only, disk full) gives one warning; kernels then stay in memory.
"""

from __future__ import annotations

import dis
import json
import os
import re
import struct
import sys
import threading
import time
import types
import warnings
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from functools import cache

from aclgen import schedules
from aclgen.kernel import STAGES, Kernel, Options, Param, StageTexts, Variant
from aclgen.knobs import knobs

# the builtin sha256: importing hashlib (OpenSSL) costs ~3 ms of a cache hit's budget
if sys.version_info >= (3, 12):  # Python >= 3.12 renamed _sha256 to _sha2
    try:
        from _sha2 import sha256
    except ImportError:
        from hashlib import sha256
else:
    try:
        from _sha256 import sha256
    except ImportError:
        from hashlib import sha256

MAGIC = b"ACLGENKC"
FORMAT = 1
SUFFIX = ".aclk"
_DIGEST = 32

stats = {"memory_hits": 0, "disk_hits": 0, "compiles": 0, "writes": 0, "rejected": 0, "write_errors": 0,
         "glue_hits": 0, "glue_builds": 0}
_warned = False
_write_lock = threading.Lock()


# ------------------------------------------------------------------------------------- the key


@cache
def compiler_version(root: str | None = None) -> str:
    """sha256 over every aclgen/**/*.py (path and bytes): any source change is a new compiler.

    Reading and hashing the sources costs milliseconds of a process's first call, so the digest
    is kept in the cache directory under a stamp of the files' paths, sizes and modification
    times (what Python's own bytecode cache trusts) and read back while the stamp holds."""
    root = root or os.path.dirname(os.path.abspath(__file__))
    h = sha256()
    for path in _sources(root):
        st = os.stat(path)
        h.update(f"{os.path.relpath(path, root)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    memo = os.path.join(support_directory(), f"sources-{h.hexdigest()[:32]}")
    try:
        with open(memo) as f:
            version = f.read()
        if re.fullmatch("[0-9a-f]{64}", version):
            return version
    except OSError:
        pass
    version = _hash_sources(root)
    _write(memo, version.encode())
    return version


def _sources(root: str) -> list[str]:
    """Every aclgen/**/*.py under `root`, in a fixed order."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        found += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py")]
    return found


def _hash_sources(root: str) -> str:
    h = sha256()
    for path in _sources(root):
        h.update(os.path.relpath(path, root).encode() + b"\0")
        with open(path, "rb") as fh:
            h.update(fh.read())
        h.update(b"\0")
    return h.hexdigest()


@cache
def dist_version(name: str) -> str:
    """A distribution's version without importing it (importlib.metadata costs ~50 ms)."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is not None and spec.origin:
        site = os.path.dirname(os.path.dirname(spec.origin))
        try:
            for entry in os.listdir(site):
                if entry.startswith(name + "-") and entry.endswith((".dist-info", ".egg-info")):
                    return entry[len(name) + 1 :].rsplit(".", 1)[0]
        except OSError:
            pass
    import importlib.metadata

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


_SIMPLE = (int, float, complex, str, bytes, bool, type(None))


def _digest_value(v, h, seen: set) -> None:
    if isinstance(v, _SIMPLE):
        h.update(f"{type(v).__name__}:{v!r};".encode())
    elif isinstance(v, (tuple, list, frozenset)):
        h.update(f"{type(v).__name__}[".encode())
        for x in (sorted(v, key=repr) if isinstance(v, frozenset) else v):
            _digest_value(x, h, seen)
        h.update(b"]")
    elif isinstance(v, types.FunctionType):
        _digest_function(v, h, seen)
    elif isinstance(v, types.ModuleType):
        h.update(f"module:{v.__name__};".encode())
    elif isinstance(v, type):
        h.update(f"type:{v.__module__}.{v.__qualname__};".encode())
    elif type(v).__module__ == "numpy" and hasattr(v, "dtype") and hasattr(v, "item"):
        h.update(f"np:{v.dtype}:{v.item()!r};".encode())
    elif callable(v):  # builtins, DSL functions from C or elsewhere: by name
        h.update(f"callable:{getattr(v, '__module__', '')}.{getattr(v, '__qualname__', type(v).__qualname__)};".encode())
    else:
        h.update(f"object:{type(v).__module__}.{type(v).__qualname__}:{v!r};".encode())


def _digest_code(code: types.CodeType, h, glb: dict, seen: set) -> None:
    h.update(code.co_code)
    h.update(repr((code.co_argcount, code.co_kwonlyargcount, code.co_varnames, code.co_freevars)).encode())
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _digest_code(c, h, glb, seen)
        else:
            _digest_value(c, h, seen)
    for name in code.co_names:  # globals (and attribute names) the code reads
        h.update(f"name:{name}=".encode())
        if name in glb:
            _digest_value(glb[name], h, seen)
    for chain, value in _module_attributes(code, glb):
        h.update(f"attr:{chain}=".encode())
        _digest_value(value, h, seen)


_ATTRIBUTE_OPS = ("LOAD_ATTR", "LOAD_METHOD")


def _module_attributes(code: types.CodeType, glb: dict) -> Iterator[tuple[str, object]]:
    """What `code` reads through a global module or class (`helpers.scale(x)`, `pkg.sub.K`,
    `Consts.K`): each chain of attribute loads after such a global, with the value it ends at. A
    module or a class is digested by its name alone, so without this an edit of `helpers.scale`
    would leave the key as it was and the cache would serve the old kernel. aclgen's own are
    left out: the compiler's sources cover them."""
    chain, value = "", None
    for ins in dis.get_instructions(code):
        if chain and ins.opname in _ATTRIBUTE_OPS and isinstance(value, (types.ModuleType, type)):
            chain, value = f"{chain}.{ins.argval}", getattr(value, ins.argval, None)
            continue
        if "." in chain:
            yield chain, value
        chain, value = "", None
        if ins.opname == "LOAD_GLOBAL" and isinstance(glb.get(ins.argval), (types.ModuleType, type)):
            root = glb[ins.argval]
            owner = root.__name__ if isinstance(root, types.ModuleType) else root.__module__
            if owner != "aclgen" and not owner.startswith("aclgen."):
                chain, value = ins.argval, root


def _digest_function(fn: types.FunctionType, h, seen: set) -> None:
    if id(fn) in seen:
        h.update(b"recursive;")
        return
    seen.add(id(fn))
    if (fn.__module__ or "").startswith("aclgen.frontend."):
        # the DSL's own functions (select, exp, ...): covered by the compiler version
        h.update(f"aclgen:{fn.__module__}.{fn.__qualname__};".encode())
        return
    h.update(f"fn:{fn.__qualname__}(".encode())
    _digest_code(fn.__code__, h, fn.__globals__, seen)
    for d in fn.__defaults__ or ():
        _digest_value(d, h, seen)
    for cell in fn.__closure__ or ():
        try:
            _digest_value(cell.cell_contents, h, seen)
        except ValueError:  # an empty cell
            h.update(b"empty-cell;")
    h.update(b")")


_formula_digests: dict = {}


def formula_digest(fn: Callable) -> str:
    """A digest of what the formula computes: its bytecode and what that bytecode reads."""
    d = _formula_digests.get(fn)
    if d is None:
        h = sha256()
        _digest_value(fn, h, set())
        d = _formula_digests[fn] = h.hexdigest()
    return d


def key_material(formula: Callable, name: str, variant: Variant, params: Sequence[Param],
                 names: Sequence[str] | None, options: Options) -> dict:
    import llvmlite

    from aclgen.codegen.target import host

    return {
        "format": FORMAT,
        "op": name,
        "formula": formula_digest(formula),
        "names": list(names) if names is not None else None,
        "inputs": [d.name for d in variant.inputs],
        "outputs": [d.name for d in variant.outputs],
        "rank": variant.rank,
        "layouts": list(variant.layouts),
        "attrs": repr(variant.attrs),
        "reduced": variant.reduced,
        "columns": variant.columns,
        "partials": [list(variant.partials), variant.blocks],
        "absent": list(variant.absent),
        "results": list(variant.results),
        "params": [[p.name, p.kind, p.type_name(variant.inputs[0])] for p in params],
        "options": asdict(options),
        "target": host().key,
        "compiler": compiler_version(),
        "xdsl": dist_version("xdsl"),
        "llvmlite": llvmlite.__version__,
        "python": sys.version_info[:2],
    }


def entry_key(material: dict) -> str:
    return sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def directory() -> str:
    return knobs().cache_dir


def support_directory() -> str:
    """Where the native glue's object code and the sources' digest are kept (not entries)."""
    return os.path.join(knobs().cache_dir, "support")


def entry_path(directory_: str, name: str, variant: Variant, key: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64]
    return os.path.join(directory_, f"{safe}-{variant.tag}-{key[:32]}{SUFFIX}")


# ------------------------------------------------------------------------------ entry format


def encode(header: dict, obj: bytes, texts: dict[str, str]) -> bytes:
    ir = zlib.compress(json.dumps(texts).encode(), 6)
    header = dict(header, format=FORMAT, object=[0, len(obj)], ir=[len(obj), len(ir)])
    hb = json.dumps(header, sort_keys=True).encode()
    body = MAGIC + struct.pack("<I", len(hb)) + hb + obj + ir
    return body + sha256(body).digest()


class BadEntry(Exception):
    """An entry file that is not a valid entry for the key asked for."""


def decode(data: bytes, key: str) -> tuple[dict, bytes, bytes]:
    """(header, object code, compressed stage texts) of a valid entry for `key`; else BadEntry."""
    if len(data) < len(MAGIC) + 4 + _DIGEST or data[: len(MAGIC)] != MAGIC:
        raise BadEntry("bad magic or truncated")
    body, digest = data[:-_DIGEST], data[-_DIGEST:]
    if sha256(body).digest() != digest:
        raise BadEntry("checksum mismatch")
    (hlen,) = struct.unpack_from("<I", body, len(MAGIC))
    start = len(MAGIC) + 4
    try:
        header = json.loads(body[start : start + hlen])
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadEntry(f"bad header: {exc}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BadEntry("other format version")
    if header.get("key") != key:
        raise BadEntry("entry for another key")
    payload = body[start + hlen :]
    try:
        (o_off, o_len), (i_off, i_len) = header["object"], header["ir"]
    except (KeyError, TypeError, ValueError):
        raise BadEntry("bad sections") from None
    if not all(isinstance(x, int) and x >= 0 for x in (o_off, o_len, i_off, i_len)) or max(o_off + o_len, i_off + i_len) > len(payload):
        raise BadEntry("sections out of range")
    return header, payload[o_off : o_off + o_len], payload[i_off : i_off + i_len]


def _texts_of(blob: bytes) -> dict[str, str]:
    texts = json.loads(zlib.decompress(blob))
    if not isinstance(texts, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in texts.items()):
        raise BadEntry("bad stage texts")
    return texts


# ---------------------------------------------------------------------------------- disk I/O


def _warn_once(message: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(message, RuntimeWarning, stacklevel=4)


def _write(path: str, data: bytes) -> bool:
    """Atomically put `data` at `path`; False (and one warning per process) when it cannot."""
    import tempfile  # only when writing: its import costs ~5 ms of a cache hit's budget

    d = os.path.dirname(path)
    tmp = None
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=SUFFIX, dir=d)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; an entry is no secret
        os.replace(tmp, path)
        tmp = None
        stats["writes"] += 1
        return True
    except OSError as exc:
        stats["write_errors"] += 1
        _warn_once(f"aclgen: cannot write the compile cache in {d} ({exc.strerror or exc}); "
                   "compiled kernels are kept in memory only (set ACLGEN_CACHE_DIR)")
        return False
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _header(kernel: Kernel, key: str) -> dict:
    ml = kernel.meta_layout
    return {
        "key": key,
        "symbol": kernel.name,
        "opt_level": kernel.options.opt_level,
        "meta": [ml.rank, ml.n_operands, ml.n_params, ml.size],
        "param_types": list(kernel.param_types),
        "seconds": [[k, v] for k, v in kernel.seconds.items() if k != "cache-load"],
        "created": time.time(),
    }


def store(path: str, key: str, kernel: Kernel, texts: dict[str, str] | None = None) -> bool:
    texts = kernel.ir.known() if texts is None else texts
    return _write(path, encode(_header(kernel, key), kernel.native.object_code, texts))


def _complete_texts(kernel: Kernel, formula, name, params, names, have: dict[str, str]) -> dict[str, str]:
    """Every stage: `have` if it holds them all, else re-run the pipeline for the rest."""
    if all(s in have for s in STAGES):
        return {s: have[s] for s in STAGES} | have
    from aclgen.compiler import stage_texts  # the compiler, only because someone asked for IR

    full = stage_texts(formula, name, kernel.variant, params, names, kernel.options, kernel.native.target)
    full.update(have)
    return full


def load(path: str, key: str, formula, name: str, variant: Variant, params: Sequence[Param],
         names, options: Options) -> Kernel | None:
    """The kernel of a valid entry at `path`, or None (missing, foreign or corrupt: never trusted)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    t = time.perf_counter()
    try:
        header, obj, ir_blob = decode(data, key)
        ptypes = tuple(p.type_name(variant.inputs[0]) for p in params)
        n_ops = len(variant.inputs) + len(variant.outputs)
        symbol = header.get("symbol")
        if header.get("param_types") != list(ptypes) or header.get("meta", [None])[:3] != [variant.rank, n_ops, len(params)]:
            raise BadEntry("launch layout differs")
        if not isinstance(symbol, str) or symbol != f"{name}_{variant.tag}":
            raise BadEntry("other symbol")
        from aclgen.codegen import jit

        if not jit.check_object(obj):
            raise BadEntry("object code this process cannot check")
        native = jit.load_object(obj, options.opt_level)
        seconds = {str(k): float(v) for k, v in header.get("seconds") or ()}
    except Exception:  # BadEntry, a bad object, an unresolvable symbol: recompile instead
        stats["rejected"] += 1
        return None
    seconds["cache-load"] = time.perf_counter() - t
    holder: list[Kernel] = []

    def fill() -> dict[str, str]:
        return _complete_texts(holder[0], formula, name, params, names, _texts_of(ir_blob))

    texts = StageTexts({}, fill)
    kernel = Kernel(symbol, variant, tuple(params), ptypes, texts, native, options, seconds, source="disk")
    holder.append(kernel)
    texts._on_complete = lambda full: None if _has_all(ir_blob) else store(path, key, kernel, full)
    return kernel


def _has_all(blob: bytes) -> bool:
    try:
        return all(s in _texts_of(blob) for s in STAGES)
    except Exception:
        return False


# ------------------------------------------------------------------------------------ fetch


def fetch(formula: Callable, name: str, variant: Variant, params: Sequence[Param], names: Sequence[str] | None,
          options: Options, compile_fn: Callable[..., Kernel] | None = None) -> Kernel:
    """The kernel for these inputs: from the on-disk cache when a valid entry exists (unless
    ACLGEN_ALWAYS_COMPILE=1), else compiled and stored."""
    from aclgen.codegen.target import host

    host().check_runnable()
    k = knobs()
    material = key_material(formula, name, variant, params, names, options)
    key = entry_key(material)
    path = entry_path(k.cache_dir, name, variant, key)
    if not k.always_compile:
        kernel = load(path, key, formula, name, variant, params, names, options)
        if kernel is not None:
            stats["disk_hits"] += 1
            return kernel
    if compile_fn is None:
        from aclgen.compiler import compile_variant as compile_fn
    kernel = compile_fn(formula, name, variant, params, names, options)
    stats["compiles"] += 1
    # The key names the sources as hashed before compiling; if they changed since (an edit
    # while this process runs), the code just built may not be what that hash stands for.
    if _hash_sources(os.path.dirname(os.path.abspath(__file__))) != material["compiler"]:
        return kernel
    with _write_lock:
        store(path, key, kernel)
    # When someone reads the stages this compile skipped, keep them in the entry too.
    kernel.ir._on_complete = lambda full: store(path, key, kernel, full)
    return kernel


# ----------------------------------------------------------------------------- native glue


def glue_object(name: str, build: Callable[[], bytes]) -> bytes:
    """Object code of the runtime's native glue module `name` (aclgen/codegen/native.py): the
    entry points every kernel, replay and pool launch goes through. From the disk cache, else
    `build()` and stored, as kernels are. It depends on aclgen's sources, llvmlite, Python and
    this machine only (it is code for the machine itself, never ACLGEN_CPU_NAME's target), so a
    process with a warm cache does no LLVM work. The runtime installs this as native's store."""
    import llvmlite

    from aclgen.codegen.target import real_host

    material = {"format": FORMAT, "glue": name, "target": real_host().key, "compiler": compiler_version(),
                "llvmlite": llvmlite.__version__, "python": sys.version_info[:2]}
    key = entry_key(material)
    path = os.path.join(support_directory(), f"glue-{name}-{key[:32]}{SUFFIX}")
    if not knobs().always_compile:
        try:
            with open(path, "rb") as f:
                _, obj, _ = decode(f.read(), key)
            stats["glue_hits"] += 1
            return obj
        except (OSError, BadEntry):
            pass  # missing or not valid: built again and replaced
    obj = build()
    stats["glue_builds"] += 1
    if _hash_sources(os.path.dirname(os.path.abspath(__file__))) == material["compiler"]:  # (as in fetch)
        with _write_lock:
            _write(path, encode({"key": key, "glue": name}, obj, {}))
    return obj


# ------------------------------------------------------------------------- the memory tier


class Kernels:
    """This process's kernels by (operator, variant, options, target); a variant not seen yet
    comes from `fetch` (disk or compiler). `op` is an aclgen.declaration.Operator, compared by
    identity: two declarations may share a name but not their kernels. The target
    (ACLGEN_CPU_NAME / ACLGEN_CPU_FEATURES, else this machine) is in the key because Options does
    not hold it."""

    def __init__(self):
        self._kernels: dict[tuple, Kernel] = {}
        self._lock = threading.Lock()

    def get(self, op, variant: Variant, options: Options) -> Kernel:
        from aclgen.codegen.target import host

        key = (op, variant, options, host().key)
        k = self._kernels.get(key)
        if k is not None:
            stats["memory_hits"] += 1
            return k
        with self._lock:
            k = self._kernels.get(key)
            if k is None:
                chosen = schedules.choose(op.python_name, formula_digest(op.formula), variant, options)
                formula, names = op.formula_for(variant)
                k = fetch(formula, op.python_name, variant, op.params, names, chosen)
                self._kernels[key] = k
        return k

    def __len__(self) -> int:
        return len(self._kernels)


kernels = Kernels()


# ---------------------------------------------------------------------------- info and clear


def entries(directory_: str | None = None) -> list[str]:
    d = directory_ or directory()
    try:
        names = os.listdir(d)
    except OSError:
        return []
    return sorted(os.path.join(d, n) for n in names if n.endswith(SUFFIX) and not n.startswith(".tmp-"))


def info(directory_: str | None = None) -> dict:
    d = directory_ or directory()
    files = entries(d)
    size = 0
    for p in files:
        try:
            size += os.path.getsize(p)
        except OSError:
            pass
    return {"directory": d, "entries": len(files), "bytes": size, **stats}


def clear(directory_: str | None = None) -> int:
    """Delete every entry (and leftover temporary files) in the cache directory, and the native
    glue and sources' digest kept beside them; returns how many entries."""
    d = directory_ or directory()
    n = 0
    for folder in (d, os.path.join(d, "support")):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for f in names:
            if f.endswith(SUFFIX) or (folder != d and f.startswith("sources-")):
                try:
                    os.unlink(os.path.join(folder, f))
                    n += 0 if f.startswith(".tmp-") or folder != d else 1
                except OSError:
                    pass
    return n
