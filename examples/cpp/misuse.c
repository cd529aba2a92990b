/* Every misuse of the C ABI the runtime checks, in C (the headers are C11 too): each call must
 * return its status code and never crash. Prints one line per check; exits 1 if any check fails. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "aclnnop/aclnn_threshold_backward.h"

static int failures = 0;

static void expect(const char* what, long got, long want) {
  const char* msg = got ? aclGetRecentErrMsg() : NULL;
  if (got == want) {
    printf("ok   %-46s %ld%s%s\n", what, got, msg ? "  " : "", msg ? msg : "");
  } else {
    printf("FAIL %-46s got %ld, expected %ld%s%s\n", what, got, want, msg ? "  " : "", msg ? msg : "");
    failures++;
  }
}

static aclTensor* tensor(void* data, int64_t n) {
  int64_t dims[1] = {n};
  return aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, data);
}

int main(void) {
  expect("aclInit", aclInit(NULL), ACL_SUCCESS);
  expect("aclInit again (harmless)", aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
  expect("aclrtSetDevice(0)", aclrtSetDevice(0), ACL_SUCCESS);
  expect("aclrtSetDevice(7)", aclrtSetDevice(7), ACL_ERROR_INVALID_PARAM);

  /* memory */
  void* dev = NULL;
  expect("aclrtMalloc(devPtr NULL)", aclrtMalloc(NULL, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  expect("aclrtMalloc(size 0)", aclrtMalloc(&dev, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  expect("aclrtMalloc(64)", aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  expect("aclrtMalloc aligned to 64 bytes", (long)((uintptr_t)dev % 64), 0);
  float host[16] = {0};
  expect("aclrtMemcpy(count 0)", aclrtMemcpy(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  expect("aclrtMemcpy(dst NULL)", aclrtMemcpy(NULL, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  expect("aclrtMemcpy(src NULL)", aclrtMemcpy(dev, 64, NULL, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  expect("aclrtMemcpy(count > destMax)", aclrtMemcpy(dev, 32, host, 64, ACL_MEMCPY_HOST_TO_DEVICE),
         ACL_ERROR_INVALID_PARAM);
  expect("aclrtMemcpy(past the allocation)", aclrtMemcpy((char*)dev + 32, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE),
         ACL_ERROR_INVALID_PARAM);
  expect("aclrtMemcpy(device side not runtime memory)", aclrtMemcpy(host, 64, host, 64, ACL_MEMCPY_DEVICE_TO_HOST),
         ACL_ERROR_INVALID_PARAM);
  expect("aclrtMemcpy(bad kind)", aclrtMemcpy(dev, 64, host, 64, (aclrtMemcpyKind)42), ACL_ERROR_INVALID_PARAM);
  expect("aclrtMemcpy(host to device)", aclrtMemcpy(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  expect("aclrtMemset(devPtr NULL)", aclrtMemset(NULL, 64, 0, 64), ACL_ERROR_INVALID_PARAM);
  expect("aclrtMemset(past the allocation)", aclrtMemset(dev, 128, 0, 128), ACL_ERROR_INVALID_PARAM);
  expect("aclrtFree(NULL)", aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
  expect("aclrtFree(not runtime memory)", aclrtFree(host), ACL_ERROR_INVALID_PARAM);

  /* streams */
  aclrtStream stream = NULL;
  expect("aclrtCreateStream(NULL)", aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
  expect("aclrtSynchronizeStream(NULL: default)", aclrtSynchronizeStream(NULL), ACL_SUCCESS);
  expect("aclrtSynchronizeStream(never returned)", aclrtSynchronizeStream((aclrtStream)host), ACL_ERROR_INVALID_PARAM);
  expect("aclrtDestroyStream(NULL)", aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
  expect("aclrtCreateStream", aclrtCreateStream(&stream), ACL_SUCCESS);

  /* tensors and scalars */
  int64_t dims[1] = {16};
  expect("aclCreateTensor(viewDims NULL, n 1) -> NULL",
         aclCreateTensor(NULL, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, dev) == NULL, 1);
  expect("aclCreateTensor(storageDims NULL, n 1) -> NULL",
         aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 1, dev) == NULL, 1);
  expect("aclCreateScalar(NULL) -> NULL", aclCreateScalar(NULL, ACL_FLOAT) == NULL, 1);
  float one = 1.0f;
  expect("aclCreateScalar(ACL_STRING) -> NULL", aclCreateScalar(&one, ACL_STRING) == NULL, 1);
  expect("aclDestroyTensor(NULL)", aclDestroyTensor(NULL), 0);
  expect("aclDestroyScalar(NULL)", aclDestroyScalar(NULL), 0);

  aclTensor* x = tensor(dev, 16);
  aclTensor* out = tensor(dev, 16);
  aclTensor* dead = tensor(dev, 16);
  aclScalar* t = aclCreateScalar(&one, ACL_FLOAT);
  expect("aclDestroyTensor", aclDestroyTensor(dead), 0);
  expect("aclDestroyTensor again", aclDestroyTensor(dead), ACLNN_ERR_PARAM_INVALID);
  expect("aclDestroyScalar(a tensor)", aclDestroyScalar((aclScalar*)x), ACLNN_ERR_PARAM_INVALID);

  /* phase 1: NULL, destroyed, wrong kind, never returned */
  uint64_t ws = 0;
  aclOpExecutor* ex = NULL;
  expect("GetWorkspaceSize(gradOutput NULL)", aclnnHardswishBackwardGetWorkspaceSize(NULL, x, out, &ws, &ex),
         ACLNN_ERR_PARAM_NULLPTR);
  expect("GetWorkspaceSize(destroyed tensor)", aclnnHardswishBackwardGetWorkspaceSize(dead, x, out, &ws, &ex),
         ACLNN_ERR_PARAM_INVALID);
  expect("GetWorkspaceSize(a scalar as tensor)",
         aclnnHardswishBackwardGetWorkspaceSize((aclTensor*)t, x, out, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  expect("GetWorkspaceSize(pointer never returned)",
         aclnnHardswishBackwardGetWorkspaceSize((aclTensor*)host, x, out, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  expect("GetWorkspaceSize(a tensor as scalar)",
         aclnnThresholdBackwardGetWorkspaceSize(x, x, (aclScalar*)x, out, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  expect("GetWorkspaceSize(threshold NULL)", aclnnThresholdBackwardGetWorkspaceSize(x, x, NULL, out, &ws, &ex),
         ACLNN_ERR_PARAM_NULLPTR);
  expect("GetWorkspaceSize(workspaceSize NULL)", aclnnHardswishBackwardGetWorkspaceSize(x, x, out, NULL, &ex),
         ACLNN_ERR_PARAM_NULLPTR);
  expect("GetWorkspaceSize(executor NULL)", aclnnHardswishBackwardGetWorkspaceSize(x, x, out, &ws, NULL),
         ACLNN_ERR_PARAM_NULLPTR);

  /* phase 2: NULL, never returned, consumed, other operator, bad stream */
  expect("aclnnHardswishBackward(executor NULL)", aclnnHardswishBackward(NULL, 0, NULL, stream),
         ACLNN_ERR_PARAM_NULLPTR);
  expect("aclnnHardswishBackward(executor never returned)",
         aclnnHardswishBackward(NULL, 0, (aclOpExecutor*)host, stream), ACLNN_ERR_PARAM_INVALID);
  expect("GetWorkspaceSize", aclnnHardswishBackwardGetWorkspaceSize(x, x, out, &ws, &ex), ACLNN_SUCCESS);
  expect("aclnnThresholdBackward(a hardswish executor)", aclnnThresholdBackward(NULL, 0, ex, stream),
         ACLNN_ERR_PARAM_INVALID);
  expect("aclnnHardswishBackward(a scalar as stream)", aclnnHardswishBackward(NULL, 0, ex, (aclrtStream)t),
         ACLNN_ERR_PARAM_INVALID);
  expect("aclnnHardswishBackward", aclnnHardswishBackward(NULL, ws, ex, stream), ACLNN_SUCCESS);
  expect("aclnnHardswishBackward(consumed executor)", aclnnHardswishBackward(NULL, ws, ex, stream),
         ACLNN_ERR_PARAM_INVALID);
  expect("aclSetAclOpExecutorRepeatable(NULL)", aclSetAclOpExecutorRepeatable(NULL), ACLNN_ERR_INNER_NULLPTR);
  expect("aclDestroyAclOpExecutor(NULL)", aclDestroyAclOpExecutor(NULL), ACLNN_ERR_INNER_NULLPTR);
  expect("aclDestroyAclOpExecutor(never returned)", aclDestroyAclOpExecutor((aclOpExecutor*)host),
         ACLNN_ERR_PARAM_INVALID);
  expect("aclrtSynchronizeStream", aclrtSynchronizeStream(stream), ACL_SUCCESS);

  /* a repeatable executor, then destroyed */
  expect("GetWorkspaceSize", aclnnHardswishBackwardGetWorkspaceSize(x, x, out, &ws, &ex), ACLNN_SUCCESS);
  expect("aclSetAclOpExecutorRepeatable", aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
  expect("aclnnHardswishBackward (1)", aclnnHardswishBackward(NULL, ws, ex, NULL), ACLNN_SUCCESS);
  expect("aclnnHardswishBackward (2)", aclnnHardswishBackward(NULL, ws, ex, NULL), ACLNN_SUCCESS);
  expect("aclDestroyAclOpExecutor", aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  expect("aclnnHardswishBackward(destroyed executor)", aclnnHardswishBackward(NULL, ws, ex, NULL),
         ACLNN_ERR_PARAM_INVALID);

  /* freed memory between the phases: reported, not a crash */
  void* dev2 = NULL;
  expect("aclrtMalloc", aclrtMalloc(&dev2, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  aclTensor* y = tensor(dev2, 16);
  expect("GetWorkspaceSize", aclnnHardswishBackwardGetWorkspaceSize(y, y, y, &ws, &ex), ACLNN_SUCCESS);
  expect("aclrtFree", aclrtFree(dev2), ACL_SUCCESS);
  expect("aclrtFree again", aclrtFree(dev2), ACL_ERROR_INVALID_PARAM);
  expect("aclnnHardswishBackward(memory freed since phase 1)", aclnnHardswishBackward(NULL, ws, ex, NULL),
         ACLNN_ERR_RUNTIME_ERROR);

  /* queries */
  int64_t* shape = NULL;
  uint64_t n = 0;
  expect("aclGetViewShape(tensor NULL)", aclGetViewShape(NULL, &shape, &n), ACLNN_ERR_PARAM_NULLPTR);
  expect("aclGetViewShape(out NULL)", aclGetViewShape(x, NULL, &n), ACLNN_ERR_PARAM_NULLPTR);
  expect("aclGetViewShape(destroyed)", aclGetViewShape(dead, &shape, &n), ACLNN_ERR_PARAM_INVALID);
  expect("aclDataTypeSize(ACL_BF16)", (long)aclDataTypeSize(ACL_BF16), 2);

  /* messages: the latest failure's, once */
  aclrtFree(NULL);
  const char* msg = aclGetRecentErrMsg();
  expect("aclGetRecentErrMsg names the failure", msg != NULL && strstr(msg, "aclrtFree") != NULL, 1);
  expect("aclGetRecentErrMsg cleared", aclGetRecentErrMsg() == NULL, 1);

  /* a destroyed stream */
  expect("aclrtDestroyStream", aclrtDestroyStream(stream), ACL_SUCCESS);
  expect("aclrtDestroyStream again", aclrtDestroyStream(stream), ACL_ERROR_INVALID_PARAM);
  expect("aclrtSynchronizeStream(destroyed)", aclrtSynchronizeStream(stream), ACL_ERROR_INVALID_PARAM);

  aclDestroyTensor(x);
  aclDestroyTensor(out);
  aclDestroyTensor(y);
  aclDestroyScalar(t);
  aclrtFree(dev);
  aclrtResetDevice(0);
  aclFinalize();
  printf("%d failed\n", failures);
  return failures ? 1 : 0;
}
