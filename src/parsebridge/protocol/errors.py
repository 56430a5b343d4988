"""The typed errors parsebridge raises.

Everything derives from `ParsebridgeError`, so a server can catch one class
and know nothing from a framework escaped untranslated.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

T = TypeVar("T")


def json_problem(exc: ValueError) -> str:
    """What is wrong with a JSON text, and where: ``Expecting value at line 1, column 7``.

    The json module's message may end in "at" (``Unterminated string starting at``):
    the position then follows it once.
    """
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg.removesuffix(' at')} at line {exc.lineno}, column {exc.colno}"
    return str(exc)


class ParsebridgeError(Exception):
    """Base class of every error parsebridge raises on purpose."""


class InvalidSpecError(ParsebridgeError, ValueError):
    """A config string or config object that cannot be understood."""


def closest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Names in `candidates` that look like `name` (for "did you mean")."""
    pool = list(candidates)
    lowered = {c.lower().replace("-", "_"): c for c in pool}
    wanted = name.lower().replace("-", "_")
    import difflib  # lazy: only an error message needs it

    hits = difflib.get_close_matches(wanted, list(lowered), n=n, cutoff=0.5)
    prefix = [c for key, c in lowered.items() if wanted and key.startswith(wanted)]
    out: list[str] = []
    for c in [*(lowered[h] for h in hits), *prefix]:
        if c not in out:
            out.append(c)
    return out[:n]


def did_you_mean(hints: Iterable[str]) -> str:
    """`` Did you mean 'a', 'b'?`` (a sentence to append to an error) for `hints`; "" for none."""
    near = list(hints)
    return f" Did you mean {', '.join(map(repr, near))}?" if near else ""


def with_hints(unknown: Iterable[str], candidates: Iterable[str]) -> str:
    """Unknown names, each with the candidates that look like it: ``'tokn' (did you mean 'token'?), 'x'``."""
    pool = list(candidates)
    parts = []
    for name in unknown:
        near = closest(name, pool)
        parts.append(f"{name!r}" + (f" (did you mean {', '.join(map(repr, near))}?)" if near else ""))
    return ", ".join(parts)


def _listing(names: Iterable[str], limit: int = 60) -> str:
    items = sorted(set(names))
    shown = ", ".join(items[:limit])
    if len(items) > limit:
        shown += f", … ({len(items) - limit} more; see `parsebridge list`)"
    return shown or "(none)"


class _UnknownNameError(InvalidSpecError, LookupError):
    """A name that is none of `available`: the error keeps them, and the ones that look like it."""

    available: list[str]
    suggestions: list[str]

    def _near(self, name: str, available: Iterable[str]) -> str:
        """Set `available` and `suggestions`; the message's "Did you mean" ("" when none is near)."""
        self.available = sorted(set(available))
        self.suggestions = closest(name, self.available)
        return did_you_mean(self.suggestions)


class UnknownBackendError(_UnknownNameError):
    """The backend part of a spec names no known backend."""

    def __init__(self, backend: str, available: Iterable[str]) -> None:
        self.backend = backend
        hint = self._near(backend, available)
        super().__init__(
            f"unknown parser backend {backend!r}.{hint} Known backends: {_listing(self.available)}."
        )


#: Where a parser of each kind is given, for the hint that a name is of the other kind.
_WHERE_GIVEN = {
    "reasoning": "--reasoning-parser, compare's reasoning_parsers=, get_reasoning_parser",
    "tool": "--tool-parser, get_tool_parser",
}


class UnknownParserError(_UnknownNameError):
    """The backend exists but has no parser of that name and kind."""

    def __init__(
        self, backend: str, kind: str, name: str, available: Iterable[str], other_kind: str | None = None
    ) -> None:
        self.backend = backend
        self.kind = kind
        self.name = name
        #: The other kind when the backend has a parser of that name there (a reasoning parser
        #: given where a tool parser goes): the likelier mistake than a typo, said first.
        self.other_kind = other_kind
        hint = self._near(name, available)
        if other_kind is not None:
            where = _WHERE_GIVEN.get(other_kind, f"get_{other_kind}_parser")
            hint = f" {name!r} is a {other_kind} parser: give it as one ({where}).{hint}"
        super().__init__(
            f"backend {backend!r} has no {kind} parser named {name!r}.{hint} "
            f"Available {kind} parsers: {_listing(self.available)}."
        )


#: Options that belong to another call than the one they were given to: what they are instead of
#: a near spelling, and the option of this call that does that here, if the parser takes it.
_ELSEWHERE = {
    "started": (
        "an option of builtin reasoning parsers (their start when a request says nothing); every "
        "backend takes reasoning_started= on each request, parse(text, reasoning_started=...) and "
        "stream(reasoning_started=...)",
        "reasoning_started",
        "sets it",
    ),
    "reasoning_started": (
        "an option of each request: parse(text, reasoning_started=...) and stream(reasoning_started=...)",
        "started",
        "sets this parser's default",
    ),
}


def _elsewhere(name: str, accepted: list[str]) -> str:
    what, here, does = _ELSEWHERE[name]
    return f" {name!r} is {what}" + (f"; {here}=... {does}." if here in accepted else ".")


