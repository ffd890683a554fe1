"""Benchmark result files in: one module per engine's result format (:mod:`.vllm`,
:mod:`.sglang`, :mod:`.trtllm`, :mod:`.guidellm`, the generic :mod:`.generic_csv`), the run
record and its checks (:mod:`.records`), and :mod:`.dispatch`, which tells the formats apart by
content.
"""
