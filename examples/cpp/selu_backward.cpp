// aclnnSeluBackward through aclgen's SDK, checking its own result as CANN's SeluBackward example
// does: grad = 1, result = [-2, -1, 0, 1, 2, 3, -0.5, 0.5], each value within 0.01
// of SCALE * grad (result > 0) or grad * (result + SCALE * ALPHA); exit status 1 on a mismatch.
// Included without the aclnnop/ prefix, as CANN's page writes it (-I include/aclnnop).
#include <cmath>
#include <vector>

#include "acl/acl.h"
#include "aclnn_selu_backward.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  const float scale = 1.0507009873554804f;
  const float scaleAlpha = scale * 1.6732632423543772f;
  std::vector<int64_t> shape = {4, 2};
  std::vector<float> gradHost(8, 1.0f);
  std::vector<float> resultHost = {-2, -1, 0, 1, 2, 3, -0.5f, 0.5f};
  std::vector<float> gradInHost(8, 0);
  void *gradAddr = nullptr, *resultAddr = nullptr, *gradInAddr = nullptr;
  aclTensor *grad = nullptr, *result = nullptr, *gradIn = nullptr;
  ret = CreateAclTensor(gradHost, shape, &gradAddr, aclDataType::ACL_FLOAT, &grad);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(resultHost, shape, &resultAddr, aclDataType::ACL_FLOAT, &result);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(gradInHost, shape, &gradInAddr, aclDataType::ACL_FLOAT, &gradIn);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnSeluBackwardGetWorkspaceSize(grad, result, gradIn, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnSeluBackwardGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg());
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
  }
  ret = aclnnSeluBackward(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnSeluBackward failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

  std::vector<float> got(8, 0);
  ret = aclrtMemcpy(got.data(), got.size() * sizeof(float), gradInAddr, 8 * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
  LOG_PRINT("\n=== SeluGrad Results ===\n");
  LOG_PRINT("result >  0: y = SCALE * grad = %.6f * grad\n", scale);
  LOG_PRINT("result <= 0: y = grad * (result + SCALE_ALPHA) = grad * (result + %.6f)\n\n", scaleAlpha);
  int pass = 0, fail = 0;
  for (size_t i = 0; i < got.size(); i++) {
    float expected = resultHost[i] > 0 ? scale * gradHost[i] : gradHost[i] * (resultHost[i] + scaleAlpha);
    bool ok = std::fabs(got[i] - expected) < 0.01f;
    (ok ? pass : fail)++;
    LOG_PRINT("  [%zu] result=%.2f grad=%.2f => got=%.6f  expected=%.6f  %s\n", i, resultHost[i], gradHost[i], got[i],
              expected, ok ? "PASS" : "FAIL");
  }
  LOG_PRINT("\nTotal: %d PASS, %d FAIL\n", pass, fail);

  aclDestroyTensor(grad);
  aclDestroyTensor(result);
  aclDestroyTensor(gradIn);
  aclrtFree(gradAddr);
  aclrtFree(resultAddr);
  aclrtFree(gradInAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return fail > 0 ? 1 : 0;
}
