"""CANN's aclnnSwiGluGrad example, in Python (SPEC.md §4.4).

    python examples/swi_glu_grad.py
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

    y_grad_host = np.arange(-2, 30, dtype=np.float32).reshape(2, 16)
    x_host = np.arange(-2, 62, dtype=np.float32).reshape(2, 32)
    out_host = np.zeros((2, 32), dtype=np.float32)
    dim = -1
    y_grad_addr, y_grad = create_acl_tensor(y_grad_host, acl.ACL_FLOAT)
    x_addr, x = create_acl_tensor(x_host, acl.ACL_FLOAT)
    out_addr, out = create_acl_tensor(out_host, acl.ACL_FLOAT)

    workspace_size, executor, ret = aclnn.aclnnSwiGluGradGetWorkspaceSize(y_grad, x, dim, out)
    check(ret, "aclnnSwiGluGradGetWorkspaceSize")
    workspace_addr = None
    if workspace_size > 0:
        workspace_addr, ret = acl.rt.malloc(workspace_size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "allocate workspace")
    check(aclnn.aclnnSwiGluGrad(workspace_addr, workspace_size, executor, stream), "aclnnSwiGluGrad")
    check(acl.rt.synchronize_stream(stream), "aclrtSynchronizeStream")

    print_result(copy_to_host(out_addr, out_host))

    acl.destroy_tensor(y_grad)
    acl.destroy_tensor(x)
    acl.destroy_tensor(out)
    for addr in (y_grad_addr, x_addr, out_addr):
        acl.rt.free(addr)
    if workspace_addr is not None:
        acl.rt.free(workspace_addr)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(device_id)
    acl.finalize()


if __name__ == "__main__":
    main()
