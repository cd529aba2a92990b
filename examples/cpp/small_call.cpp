// The cost of a small call from C: aclnnHardswishBackwardGetWorkspaceSize + aclnnHardswishBackward
// on a stream + aclrtSynchronizeStream, 1024 float32 elements. Prints the median and minimum over
// timed rounds after a warm-up; the numbers are reported, not judged (exit 0 unless a call fails).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "common.h"

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (rounds < 1) {
    rounds = 1;
  }
  aclrtStream stream = nullptr;
  int ret = Init(0, &stream);
  CHECK_RET(ret == 0, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return 1);
  std::vector<int64_t> shape = {1024};
  std::vector<float> grad(1024), self(1024), out(1024, 0.0f);
  for (int i = 0; i < 1024; i++) {
    grad[i] = 1.0f + static_cast<float>(i % 7);
    self[i] = static_cast<float>(i % 97) / 8.0f - 6.0f;
  }
  void *gradAddr = nullptr, *selfAddr = nullptr, *outAddr = nullptr;
  aclTensor *gradT = nullptr, *selfT = nullptr, *outT = nullptr;
  CHECK_RET(CreateAclTensor(grad, shape, &gradAddr, aclDataType::ACL_FLOAT, &gradT) == 0, return 1);
  CHECK_RET(CreateAclTensor(self, shape, &selfAddr, aclDataType::ACL_FLOAT, &selfT) == 0, return 1);
  CHECK_RET(CreateAclTensor(out, shape, &outAddr, aclDataType::ACL_FLOAT, &outT) == 0, return 1);

  auto call = [&]() -> int {
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    int r = aclnnHardswishBackwardGetWorkspaceSize(gradT, selfT, outT, &workspaceSize, &executor);
    if (r != ACL_SUCCESS) {
      return r;
    }
    r = aclnnHardswishBackward(nullptr, workspaceSize, executor, stream);
    if (r != ACL_SUCCESS) {
      return r;
    }
    return aclrtSynchronizeStream(stream);
  };
  // Warm-up: the first call compiles (or loads from the cache) the kernel; then ~30 ms of calls.
  ret = call();
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("first call failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg()); return 1);
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(30)) {
    CHECK_RET(call() == ACL_SUCCESS, LOG_PRINT("warm-up failed: %s\n", aclGetRecentErrMsg()); return 1);
  }
  std::vector<double> us(static_cast<size_t>(rounds));
  for (int i = 0; i < rounds; i++) {
    auto t0 = std::chrono::steady_clock::now();
    ret = call();
    auto t1 = std::chrono::steady_clock::now();
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("call %d failed. ERROR: %d (%s)\n", i, ret, aclGetRecentErrMsg()); return 1);
    us[i] = std::chrono::duration<double, std::micro>(t1 - t0).count();
  }
  std::sort(us.begin(), us.end());
  LOG_PRINT("small call (GetWorkspaceSize + launch on a stream + synchronize, 1024 float32): "
            "median %.2f us, min %.2f us over %d calls\n",
            us[us.size() / 2], us[0], rounds);

  aclDestroyTensor(gradT);
  aclDestroyTensor(selfT);
  aclDestroyTensor(outT);
  aclrtFree(gradAddr);
  aclrtFree(selfAddr);
  aclrtFree(outAddr);
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}
