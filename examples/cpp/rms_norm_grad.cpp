// aclnnRmsNormGrad, the gradients of RmsNorm, at a size where phase 1 asks for a workspace:
//   dx = (dy * gamma - rstd * x * mean(dy * gamma * x * rstd over gamma's dims)) * rstd,
//   dgamma = the sum over the rows of rstd * x * dy.
// x, dy [1024, 256] float32, rstd [1024, 1], gamma [256]. dgamma is added up in dx's pass over
// x and dy, a float32 row per 64 rows in the workspace (16 KiB here), so workspaceSize is not 0:
// the program allocates it as CANN's examples do and prints it, dgamma and dx's first two rows.
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_rms_norm_grad.h"
#include "common.h"

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  int ret = Init(deviceId, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  const int64_t rows = 1024, cols = 256;
  std::vector<int64_t> xShape = {rows, cols}, rstdShape = {rows, 1}, gammaShape = {cols};
  std::vector<float> dyHost(rows * cols), xHost(rows * cols), rstdHost(rows), gammaHost(cols);
  for (int64_t i = 0; i < rows; i++) {
    for (int64_t j = 0; j < cols; j++) {
      xHost[i * cols + j] = static_cast<float>((i * 7 + j * 3) % 17 - 8) / 8.0f;
      dyHost[i * cols + j] = static_cast<float>((i * 5 + j) % 13 - 6) / 4.0f;
    }
    rstdHost[i] = 0.5f + static_cast<float>(i % 5) / 8.0f;
  }
  for (int64_t j = 0; j < cols; j++) {
    gammaHost[j] = 1.0f + static_cast<float>(j % 4) / 4.0f;
  }
  std::vector<float> dxHost(rows * cols, 0.0f), dgammaHost(cols, 0.0f);
  void *dyAddr = nullptr, *xAddr = nullptr, *rstdAddr = nullptr, *gammaAddr = nullptr;
  void *dxAddr = nullptr, *dgammaAddr = nullptr;
  aclTensor *dy = nullptr, *x = nullptr, *rstd = nullptr, *gamma = nullptr, *dx = nullptr, *dgamma = nullptr;
  ret = CreateAclTensor(dyHost, xShape, &dyAddr, aclDataType::ACL_FLOAT, &dy);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(xHost, xShape, &xAddr, aclDataType::ACL_FLOAT, &x);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(rstdHost, rstdShape, &rstdAddr, aclDataType::ACL_FLOAT, &rstd);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(gammaHost, gammaShape, &gammaAddr, aclDataType::ACL_FLOAT, &gamma);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(dxHost, xShape, &dxAddr, aclDataType::ACL_FLOAT, &dx);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(dgammaHost, gammaShape, &dgammaAddr, aclDataType::ACL_FLOAT, &dgamma);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnRmsNormGradGetWorkspaceSize(dy, x, rstd, gamma, dx, dgamma, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnRmsNormGradGetWorkspaceSize failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg());
            return ret);
  LOG_PRINT("workspaceSize is: %lu\n", static_cast<unsigned long>(workspaceSize));
  ret = RunPhase2("aclnnRmsNormGrad", aclnnRmsNormGrad, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = PrintLabeled("dgamma", dgammaAddr, gammaShape);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = PrintLabeled("dx", dxAddr, {2, cols});
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  aclDestroyTensor(dy);
  aclDestroyTensor(x);
  aclDestroyTensor(rstd);
  aclDestroyTensor(gamma);
  aclDestroyTensor(dx);
  aclDestroyTensor(dgamma);
  aclrtFree(dyAddr);
  aclrtFree(xAddr);
  aclrtFree(rstdAddr);
  aclrtFree(gammaAddr);
  aclrtFree(dxAddr);
  aclrtFree(dgammaAddr);
  Finalize(deviceId, stream);
  return 0;
}
