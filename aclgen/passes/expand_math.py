"""`expand-math`: replace every formula function that is not an instruction with its expansion.

Each function's code is registered once in aclgen/passes/expansions/ (`@expands(name)`); this
pass walks one rewrite pattern over the module that looks each op's kind up in the table of
expansions (a pattern per kind made the walker try ~20 on every op: a third of the pass's time). An
expansion may call other functions (sigmoid calls absolute, tanh may call expm1): `Builder.call`
builds their expansions in place, in their f32 forms, so the walk is one pass (walking what it
inserted again, and the module once more to see nothing changed, took GELU's two forms 29 ms
against 17). Functions that are LLVM intrinsics (`intrinsic(...)`) stay for
`lower-to-llvm` — or, where they are instructions only on some targets (the rounding
functions: SSE4.1), on the targets the pass's option says have them.

`fma` says whether the expansions' multiply-adds are fused (one rounding, `math.fma`) or a
multiply and an add; `rounding` whether the target rounds to integers in one instruction;
`avx512` whether it has AVX-512F's exact instructions for a float's exponent and significand,
for scaling by a power of two and for special values by class (`llvmx.avx512ps`: vgetexpps,
vgetmantps, vscalefps, vfixupimmps): log and log2 take their argument apart with the first two,
exp, exp2, pow and erfc end with the third, the logs set their special values with the fourth,
for the same bits as the integer work and selects of other targets; `permute` whether a vector
permute reads an 8-entry table of constants (AVX2's `vpermps`: `llvmx.lookup`) or selects must
(exp2's table without FMA: the same values). The compiler sets all four from the target (`aclgen opt`'s defaults:
`fma` and `rounding` on, as on every AVX machine, `avx512` and `permute` off).

Precision follows the stored type: a function whose result only a float16 or bfloat16 output
stores, through operations that cannot magnify a relative error (`half_precision`), is built
with `Builder.half` set: its expansion may then carry a relative error of 2^-16 instead of f32's
ulp (exp, exp2, sigmoid, log, log2, log1p, erf, pow and, with AVX-512F, rsqrt have such forms:
shorter polynomials, fewer exact splits, pow without float64). The half result is then the
correctly rounded one but where the exact value lies within 2^-5 of an ulp (f16; 2^-8 for bf16)
from a rounding boundary. The `half` option says where half-type forms are used: "stored" (the
default: as above), "off" (nowhere: every half result is the f32 result rounded once), "all"
(everywhere: how benchmarks/math_sweep.py measures them over every f32 input).

An expansion also learns the interval its first argument lies in where the formula bounds it
(`value_range`: constants, clamps, negations and selects, read before the walk rewrites them):
exp of an argument clamped to where its result is a normal float drops its own clamp and half of
its scaling (sigmoid's products: 13-16% of Silu's time), for the same bits.

Before:
    %y = ew.exp %x : vector<8xf32> -> vector<8xf32>
After (abridged):
    %nan = ew.cmp une %x, %x : vector<8xf32>, vector<8xf32> -> vector<8xi1>
    %t = math.fma %xc, %log2e, %magic : vector<8xf32>
    ...
    %y = ew.select %nan, %x, %r : vector<8xi1>, vector<8xf32>, vector<8xf32> -> vector<8xf32>
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from aclgen.dialects import ew
from aclgen.kernel import HALF_FORMS
from aclgen.passes.builder import Builder
from aclgen.passes.expansions import EXPANSIONS, WHERE, Expansion
from aclgen.passes.half_precision import half_functions
from aclgen.passes.value_range import ANY, Interval, interval


@dataclass(frozen=True)
class Expand(RewritePattern):
    """Replace each op whose kind `expansions` holds with that expansion's code."""

    expansions: dict[type[ew.FunctionOp], Expansion]
    fma: bool
    avx512: bool
    permute: bool
    half: frozenset[Operation] = frozenset()  # the ops whose results only a half type stores
    bounds: Mapping[Operation, Interval] = field(default_factory=dict)  # their arguments' intervals, where known

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        expansion = self.expansions.get(type(op))  # type: ignore[arg-type]
        if expansion is None:
            return
        b = Builder.before(op, rewriter, shape=op.operands[0].type, fma=self.fma, avx512=self.avx512,
                           permute=self.permute, half=op in self.half, expansions=self.expansions,
                           bounds=self.bounds.get(op, ANY))
        rewriter.replace(op, [], [expansion(b, *op.operands)])


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
    half: str = "stored"  # where functions take their half-type forms: "stored" (half_functions), "off", "all"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.half not in HALF_FORMS:
            raise ValueError(f"expand-math: half must be one of {HALF_FORMS}, not {self.half!r}")
        half = (frozenset() if self.half == "off" else half_functions(op) if self.half == "stored"
                else frozenset(f for f in op.walk() if isinstance(f, ew.FunctionOp)))
        memo: dict = {}
        bounds: dict[Operation, Interval] = {
            f: v for f in op.walk() if isinstance(f, ew.FunctionOp) and (v := interval(f.operands[0], memo)) != ANY}
        expand = Expand(expansions({"rounding": self.rounding}), self.fma, self.avx512, self.permute, half, bounds)
        PatternRewriteWalker(expand, apply_recursively=False).rewrite_module(op)
