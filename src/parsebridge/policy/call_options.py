"""A keyword a parse or stream call does not take: one typed error, whatever the backend or policy.

`get_tool_parser(...)` / `get_reasoning_parser(...)` refuse an unknown option before the parser
is built (the registry's `check_options`). The calls on the parser — `parse(...)` and
`stream(...)` — are checked here, by the guard every parser handed out runs under, before the
backend is called: a misspelt keyword (``reasoning_startd=``, ``tool_choise=``) is a usage
error, never a parse failure, so ``on_error="fallback"`` does not turn it into content and
``"raise"`` does not wrap it in `BackendError`. It is `UnknownOptionError` (also a `TypeError`),
naming the option, the closest one the call takes, and all of them.

What a call takes: the keywords its backend's method names, and the per-call options the
protocol defines for that call (`PER_CALL`): a backend that takes any keyword (``**kwargs``: the
served frameworks, a `timeout=` worker) reads or ignores those by design (SGLang's server never
reads a prompt), and one that does not name a prompt option refuses it with
`UnsupportedOptionError` (`protocol.prompt_rule`), not as a typo. The guard's own keywords
(`transcript`) are always taken.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection
from typing import Any

from ..protocol.errors import UnknownOptionError, UnsupportedOptionError

_START = ("reasoning_started", "prompt", "prompt_token_ids")
#: The per-call options of the protocol, per (kind, call).
PER_CALL: dict[tuple[str, str], tuple[str, ...]] = {
    ("tool", "parse"): (),
    ("tool", "stream"): ("end_of_stream",),
    ("reasoning", "parse"): _START,
    ("reasoning", "stream"): (*_START, "end_of_stream"),
    ("pipeline", "parse"): _START,
    ("pipeline", "stream"): (*_START, "end_of_stream"),
}
#: Keywords the guard takes itself, on every call.
GUARD_OPTIONS = ("transcript",)


@functools.cache
def _named(fn: Callable[..., Any]) -> frozenset[str]:
    """The keywords `fn` names."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a callable without a signature: what the protocol defines
        return frozenset()
    keyword = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return frozenset(p.name for p in params if p.kind in keyword and p.name not in ("self", "text"))


def accepted(fn: Callable[..., Any], kind: str, call: str) -> Collection[str]:
    """The keywords a `call` ("parse" or "stream") of a `kind` parser whose method is `fn` takes."""
    target = getattr(fn, "__func__", fn)
    try:
        named = _named(target)
    except TypeError:  # unhashable callable
        named = _named.__wrapped__(target)
    return named | set(PER_CALL[(kind, call)])


def check_call_options(
    spec: str, kind: str, call: str, fn: Callable[..., Any], options: dict[str, Any]
) -> None:
    """Raise `UnknownOptionError` for a keyword of `call` that `fn` (the backend's method) does not take."""
    takes = accepted(fn, kind, call)
    unknown = [name for name in options if name not in takes]
    if unknown:
        raise UnknownOptionError(f"{spec} {call}()", unknown, [*takes, *GUARD_OPTIONS])


def check_start_values(spec: str, reasoning_started: object, options: dict[str, Any]) -> None:
    """Refuse, typed and before any text is read, a start option of the wrong type: ``reasoning_started``
    is True, False or None (the string ``"false"`` is truthy and would silently start inside
    reasoning), ``prompt`` a str, ``prompt_token_ids`` a sequence of ids (a str is not one). Left to
    the backend, a wrong type fails inside it as a parse failure, which ``on_error="fallback"`` then
    turns into content without a word."""
    if reasoning_started is not None and not isinstance(reasoning_started, bool):
        raise UnsupportedOptionError(
            spec,
            "reasoning_started",
            reasoning_started,
            "it is True, False or None (the prompt said nothing)",
        )
    prompt = options.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        raise UnsupportedOptionError(spec, "prompt", prompt, "the prompt is its text, a str")
    ids = options.get("prompt_token_ids")
    if ids is not None and (isinstance(ids, (str, bytes, bytearray)) or not hasattr(ids, "__len__")):
        raise UnsupportedOptionError(
            spec, "prompt_token_ids", ids, "the prompt's token ids are a list of ints"
        )
