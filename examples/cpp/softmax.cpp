// aclnnSoftmax, a reduction: out = exp(self) / sum(exp(self)) along `dim` (an int64_t).
// self [2, 4] = -2, -1.5, ..., 1.5 (float32), once along dim = -1 (each row sums to 1) and once
// along dim = 0 (each column does).
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> shape = {2, 4};
  std::vector<float> selfHost = {-2.0f, -1.5f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
  std::vector<float> zeros(8, 0.0f);
  void *selfAddr = nullptr, *rowsAddr = nullptr, *colsAddr = nullptr;
  aclTensor *self = nullptr, *rows = nullptr, *cols = nullptr;
  ret = CreateAclTensor(selfHost, shape, &selfAddr, aclDataType::ACL_FLOAT, &self);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(zeros, shape, &rowsAddr, aclDataType::ACL_FLOAT, &rows);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(zeros, shape, &colsAddr, aclDataType::ACL_FLOAT, &cols);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnSoftmaxGetWorkspaceSize(self, -1, rows, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnSoftmaxGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg()); return ret);
  ret = RunPhase2("aclnnSoftmax", aclnnSoftmax, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = aclnnSoftmaxGetWorkspaceSize(self, 0, cols, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnSoftmaxGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg()); return ret);
  ret = RunPhase2("aclnnSoftmax", aclnnSoftmax, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  ret = PrintLabeled("dim-1", rowsAddr, shape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = PrintLabeled("dim0", colsAddr, shape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(self);
  aclDestroyTensor(rows);
  aclDestroyTensor(cols);
  aclrtFree(selfAddr);
  aclrtFree(rowsAddr);
  aclrtFree(colsAddr);
  Finalize(deviceId, stream);
  return 0;
}
