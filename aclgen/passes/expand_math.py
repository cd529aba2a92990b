"""`expand-math`: replace every formula function that is not an instruction with its expansion.

Each function's code is registered once in aclgen/passes/expansions/ (`@expands(name)`); this
pass walks one rewrite pattern over the module that looks each op's kind up in the table of
expansions (a pattern per kind made the walker try ~20 on every op: a third of the pass's time). An
expansion may call other functions (sigmoid calls absolute, tanh may call expm1): the walker
expands what it inserts in turn. Functions that are LLVM intrinsics (`intrinsic(...)`) stay for
`lower-to-llvm` — or, where they are instructions only on some targets (the rounding
functions: SSE4.1), on the targets the pass's option says have them.

`fma` says whether the expansions' multiply-adds are fused (one rounding, `math.fma`) or a
multiply and an add; `rounding` whether the target rounds to integers in one instruction;
`avx512` whether it has AVX-512F's exact instructions for a float's exponent and significand
and for scaling by a power of two (`llvmx.avx512ps`: vgetexpps, vgetmantps, vscalefps): log and
log2 take their argument apart with the first two, exp, exp2, pow and erfc end with the third,
for the same bits as the integer work of other targets; `permute` whether a vector permute reads
an 8-entry table of constants (AVX2's `vpermps`: `llvmx.lookup`) or selects must (exp's and exp2's
table, the same values). The compiler sets all four from the target (`aclgen opt`'s defaults:
`fma` and `rounding` on, as on every AVX machine, `avx512` and `permute` off).

Precision follows the stored type: a function whose result reaches the kernel's outputs only
through multiplies, divisions, negations, selected values, sums of nonnegative values and log1p
of a nonnegative value (softplus's log1p(exp(-|z|))), operations that carry a relative error
through without growing it, and is stored only as float16 or bfloat16 (`stored_in_half`), is
built with `Builder.half` set: its expansion may then carry a relative error of 2^-16 instead
of f32's ulp (exp, exp2, sigmoid, log, log2, log1p, erf, pow and, with AVX-512F, rsqrt have
such forms: shorter polynomials, fewer exact splits, pow without float64). The half result is then the correctly
rounded one but where the exact value lies within 2^-5 of an ulp (f16; 2^-8 for bf16) from a
rounding boundary. Any other use (an add of unknown sign, a compare, a reduction, another
function, an f32 output) keeps the f32 expansion. The `half` option says where half-type forms
are used: "stored" (the default: as above), "off" (nowhere: every half result is the f32
result rounded once), "all" (everywhere: how benchmarks/math_sweep.py measures them over every
f32 input).

Before:
    %y = ew.exp %x : vector<8xf32> -> vector<8xf32>
After (abridged):
    %nan = ew.cmp une %x, %x : vector<8xf32>, vector<8xf32> -> vector<8xi1>
    %t = math.fma %xc, %log2e, %magic : vector<8xf32>
    ...
    %y = ew.select %nan, %x, %r : vector<8xi1>, vector<8xf32>, vector<8xf32> -> vector<8xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from aclgen.dialects import ew
from aclgen.dialects.ew import element
from aclgen.passes.builder import Builder
from aclgen.passes.expansions import EXPANSIONS, WHERE, Expansion


@dataclass(frozen=True)
class Expand(RewritePattern):
    """Replace each op whose kind `expansions` holds with that expansion's code."""

    expansions: dict[type[ew.FunctionOp], Expansion]
    fma: bool
    avx512: bool
    permute: bool
    half: frozenset[Operation] = frozenset()  # the ops whose results only a half type stores

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        expansion = self.expansions.get(type(op))  # type: ignore[arg-type]
        if expansion is None:
            return
        b = Builder.before(op, rewriter, shape=op.operands[0].type, fma=self.fma, avx512=self.avx512,
                           permute=self.permute, half=op in self.half)
        rewriter.replace(op, [], [expansion(b, *op.operands)])


