"""Python cost of one aclnn two-phase call (GetWorkspaceSize + run, stream None).

    python benchmarks/bench_two_phase.py [--n 1024] [--reps 20000]

Tensors are created once (as a CANN program does); each repetition is
`aclnnHardswishBackwardGetWorkspaceSize` + `aclnnHardswishBackward` on n float32 elements.
Reports the median over many batches, and, when torch is installed, the median of
`torch.ops.aten.hardswish_backward` on the same data in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import aclgen.acl as acl
import aclgen.aclnn as aclnn
from aclgen.runtime import planner


def median_us(fn, reps: int, batch: int = 100) -> float:
    """Median over batches of the per-call time, in microseconds."""
    for _ in range(batch):
        fn()
    samples = []
    for _ in range(max(reps // batch, 5)):
        t = time.perf_counter()
        for _ in range(batch):
            fn()
        samples.append((time.perf_counter() - t) / batch * 1e6)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=20000)
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    g = rng.standard_normal(args.n).astype(np.float32) * 4
    x = rng.standard_normal(args.n).astype(np.float32) * 4
    out = np.empty_like(g)
    tg, tx, tout = acl.from_numpy(g), acl.from_numpy(x), acl.from_numpy(out)

    def phase1():
        return aclnn.aclnnHardswishBackwardGetWorkspaceSize(tg, tx, tout)

    def two_phase():
        ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(tg, tx, tout)
        aclnn.aclnnHardswishBackward(None, ws, ex, None)

    ws, ex, ret = phase1()
    assert ret == 0 and ws == 0, acl.get_recent_err_msg()
    rows = [
        ("aclnn GetWorkspaceSize only", median_us(phase1, args.reps)),
        ("aclnn two-phase (GetWorkspaceSize + run)", median_us(two_phase, args.reps)),
    ]
    # The same calls with the memo of checked calls off: every check and the plan lookup run.
    planner.MEMO = False
    rows += [
        ("  same, memo off: GetWorkspaceSize only", median_us(phase1, args.reps)),
        ("  same, memo off: two-phase", median_us(two_phase, args.reps)),
    ]
    planner.MEMO = True

    def fresh_tensors():  # a CANN program that creates its tensors for every call
        a, b, c = acl.from_numpy(g), acl.from_numpy(x), acl.from_numpy(out)
        ws, ex, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(a, b, c)
        aclnn.aclnnHardswishBackward(None, ws, ex, None)

    rows.append(("  from_numpy x3 + two-phase", median_us(fresh_tensors, args.reps)))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        tg_t, tx_t = torch.from_numpy(g), torch.from_numpy(x)
        rows.append((f"torch {torch.__version__} aten.hardswish_backward",
                     median_us(lambda: torch.ops.aten.hardswish_backward(tg_t, tx_t), args.reps)))
    print(f"n = {args.n} float32 elements, median of {args.reps} calls")
    for name, us in rows:
        print(f"  {name:<44} {us:8.2f} us")


if __name__ == "__main__":
    main()