class UnknownOptionError(InvalidSpecError, TypeError):
    """A keyword option the parser named by a spec does not take (a typo, or another backend's)."""

    def __init__(
        self,
        spec: str,
        unknown: Iterable[str],
        accepted: Iterable[str],
        *,
        notes: Mapping[str, str] | None = None,
    ) -> None:
        """`notes`: where an option the call does not take belongs instead (``tool_parsers`` of
        `compare` is its `specs`), said in place of the nearest name, which would mislead."""
        self.spec = spec
        self.unknown = list(unknown)
        self.accepted = sorted(set(accepted))
        notes = notes or {}
        hints = [
            f"{near[0]!r} for {name!r}" if len(self.unknown) > 1 else repr(near[0])
            for name in self.unknown
            if name not in _ELSEWHERE and name not in notes and (near := closest(name, self.accepted, n=1))
        ]
        hint = f" Did you mean {', '.join(hints)}?" if hints else ""
        hint += "".join(_elsewhere(name, self.accepted) for name in self.unknown if name in _ELSEWHERE)
        hint += "".join(f" {name!r}: {notes[name]}." for name in self.unknown if name in notes)
        plural = "s" if len(self.unknown) > 1 else ""
        super().__init__(
            f"{spec} takes no option{plural} {', '.join(map(repr, self.unknown))}.{hint} "
            f"Options it takes: {_listing(self.accepted)}."
        )


class BackendNotInstalledError(ParsebridgeError, ImportError):
    """The backend's framework cannot be imported here."""

    def __init__(
        self, backend: str, package: str, install: str, reason: str | None = None, *, needs: str | None = None
    ) -> None:
        self.backend = backend
        self.package = package
        self.install = install
        self.reason = reason
        why = f" ({reason})" if reason else ""
        # `needs`: what is missing, in words, where it is not a package to import (llamacpp's
        # harness is built from an sdist; the package of that name would not give it).
        what = needs or f"the {package!r} package, which is not importable"
        super().__init__(f"backend {backend!r} needs {what}{why}. Install it with: {install}")


class BackendError(ParsebridgeError, RuntimeError):
    """A backend's parser raised; the original exception is `__cause__`."""

    def __init__(
        self,
        backend: str,
        parser: str,
        call: str,
        message: str,
        transcript: str | None = None,
    ) -> None:
        self.backend = backend
        self.parser = parser
        self.call = call
        self.transcript = transcript
        where = f" on transcript {transcript!r}" if transcript else ""
        super().__init__(f"{backend}:{parser} raised in {call}{where}: {message}")

    @classmethod
    def wrapping(cls, backend: str, parser: str, call: str, exc: BaseException) -> BackendError:
        """The error for `exc` raised by a backend's `call` (raise it ``from exc``)."""
        return cls(backend, parser, call, f"{type(exc).__name__}: {exc}")


class ParserProtocolError(InvalidSpecError, TypeError):
    """A user class loaded by `python:` does not implement the parser protocol."""

    def __init__(self, target: str, kind: str, missing: Iterable[str]) -> None:
        self.target = target
        self.kind = kind
        self.missing = sorted(missing)
        super().__init__(
            f"{target} is not a {kind} parser: missing {', '.join(self.missing)}. "
            f"Subclass parsebridge.{'ToolParserBase' if kind == 'tool' else 'ReasoningParserBase'} "
            "or implement these methods."
        )


class InvalidInputError(ParsebridgeError, TypeError):
    """A parse or a stream's `feed` was given something that is not text (None, bytes, a number,
    a list...): refused before any parser reads it, whatever the backend or `on_error`, since
    ``str()`` of it would be parsed as if the model had written it.

    Bytes are refused too, with a hint to decode them: the encoding is the caller's to know. So are
    a chunk's `token_ids` that are not a sequence of integer ids (`token_id_list`).
    """

    def __init__(
        self, call: str, value: object, *, expected: str | None = None, received: str | None = None
    ) -> None:
        self.call = call
        #: The type's name of what was given (``"NoneType"``, ``"bytes"``...).
        self.received = type(value).__name__
        if expected is not None:  # input other than the model's text (token ids, an engine output)
            super().__init__(f"{call}() takes {expected}, not {received or self.received}")
            return
        what = "each chunk of the model's output" if call == "stream.feed" else "the model's output"
        hint = ""
        if isinstance(value, (bytes, bytearray, memoryview)):
            hint = ": decode it first (e.g. data.decode('utf-8')); parsebridge does not guess the encoding"
        super().__init__(f"{call}() takes {what} as str, not {self.received}{hint}")


