// aclnnHardswishBackward on the host through aclgen's SDK: CANN's documented call sequence.
// Its worked example: self = gradOutput = 0..7, float32 [4, 2].
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> shape = {4, 2};
  std::vector<float> gradOutHost = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<float> selfHost = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<float> outHost(8, 0);
  void *gradOutAddr = nullptr, *selfAddr = nullptr, *outAddr = nullptr;
  aclTensor *gradOut = nullptr, *self = nullptr, *out = nullptr;
  ret = CreateAclTensor(gradOutHost, shape, &gradOutAddr, aclDataType::ACL_FLOAT, &gradOut);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(selfHost, shape, &selfAddr, aclDataType::ACL_FLOAT, &self);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(outHost, shape, &outAddr, aclDataType::ACL_FLOAT, &out);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  // phase 1: check and plan; phase 2: run on the stream
  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnHardswishBackwardGetWorkspaceSize(gradOut, self, out, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnHardswishBackwardGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg());
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
  }
  ret = aclnnHardswishBackward(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnHardswishBackward failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
  ret = PrintResult(outAddr, shape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(gradOut);
  aclDestroyTensor(self);
  aclDestroyTensor(out);
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
