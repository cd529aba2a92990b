// aclnnSwish, a forward operator with an optional scalar: out = self * sigmoid(beta * self).
// self [2, 4] = -2, -1.5, ..., 1.5 (float32). The first call passes betaOptional = nullptr, which
// CANN's page says means beta = 1 (SiLU); the second passes an aclScalar beta = 2.
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_swish.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> shape = {2, 4};
  std::vector<float> selfHost = {-2.0f, -1.5f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
  std::vector<float> zeros(8, 0.0f);
  void *selfAddr = nullptr, *out1Addr = nullptr, *out2Addr = nullptr;
  aclTensor *self = nullptr, *out1 = nullptr, *out2 = nullptr;
  ret = CreateAclTensor(selfHost, shape, &selfAddr, aclDataType::ACL_FLOAT, &self);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(zeros, shape, &out1Addr, aclDataType::ACL_FLOAT, &out1);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(zeros, shape, &out2Addr, aclDataType::ACL_FLOAT, &out2);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  float betaValue = 2.0f;
  aclScalar* beta = aclCreateScalar(&betaValue, aclDataType::ACL_FLOAT);
  CHECK_RET(beta != nullptr, LOG_PRINT("aclCreateScalar failed: %s\n", aclGetRecentErrMsg()); return 1);

  // Phase 1 twice: without beta (NULL), then with it.
  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnSwishGetWorkspaceSize(self, nullptr, out1, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnSwishGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg()); return ret);
  ret = RunPhase2("aclnnSwish", aclnnSwish, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = aclnnSwishGetWorkspaceSize(self, beta, out2, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnSwishGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg()); return ret);
  ret = RunPhase2("aclnnSwish", aclnnSwish, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  ret = PrintLabeled("beta1", out1Addr, shape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = PrintLabeled("beta2", out2Addr, shape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(self);
  aclDestroyTensor(out1);
  aclDestroyTensor(out2);
  aclDestroyScalar(beta);
  aclrtFree(selfAddr);
  aclrtFree(out1Addr);
  aclrtFree(out2Addr);
  Finalize(deviceId, stream);
  return 0;
}
