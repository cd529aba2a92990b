"""CANN's activation family (hicann/ops-nn `activation/`): one declaration file per CANN folder,
named after it (`hard_swish_grad.py` declares aclnnHardswishBackward).

`OUT_OF_SCOPE` lists the aclnn APIs of the family's doc pages that aclgen does not provide, each
with its reason (the operator reference in docs/ shows them next to the provided ones).
"""

OUT_OF_SCOPE: dict[str, str] = {
    "aclnnBinaryCrossEntropyWithLogitsTargetBackward": "its doc page states no formula (it defers to the loss "
                                                       "family's page), and reduction=mean divides by target's "
                                                       "element count, which the call's shape fixes, not a formula",
    "aclnnGeluQuant": "quantized outputs: int8/fp8/hifloat8 results with their rounding modes, and per-row "
                      "dynamic scales (a reduction that is also an output of another dtype and shape)",
    "aclnnClippedSwiglu": "a data-dependent row count: only the rows up to the sum of the int64 group_index "
                          "tensor are computed, which a plan made before the data is read cannot know",
    "aclnnClippedSwigluV2": "as aclnnClippedSwiglu (group_index)",
    "aclnnClippedSwigluGrad": "as aclnnClippedSwiglu (group_index)",
    "aclnnSwigluGroup": "as aclnnClippedSwiglu (group_index), and a per-token weight gathered by row",
    "aclnnSwigluGroupQuant": "group_index, and block/MX/HiFloat8 quantized outputs with per-group scales",
    "aclnnSwigluGroupQuantGrad": "group_index, and per-group reductions into quantization scales",
    "aclnnRReluWithNoise": "random numbers (a seed and offset of the device's generator, and a noise output "
                           "that records them)",
    "aclnnInplaceRReluWithNoise": "as aclnnRReluWithNoise (random numbers)",
}
