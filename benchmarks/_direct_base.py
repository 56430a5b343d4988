"""What the direct baselines (`_direct_vllm`, `_direct_sglang`) and the bridge's drivers share."""

from __future__ import annotations

#: One streamed piece: its text and, when the corpus has them, its token ids.
Chunk = tuple[str, tuple[int, ...] | None]


class DirectUnavailable(Exception):
    """No direct baseline for this backend / API shape; the message says why."""
