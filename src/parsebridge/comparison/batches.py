"""What every executor shares: transcripts sent in blocks, comparisons sent back as JSON lines.

A comparison is a `TranscriptComparison` everywhere in a process; it is written as JSON only
where it crosses into another (a worker process, a Ray actor) and read back on arrival.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice

from ..conformance.transcripts import Transcript
from .models import TranscriptComparison, dump_line

#: Batches in flight per worker: enough to keep workers busy, few enough to keep memory flat.
INFLIGHT = 4
#: Transcripts per task sent to a worker (amortises inter-process overhead).
BATCH = 16


def sent(records: Iterable[TranscriptComparison]) -> list[str]:
    """A worker's comparisons as they cross back to the driver."""
    return [dump_line(r) for r in records]


def received(lines: Iterable[str]) -> Iterator[TranscriptComparison]:
    """The comparisons a worker sent."""
    for line in lines:
        yield TranscriptComparison.model_validate_json(line)


def batched(items: Iterable[Transcript], n: int) -> Iterator[list[Transcript]]:
    it = iter(items)
    while batch := list(islice(it, n)):
        yield batch