HALF_TYPES = ("f16", "bf16")
HALF_FORMS = ("stored", "off", "all")
#: Operations that carry a relative error from an operand to their result unchanged.
THROUGH = (ew.MulOp, ew.DivOp, ew.NegOp)
#: Functions whose result is never negative (NaN aside); maximum's is where either operand's is,
#: log1p's where its argument's is.
NONNEGATIVE = tuple(ew.function_op(name) for name in ("exp", "exp2", "sigmoid", "erfc", "absolute", "sqrt"))
MAXIMUM, LOG1P = ew.function_op("maximum"), ew.function_op("log1p")


def stored_in_half(value: SSAValue, memo: dict | None = None) -> bool:
    """Whether every use of `value` is a conversion to a half type, or an op of `THROUGH`, a
    select's chosen value, a sum of two `nonnegative` values (whose relative error is at most
    its terms') or log1p of a nonnegative value (x / ((1 + x) log1p x) <= 1 there: the relative
    error does not grow) whose result is itself stored only in a half type."""
    memo = {} if memo is None else memo
    if value not in memo:
        memo[value] = False  # a value used by itself (never in SSA) stays full precision
        memo[value] = bool(value.uses) and all(_half_use(use.operation, use.index, memo) for use in value.uses)
    return memo[value]


def _half_use(op: Operation, index: int, memo: dict) -> bool:
    if isinstance(op, ew.ConvertOp):
        return element(op.result.type).name in HALF_TYPES
    if (isinstance(op, THROUGH) or (isinstance(op, ew.SelectOp) and index > 0)
            or (isinstance(op, ew.AddOp | LOG1P) and all(nonnegative(v, memo) for v in op.operands))):
        return stored_in_half(op.results[0], memo)
    return False


def nonnegative(value: SSAValue, memo: dict) -> bool:
    """Whether `value` is >= 0 (or NaN) by construction: a constant, a `NONNEGATIVE` function, or
    a sum, product, quotient or selection of such values. (`memo` is stored_in_half's, keyed
    by the op rather than the value so that the two questions do not mix.)"""
    op = value.owner
    if op not in memo:
        if isinstance(op, ew.ConstantOp):
            memo[op] = op.value.value.data >= 0
        elif isinstance(op, NONNEGATIVE):
            memo[op] = True
        elif isinstance(op, MAXIMUM):
            memo[op] = any(nonnegative(v, memo) for v in op.operands)
        elif isinstance(op, LOG1P):
            memo[op] = nonnegative(op.operands[0], memo)
        elif isinstance(op, ew.AddOp | ew.MulOp | ew.DivOp):
            memo[op] = all(nonnegative(v, memo) for v in op.operands)
        elif isinstance(op, ew.SelectOp):
            memo[op] = nonnegative(op.lhs, memo) and nonnegative(op.rhs, memo)
        else:
            memo[op] = False
    return memo[op]


def expansions(facts: dict[str, bool]) -> dict[type[ew.FunctionOp], Expansion]:
    """Each function's expansion by its op's kind, but none for an intrinsic that `facts` say is an
    instruction."""
    return {ew.function_op(name): fn for name, fn in EXPANSIONS.items() if not (name in WHERE and facts[WHERE[name]])}


@dataclass(frozen=True)
class ExpandMathPass(ModulePass):
    name = "expand-math"

    fma: bool = True  # fused multiply-adds (the compiler passes whether the target has FMA)
    rounding: bool = True  # floor/ceil/trunc/round are instructions (SSE4.1 and later)
    avx512: bool = False  # AVX-512F's vscalefps, vgetexpps, vgetmantps (llvmx.avx512ps)
    permute: bool = False  # AVX2's vpermps reads a table of 8 constants (llvmx.lookup)
    half: str = "stored"  # where functions take their half-type forms: "stored" (stored_in_half), "off", "all"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.half not in HALF_FORMS:
            raise ValueError(f"expand-math: half must be one of {HALF_FORMS}, not {self.half!r}")
        memo: dict = {}
        half = frozenset(f for f in op.walk() if isinstance(f, ew.FunctionOp) and self.half != "off"
                         and (self.half == "all" or stored_in_half(f.results[0], memo)))
        expand = Expand(expansions({"rounding": self.rounding}), self.fma, self.avx512, self.permute, half)
        PatternRewriteWalker(expand).rewrite_module(op)
