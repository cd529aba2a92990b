"""Why aclgen does not narrow f32 to bf16 with AVX512_BF16's `vcvtneps2bf16`.

Compares, over all 2^32 f32 bit patterns, the instruction's documented operation (Intel SDM,
VCVTNEPS2BF16, `convert_fp32_to_bfloat16`) with the rounding aclgen's lower-to-llvm emits
(`from_f32`: bits + 0x7FFF + lsb, NaNs quieted by setting bit 22, upper half kept) and with
ml_dtypes' round-to-nearest-even, and counts the patterns where they differ. ~2 minutes.

    python benchmarks/bf16_rounding_proof.py
"""

import ml_dtypes
import numpy as np


def intel(u: np.ndarray) -> np.ndarray:
    exp, man = (u >> 23) & 0xFF, u & 0x7FFFFF
    normal = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
    out = np.where((exp == 0xFF) & (man != 0), ((u >> 16) | 0x40) & 0xFFFF, normal)  # NaN: quiet
    out = np.where((exp == 0xFF) & (man == 0), u >> 16, out)  # inf
    return np.where(exp == 0, (u >> 16) & 0x8000, out).astype(np.uint16)  # zero, denormal: +-0


def aclgen(u: np.ndarray) -> np.ndarray:
    exp, man = (u >> 23) & 0xFF, u & 0x7FFFFF
    rounded = u + 0x7FFF + ((u >> 16) & 1)
    out = np.where((exp == 0xFF) & (man != 0), u | 0x400000, rounded)
    return (out >> 16).astype(np.uint16)


def main() -> None:
    counts = {"aclgen vs vcvtneps2bf16": 0, "of which subnormal inputs": 0, "aclgen vs ml_dtypes (non-NaN)": 0}
    step = 1 << 25
    for start in range(0, 1 << 32, step):
        u = np.arange(start, start + step, dtype=np.uint64).astype(np.uint32)
        ours, theirs = aclgen(u), intel(u)
        differ = ours != theirs
        counts["aclgen vs vcvtneps2bf16"] += int(differ.sum())
        counts["of which subnormal inputs"] += int((differ & (((u >> 23) & 0xFF) == 0)).sum())
        with np.errstate(invalid="ignore"):
            rne = u.view(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
        not_nan = ~np.isnan(u.view(np.float32))
        counts["aclgen vs ml_dtypes (non-NaN)"] += int(((ours != rne) & not_nan).sum())
    for k, v in counts.items():
        print(f"{k}: {v:,} of 4,294,967,296")


if __name__ == "__main__":
    main()
