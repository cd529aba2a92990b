"""The argument checks operators share, each raising AclError with CANN's code and one line
naming the API, the parameter, what was expected and what was given.

Operator files call these in SPEC.md's order; nothing here decides an order.
"""

from __future__ import annotations

from aclgen.ops.operator import Operator
from aclgen.runtime import constants as C
from aclgen.runtime.errors import AclError
from aclgen.runtime.scalar import AclScalar
from aclgen.runtime.soc import settings
from aclgen.runtime.tensor import AclTensor, fmt_dims

INVALID = C.ACLNN_ERR_PARAM_INVALID
_allowed: dict[tuple[str, str], tuple[frozenset, str, tuple[int, ...]]] = {}


def soc() -> str:
    """The current SoC profile name; an unusable ACLGEN_SOC_VERSION fails the call (561000)."""
    s = settings()
    if s.soc_error:
        raise AclError(C.ACLNN_ERR_INNER, s.soc_error)
    return s.soc


def allowed(op: Operator, soc_name: str) -> tuple[frozenset, str, tuple[int, ...]]:
    """(codes, "[ACL_FLOAT, ...]", codes in order) of `op`'s dtypes on `soc_name`; cached."""
    key = (op.name, soc_name)
    hit = _allowed.get(key)
    if hit is None:
        codes = tuple(C.CODE_OF_DTYPE[n] for n in op.dtypes.get(soc_name, ()))
        hit = _allowed[key] = (frozenset(codes), listing(codes), codes)
    return hit


def listing(codes) -> str:
    return "[" + ", ".join(C.dtype_name(c) for c in codes) + "]"


def tensor(api: str, name: str, t) -> AclTensor:
    """A live aclTensor: None -> 161001; another type or a destroyed tensor -> 161002."""
    if t is None:
        raise AclError(C.ACLNN_ERR_PARAM_NULLPTR, f"{api}: {name} is nullptr")
    if type(t) is not AclTensor:
        raise AclError(INVALID, f"{api}: {name} must be an aclTensor, got {type(t).__name__}")
    if t.destroyed:
        raise AclError(INVALID, f"{api}: {name} was destroyed")
    return t


def scalar(api: str, name: str, s) -> AclScalar:
    if s is None:
        raise AclError(C.ACLNN_ERR_PARAM_NULLPTR, f"{api}: {name} is nullptr")
    if type(s) is not AclScalar:
        raise AclError(INVALID, f"{api}: {name} must be an aclScalar, got {type(s).__name__}")
    if s.destroyed:
        raise AclError(INVALID, f"{api}: {name} was destroyed")
    return s


def dtype_in(api: str, name: str, t: AclTensor, codes: frozenset, names: str) -> None:
    if t.dtype not in codes:
        raise AclError(INVALID, f"{api}: {name} dtype {C.dtype_name(t.dtype)} is not in {names}")


def same_dtype(api: str, name: str, t: AclTensor, ref_name: str, ref: AclTensor, status: int = INVALID) -> None:
    if t.dtype != ref.dtype:
        raise AclError(status, f"{api}: {name} dtype {C.dtype_name(t.dtype)} must equal {ref_name} dtype "
                               f"{C.dtype_name(ref.dtype)}")


def max_dims(api: str, name: str, t: AclTensor, limit: int = 8) -> None:
    if len(t.view_dims) > limit:
        raise AclError(INVALID, f"{api}: {name} has {len(t.view_dims)} dims, at most {limit} are supported")


def same_shape(api: str, name: str, t: AclTensor, ref_name: str, ref: AclTensor) -> None:
    if t.view_dims != ref.view_dims:
        raise AclError(INVALID, f"{api}: {name} shape {fmt_dims(t.view_dims)} must equal {ref_name} shape "
                                f"{fmt_dims(ref.view_dims)}")


def broadcast(api: str, a_name: str, a: AclTensor, b_name: str, b: AclTensor) -> tuple[int, ...]:
    """The numpy broadcast shape of two tensors, else 161002."""
    da, db = a.view_dims, b.view_dims
    if da == db:
        return da
    n = max(len(da), len(db))
    pa, pb = (1,) * (n - len(da)) + da, (1,) * (n - len(db)) + db
    out = []
    for x, y in zip(pa, pb):
        if x != y and x != 1 and y != 1:
            raise AclError(INVALID, f"{api}: {a_name} shape {fmt_dims(da)} and {b_name} shape {fmt_dims(db)} "
                                    f"are not broadcastable")
        out.append(y if x == 1 else x)
    return tuple(out)


def out_shape(api: str, name: str, t: AclTensor, shape: tuple[int, ...]) -> None:
    if t.view_dims != shape:
        raise AclError(INVALID, f"{api}: {name} shape {fmt_dims(t.view_dims)} must equal the broadcast shape "
                                f"{fmt_dims(shape)}")


def format_in(api: str, name: str, t: AclTensor, formats: tuple[int, ...]) -> None:
    if t.format not in formats:
        names = ", ".join(C.format_name(f) for f in formats)
        raise AclError(INVALID, f"{api}: {name} format {C.format_name(t.format)} is not in [{names}]")


def view(api: str, name: str, t: AclTensor, is_output: bool) -> None:
    """SPEC §1: the view lies inside its storage and allocation (checked after the op's own
    checks, before the empty-tensor return); memory still allocated; outputs writable."""
    if t.problem is not None:
        raise AclError(INVALID, f"{api}: {name} {t.problem}")
    block = t.block
    if block is not None and block.freed:
        raise AclError(INVALID, f"{api}: {name} memory at 0x{block.start:x} was freed")
    if is_output and t.readonly:
        raise AclError(INVALID, f"{api}: {name} is read-only")
    if is_output and t.repeats:
        raise AclError(INVALID, f"{api}: {name} strides {fmt_dims(t.strides)} repeat elements (stride 0 on a dim "
                                f"of size > 1 in dims {fmt_dims(t.view_dims)}); an output must not")
