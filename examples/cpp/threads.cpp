// Eight C threads calling aclnn at once, each with its own stream, data and sizes: 200 calls
// each, alternating ThresholdBackward and SoftshrinkBackward, every result compared exactly with
// the formula computed here. Prints the count of wrong results and failed calls; exits 1 if any.
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_softshrink_backward.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "common.h"

namespace {

constexpr int kThreads = 8;
constexpr int kCalls = 200;

std::atomic<int> g_wrong{0};
std::atomic<int> g_failed{0};
std::atomic<int> g_done{0};

#define FAIL_IF(cond, what)                                                                  \
  do {                                                                                       \
    if (cond) {                                                                              \
      LOG_PRINT("thread %d: %s failed: %s\n", id, what, aclGetRecentErrMsg());               \
      g_failed++;                                                                            \
      return;                                                                                \
    }                                                                                        \
  } while (0)

void Worker(int id) {
  // CANN binds a device per thread: each thread that calls the runtime sets it.
  FAIL_IF(aclrtSetDevice(0) != ACL_SUCCESS, "aclrtSetDevice");
  aclrtStream stream = nullptr;
  FAIL_IF(aclrtCreateStream(&stream) != ACL_SUCCESS, "aclrtCreateStream");

  // A size per thread, none a multiple of a vector width, two dims.
  std::vector<int64_t> shape = {3 + id, 97 + 13 * id};
  int64_t n = GetShapeSize(shape);
  std::vector<float> grad(n), self(n), out(n, 0.0f), expect(n);
  for (int64_t i = 0; i < n; i++) {
    grad[i] = static_cast<float>((i * 7 + id) % 23) - 11.0f;
    self[i] = static_cast<float>((i * 5 + 3 * id) % 41) / 4.0f - 5.0f;  // hits 0.5, 1.0 exactly
  }
  void *gradAddr = nullptr, *selfAddr = nullptr, *outAddr = nullptr;
  aclTensor *gradT = nullptr, *selfT = nullptr, *outT = nullptr;
  FAIL_IF(CreateAclTensor(grad, shape, &gradAddr, aclDataType::ACL_FLOAT, &gradT) != 0, "gradOutput");
  FAIL_IF(CreateAclTensor(self, shape, &selfAddr, aclDataType::ACL_FLOAT, &selfT) != 0, "self");
  FAIL_IF(CreateAclTensor(out, shape, &outAddr, aclDataType::ACL_FLOAT, &outT) != 0, "out");

  for (int call = 0; call < kCalls; call++) {
    float param = 0.25f * static_cast<float>((call + id) % 9);  // 0 .. 2, on the data's grid
    aclScalar* scalar = aclCreateScalar(&param, aclDataType::ACL_FLOAT);
    FAIL_IF(scalar == nullptr, "aclCreateScalar");
    bool threshold = (call % 2) == 0;
    for (int64_t i = 0; i < n; i++) {
      if (threshold) {
        expect[i] = self[i] <= param ? 0.0f : grad[i];
      } else {
        expect[i] = std::fabs(self[i]) > param ? grad[i] : 0.0f;
      }
    }
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    int ret = threshold
        ? aclnnThresholdBackwardGetWorkspaceSize(gradT, selfT, scalar, outT, &workspaceSize, &executor)
        : aclnnSoftshrinkBackwardGetWorkspaceSize(gradT, selfT, scalar, outT, &workspaceSize, &executor);
    FAIL_IF(ret != ACL_SUCCESS, "GetWorkspaceSize");
    void* workspace = nullptr;
    if (workspaceSize > 0) {
      FAIL_IF(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS, "workspace");
    }
    ret = threshold ? aclnnThresholdBackward(workspace, workspaceSize, executor, stream)
                    : aclnnSoftshrinkBackward(workspace, workspaceSize, executor, stream);
    FAIL_IF(ret != ACL_SUCCESS, "launch");
    FAIL_IF(aclrtSynchronizeStream(stream) != ACL_SUCCESS, "aclrtSynchronizeStream");
    FAIL_IF(aclrtMemcpy(out.data(), n * sizeof(float), outAddr, n * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST) !=
                ACL_SUCCESS,
            "aclrtMemcpy");
    for (int64_t i = 0; i < n; i++) {
      if (out[i] != expect[i] || std::signbit(out[i]) != std::signbit(expect[i])) {
        if (g_wrong++ < 5) {
          LOG_PRINT("thread %d call %d: out[%ld] = %g, expected %g\n", id, call, static_cast<long>(i), out[i],
                    expect[i]);
        }
      }
    }
    if (workspace != nullptr) {
      aclrtFree(workspace);
    }
    aclDestroyScalar(scalar);
    g_done++;
  }
  aclDestroyTensor(gradT);
  aclDestroyTensor(selfT);
  aclDestroyTensor(outT);
  aclrtFree(gradAddr);
  aclrtFree(selfAddr);
  aclrtFree(outAddr);
  aclrtDestroyStream(stream);
}

}  // namespace

int main() {
  int ret = aclInit(nullptr);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return 1);
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; id++) {
    threads.emplace_back(Worker, id);
  }
  for (auto& t : threads) {
    t.join();
  }
  aclrtResetDevice(0);
  aclFinalize();
  LOG_PRINT("%d threads x %d calls: %d done, %d wrong results, %d failed calls\n", kThreads, kCalls, g_done.load(),
            g_wrong.load(), g_failed.load());
  return (g_wrong == 0 && g_failed == 0 && g_done == kThreads * kCalls) ? 0 : 1;
}
