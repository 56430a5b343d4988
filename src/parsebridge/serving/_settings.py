"""An `OutputProcessor`'s settings, checked when it is built.

A server builds its processor once, at start: a setting of the wrong type or value is refused
there, typed (`InvalidSpecError`, a `ValueError` too), rather than read loosely on every
request (``cumulative="no"`` is truthy and read every delta as the whole text; a
``named_finish_reason`` typo went to every client; a negative ``cache_size`` failed each
request with a bare `KeyError`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

from ..adapters.builtin.engines.reasoning_start import wrong_thinking_switch
from ..protocol.errors import InvalidSpecError, UnknownOptionError, UnsupportedOptionError

#: The flags that are True or False (a string such as "no" is truthy).
_FLAGS = ("cumulative", "native")


def check_processor_settings(settings: dict[str, Any]) -> None:
    """Refuse a setting of `OutputProcessor` (its keywords, by name) that it cannot use."""
    choices: dict[str, tuple[object, ...]] = {
        "on_error": ("raise", "fallback"),
        "forced_format": (None, "json", "native", "server"),
        "named_finish_reason": (None, "tool_calls", "stop"),
        "reasoning_started": (None, True, False),
    }
    for name, allowed in choices.items():
        value = settings[name]
        if not any(value is a or (isinstance(a, str) and value == a) for a in allowed):
            listed = ", ".join(repr(a) for a in allowed)
            raise InvalidSpecError(f"OutputProcessor: {name} must be one of {listed}, not {value!r}")
    for name in _FLAGS:
        if not isinstance(settings[name], bool):
            raise InvalidSpecError(f"OutputProcessor: {name} must be True or False, not {settings[name]!r}")
    for name in ("reasoning_key", "model"):
        if not isinstance(settings[name], str) or not settings[name]:
            raise InvalidSpecError(f"OutputProcessor: {name} must be a non-empty str, not {settings[name]!r}")
    size = settings["cache_size"]
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise InvalidSpecError(
            f"OutputProcessor: cache_size must be a whole number of parser sets to keep (0 or more), "
            f"not {size!r}"
        )


def check_unused_options(options: dict[str, Any], settings: Iterable[str], has_spec: bool) -> None:
    """Options (`**options`) go to the parsers a processor builds from specs; with no spec, none
    would ever read them, so a typo of a setting (``reasoning_parser="qwen3"`` for ``reasoning=``)
    built a processor with no parser without a word. Refused then, with the settings' names."""
    if options and not has_spec:
        raise UnknownOptionError("OutputProcessor (no parser spec to pass them to)", options, settings)


def check_parser_source(role: str, source: object) -> None:
    """Refuse a `reasoning=` / `tool=` that is neither a spec (a str, `ParserSpec` or config, which
    the caller has already matched) nor a parser object, one with `parse` and `stream`: a list or
    a number was taken as a parser and failed each request as a parser's failure (`BackendError`
    naming ``python:list``; under ``on_error="fallback"`` the output as content, unsaid)."""
    if callable(getattr(source, "parse", None)) and callable(getattr(source, "stream", None)):
        return
    kind = type(source).__name__
    hint = (
        " (one spec per role: a processor has one reasoning and one tool parser)"
        if isinstance(source, list | tuple)
        else ""
    )
    raise InvalidSpecError(
        f"OutputProcessor: {role}= is a config string such as 'builtin:{'qwen3' if role == 'reasoning' else 'hermes'}', "
        f"a ParserSpec or config, or a parser object with parse() and stream(), not {kind}{hint}"
    )


def check_request_keywords(
    call: str, request: Callable[..., Any], given: dict[str, Any], own: Iterable[str] = ()
) -> None:
    """`parse`, `message`, `response` and `stream` pass their other keywords on to `request`: one it
    does not take was Python's TypeError naming ``request()``, which the caller never called, with
    no hint (``tool_choise=``). `UnknownOptionError` names the call, the nearest and the keywords
    (the request's, and the call's `own`)."""
    if not given:  # (the common call: nothing to check, and no signature to read per request)
        return
    takes = _keywords(getattr(request, "__func__", request))
    unknown = [key for key in given if key not in takes]
    if unknown:
        raise UnknownOptionError(f"OutputProcessor.{call}()", unknown, [*takes, *own])


@functools.cache
def _keywords(function: Callable[..., Any]) -> tuple[str, ...]:
    """The keywords `function` takes, read once (a signature costs about as much as a parse)."""
    return tuple(name for name in inspect.signature(function).parameters if name != "self")


def check_request_template_kwargs(chat_template_kwargs: object) -> None:
    """A request's ``chat_template_kwargs``: None or a dict whose thinking switches are booleans
    (``{"enable_thinking": "no"}`` is truthy: thinking would stay on, whatever the backend)."""
    if chat_template_kwargs is not None and not isinstance(chat_template_kwargs, dict):
        raise UnsupportedOptionError(
            "OutputProcessor",
            "chat_template_kwargs",
            chat_template_kwargs,
            'a dict, e.g. {"enable_thinking": False}',
        )
    wrong = wrong_thinking_switch(chat_template_kwargs)
    if wrong is not None:
        raise UnsupportedOptionError(
            "OutputProcessor",
            f"chat_template_kwargs[{wrong[0]!r}]",
            wrong[1],
            "it is True, False or None (a template reads any non-empty string as true)",
        )
