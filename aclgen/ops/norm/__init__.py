"""CANN's norm family (hicann/ops-nn `norm/`): one declaration file per CANN folder, named after
it (`rms_norm.py` declares aclnnRmsNorm)."""
