"""The compile cache (aclgen/cache.py): key coverage, fresh-process hits without xDSL, corrupt
entries, read-only directories, ACLGEN_ALWAYS_COMPILE, concurrent writers, `aclgen cache`.

Anything about a fresh process runs in a subprocess with its own ACLGEN_CACHE_DIR.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import warnings

import pytest

import aclgen
from aclgen import cache
from aclgen import dtypes as dt
from aclgen.kernel import STAGES, Options, Variant
from aclgen.knobs import knobs
from aclgen.ops import OPERATORS
from tests import runners

HSB = OPERATORS["hardswish_backward"]
V1 = Variant((dt.float32, dt.float32), (dt.float32,), 1, ("contiguous",) * 3)

# A child process: one hardswish_backward call checked against numpy, then the cache counters.
CALL = """
import sys, json, time
t0 = time.perf_counter()
import aclgen, aclgen.ops
import numpy as np
g = np.linspace(-2, 2, 1001, dtype=np.float32); x = np.linspace(-5, 5, 1001, dtype=np.float32)
y = aclgen.ops.hardswish_backward(g, x)
first_ms = (time.perf_counter() - t0) * 1e3
d = np.where(x < -3, 0, np.where(x <= 3, x * np.float32(1 / 3) + np.float32(0.5), 1)).astype(np.float32)
from aclgen import cache
print(json.dumps({"ok": bool(np.array_equal(y, g * d)), "xdsl": "xdsl" in sys.modules,
                  "first_ms": first_ms, **cache.stats}))
"""


def run_py(code: str, cache_dir, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    e = {**os.environ, "ACLGEN_CACHE_DIR": str(cache_dir), **(env or {})}
    e.pop("ACLGEN_ALWAYS_COMPILE", None) if "ACLGEN_ALWAYS_COMPILE" not in (env or {}) else None
    # cwd: not the checkout, whose ./aclgen would shadow PYTHONPATH for `python -c`
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e, capture_output=True, text=True,
                       timeout=300, cwd=tempfile.gettempdir())
    if check and p.returncode != 0:
        raise AssertionError(f"child failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def call(cache_dir, env: dict | None = None) -> dict:
    p = run_py(CALL, cache_dir, env)
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["stderr"] = p.stderr
    assert out["ok"], out
    return out


def entry_files(d) -> list[str]:
    return cache.entries(str(d))


# ------------------------------------------------------------------------------ fresh processes


def test_hit_in_a_fresh_process_does_not_import_xdsl(tmp_path):
    first = call(tmp_path)
    assert first["compiles"] == 1 and first["disk_hits"] == 0 and first["xdsl"]
    assert len(entry_files(tmp_path)) == 1
    second = call(tmp_path)
    assert second["disk_hits"] == 1 and second["compiles"] == 0
    assert not second["xdsl"], "a cache hit must not import xDSL"


def test_hit_through_the_aclnn_two_phase_api_does_not_import_xdsl(tmp_path):
    call(tmp_path)  # fills the cache (the numpy entry point and aclnn share the kernel)
    code = """
    import sys, json
    import numpy as np
    import aclgen.acl as acl, aclgen.aclnn as aclnn
    g = np.linspace(-2, 2, 1001, dtype=np.float32); x = np.linspace(-5, 5, 1001, dtype=np.float32)
    out = np.zeros_like(g)
    tg, tx, to = acl.from_numpy(g), acl.from_numpy(x), acl.from_numpy(out)
    ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(tg, tx, to)
    assert ret == 0 and ws == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnHardswishBackward(None, 0, ex, None) == 0
    d = np.where(x < -3, 0, np.where(x <= 3, x * np.float32(1 / 3) + np.float32(0.5), 1)).astype(np.float32)
    from aclgen import cache
    print(json.dumps({"ok": bool(np.array_equal(out, g * d)), "xdsl": "xdsl" in sys.modules, **cache.stats}))
    """
    out = json.loads(run_py(code, tmp_path).stdout.strip().splitlines()[-1])
    assert out["ok"] and out["disk_hits"] == 1 and out["compiles"] == 0
    assert not out["xdsl"]


def test_first_call_on_a_hit_compiles_nothing(tmp_path):
    """A fresh process whose kernel is on disk makes its first call without compiling or
    importing xDSL. (How fast is measured by `aclgen bench --parts calls`, never asserted here:
    wall-clock limits make tests flaky on shared machines.)"""
    call(tmp_path)
    pre = "import numpy, ml_dtypes, llvmlite.binding\n"
    out = json.loads(run_py(pre + CALL, tmp_path).stdout.strip().splitlines()[-1])
    assert out["compiles"] == 0 and out["disk_hits"] >= 1 and not out["xdsl"], out


SECOND_CALL = """
import json
import numpy as np
import aclgen.ops
from aclgen import cache
from aclgen.codegen import native
g = np.linspace(-4, 4, 1024, dtype=np.float32)
for _ in range(3):  # the first call loads, the second records a replay (the replay's code), the third replays
    y = aclgen.ops.hardswish_backward(g, g)
