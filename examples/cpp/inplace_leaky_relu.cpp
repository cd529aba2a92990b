// aclnnInplaceLeakyRelu, an in-place API: selfRef is read and overwritten with
// selfRef > 0 ? selfRef : selfRef * negativeSlope. It has no output argument; the result is read
// back from selfRef's own device memory. selfRef [2, 4] = -2, -1.5, ..., 1.5, negativeSlope = 0.2.
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_leaky_relu.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> shape = {2, 4};
  std::vector<float> selfHost = {-2.0f, -1.5f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
  void* selfAddr = nullptr;
  aclTensor* selfRef = nullptr;
  ret = CreateAclTensor(selfHost, shape, &selfAddr, aclDataType::ACL_FLOAT, &selfRef);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  float slopeValue = 0.2f;
  aclScalar* negativeSlope = aclCreateScalar(&slopeValue, aclDataType::ACL_FLOAT);
  CHECK_RET(negativeSlope != nullptr, LOG_PRINT("aclCreateScalar failed: %s\n", aclGetRecentErrMsg()); return 1);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnInplaceLeakyReluGetWorkspaceSize(selfRef, negativeSlope, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnInplaceLeakyReluGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg());
            return ret);
  ret = RunPhase2("aclnnInplaceLeakyRelu", aclnnInplaceLeakyRelu, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = PrintResult(selfAddr, shape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(selfRef);
  aclDestroyScalar(negativeSlope);
  aclrtFree(selfAddr);
  Finalize(deviceId, stream);
  return 0;
}
