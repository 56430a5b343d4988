"""`parsebridge.plugins.vllm` as a plugin *file*, for vLLM releases whose ``--tool-parser-plugin`` takes a path.

vLLM 0.11 loads a tool or reasoning parser plugin only from a file path, as
a top-level module named after the file; this file's unique name keeps that
from shadowing anything. Its path: ``python -m parsebridge.plugins vllm``.
Newer releases also take the module name ``parsebridge.plugins.vllm``.
"""

import parsebridge.plugins.vllm  # noqa: F401  (importing registers the parsers)
