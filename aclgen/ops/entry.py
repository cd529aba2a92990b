"""Argument checks shared by the numpy entry points (`aclgen.ops.hardswish_backward(...)`)."""

from __future__ import annotations

import numpy as np

from aclgen import dtypes as dt
from aclgen.knobs import knobs
from aclgen.ops.operator import Operator


class OperatorError(ValueError):
    """Bad arguments to an operator; `status` is the aclnn status code SPEC.md names."""

    def __init__(self, message: str, status: int = 161002):
        super().__init__(message)
        self.status = status


def as_array(op: Operator, name: str, a) -> np.ndarray:
    if a is None:
        raise OperatorError(f"{op.name}: {name} is None", 161001)
    return a if isinstance(a, np.ndarray) else np.asarray(a)


def check_dtypes(op: Operator, *arrays, same: bool = True) -> list[np.ndarray]:
    """Arrays of a supported dtype (for the current SoC profile), all one dtype if `same`."""
    arrays = [as_array(op, n, a) for n, a in zip(op.inputs, arrays)]
    allowed = op.supported(knobs().soc_version)
    names = ", ".join(d.name for d in allowed)
    for n, a in zip(op.inputs, arrays):
        try:
            d = dt.dtype(a.dtype)
        except ValueError:
            d = None
        if d not in allowed:
            raise OperatorError(f"{op.name}: {n} dtype {a.dtype} is not in [{names}]")
    if same and len({a.dtype for a in arrays}) > 1:
        got = ", ".join(f"{n} {a.dtype}" for n, a in zip(op.inputs, arrays))
        raise OperatorError(f"{op.name}: dtypes must match, got {got}")
    return arrays


def same_shapes(op: Operator, *arrays: np.ndarray) -> tuple[int, ...]:
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        got = ", ".join(f"{n} {a.shape}" for n, a in zip(op.inputs, arrays))
        raise OperatorError(f"{op.name}: shapes must be equal, got {got}")
    return arrays[0].shape


def broadcast_shape(op: Operator, *arrays: np.ndarray) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        got = ", ".join(f"{n} {a.shape}" for n, a in zip(op.inputs, arrays))
        raise OperatorError(f"{op.name}: shapes do not broadcast: {got}") from None


def check_rank(op: Operator, shape: tuple[int, ...], limit: int = 8) -> None:
    if len(shape) > limit:
        raise OperatorError(f"{op.name}: tensors may have at most {limit} dims, got {len(shape)}")


def make_out(op: Operator, out, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The given `out` after checking its shape and dtype, or a new array."""
    if out is None:
        return np.empty(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise OperatorError(f"{op.name}: out must be a numpy array, got {type(out).__name__}")
    if out.shape != tuple(shape):
        raise OperatorError(f"{op.name}: {op.outputs[0]} shape {out.shape} must be {tuple(shape)}")
    if out.dtype != dtype:
        raise OperatorError(f"{op.name}: {op.outputs[0]} dtype {out.dtype} must be {np.dtype(dtype)}")
    if not out.flags.writeable:
        raise OperatorError(f"{op.name}: {op.outputs[0]} is read-only")
    return out