print(json.dumps({"llvm": native.compiled_modules(), "replayed": aclgen.ops.hardswish_backward.replay(g, g) is not None,
                  **cache.stats}))
"""


def test_a_warm_cache_does_no_llvm_work(tmp_path):
    """Kernels and the native glue (entry points, replay) come from disk: a fresh process's
    first calls compile nothing, not even the replay its second call records."""
    cold = json.loads(run_py(SECOND_CALL, tmp_path).stdout.strip().splitlines()[-1])
    assert cold["llvm"] > 0 and cold["glue_builds"] > 0
    warm = json.loads(run_py(SECOND_CALL, tmp_path).stdout.strip().splitlines()[-1])
    assert warm["llvm"] == 0 and warm["compiles"] == 0 and warm["glue_builds"] == 0, warm
    assert warm["glue_hits"] == cold["glue_builds"] and warm["replayed"]


def test_corrupt_glue_is_built_again(tmp_path):
    run_py(SECOND_CALL, tmp_path)
    glue = [f for f in os.listdir(tmp_path / "support") if f.startswith("glue-")]
    assert glue
    for f in glue:
        (tmp_path / "support" / f).write_bytes(b"ACLGENKC garbage")
    out = json.loads(run_py(SECOND_CALL, tmp_path).stdout.strip().splitlines()[-1])
    assert out["glue_builds"] == len(glue) and out["replayed"]
    assert json.loads(run_py(SECOND_CALL, tmp_path).stdout.strip().splitlines()[-1])["llvm"] == 0


def test_the_sources_digest_is_kept_beside_the_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("ACLGEN_CACHE_DIR", str(tmp_path))
    version = cache._hash_sources(os.path.dirname(os.path.abspath(cache.__file__)))
    cache.compiler_version.cache_clear()
    try:
        assert cache.compiler_version() == version
        (memo,) = [f for f in os.listdir(tmp_path / "support") if f.startswith("sources-")]
        assert (tmp_path / "support" / memo).read_text() == version
        cache.compiler_version.cache_clear()
        assert cache.compiler_version() == version  # read back
    finally:
        cache.compiler_version.cache_clear()


def test_stage_texts_on_a_hit(tmp_path):
    call(tmp_path)
    code = """
    import sys, json
    import aclgen.ops
    from aclgen.kernel import Variant
    from aclgen import dtypes as dt
    from aclgen.ops import OPERATORS
    k = OPERATORS["hardswish_backward"].kernel(Variant((dt.float32,) * 2, (dt.float32,), 1, ("contiguous",) * 3))
    xdsl_before = "xdsl" in sys.modules
    ir = dict(k.ir)
    print(json.dumps({"source": k.source, "stages": list(ir), "asm": "ret" in k.asm,
                      "ew": "ew.kernel" in ir["ew"], "xdsl_before": xdsl_before, "xdsl_after": "xdsl" in sys.modules}))
    """
    out = json.loads(run_py(code, tmp_path).stdout.strip().splitlines()[-1])
    assert out["source"] == "disk" and out["stages"] == list(STAGES) and out["asm"] and out["ew"]
    assert not out["xdsl_before"]
    # The entry now holds every stage: the next process reads them without the compiler.
    out = json.loads(run_py(code, tmp_path).stdout.strip().splitlines()[-1])
    assert out["stages"] == list(STAGES) and not out["xdsl_after"]


def test_always_compile_bypasses_reads(tmp_path):
    call(tmp_path)
    out = call(tmp_path, {"ACLGEN_ALWAYS_COMPILE": "1"})
    assert out["compiles"] == 1 and out["disk_hits"] == 0
    assert call(tmp_path)["disk_hits"] == 1  # the entry it wrote is valid


FORMULA_FILE = """
from aclgen import select
SCALE = {scale}
def leaky(g, x):
    return select(x > 0.0, g, g * SCALE)
