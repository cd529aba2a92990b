"""aclOpExecutor: one planned operator call, and phase 2 (`aclnnXxx`) that runs it.

An executor is consumed by its run unless made repeatable; a consumed or destroyed executor is
only a state, never freed memory, so misuse is a 161002 and not a crash. It holds references to
every tensor it reads or writes, so their memory (numpy arrays, runtime blocks) outlives queued
work even if the caller frees it early; such a late free is reported when the work runs.
"""

from __future__ import annotations

import functools

from aclgen.runtime import constants as C
from aclgen.runtime import memory
from aclgen.runtime.errors import AclError, fail, kind_of
from aclgen.runtime.stream import EAGER_NUMEL, Stream
from aclgen.runtime.tensor import contiguous_strides

READY, CONSUMED, DESTROYED = 0, 1, 2


class Staging:
    """Outputs computed into the workspace first (they partly overlap an input), then copied.

    `patches`: (argument position, workspace byte offset) of kernel pointers into the
    workspace; `copies`: (workspace offset, output tensor) to copy back after the kernel."""

    __slots__ = ("copies", "patches")

    def __init__(self, patches, copies):
        self.patches, self.copies = patches, copies


class Executor:
    __slots__ = (
        "api",
        "args",
        "blocks",
        "call",
        "numel",
        "repeatable",
        "staging",
        "state",
        "template",
        "templates",
        "tensors",
        "workspace_size",
    )

    def __init__(self, api, workspace_size, call, args, numel, staging, tensors, blocks, template=None, templates=()):
        self.api: str = api
        self.workspace_size: int = workspace_size
        self.call = call  # the kernel's native entry (it splits big calls over the pool); None: empty
        self.args: tuple = args  # (*pointers, meta, begin, end)
        self.numel = numel
        self.staging: Staging | None = staging
        self.tensors = tensors  # keeps every operand's memory alive
        self.blocks = blocks  # runtime blocks the operands live in, checked for early frees
        self.repeatable = False
        self.state = READY
        self.template = template  # the planner's Template, when the plan made one
        self.templates = templates or ((template,) if template is not None else ())  # every kernel's, in order

    @property
    def kernels(self) -> tuple:
        """The kernels the executor runs, in order (none: nothing to compute)."""
        return tuple(t.kernel for t in self.templates)

    def __repr__(self) -> str:
        state = ("ready", "consumed", "destroyed")[self.state]
        return f"aclOpExecutor({self.api}, workspace={self.workspace_size}, {state})"

    def run(self, workspace: int, workspace_block=None) -> None:
        """Compute. Raises AclError (361001) if memory was freed since phase 1, or the workspace's
        runtime block `workspace_block` since the launch (work queued on a stream)."""
        if workspace_block is not None and workspace_block.freed:
            raise AclError(C.ACLNN_ERR_RUNTIME_ERROR,
                           f"{self.api}: workspace 0x{workspace:x} was freed before the call ran")
        for b in self.blocks:
            if b.freed:
                raise AclError(C.ACLNN_ERR_RUNTIME_ERROR,
                               f"{self.api}: operand memory at 0x{b.start:x} was freed before the call ran")
        if self.call is None:
            return
        staging = self.staging
        if staging is None:
            self.call(*self.args)
            return
        args = list(self.args)
        for pos, off in staging.patches:
            args[pos] += workspace + off
        self.call(*args)
        for off, t in staging.copies:
            _copy_back(workspace + off, t)


def _copy_back(src: int, t) -> None:
    """Copy a contiguous staged result at `src` into output tensor `t`'s strided view."""
    npd = C.kernel_of(t.dtype).np_dtype
    staged = memory.raw_view(src, t.view_dims, contiguous_strides(t.view_dims), npd)
    memory.raw_view(t.addr, t.view_dims, t.strides, npd)[...] = staged


