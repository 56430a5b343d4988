"""The failure policy every parser handed out runs under.

Cross-cutting, not a backend: `guard` turns backend exceptions into typed
errors or the documented fallback and bounds held-back text (`max_held`);
`budget` runs a parser in a stoppable worker process (`timeout=`). Depends
only on `protocol`; the registry in `adapters` wraps parsers with it.
"""

from __future__ import annotations

from .guard import ON_ERROR_CHOICES, GuardedPipeline, GuardedReasoningParser, GuardedToolParser, OnError

__all__ = ["ON_ERROR_CHOICES", "GuardedPipeline", "GuardedReasoningParser", "GuardedToolParser", "OnError"]
