// aclnnRmsNorm, a normalization with two outputs and a double attribute:
//   rstd = 1 / sqrt(mean(x^2 over gamma's dims) + epsilon),  y = x * rstd * gamma.
// x [2, 4] = -2, -1.5, ..., 1.5, gamma [4] = 1, 0.5, 2, -1, epsilon = 1e-6 (float32):
// yOut [2, 4], rstdOut [2, 1] (float32).
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_rms_norm.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> xShape = {2, 4}, gammaShape = {4}, rstdShape = {2, 1};
  std::vector<float> xHost = {-2.0f, -1.5f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
  std::vector<float> gammaHost = {1.0f, 0.5f, 2.0f, -1.0f};
  std::vector<float> yHost(8, 0.0f), rstdHost(2, 0.0f);
  void *xAddr = nullptr, *gammaAddr = nullptr, *yAddr = nullptr, *rstdAddr = nullptr;
  aclTensor *x = nullptr, *gamma = nullptr, *y = nullptr, *rstd = nullptr;
  ret = CreateAclTensor(xHost, xShape, &xAddr, aclDataType::ACL_FLOAT, &x);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(gammaHost, gammaShape, &gammaAddr, aclDataType::ACL_FLOAT, &gamma);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(yHost, xShape, &yAddr, aclDataType::ACL_FLOAT, &y);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(rstdHost, rstdShape, &rstdAddr, aclDataType::ACL_FLOAT, &rstd);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  double epsilon = 1e-6;

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnRmsNormGetWorkspaceSize(x, gamma, epsilon, y, rstd, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnRmsNormGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg()); return ret);
  ret = RunPhase2("aclnnRmsNorm", aclnnRmsNorm, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = PrintLabeled("y", yAddr, xShape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = PrintLabeled("rstd", rstdAddr, rstdShape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(x);
  aclDestroyTensor(gamma);
  aclDestroyTensor(y);
  aclDestroyTensor(rstd);
  aclrtFree(xAddr);
  aclrtFree(gammaAddr);
  aclrtFree(yAddr);
  aclrtFree(rstdAddr);
  Finalize(deviceId, stream);
  return 0;
}
