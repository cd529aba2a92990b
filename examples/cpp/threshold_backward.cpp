// aclnnThresholdBackward through aclgen's SDK. Its worked example: self = [0.2, 1.2, 2.2, 3.2],
// grad = [4.5, 4.4, 4.3, 4.2], threshold = 1.0 (an aclScalar), float32 [2, 2].
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> shape = {2, 2};
  std::vector<float> gradOutHost = {4.5f, 4.4f, 4.3f, 4.2f};
  std::vector<float> selfHost = {0.2f, 1.2f, 2.2f, 3.2f};
  std::vector<float> outHost(4, 0);
  void *gradOutAddr = nullptr, *selfAddr = nullptr, *outAddr = nullptr;
  aclTensor *gradOut = nullptr, *self = nullptr, *out = nullptr;
  ret = CreateAclTensor(gradOutHost, shape, &gradOutAddr, aclDataType::ACL_FLOAT, &gradOut);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(selfHost, shape, &selfAddr, aclDataType::ACL_FLOAT, &self);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(outHost, shape, &outAddr, aclDataType::ACL_FLOAT, &out);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  float thresholdValue = 1.0f;
  aclScalar* threshold = aclCreateScalar(&thresholdValue, aclDataType::ACL_FLOAT);
  CHECK_RET(threshold != nullptr, LOG_PRINT("aclCreateScalar failed: %s\n", aclGetRecentErrMsg()); return 1);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnThresholdBackwardGetWorkspaceSize(gradOut, self, threshold, out, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnThresholdBackwardGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg());
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
  }
  ret = aclnnThresholdBackward(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnThresholdBackward failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
  ret = PrintResult(outAddr, shape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(gradOut);
  aclDestroyTensor(self);
  aclDestroyTensor(out);
  aclDestroyScalar(threshold);
  aclrtFree(gradOutAddr);
  aclrtFree(selfAddr);
  aclrtFree(outAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return 0;
}
