"""Defaults of `compare` that the CLI needs at start-up, kept apart so `parsebridge --help` stays fast."""

from __future__ import annotations

#: Streamed chunkings compare runs by default: 1 token per delta, and the multi-token deltas real
#: servers send (speculative decoding, MTP, stream intervals; Dynamo batches 20 tokens).
DEFAULT_COMPARE_CHUNKINGS: tuple[str, ...] = ("token", "token-5", "token-20")
