"""Declared operators as torch custom ops, registered once torch is imported.

    torch.ops.aclgen.hardswish_backward(grad_output, self)     # every declared operator
    torch.compile(fn, fullgraph=True)      # fn may call aclgen.ops.* or torch.ops.aclgen.*
    loss.backward()                        # runs the kernels of the operator `backward=` names

Each operator becomes `aclgen::<python name>` (torch.library.custom_op): its schema is the
Python call's (tensors, then aclScalars as `float`, then attributes as their C types), its kernel is
that call on the tensors' memory (DLPack, zero-copy), and its fake implementation gives the
outputs' shapes and dtypes from the declaration alone, which is what torch.compile traces with.
The Python call itself (aclgen.ops.*, an @aclgen.operator function) calls the custom op while
torch.compile traces it (function.py: `_slow`), so compiled graphs hold the operator as one
opaque node either way. Where a declaration names its backward operator, the op's autograd
formula calls that operator's custom op with the output gradients, the inputs, the scalars and
the attributes (CANN's XxxBackward argument order), and takes its outputs as the inputs'
gradients.

aclgen never imports torch: `watch()` registers at once when torch is already imported, else
from a one-shot import hook that runs right after `import torch` has finished. Operators
declared later are registered as they are declared. A torch op belongs to its Python name: a
declaration made again under that name (a notebook cell run twice) is what the op calls from
then on; one with other parameters cannot take over the op's schema and says so when called.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import sys
import threading
from types import SimpleNamespace

NAMESPACE = "aclgen"

_lock = threading.Lock()
_ops: dict[str, tuple[str, object]] = {}  # Python name -> (its schema, its torch custom op)
_watching = False
_enabled = False


def watch() -> None:
    """Register the declared operators with torch: now if torch is imported, else right after it is."""
    global _watching
    if _watching:
        return
    _watching = True
    if "torch" in sys.modules:
        _enable()
    else:
        sys.meta_path.insert(0, _AfterTorch())


class _AfterTorch(importlib.abc.MetaPathFinder):
    """An import hook: finds torch as the path finder does, with a loader that runs `_enable`
    once torch's own initialization has finished (then the hook leaves sys.meta_path). A mere
    lookup (importlib.util.find_spec("torch"), as libraries probe for torch) imports nothing."""

    def find_spec(self, name, path, target=None):
        if name != "torch":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module) -> None:
            run(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            _enable()

        spec.loader.exec_module = exec_module  # pyright: ignore[reportAttributeAccessIssue]
        return spec


def _enable() -> None:
    global _enabled
    if _enabled:
        return
    _enabled = True
    import torch  # pyright: ignore[reportMissingImports] (optional: torch is imported only once the user has)

    from aclgen.declaration import on_change
    from aclgen.runtime import function

    function.torch_op = torch_op
    function.compiling = torch.compiler.is_compiling
    on_change(_sync)
    _sync()


def _sync() -> None:
    """Register every declared operator that has no torch op yet."""
    from aclgen.declaration import registered

    with _lock:
        for op in registered().values():
            if op.python_name not in _ops:
                _ops[op.python_name] = _register(op)


def torch_op(op):
    """The torch custom op of a declared operator (registered now if torch just got imported)."""
    import torch  # pyright: ignore[reportMissingImports] (optional: torch is imported only once the user has)

    if op.python_name not in _ops:
        _sync()
    return getattr(getattr(torch.ops, NAMESPACE), op.python_name)


# ------------------------------------------------------------------------------ registering


_ATTR_TYPES = {"bool": "bool", "int64": "int", "float": "float", "double": "float", "str": "str",
               "int64[]": "int[]", "float[]": "float[]", "bool[]": "bool[]"}


def _schema(op) -> str:
    """`(Tensor grad_output, Tensor self, float lambd=0.5) -> Tensor`: the Python call's
    parameters (tensors, aclScalars as float, attributes as their C types)."""
    from aclgen.declaration import REQUIRED
    from aclgen.runtime.function import function_of

    declared = (*op.scalars, *op.attrs)
    names = list(function_of(op).__signature__.parameters)[: len(op.inputs) + len(declared)]
    optional = [op.tensors[n].optional if n in op.tensors else False for n in op.inputs]
    params = [f"Tensor{'?' * o} {n}" for n, o in zip(names[: len(op.inputs)], optional)]
    for name, d in zip(names[len(op.inputs) :], declared):
        kind = _ATTR_TYPES.get(str(d.kind), "float")  # an aclScalar: float ("like-input" too)
        if getattr(d, "optional", False):  # an optional scalar: None means its default
            kind += "?"
        default = d.default
        if isinstance(default, tuple):
            default = list(default)
        text = "" if default is REQUIRED else "=" + (json.dumps(default) if isinstance(default, str) else repr(default))
        params.append(f"{kind} {name}{text}")
    results = "Tensor" if len(op.outputs) == 1 else "(" + ", ".join(["Tensor"] * len(op.outputs)) + ")"
    return f"({', '.join(params)}) -> {results}"


def _current(name: str, schema: str):
    """The operator declared now under Python name `name`, if its schema is still `schema`."""
    from aclgen.declaration import registered

    op = next((o for o in registered().values() if o.python_name == name), None)
    if op is None:
        raise RuntimeError(f"torch.ops.{NAMESPACE}.{name}: no operator of that name is declared any more")
    if _schema(op) != schema:
        raise RuntimeError(f"torch.ops.{NAMESPACE}.{name}: {op.api} was declared again with other parameters "
                           f"{_schema(op)}; the torch op keeps its first schema {schema} (restart Python)")
    return op


def _register(op) -> tuple[str, object]:
    import torch  # pyright: ignore[reportMissingImports] (optional: torch is imported only once the user has)

    from aclgen.runtime.function import function_of

    name, schema = op.python_name, _schema(op)
    n_in = len(op.inputs)

    def run(*args):
        # detached: the autograd layer above has recorded what it needs, and DLPack refuses
        # tensors that require grad
        fn = function_of(_current(name, schema))
        result = fn(*[a.detach() if isinstance(a, torch.Tensor) else a for a in args])
        if isinstance(result, tuple) and None in result:  # masked-off outputs: empty tensors for torch
            like = next(t for t in args[:n_in] if t is not None)
            result = tuple(like.new_empty((0,)) if r is None else r for r in result)
        return result

    custom = torch.library.custom_op(f"{NAMESPACE}::{name}", run, mutates_args=(), schema=schema)

    def fake(*args):
        """Empty outputs of the shapes and dtypes the call would give (no data is read)."""
        current = _current(name, schema)
        ins = [None if t is None else SimpleNamespace(view_dims=tuple(t.shape), dtype=_code_of(t.dtype))
               for t in args[:n_in]]
        like = next(t for t in args[:n_in] if t is not None)
        outs = [like.new_empty((0,)) if shape is None else like.new_empty(shape[0], dtype=_torch_dtype(shape[1]))
                for shape in function_of(current).infer(ins, args)]  # (None: masked off)
        return outs[0] if len(outs) == 1 else tuple(outs)

    custom.register_fake(fake)  # pyright: ignore[reportAttributeAccessIssue]
    if op.backward:
        _differentiable(custom, name, schema, op.backward, n_in)
    return schema, custom


def _differentiable(custom, name: str, schema: str, backward: str, n_in: int) -> None:
    """Autograd through the operator `backward` names: gradients of the outputs, then the
    inputs, then the scalars in; the inputs' gradients out."""
    from aclgen.declaration import lookup

    def setup_context(ctx, inputs, output) -> None:
        ctx.save_for_backward(*inputs[:n_in])
        ctx.scalars = inputs[n_in:]  # and attributes

    def gradients(ctx, *grads):
        back = lookup(backward)
        if back is None:
            raise RuntimeError(f"torch.ops.{NAMESPACE}.{name}: its backward operator {backward} is not declared")
        got = torch_op(back)(*grads, *ctx.saved_tensors, *ctx.scalars)
        got = got if isinstance(got, tuple) else (got,)
        if len(got) != n_in:
            raise RuntimeError(f"torch.ops.{NAMESPACE}.{name}: its backward operator {back.api} gives {len(got)} "
                               f"gradients, one per input ({n_in}) is needed")
        return (*got, *[None] * len(ctx.scalars))

    custom.register_autograd(gradients, setup_context=setup_context)


# ------------------------------------------------------------------------------------ dtypes


def _code_of(dtype) -> int:
    """A torch dtype's aclDataType (by name: torch.float32 -> float32 -> ACL_FLOAT)."""
    from aclgen.runtime import constants as C

    name = str(dtype).removeprefix("torch.")
    return next((code for code, t in C.DATA_TYPES.items() if t.numpy is not None and t.numpy.name == name),
                C.ACL_DT_UNDEFINED)


def _torch_dtype(code: int):
    import torch  # pyright: ignore[reportMissingImports] (optional: torch is imported only once the user has)

    from aclgen.runtime import constants as C

    return getattr(torch, C.DATA_TYPES[code].numpy.name)