def token_id_list(token_ids: object, call: str = "stream.feed", vocab_size: int | None = None) -> list[int]:
    """A chunk's `token_ids` as a list, or `InvalidInputError`: a string, a number, ids that are not
    integers, a negative id, or (with `vocab_size`, the tokenizer's) an id outside the vocabulary are
    the caller's mistake, not the parser's, so they are refused whatever the policy (given to a
    parser, they failed inside it, blamed on it, or were silently read as other ids or as nothing:
    Dynamo's detokenizer dropped an id past its vocabulary, and the text it stood for with it).
    The message names the id and its position. One range check per id: cheap on the hot path."""
    expected = "token_ids as a list of ints or None"
    if isinstance(token_ids, (str, bytes, bytearray)):
        raise InvalidInputError(call, token_ids, expected=expected)
    try:
        ids: list[int] = list(token_ids)  # type: ignore[call-overload]
    except TypeError:
        raise InvalidInputError(call, token_ids, expected=expected) from None
    for position, token in enumerate(ids):
        if not hasattr(token, "__index__"):  # ints, and numpy's or torch's integer scalars
            raise InvalidInputError(call, token_ids, expected=expected, received=f"a list holding {token!r}")
        if token < 0 or (vocab_size is not None and token >= vocab_size):
            vocab = f"the vocabulary's ids 0..{vocab_size - 1}" if vocab_size is not None else "ids from 0 up"
            raise InvalidInputError(
                call,
                token_ids,
                expected=f"token ids in {vocab}",
                received=f"id {int(token)} at position {position}",
            )
    return ids


class InvalidToolsError(ParsebridgeError, ValueError):
    """The tools given to a parser (``tools=``, ``--tools``) are not a list of tool definitions:
    refused when the parser is built, whatever the backend or `on_error`, since they are the
    caller's input and not a parser's failure. The message names the tool and what is wrong."""

    def __init__(self, index: int | None, message: str) -> None:
        #: The position of the refused definition in the list (None: the list itself is refused).
        self.index = index
        super().__init__(message)


class StreamStateError(ParsebridgeError, RuntimeError):
    """A stream was used after `finish()`, or (a cumulative `OutputProcessor` stream) fed text
    that takes back what was already sent."""

    @classmethod
    def fed_after_flush(cls) -> StreamStateError:
        """What every stream raises when fed after `flush()`/`finish()` (guarded or not)."""
        return cls("feed() after flush()/finish(): start a new stream() per request")


def refused_chunk(text: object) -> ParsebridgeError:
    """What a stream's `feed` raises for a chunk it does not take: `InvalidInputError` when `text` is
    not a `str`, else `StreamStateError` (fed after flush). For a per-chunk path that tests both in
    one branch, ``if closed or not isinstance(text, str): raise refused_chunk(text)``."""
    if not isinstance(text, str):
        return InvalidInputError("stream.feed", text)
    return StreamStateError.fed_after_flush()


def call_typed(backend: str, parser: str, call: str, fn: Callable[[], T]) -> T:
    """`fn()`, with anything it raises that is not a parsebridge error raised as a `BackendError`
    naming the backend, the parser and `call` (the original as cause).

    This is what the guard raises under on_error="raise"; a stream the guard hands out as is
    (`guard_complete`) runs its end of stream through this, so its failures arrive alike.
    """
    try:
        return fn()
    except ParsebridgeError:
        raise
    except Exception as exc:
        raise BackendError.wrapping(backend, parser, call, exc) from exc


class ParseTimeoutError(BackendError):
    """A parser ran past its time budget (`timeout=`); its worker process was stopped."""


class BufferLimitError(BackendError):
    """A stream held back more text than its `max_held` limit allows."""


class ParserUnsupportedError(ParsebridgeError, LookupError):
    """The backend registers this parser, but it cannot parse here; the message says why.

    E.g. a framework's capability stub whose methods only raise (its server
    parses that format another way). Conformance reports it `unsupported`.
    """

    def __init__(self, backend: str, parser: str, reason: str) -> None:
        self.backend = backend
        self.parser = parser
        self.reason = reason
        super().__init__(f"{backend}:{parser} cannot parse here: {reason}")


class UnsupportedOptionError(ParsebridgeError, ValueError):
    """A parse or stream option this parser cannot honour, refused before any text is read.

    E.g. ``reasoning_started=False`` on a framework parser that starts inside
    reasoning whatever its server is told, or ``prompt=`` on a parser of your
    own whose `parse` takes no prompt. A usage error, never the framework's failure.
    """

    def __init__(self, spec: str, option: str, value: object, reason: str) -> None:
        self.spec = spec
        self.option = option
        self.value = value
        self.reason = reason
        super().__init__(f"{spec} cannot honour {option}={value!r}: {reason}")


class ServerUnavailableError(ParsebridgeError, RuntimeError):
    """A backend whose parsers run only inside the framework's own server could not start or reach
    that server (missing wheel, a library the wheel needs, no free port, a forked child of a
    process that had one running...); `reason` says why."""

    def __init__(self, backend: str, reason: str) -> None:
        self.backend = backend
        self.reason = reason
        super().__init__(f"backend {backend!r}: its server is unavailable: {reason}")


class TokenizerUnavailable(ParsebridgeError, LookupError):
    """A transcript or a caller's ``tokenizer=`` names a tokenizer that cannot be had here (not on
    disk, package not installed, not in the local cache, a malformed name, an object that is no
    tokenizer): the caller's input, typed as such."""
