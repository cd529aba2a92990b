"""CANN's aclnnHardswishBackward example, in Python (SPEC.md §4.1).

    python examples/hardswish_backward.py
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
    grad_output_host = np.arange(8, dtype=np.float32).reshape(shape)
    self_host = np.arange(8, dtype=np.float32).reshape(shape)
    out_host = np.zeros(shape, dtype=np.float32)
    grad_output_addr, grad_output = create_acl_tensor(grad_output_host, acl.ACL_FLOAT)
    self_addr, self_tensor = create_acl_tensor(self_host, acl.ACL_FLOAT)
    out_addr, out = create_acl_tensor(out_host, acl.ACL_FLOAT)

    workspace_size, executor, ret = aclnn.aclnnHardswishBackwardGetWorkspaceSize(grad_output, self_tensor, out)
    check(ret, "aclnnHardswishBackwardGetWorkspaceSize")
    workspace_addr = None
    if workspace_size > 0:
        workspace_addr, ret = acl.rt.malloc(workspace_size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "allocate workspace")
    check(aclnn.aclnnHardswishBackward(workspace_addr, workspace_size, executor, stream), "aclnnHardswishBackward")
    check(acl.rt.synchronize_stream(stream), "aclrtSynchronizeStream")

    print_result(copy_to_host(out_addr, out_host))

    acl.destroy_tensor(grad_output)
    acl.destroy_tensor(self_tensor)
    acl.destroy_tensor(out)
    for addr in (grad_output_addr, self_addr, out_addr):
        acl.rt.free(addr)
    if workspace_addr is not None:
        acl.rt.free(workspace_addr)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(device_id)
    acl.finalize()


if __name__ == "__main__":
    main()
