"""CANN's activation doc pages as data: every aclnn API they document, by CANN folder, with the
header CANN's calling example includes for it.

Derived once from hicann/ops-nn at commit e5c3fa9327ea (2026-08-22), and not read again: the
file names of `activation/<folder>/docs/aclnn*.md` (a page named `aclnnRelu&aclnnInplaceRelu.md`
documents both APIs), and the `#include "aclnnop/aclnn_<name>.h"` line of each page's calling
example (SeluBackward's page has none: its folder's `op_api/aclnn_selu_backward.h`). The
operator reference (`aclgen docs`) lists every API here with its status; the C SDK names an
operator's header after this table where CANN's name is not the aclnn name in snake case
(aclnn_geglu.h, aclnn_logsigmoid.h, aclnn_logsoftmax.h).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DocPage:
    """One doc page: its CANN folder, the aclnn APIs it documents, their header."""

    folder: str
    apis: tuple[str, ...]
    header: str


ACTIVATION: tuple[DocPage, ...] = (
    DocPage("celu_v2", ("aclnnCelu", "aclnnInplaceCelu",), "aclnn_celu.h"),
    DocPage("clipped_swiglu", ("aclnnClippedSwiglu",), "aclnn_clipped_swiglu.h"),
    DocPage("clipped_swiglu", ("aclnnClippedSwigluV2",), "aclnn_clipped_swiglu_v2.h"),
    DocPage("clipped_swiglu_grad", ("aclnnClippedSwigluGrad",), "aclnn_clipped_swiglu_grad.h"),
    DocPage("elu", ("aclnnElu", "aclnnInplaceElu",), "aclnn_elu.h"),
    DocPage("elu_grad_v2", ("aclnnEluBackward",), "aclnn_elu_backward.h"),
    DocPage("erfinv", ("aclnnErfinv", "aclnnInplaceErfinv",), "aclnn_erfinv.h"),
    DocPage("fast_gelu", ("aclnnFastGelu",), "aclnn_fast_gelu.h"),
    DocPage("fast_gelu_grad", ("aclnnFastGeluBackward",), "aclnn_fast_gelu_backward.h"),
    DocPage("fatrelu_mul", ("aclnnFatreluMul",), "aclnn_fatrelu_mul.h"),
    DocPage("ge_glu_grad_v2", ("aclnnGeGluBackward",), "aclnn_geglu_backward.h"),
    DocPage("ge_glu_grad_v2", ("aclnnGeGluV3Backward",), "aclnn_geglu_backward.h"),
    DocPage("ge_glu_v2", ("aclnnGeGlu",), "aclnn_geglu.h"),
    DocPage("ge_glu_v2", ("aclnnGeGluV3",), "aclnn_geglu.h"),
    DocPage("gelu", ("aclnnGelu",), "aclnn_gelu.h"),
    DocPage("gelu_grad", ("aclnnGeluBackward",), "aclnn_gelu_backward.h"),
    DocPage("gelu_grad_v2", ("aclnnGeluBackwardV2",), "aclnn_gelu_backward_v2.h"),
    DocPage("gelu_mul", ("aclnnGeluMul",), "aclnn_gelu_mul.h"),
    DocPage("gelu_quant", ("aclnnGeluQuant",), "aclnn_gelu_quant.h"),
    DocPage("gelu_v2", ("aclnnGeluV2",), "aclnn_gelu_v2.h"),
    DocPage("glu", ("aclnnGlu",), "aclnn_glu.h"),
    DocPage("glu_grad", ("aclnnGluBackward",), "aclnn_glu_backward.h"),
    DocPage("hard_shrink", ("aclnnHardshrink",), "aclnn_hardshrink.h"),
    DocPage("hard_shrink_grad", ("aclnnHardshrinkBackward",), "aclnn_hardshrink_backward.h"),
    DocPage("hard_sigmoid", ("aclnnHardsigmoid", "aclnnInplaceHardsigmoid",), "aclnn_hardsigmoid.h"),
    DocPage("hard_sigmoid_grad", ("aclnnHardsigmoidBackward",), "aclnn_hardsigmoid_backward.h"),
    DocPage("hard_swish", ("aclnnHardswish", "aclnnInplaceHardswish",), "aclnn_hardswish.h"),
    DocPage("hard_swish_grad", ("aclnnHardswishBackward",), "aclnn_hardswish_backward.h"),
    DocPage("hard_swish_grad_v2", ("aclnnHardswishBackwardV2",), "aclnn_hardswish_backward_v2.h"),
    DocPage("hardtanh_grad", ("aclnnHardtanhBackward",), "aclnn_hardtanh_backward.h"),
    DocPage("heaviside", ("aclnnHeaviside",), "aclnn_heaviside.h"),
    DocPage("leaky_relu", ("aclnnLeakyRelu", "aclnnInplaceLeakyRelu",), "aclnn_leaky_relu.h"),
    DocPage("leaky_relu", ("aclnnRReluWithNoise", "aclnnInplaceRReluWithNoise",), "aclnn_rrelu_with_noise.h"),
    DocPage("leaky_relu_grad", ("aclnnLeakyReluBackward",), "aclnn_leaky_relu_backward.h"),
    DocPage("log_sigmoid", ("aclnnBinaryCrossEntropyWithLogitsTargetBackward",), "aclnn_binary_cross_entropy_with_logits_target_backward.h"),
    DocPage("log_sigmoid", ("aclnnLogSigmoid",), "aclnn_logsigmoid.h"),
    DocPage("log_sigmoid", ("aclnnLogSigmoidForward",), "aclnn_logsigmoid.h"),
    DocPage("log_softmax_grad", ("aclnnLogSoftmaxBackward",), "aclnn_logsoftmax_backward.h"),
    DocPage("log_softmax_v2", ("aclnnLogSoftmax",), "aclnn_logsoftmax.h"),
    DocPage("logsigmoid_grad", ("aclnnLogSigmoidBackward",), "aclnn_logsigmoid_backward.h"),
    DocPage("mish", ("aclnnMish", "aclnnInplaceMish",), "aclnn_mish.h"),
    DocPage("mish_grad", ("aclnnMishBackward",), "aclnn_mish_backward.h"),
    DocPage("p_relu", ("aclnnPrelu",), "aclnn_prelu.h"),
    DocPage("p_relu_grad_update", ("aclnnPreluBackward",), "aclnn_prelu_backward.h"),
    DocPage("relu", ("aclnnAddRelu", "aclnnInplaceAddRelu",), "aclnn_add_relu.h"),
    DocPage("relu", ("aclnnRelu", "aclnnInplaceRelu",), "aclnn_relu.h"),
    DocPage("selu", ("aclnnSelu", "aclnnInplaceSelu",), "aclnn_selu.h"),
    DocPage("selu_grad", ("aclnnSeluBackward",), "aclnn_selu_backward.h"),
    DocPage("shrink", ("aclnnShrink",), "aclnn_shrink.h"),
    DocPage("sigmoid", ("aclnnSigmoid", "aclnnInplaceSigmoid",), "aclnn_sigmoid.h"),
    DocPage("sigmoid_grad", ("aclnnSigmoidBackward",), "aclnn_sigmoid_backward.h"),
    DocPage("silu_grad", ("aclnnSiluBackward",), "aclnn_silu_backward.h"),
    DocPage("situ_glu", ("aclnnSituGlu",), "aclnn_situ_glu.h"),
    DocPage("situ_glu_grad", ("aclnnSituGluGrad",), "aclnn_situ_glu_grad.h"),
    DocPage("soft_shrink_grad", ("aclnnSoftshrinkBackward",), "aclnn_softshrink_backward.h"),
    DocPage("softmax_cross_entropy_with_logits", ("aclnnSoftmaxCrossEntropyWithLogits",), "aclnn_softmax_cross_entropy_with_logits.h"),
    DocPage("softmax_grad", ("aclnnSoftmaxBackward",), "aclnn_softmax_backward.h"),
    DocPage("softmax_v2", ("aclnnSoftmax",), "aclnn_softmax.h"),
    DocPage("softplus_v2", ("aclnnSoftplus",), "aclnn_softplus.h"),
    DocPage("softplus_v2_grad", ("aclnnSoftplusBackward",), "aclnn_softplus_backward.h"),
    DocPage("softshrink", ("aclnnSoftshrink",), "aclnn_softshrink.h"),
    DocPage("squared_relu", ("aclnnSquaredRelu",), "aclnn_squared_relu.h"),
    DocPage("swi_glu", ("aclnnSwiGlu",), "aclnn_swi_glu.h"),
    DocPage("swi_glu_grad", ("aclnnSwiGluGrad",), "aclnn_swi_glu_grad.h"),
    DocPage("swiglu_group", ("aclnnSwigluGroup",), "aclnn_swiglu_group.h"),
    DocPage("swiglu_group_quant", ("aclnnSwigluGroupQuant",), "aclnn_swiglu_group_quant.h"),
    DocPage("swiglu_group_quant_grad", ("aclnnSwigluGroupQuantGrad",), "aclnn_swiglu_group_quant_grad.h"),
    DocPage("swish", ("aclnnSilu",), "aclnn_silu.h"),
    DocPage("swish", ("aclnnSwish",), "aclnn_swish.h"),
    DocPage("swish_grad", ("aclnnSwishBackward",), "aclnn_swish_backward.h"),
    DocPage("threshold", ("aclnnThreshold", "aclnnInplaceThreshold",), "aclnn_threshold.h"),
    DocPage("threshold_grad_v2_d", ("aclnnThresholdBackward",), "aclnn_threshold_backward.h"),
)


def activation_apis() -> tuple[str, ...]:
    """Every aclnn API of the activation doc pages, in the pages' order."""
    return tuple(api for page in ACTIVATION for api in page.apis)


HEADERS: dict[str, str] = {api: page.header for page in ACTIVATION for api in page.apis}
