// An operator declared in Python (examples/cpp/user_ops.py), called from C++ through the header
// `aclgen sdk --ops` wrote for it. gradOutput [2, 4] = 1..8, self [4] broadcast along the rows,
// negativeSlope = 0.1.
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_my_leaky_relu_backward.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> gradShape = {2, 4}, selfShape = {4};
  std::vector<float> gradHost = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> selfHost = {-1.5f, 0.0f, 0.5f, 2.0f};
  std::vector<float> outHost(8, 0);
  void *gradAddr = nullptr, *selfAddr = nullptr, *outAddr = nullptr;
  aclTensor *grad = nullptr, *self = nullptr, *out = nullptr;
  ret = CreateAclTensor(gradHost, gradShape, &gradAddr, aclDataType::ACL_FLOAT, &grad);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(selfHost, selfShape, &selfAddr, aclDataType::ACL_FLOAT, &self);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(outHost, gradShape, &outAddr, aclDataType::ACL_FLOAT, &out);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  float slopeValue = 0.1f;
  aclScalar* slope = aclCreateScalar(&slopeValue, aclDataType::ACL_FLOAT);
  CHECK_RET(slope != nullptr, LOG_PRINT("aclCreateScalar failed: %s\n", aclGetRecentErrMsg()); return 1);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnMyLeakyReluBackwardGetWorkspaceSize(grad, self, slope, out, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnMyLeakyReluBackwardGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg());
            return ret);
  ret = aclnnMyLeakyReluBackward(nullptr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMyLeakyReluBackward failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
  ret = PrintResult(outAddr, gradShape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(grad);
  aclDestroyTensor(self);
  aclDestroyTensor(out);
  aclDestroyScalar(slope);
  aclrtFree(gradAddr);
  aclrtFree(selfAddr);
  aclrtFree(outAddr);
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return 0;
}
