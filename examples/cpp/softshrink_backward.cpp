// aclnnSoftshrinkBackward through aclgen's SDK. Its worked example: grad = 0..7,
// self = [1, 1, 1, 2, 1, 2, 3, 3], lambd = 1.2 (an aclScalar), float32 [4, 2].
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_softshrink_backward.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> shape = {4, 2};
  std::vector<float> gradOutHost = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<float> selfHost = {1, 1, 1, 2, 1, 2, 3, 3};
  std::vector<float> gradInHost(8, 0);
  void *gradOutAddr = nullptr, *selfAddr = nullptr, *gradInAddr = nullptr;
  aclTensor *gradOut = nullptr, *self = nullptr, *gradIn = nullptr;
  ret = CreateAclTensor(gradOutHost, shape, &gradOutAddr, aclDataType::ACL_FLOAT, &gradOut);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(selfHost, shape, &selfAddr, aclDataType::ACL_FLOAT, &self);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(gradInHost, shape, &gradInAddr, aclDataType::ACL_FLOAT, &gradIn);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  float lambdValue = 1.2f;
  aclScalar* lambd = aclCreateScalar(&lambdValue, aclDataType::ACL_FLOAT);
  CHECK_RET(lambd != nullptr, LOG_PRINT("aclCreateScalar failed: %s\n", aclGetRecentErrMsg()); return 1);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnSoftshrinkBackwardGetWorkspaceSize(gradOut, self, lambd, gradIn, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnSoftshrinkBackwardGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg());
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
  }
  ret = aclnnSoftshrinkBackward(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnSoftshrinkBackward failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
  ret = PrintResult(gradInAddr, shape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(gradOut);
  aclDestroyTensor(self);
  aclDestroyTensor(gradIn);
  aclDestroyScalar(lambd);
  aclrtFree(gradOutAddr);
  aclrtFree(selfAddr);
  aclrtFree(gradInAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return 0;
}
