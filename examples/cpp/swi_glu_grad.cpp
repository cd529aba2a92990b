// aclnnSwiGluGrad through aclgen's SDK. Its worked example: yGrad [2, 16] = -2..29,
// x [2, 32] = -2..61, dim = -1 (an int64_t), float32; out [2, 32].
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_swi_glu_grad.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> yGradShape = {2, 16}, xShape = {2, 32}, outShape = {2, 32};
  std::vector<float> yGradHost(32), xHost(64), outHost(64, 0);
  for (int i = 0; i < 32; i++) yGradHost[i] = static_cast<float>(i - 2);
  for (int i = 0; i < 64; i++) xHost[i] = static_cast<float>(i - 2);
  void *yGradAddr = nullptr, *xAddr = nullptr, *outAddr = nullptr;
  aclTensor *yGrad = nullptr, *x = nullptr, *out = nullptr;
  ret = CreateAclTensor(yGradHost, yGradShape, &yGradAddr, aclDataType::ACL_FLOAT, &yGrad);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(xHost, xShape, &xAddr, aclDataType::ACL_FLOAT, &x);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(outHost, outShape, &outAddr, aclDataType::ACL_FLOAT, &out);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  int64_t dim = -1;

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnSwiGluGradGetWorkspaceSize(yGrad, x, dim, out, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnSwiGluGradGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg());
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
  }
  ret = aclnnSwiGluGrad(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnSwiGluGrad failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
  ret = PrintResult(outAddr, outShape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(yGrad);
  aclDestroyTensor(x);
  aclDestroyTensor(out);
  aclrtFree(yGradAddr);
  aclrtFree(xAddr);
  aclrtFree(outAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return 0;
}