def execute(api: str, workspace, workspace_size, executor, stream) -> int:
    """Phase 2 of every operator: check, then run now (stream None) or enqueue on `stream`."""
    if executor is None:
        return fail(C.ACLNN_ERR_PARAM_NULLPTR, f"{api}: executor is nullptr")
    if type(executor) is not Executor:
        return fail(C.ACLNN_ERR_PARAM_INVALID, f"{api}: executor must be an aclOpExecutor, got {kind_of(executor)}")
    if executor.api != api:
        return fail(C.ACLNN_ERR_PARAM_INVALID,
                    f"{api}: executor was made by {executor.api}GetWorkspaceSize, not {api}GetWorkspaceSize")
    if not memory.is_address(workspace_size) or workspace_size < 0:
        return fail(C.ACLNN_ERR_PARAM_INVALID, f"{api}: workspaceSize must be an int >= 0, got {workspace_size!r}")
    need = executor.workspace_size
    if workspace_size > 0 and not workspace:
        return fail(C.ACLNN_ERR_PARAM_NULLPTR, f"{api}: workspace is nullptr but workspaceSize is {workspace_size}")
    if workspace_size < need:
        return fail(C.ACLNN_ERR_PARAM_INVALID,
                    f"{api}: workspaceSize {workspace_size} is smaller than the {need} bytes the executor needs")
    ws_block = None
    if need:
        if not memory.is_address(workspace):
            return fail(C.ACLNN_ERR_PARAM_INVALID, f"{api}: workspace must be a device address, got {workspace!r}")
        ws_block = memory.find(workspace)
        if ws_block is None or workspace + need > ws_block.end:
            return fail(C.ACLNN_ERR_PARAM_INVALID,
                        f"{api}: workspace 0x{workspace:x} does not hold {need} bytes of a runtime allocation")
    if executor.state != READY:
        what = "was destroyed" if executor.state == DESTROYED else "was already run and is not repeatable"
        return fail(C.ACLNN_ERR_PARAM_INVALID, f"{api}: executor {what}")
    if stream is not None and (type(stream) is not Stream or stream.destroyed):
        what = "was destroyed" if type(stream) is Stream else f"must be an aclrtStream, got {kind_of(stream)}"
        return fail(C.ACLNN_ERR_PARAM_INVALID, f"{api}: stream {what}")
    if not executor.repeatable:
        executor.state = CONSUMED
    if stream is None:
        try:
            executor.run(workspace or 0)
        except AclError as e:
            return fail(e.status, e.message)
        return C.ACLNN_SUCCESS
    if executor.numel >= EAGER_NUMEL:
        stream.enqueue(functools.partial(executor.run, workspace or 0, ws_block), eager=True)
    else:
        stream.launch(executor.run, workspace or 0, ws_block)
    return C.ACLNN_SUCCESS


def set_repeatable(executor) -> int:
    if executor is None:
        return fail(C.ACLNN_ERR_PARAM_NULLPTR, "aclSetAclOpExecutorRepeatable: executor is nullptr")
    if type(executor) is not Executor:
        return fail(C.ACLNN_ERR_PARAM_INVALID, f"aclSetAclOpExecutorRepeatable: executor must be an aclOpExecutor, "
                                               f"got {kind_of(executor)}")
    if executor.state != READY:
        what = "was destroyed" if executor.state == DESTROYED else "was already run"
        return fail(C.ACLNN_ERR_PARAM_INVALID, f"aclSetAclOpExecutorRepeatable: executor {what}")
    executor.repeatable = True
    return C.ACLNN_SUCCESS


def destroy(executor) -> int:
    if executor is None:
        return fail(C.ACLNN_ERR_PARAM_NULLPTR, "aclDestroyAclOpExecutor: executor is nullptr")
    if type(executor) is not Executor:
        return fail(C.ACLNN_ERR_PARAM_INVALID, f"aclDestroyAclOpExecutor: executor must be an aclOpExecutor, "
                                               f"got {kind_of(executor)}")
    if executor.state == DESTROYED:
        return fail(C.ACLNN_ERR_PARAM_INVALID, "aclDestroyAclOpExecutor: executor was already destroyed")
    executor.state = DESTROYED
    return C.ACLNN_SUCCESS
