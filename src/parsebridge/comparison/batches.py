"""What every executor shares: transcripts sent in blocks, results returned as (JSON line, Compact)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from ..conformance.transcripts import Transcript
from .summary import Compact, compact

#: Batches in flight per worker: enough to keep workers busy, few enough to keep memory flat.
INFLIGHT = 4
#: Transcripts per task sent to a worker (amortises inter-process overhead).
BATCH = 16

Done = tuple[str, Compact]


def finish(d: dict[str, Any]) -> Done:
    return json.dumps(d, ensure_ascii=False), compact(d)


def batched(items: Iterable[Transcript], n: int) -> Iterator[list[Transcript]]:
    it = iter(items)
    while batch := list(islice(it, n)):
        yield batch
