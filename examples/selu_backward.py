"""CANN's aclnnSeluBackward example, in Python (SPEC.md §4.2).

    python examples/selu_backward.py
"""

import numpy as np
from common import check, copy_to_host, create_acl_tensor, print_result

import aclgen.acl as acl
import aclgen.aclnn as aclnn


def main() -> None:
    device_id = 0
    check(acl.init(), "aclInit")
    check(acl.rt.set_device(device_id), "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    check(ret, "aclrtCreateStream")

    shape = (4, 2)
    grad_output_host = np.ones(shape, dtype=np.float32)
    result_host = np.array([-2, -1, 0, 1, 2, 3, -0.5, 0.5], dtype=np.float32).reshape(shape)
    grad_input_host = np.zeros(shape, dtype=np.float32)
    grad_output_addr, grad_output = create_acl_tensor(grad_output_host, acl.ACL_FLOAT)
    result_addr, result = create_acl_tensor(result_host, acl.ACL_FLOAT)
    grad_input_addr, grad_input = create_acl_tensor(grad_input_host, acl.ACL_FLOAT)

    workspace_size, executor, ret = aclnn.aclnnSeluBackwardGetWorkspaceSize(grad_output, result, grad_input)
    check(ret, "aclnnSeluBackwardGetWorkspaceSize")
    workspace_addr = None
    if workspace_size > 0:
        workspace_addr, ret = acl.rt.malloc(workspace_size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "allocate workspace")
    check(aclnn.aclnnSeluBackward(workspace_addr, workspace_size, executor, stream), "aclnnSeluBackward")
    check(acl.rt.synchronize_stream(stream), "aclrtSynchronizeStream")

    print_result(copy_to_host(grad_input_addr, grad_input_host))

    acl.destroy_tensor(grad_output)
    acl.destroy_tensor(result)
    acl.destroy_tensor(grad_input)
    for addr in (grad_output_addr, result_addr, grad_input_addr):
        acl.rt.free(addr)
    if workspace_addr is not None:
        acl.rt.free(workspace_addr)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(device_id)
    acl.finalize()


if __name__ == "__main__":
    main()
