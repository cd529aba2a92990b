// aclnnEluBackward, a backward operator whose C arguments mix scalars, a bool attribute and
// tensors in CANN's order: (gradOutput, alpha, scale, inputScale, isResult, selfOrResult,
// gradInput). With isResult = false, selfOrResult holds ELU's input x and
//   gradInput = gradOutput * scale                                          for x > 0
//   gradInput = gradOutput * inputScale * alpha * scale * exp(x * inputScale)  for x <= 0.
// gradOutput [2, 4] = 1..8, x = -2, -1.5, ..., 1.5, alpha = 1.5, scale = 2, inputScale = 0.5.
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_elu_backward.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> shape = {2, 4};
  std::vector<float> gradHost = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> xHost = {-2.0f, -1.5f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
  std::vector<float> gradInHost(8, 0.0f);
  void *gradAddr = nullptr, *xAddr = nullptr, *gradInAddr = nullptr;
  aclTensor *grad = nullptr, *x = nullptr, *gradIn = nullptr;
  ret = CreateAclTensor(gradHost, shape, &gradAddr, aclDataType::ACL_FLOAT, &grad);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(xHost, shape, &xAddr, aclDataType::ACL_FLOAT, &x);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(gradInHost, shape, &gradInAddr, aclDataType::ACL_FLOAT, &gradIn);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  float alphaValue = 1.5f, scaleValue = 2.0f, inputScaleValue = 0.5f;
  aclScalar* alpha = aclCreateScalar(&alphaValue, aclDataType::ACL_FLOAT);
  aclScalar* scale = aclCreateScalar(&scaleValue, aclDataType::ACL_FLOAT);
  aclScalar* inputScale = aclCreateScalar(&inputScaleValue, aclDataType::ACL_FLOAT);
  CHECK_RET(alpha != nullptr && scale != nullptr && inputScale != nullptr,
            LOG_PRINT("aclCreateScalar failed: %s\n", aclGetRecentErrMsg()); return 1);
  bool isResult = false;

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnEluBackwardGetWorkspaceSize(grad, alpha, scale, inputScale, isResult, x, gradIn, &workspaceSize,
                                         &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnEluBackwardGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg());
            return ret);
  ret = RunPhase2("aclnnEluBackward", aclnnEluBackward, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = PrintResult(gradInAddr, shape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(grad);
  aclDestroyTensor(x);
  aclDestroyTensor(gradIn);
  aclDestroyScalar(alpha);
  aclDestroyScalar(scale);
  aclDestroyScalar(inputScale);
  aclrtFree(gradAddr);
  aclrtFree(xAddr);
  aclrtFree(gradInAddr);
  Finalize(deviceId, stream);
  return 0;
}