"""

USER_CALL = """
import json, sys
sys.path.insert(0, {path!r})
import numpy as np
import aclgen
from aclgen import cache
import userformula
op = aclgen.compile(userformula.leaky, "float32")
g = np.ones(9, np.float32); x = np.linspace(-4, 4, 9, dtype=np.float32)
y = op(g, x)
ok = bool(np.array_equal(y, np.where(x > 0, g, g * np.float32(userformula.SCALE))))
print(json.dumps({{"ok": ok, **cache.stats}}))
"""


def test_changed_user_formula_is_a_miss_in_a_fresh_process(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    cdir = tmp_path / "cache"

    def run(scale):
        (src / "userformula.py").write_text(FORMULA_FILE.format(scale=scale))
        out = json.loads(run_py(USER_CALL.format(path=str(src)), cdir).stdout.strip().splitlines()[-1])
        assert out["ok"], out
        return out

    assert run(0.25)["compiles"] == 1
    assert run(0.25)["disk_hits"] == 1  # same formula: hit
    assert run(0.5)["compiles"] == 1  # a global the formula reads changed: miss
    assert len(entry_files(cdir)) == 2


def test_changed_compiler_source_is_a_miss(tmp_path):
    """A copy of the package with one comment added is another compiler."""
    cdir = tmp_path / "cache"
    call(cdir)
    pkg = tmp_path / "pkg"
    shutil.copytree(os.path.dirname(aclgen.__file__), pkg / "aclgen", ignore=shutil.ignore_patterns("__pycache__"))
    with open(pkg / "aclgen" / "passes" / "pipeline.py", "a") as f:
        f.write("\n# an edit\n")
    out = call(cdir, {"PYTHONPATH": str(pkg)})
    assert out["compiles"] == 1 and out["disk_hits"] == 0
    assert len(entry_files(cdir)) == 2


# ---------------------------------------------------------------------------- key coverage


DEFAULT_OPTIONS = Options()


def material(formula=HSB.formula, variant=V1, options=DEFAULT_OPTIONS, params=(), names=None, name="op") -> dict:
    return cache.key_material(formula, name, variant, params, names, options)


def key(**kw) -> str:
    return cache.entry_key(material(**kw))


def test_key_changes_with_everything_that_changes_code():
    base = key()
    assert key() == base  # deterministic
    f16 = Variant((dt.float16, dt.float16), (dt.float16,), 1, ("contiguous",) * 3)
    strided = Variant((dt.float32, dt.float32), (dt.float32,), 1, ("strided", "contiguous", "contiguous"))
    rank2 = Variant((dt.float32, dt.float32), (dt.float32,), 2, ("contiguous",) * 3)
    others = {
        "dtype": key(variant=f16),
        "layout": key(variant=strided),
        "rank": key(variant=rank2),
        "tile_size": key(options=Options(tile_size=1024)),
        "width": key(options=Options(width=4)),
        "fma": key(options=Options(fma="off")),
        "noalias": key(options=Options(noalias=True)),
        "opt_level": key(options=Options(opt_level=1)),
        "nontemporal": key(options=Options(nontemporal=True)),
        "name": key(name="other"),
        "formula": key(formula=OPERATORS["selu_backward"].formula),
    }
    assert len(set(others.values()) | {base}) == len(others) + 1, others


def test_key_holds_the_target_cpu(monkeypatch):
    """ACLGEN_CPU_NAME / ACLGEN_CPU_FEATURES change the code, so the key (aclgen/codegen/target.py)."""
    from aclgen.codegen.target import real_host

    monkeypatch.delenv("ACLGEN_CPU_NAME", raising=False)
    monkeypatch.delenv("ACLGEN_CPU_FEATURES", raising=False)
    base = key()
    assert material()["target"] == real_host().key
    keys = {"": base}
    for name, feats in (("haswell", ""), ("generic", ""), ("generic", "+avx2"), ("", "-avx"), ("host", "")):
        monkeypatch.setenv("ACLGEN_CPU_NAME", name)
        monkeypatch.setenv("ACLGEN_CPU_FEATURES", feats)
        keys[f"{name}/{feats}"] = key()
    assert keys["host/"] == base  # "host" is this machine
    del keys["host/"]
    assert len(set(keys.values())) == len(keys), keys


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86-64 CPU names")
def test_two_targets_are_two_entries(tmp_path):
    """A process per target: each writes its own entry, and each finds its own on the next run."""
    first = call(tmp_path, {"ACLGEN_CPU_NAME": "generic"})
    second = call(tmp_path, {"ACLGEN_CPU_NAME": "x86-64-v2"})
    assert first["compiles"] == second["compiles"] == 1
    assert len(entry_files(tmp_path)) == 2
    again = call(tmp_path, {"ACLGEN_CPU_NAME": "generic"})
    assert again["disk_hits"] == 1 and again["compiles"] == 0
    native = call(tmp_path)  # this machine: a third entry
    assert native["compiles"] == 1 and len(entry_files(tmp_path)) == 3


def test_key_covers_every_options_field():
    """A new Options field must enter the key (it changes code by definition)."""
    import dataclasses

    assert set(material()["options"]) == {f.name for f in dataclasses.fields(Options)}


def test_formula_digest_sees_constants_closures_and_helpers():
    from aclgen import select

    def make(c):
        return lambda g, x: select(x > 0.0, g, g * c)

    assert cache.formula_digest(make(0.5)) != cache.formula_digest(make(0.25))  # closure cell
    assert cache.formula_digest(lambda g, x: g * 2.0) != cache.formula_digest(lambda g, x: g * 3.0)

    def helper_a(x):
        return x * 2.0

    def helper_b(x):
        return x * 3.0

    def via(h):
        return lambda g, x: h(g) + x

    assert cache.formula_digest(via(helper_a)) != cache.formula_digest(via(helper_b))  # called helper


def test_formula_digest_follows_a_module_attribute():
    """A helper reached as `helpers.scale(x)` (a constant as `helpers.consts.K` or `Consts.B`) is
    digested by what it is: an edit of the helper's module makes another key (it served the old
    kernel)."""
    import types

    helpers, consts = types.ModuleType("helpers"), types.ModuleType("helpers.consts")
    helpers.consts = consts  # type: ignore[attr-defined]

    class Consts:
        B = 0.5

    def formula():
        scope = {"helpers": helpers, "Consts": Consts}
        exec("f = lambda x: helpers.scale(x) + helpers.consts.K + Consts.B", scope)
        return scope["f"]

    digests = set()
    for scale, k, b in (("2.0", 1.0, 0.5), ("3.0", 1.0, 0.5), ("3.0", 2.0, 0.5), ("3.0", 2.0, 0.25)):
        exec(f"def scale(x):\n    return x * {scale}", helpers.__dict__)
        consts.K = k  # type: ignore[attr-defined]
        Consts.B = b
        digests.add(cache.formula_digest(formula()))
    assert len(digests) == 4
    assert cache.formula_digest(formula()) in digests  # the same helpers: the same key


def test_compiler_version_hashes_the_sources(tmp_path):
    root = tmp_path / "aclgen"
    shutil.copytree(os.path.dirname(aclgen.__file__), root, ignore=shutil.ignore_patterns("__pycache__"))
    assert cache._hash_sources(str(root)) == cache.compiler_version()
    (root / "passes" / "dummy.py").write_text("# new file\n")
    assert cache._hash_sources(str(root)) != cache.compiler_version()


# ------------------------------------------------------------------------ corrupt entries


def _corrupt(path: str, how: str) -> None:
    data = open(path, "rb").read()
    if how == "flipped":
        i = len(data) // 2
        data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1 :]
    elif how == "truncated":
        data = data[: len(data) // 2]
    elif how == "empty":
        data = b""
    elif how == "foreign":
        data = b"\x7fELF" + os.urandom(2000)
    elif how == "pickle":
        import pickle

        data = pickle.dumps({"symbol": "x"})
    elif how == "other-version":
        data = data.replace(b'"format": 1', b'"format": 9', 1)
    open(path, "wb").write(data)


@pytest.mark.parametrize("how", ["flipped", "truncated", "empty", "foreign", "pickle", "other-version"])
def test_corrupt_entry_is_recompiled(tmp_path, how):
    call(tmp_path)
    [path] = entry_files(tmp_path)
    _corrupt(path, how)
    out = call(tmp_path)
    assert out["compiles"] == 1 and out["disk_hits"] == 0 and out["rejected"] == 1
    assert call(tmp_path)["disk_hits"] == 1  # and replaced by a valid entry


def test_entry_for_another_key_is_not_trusted(tmp_path):
    """A valid file renamed onto another variant's path (e.g. a hash-prefix collision)."""
    a = tmp_path / "a"
    call(a)
    [src] = entry_files(a)
    k = key()
    dst = cache.entry_path(str(tmp_path / "b"), "hardswish_backward", V1, k)
    os.makedirs(os.path.dirname(dst))
    shutil.copy(src, dst)
    with pytest.raises(cache.BadEntry, match="another key"):
        cache.decode(open(dst, "rb").read(), k)


