// aclnnGlu, a split operator: self is cut in two halves a | b along `dim` (an int64_t) and
// out = a * sigmoid(b), half of self's size along that dim.
// self [2, 6] = -3, -2.5, ..., 2.5 (float32), dim = -1: out [2, 3].
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_glu.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> selfShape = {2, 6}, outShape = {2, 3};
  std::vector<float> selfHost(12), outHost(6, 0.0f);
  for (int i = 0; i < 12; i++) selfHost[i] = -3.0f + 0.5f * static_cast<float>(i);
  void *selfAddr = nullptr, *outAddr = nullptr;
  aclTensor *self = nullptr, *out = nullptr;
  ret = CreateAclTensor(selfHost, selfShape, &selfAddr, aclDataType::ACL_FLOAT, &self);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(outHost, outShape, &outAddr, aclDataType::ACL_FLOAT, &out);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  int64_t dim = -1;

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnGluGetWorkspaceSize(self, dim, out, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnGluGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg()); return ret);
  ret = RunPhase2("aclnnGlu", aclnnGlu, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = PrintResult(outAddr, outShape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(self);
  aclDestroyTensor(out);
  aclrtFree(selfAddr);
  aclrtFree(outAddr);
  Finalize(deviceId, stream);
  return 0;
}
