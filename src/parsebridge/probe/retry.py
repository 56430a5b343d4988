"""Waiting out a rate limit: a request answered 429 is sent again after the server's Retry-After.

A hosted endpoint limits how fast it is asked; without this every scenario past the limit failed
outright, a fault of the probe's pace and not of the server's parsing. The waits are bounded: at
most `MAX_RETRIES` more attempts, and never past the request's time budget (the deadline for a
whole answer), so a server that asks for an hour is answered at once with its 429.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

#: HTTP's "Too Many Requests".
RATE_LIMITED = 429
#: At most this many attempts after the first.
MAX_RETRIES = 3
#: The wait before attempt N+1 when the server gave no Retry-After (seconds).
BACKOFF = (1.0, 2.0, 4.0)


class Attempt(Protocol):
    """What one attempt gives back: its status and the server's Retry-After header (if any)."""

    status: int
    retry_after: str | None


A = TypeVar("A", bound=Attempt)


@dataclass
class Retries:
    """The waits a request went through (seconds, one per retry), and why it stopped retrying."""

    waits: list[float] = field(default_factory=list)
    #: Why the last 429 was not waited out ("" when it was not the last answer).
    gave_up: str = ""


def retry_after_seconds(header: str | None, now: float | None = None) -> float | None:
    """Retry-After's seconds: a number of seconds, or an HTTP date (RFC 9110); None when absent
    or unreadable. A date in the past is 0."""
    if header is None or not header.strip():
        return None
    text = header.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # (an HTTP date is GMT; a zone-less one is read so too)
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def with_retries(
    attempt: Callable[[], A], budget: float, sleep: Callable[[float], None] = time.sleep
) -> tuple[A, Retries]:
    """`attempt()` until it is not a 429, at most `MAX_RETRIES` more times, waiting what the server
    asks (else `BACKOFF`) while the waits fit in `budget` seconds from now."""
    start = time.monotonic()
    retries = Retries()
    while True:
        answer = attempt()
        if answer.status != RATE_LIMITED:
            return answer, retries
        if len(retries.waits) >= MAX_RETRIES:
            retries.gave_up = f"still rate limited after {MAX_RETRIES} retries"
            return answer, retries
        asked = retry_after_seconds(answer.retry_after)
        wait = BACKOFF[len(retries.waits)] if asked is None else asked
        left = budget - (time.monotonic() - start)
        if wait > left:
            asked_for = "a wait" if asked is None else "Retry-After"
            retries.gave_up = (
                f"{asked_for} of {wait:g} s is more than the {max(left, 0):.0f} s left of the "
                "request's time budget"
            )
            return answer, retries
        sleep(wait)
        retries.waits.append(wait)