def test_decode_round_trip_and_checksum():
    blob = cache.encode({"key": "k", "symbol": "s"}, b"OBJ", {"dsl": "text"})
    header, obj, ir = cache.decode(blob, "k")
    assert obj == b"OBJ" and header["symbol"] == "s" and cache._texts_of(ir) == {"dsl": "text"}
    for i in (0, 9, len(blob) // 2, len(blob) - 1):
        bad = blob[:i] + bytes([blob[i] ^ 1]) + blob[i + 1 :]
        with pytest.raises(cache.BadEntry):
            cache.decode(bad, "k")


# ------------------------------------------------------------------- unwritable directories


def test_unwritable_directory_warns_once_and_falls_back_to_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code = CALL + """
g2 = np.ones(7, np.float16)
y2 = aclgen.ops.hardswish_backward(g2, g2)  # a second variant: still one warning
assert y2.dtype == np.float16
"""
    p = run_py(code, blocker / "cache", {"PYTHONWARNINGS": "default"})
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["ok"] and out["compiles"] == 1
    assert p.stderr.count("cannot write the compile cache") == 1, p.stderr


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_directory(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    try:
        p = run_py(CALL, d, {"PYTHONWARNINGS": "default"})
        assert json.loads(p.stdout.strip().splitlines()[-1])["ok"]
        assert p.stderr.count("cannot write the compile cache") == 1
    finally:
        d.chmod(0o755)


def test_disk_full_falls_back_to_memory(tmp_path, monkeypatch):
    import errno

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache, "_warned", False)
    monkeypatch.setattr(os, "replace", full)
    monkeypatch.setenv("ACLGEN_CACHE_DIR", str(tmp_path))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        k = cache.fetch(HSB.formula, "hsb_full_disk", V1, (), HSB.kernel_arg_names, Options())
        k2 = cache.fetch(HSB.formula, "hsb_full_disk2", V1, (), HSB.kernel_arg_names, Options())
    assert [str(w.message) for w in seen if "compile cache" in str(w.message)].__len__() == 1
    assert "No space left" in str(seen[0].message)
    assert k.address and k2.address and entry_files(tmp_path) == []
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tmp-")]  # no temp files left


# ---------------------------------------------------------------------------- concurrency


def test_concurrent_processes_share_one_directory(tmp_path):
    e = {**os.environ, "ACLGEN_CACHE_DIR": str(tmp_path)}
    procs = [subprocess.Popen([sys.executable, "-c", CALL], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr
        outs.append(json.loads(stdout.strip().splitlines()[-1]))
    assert all(o["ok"] for o in outs)
    assert len(entry_files(tmp_path)) == 1
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tmp-")]
    after = call(tmp_path)
    assert after["disk_hits"] == 1 and after["rejected"] == 0


# ---------------------------------------------------------------------------- CLI and knobs


def test_cli_cache_info_and_clear(tmp_path):
    call(tmp_path)
    e = {"ACLGEN_CACHE_DIR": str(tmp_path)}
    info = runners.aclgen("cache", "info", env=e)
    assert info.returncode == 0, info.stderr
    assert str(tmp_path) in info.stdout and "entries:   1" in info.stdout and "KiB" in info.stdout
    clear = runners.aclgen("cache", "clear", env=e)
    assert clear.returncode == 0 and "removed 1 entry" in clear.stdout
    assert entry_files(tmp_path) == []
    info = runners.aclgen("cache", "info", env=e)
    assert "entries:   0" in info.stdout


def test_knob_values_follow_the_environment(monkeypatch):
    a = knobs()
    assert knobs() is a
    monkeypatch.setenv("ACLGEN_CACHE_DIR", "/tmp/elsewhere")
    b = knobs()
    assert b is not a and b.cache_dir == "/tmp/elsewhere"
    monkeypatch.setenv("ACLGEN_ALWAYS_COMPILE", "1")
    assert knobs().always_compile
    monkeypatch.setenv("ACLGEN_ALWAYS_COMPILE", "maybe")
    with pytest.raises(ValueError, match="ACLGEN_ALWAYS_COMPILE"):
        knobs()


def test_knobs_are_cached_until_the_environment_changes(monkeypatch):
    a = knobs()
    assert knobs() is a  # no re-read while nothing changed (that is what makes it cheap)
    monkeypatch.setenv("ACLGEN_TILE_SIZE", "4096")
    assert knobs() is not a and knobs().tile_size == 4096


def test_default_cache_dir_follows_xdg(monkeypatch):
    monkeypatch.delenv("ACLGEN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/tmp/xdg")
    assert knobs().cache_dir == "/tmp/xdg/aclgen"


def test_test_suite_uses_a_temporary_cache():
    home = os.path.join(os.path.expanduser("~"), ".cache", "aclgen")
    assert os.path.realpath(knobs().cache_dir) != os.path.realpath(home)
