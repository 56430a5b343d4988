"""Translation helpers shared by the framework adapters (vLLM, SGLang).

Frameworks hand back plain strings; these turn them into parsebridge models
with the same conventions for every backend, so results from different
frameworks compare: content ``""`` and ``None`` both read as None, and a
reasoning string is located in the parsed text (with its markers) to give a
`ReasoningBlock` whose indices point into that text.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import re
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..protocol import ReasoningBlock
from ..protocol.models import make_block

#: Attribute names under which framework reasoning parsers keep their markers
#: (vLLM: start_token/end_token…; SGLang detectors: think_start_token/think_end_token).
START_MARKER_ATTRS = (
    "start_token",
    "think_start_token",
    "start_think_token",
    "reasoning_start_str",
    "think_start",
)
END_MARKER_ATTRS = ("end_token", "think_end_token", "end_think_token", "reasoning_end_str", "think_end")

T = TypeVar("T")


def process_wide(build: Callable[[], T]) -> Callable[[], T]:
    """`build()` made on the first call and kept for the process (under a lock: threads share one).

    A `build` that raises keeps nothing: the next call tries again.
    """
    lock = threading.Lock()
    made: list[T] = []

    @functools.wraps(build)
    def get() -> T:
        with lock:
            if not made:
                made.append(build())
            return made[0]

    return get


def none_if_empty(text: str | None) -> str | None:
    """``""`` → None: frameworks disagree on which of the two means "no content"."""
    return text if text else None


def locate_reasoning(
    text: str, reasoning: str | None, start_marker: str | None, end_marker: str | None
) -> ReasoningBlock | None:
    """Where a framework's reasoning string sits in `text`, with the markers around it when present.

    Frameworks return only strings; the block is found by searching for the
    reasoning text after the start marker. When it cannot be found verbatim
    (a parser that strips or rewrites it) the block says ``located=False``.
    """
    if reasoning is None:
        return None
    # Where reasoning nearly always sits, confirmed by one comparison (what `_locate_searching`
    # finds there too, which tests check): right after a start marker that opens the text, or
    # at the start of a text without the marker. A block per parse is paid once per request.
    if start_marker and text.startswith(start_marker):
        idx = len(start_marker)
        if not text.startswith(reasoning, idx):
            return _locate_searching(text, reasoning, start_marker, end_marker)
        use_start: str | None = start_marker
        begin = 0
    elif text.startswith(reasoning) and not (start_marker and start_marker in text):
        idx = begin = 0
        use_start = None
    else:
        return _locate_searching(text, reasoning, start_marker, end_marker)
    return _found_block(text, reasoning, idx, use_start, begin, end_marker)


def _locate_searching(
    text: str, reasoning: str, start_marker: str | None, end_marker: str | None
) -> ReasoningBlock:
    """`locate_reasoning` by search: the first start marker, then the reasoning after it."""
    search_from = 0
    start = None
    if start_marker:
        pos = text.find(start_marker)
        if pos != -1:
            start = pos
            search_from = pos + len(start_marker)
    idx = _find_after(text, reasoning, search_from)
    if idx == -1 and search_from:
        idx = text.find(reasoning)
        start = None
    if idx == -1:
        return make_block(reasoning, None, None, 0, len(text), False)
    use_start = start_marker if start is not None and start + len(start_marker or "") == idx else None
    begin = idx - len(use_start) if use_start else idx
    return _found_block(text, reasoning, idx, use_start, begin, end_marker)


def _found_block(
    text: str, reasoning: str, idx: int, use_start: str | None, begin: int, end_marker: str | None
) -> ReasoningBlock:
    """The block of `reasoning` found at `idx` (its start marker, if any, from `begin`).

    Whitespace between reasoning and the end marker belongs to neither side
    in some parsers; the end marker must follow directly to be claimed.
    """
    stop = idx + len(reasoning)
    use_end = None
    if end_marker and text.startswith(end_marker, stop):
        use_end = end_marker
        stop += len(end_marker)
    return make_block(reasoning, use_start, use_end, begin, stop, True)


def _find_after(text: str, needle: str, start: int) -> int:
    """`text.find(needle, start)`, first trying where reasoning nearly always sits.

    A search for a long needle costs microseconds per parse (a reasoning block is
    kilobytes); frameworks return the block starting at `start` or after the
    whitespace they strip there, which a comparison at that place confirms.
    """
    if text.startswith(needle, start):
        return start
    head = text[start : start + 64]
    skip = len(head) - len(head.lstrip())
    if skip and text.startswith(needle, start + skip):
        return start + skip
    return text.find(needle, start)


def reasoning_markers(parser: Any) -> tuple[str | None, str | None]:
    """The start/end marker strings a framework reasoning parser (or detector) declares, where it does."""

    def pick(names: tuple[str, ...]) -> str | None:
        for name in names:
            try:
                value = getattr(parser, name, None)
            except Exception:  # a property that needs state the parser lacks
                value = None
            if isinstance(value, str) and value:
                return value
        return None

    return pick(START_MARKER_ATTRS), pick(END_MARKER_ATTRS)


def version_tuple(version: str) -> tuple[int, ...]:
    """``"0.5.10.post1+cpu"`` → ``(0, 5, 10)``: release numbers for behaviour that cannot be detected."""
    nums = re.findall(r"\d+", version.split("+")[0])[:3]
    return tuple(int(n) for n in nums) or (0,)


def import_first(*names: str) -> Any:
    """The first module of `names` that imports; a module that exists but fails to import re-raises.

    A bare try/except over old and new paths would hide a genuinely missing
    dependency behind "old path not found", so only a missing
    module that *is* (a parent of) the candidate moves on to the next one.
    """
    quiet_framework_logs()
    last: Exception | None = None
    for name in names:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and not name.startswith(exc.name):
                raise
            last = exc
    assert last is not None
    raise last


def importable(*names: str) -> bool:
    """Whether every module of `names` imports (a release probe: a module missing means a release
    without that feature; any other import error is raised)."""
    try:
        for name in names:
            importlib.import_module(name)
    except ModuleNotFoundError:
        return False
    return True


#: Set to 1 to keep the frameworks' own log output (parsebridge quiets it by default).
FRAMEWORK_LOGS_ENV = "PARSEBRIDGE_FRAMEWORK_LOGS"


def framework_logs_wanted() -> bool:
    """Whether the frameworks' own log output is asked for (``PARSEBRIDGE_FRAMEWORK_LOGS=1``, which
    ``--framework-logs`` sets): vLLM and SGLang keep their loggers, Dynamo's standard error is not
    filtered and it logs at its own level, smg's gateways copy their output to standard error."""
    return os.environ.get(FRAMEWORK_LOGS_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def quiet_framework_logs() -> None:
    """Keep vLLM's and SGLang's log lines out of parsebridge's output, unless asked for.

    Framework parsers log an error for what parsebridge reports as data
    (a malformed call, a request without tools), so by default their
    loggers print nothing below CRITICAL. Explicit choices win: the
    ``PARSEBRIDGE_FRAMEWORK_LOGS=1`` environment variable, ``VLLM_LOGGING_LEVEL``
    (vLLM configures its logger from it when it sets up logging), or a level
    already set on the ``vllm`` / ``sglang`` logger — set one, e.g.
    ``logging.getLogger("vllm").setLevel(logging.INFO)``, to bring them back.
    """
    if framework_logs_wanted():
        return
    if "VLLM_LOGGING_LEVEL" not in os.environ:
        os.environ["VLLM_LOGGING_LEVEL"] = "CRITICAL"
    for name in ("vllm", "sglang"):
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.CRITICAL)
