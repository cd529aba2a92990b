// Helpers the programs share, in the shape CANN's aclnn calling examples use: CHECK_RET and
// LOG_PRINT, device/stream set-up, and a device tensor made from host data.
#ifndef ACLGEN_EXAMPLES_COMMON_H_
#define ACLGEN_EXAMPLES_COMMON_H_

#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"

#define CHECK_RET(cond, return_expr) \
  do {                               \
    if (!(cond)) {                   \
      return_expr;                   \
    }                                \
  } while (0)

#define LOG_PRINT(...) printf(__VA_ARGS__)

inline int64_t GetShapeSize(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    n *= d;
  }
  return n;
}

// aclInit, device 0, one stream.
inline int Init(int32_t deviceId, aclrtStream* stream) {
  int ret = aclInit(nullptr);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSetDevice(deviceId);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
  ret = aclrtCreateStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);
  return 0;
}

// Device memory holding `hostData` and a contiguous ND tensor of `shape` over it.
template <typename T>
int CreateAclTensor(const std::vector<T>& hostData, const std::vector<int64_t>& shape, void** deviceAddr,
                    aclDataType dataType, aclTensor** tensor) {
  size_t size = static_cast<size_t>(GetShapeSize(shape)) * sizeof(T);
  int ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
  ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
    strides[i] = shape[i + 1] * strides[i + 1];
  }
  *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0, aclFormat::ACL_FORMAT_ND,
                            shape.data(), shape.size(), *deviceAddr);
  CHECK_RET(*tensor != nullptr, LOG_PRINT("aclCreateTensor failed: %s\n", aclGetRecentErrMsg()); return 1);
  return 0;
}

// Copy a float32 device result back and print it as CANN's examples do: `label[i] is: value`.
inline int PrintLabeled(const char* label, void* deviceAddr, const std::vector<int64_t>& shape) {
  int64_t n = GetShapeSize(shape);
  std::vector<float> result(static_cast<size_t>(n), 0);
  int ret = aclrtMemcpy(result.data(), result.size() * sizeof(float), deviceAddr, n * sizeof(float),
                        ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
  for (int64_t i = 0; i < n; i++) {
    LOG_PRINT("%s[%ld] is: %f\n", label, static_cast<long>(i), result[i]);
  }
  return 0;
}

inline int PrintResult(void* deviceAddr, const std::vector<int64_t>& shape) {
  return PrintLabeled("result", deviceAddr, shape);
}

// Phase 2 as CANN's examples write it: device memory for the workspace phase 1 asked for, the
// launch on `stream`, the wait for it. `launch` is the operator's second function.
template <typename Launch>
int RunPhase2(const char* api, Launch launch, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    int ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
  }
  int ret = launch(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("%s failed. ERROR: %d (%s)\n", api, ret, aclGetRecentErrMsg()); return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  return 0;
}

// aclrtDestroyStream, aclrtResetDevice, aclFinalize: the end of every program.
inline void Finalize(int32_t deviceId, aclrtStream stream) {
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
}

#endif  // ACLGEN_EXAMPLES_COMMON_H_
