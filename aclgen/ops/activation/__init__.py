"""CANN's activation family (hicann/ops-nn `activation/`): one declaration file per CANN folder,
named after it (`hard_swish_grad.py` declares aclnnHardswishBackward).

`OUT_OF_SCOPE` lists the aclnn APIs of the family's doc pages that aclgen does not provide, each
with its reason (the operator reference in docs/ shows them next to the provided ones).
"""

OUT_OF_SCOPE: dict[str, str] = {}
