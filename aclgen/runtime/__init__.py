"""The aclnn runtime: acl objects (memory, tensors, scalars, streams), executors, checks.

Public faces are `aclgen.acl` (pyACL conventions) and `aclgen.aclnn` (the two-phase API);
operator files hold their own check sequences and use `checks` and `planner` from here.
"""
