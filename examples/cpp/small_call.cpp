// The cost of a small call from C, as CANN programs make it: aclnnHardswishBackwardGetWorkspaceSize
// + aclnnHardswishBackward on a stream + aclrtSynchronizeStream, 1024 float32 elements, against the
// same two phases synchronously (stream nullptr). Prints medians and minima over interleaved rounds
// after a warm-up; the numbers are reported, not judged (exit 0 unless a call fails).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "common.h"

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
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

  // One call as CANN programs make it: phase 1, phase 2 on `on` (nullptr: synchronously), and
  // for a stream, aclrtSynchronizeStream. A fresh executor every time.
  auto call = [&](aclrtStream on) -> int {
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    int r = aclnnHardswishBackwardGetWorkspaceSize(gradT, selfT, outT, &workspaceSize, &executor);
    if (r != ACL_SUCCESS) {
      return r;
    }
    r = aclnnHardswishBackward(nullptr, workspaceSize, executor, on);
    if (r != ACL_SUCCESS || on == nullptr) {
      return r;
    }
    return aclrtSynchronizeStream(on);
  };
  // Warm-up: the first call compiles (or loads from the cache) the kernel; then ~30 ms of calls.
  ret = call(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("first call failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg()); return 1);
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(30)) {
    CHECK_RET(call(stream) == ACL_SUCCESS && call(nullptr) == ACL_SUCCESS,
              LOG_PRINT("warm-up failed: %s\n", aclGetRecentErrMsg()); return 1);
  }
  // Interleaved: each round times a batch of stream calls, then a batch of synchronous ones, so
  // both patterns see the same machine; per round the ratio, then the median of each.
  const int batch = 20;
  std::vector<double> onStream, sync, ratio;
  for (int i = 0; i < rounds; i++) {
    double us[2];
    for (int pattern = 0; pattern < 2; pattern++) {
      aclrtStream on = pattern == 0 ? stream : nullptr;
      auto t0 = std::chrono::steady_clock::now();
      for (int k = 0; k < batch; k++) {
        ret = call(on);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("call failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg()); return 1);
      }
      auto t1 = std::chrono::steady_clock::now();
      us[pattern] = std::chrono::duration<double, std::micro>(t1 - t0).count() / batch;
    }
    onStream.push_back(us[0]);
    sync.push_back(us[1]);
    ratio.push_back(us[0] / us[1]);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  LOG_PRINT("small call (GetWorkspaceSize + launch on a stream + synchronize, 1024 float32): "
            "median %.2f us, min %.2f us over %d rounds of %d calls\n",
            median(onStream), *std::min_element(onStream.begin(), onStream.end()), rounds, batch);
  LOG_PRINT("the same synchronously (stream nullptr): median %.2f us, min %.2f us; "
            "stream / synchronous: median %.2fx\n",
            median(sync), *std::min_element(sync.begin(), sync.end()), median(ratio));

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
