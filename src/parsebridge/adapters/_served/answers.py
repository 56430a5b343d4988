"""A served backend's OpenAI answers read as parsebridge's objects, and its fenced streamed request.

`message_calls` (a chat message's tool calls) and `delta_of` (a step's ``delta`` objects as one
`StreamDelta`) read what the server sends; `StreamRequest` sends one streamed request whose engine
steps are fenced (`read_to_fence`), so each step's deltas are known, and `fence_splitter` is the
fence test of such a request with two choices. The parser classes over them are `parsers`'.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ...protocol import BackendError, StreamDelta, ToolCall, ToolCallDelta
from ...protocol.errors import ServerUnavailableError
from ...protocol.models import make_call_delta, make_delta, make_tool_call
from .http import SseReader, read_to_fence
from .steps import Script, undelivered


def message_calls(message: dict[str, Any]) -> list[ToolCall]:
    """The tool calls of an OpenAI chat message."""
    out = []
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        out.append(make_tool_call(fn.get("name") or "", fn.get("arguments") or "", call.get("id")))
    return out


def delta_of(deltas: list[dict[str, Any]]) -> StreamDelta:
    """One `StreamDelta` from OpenAI ``delta`` objects (content, reasoning and call fragments, in order)."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCallDelta] = []
    for d in deltas:
        if d.get("content"):
            content.append(d["content"])
        if d.get("reasoning_content"):
            reasoning.append(d["reasoning_content"])
        for tc in d.get("tool_calls") or ():
            fn = tc.get("function") or {}
            calls.append(
                make_call_delta(tc.get("index", 0), tc.get("id"), fn.get("name"), fn.get("arguments") or "")
            )
    return make_delta("".join(content), "".join(reasoning), calls or None)


def fence_splitter(
    backend: str, label: str, fence_has_text: bool
) -> Callable[[Any], tuple[list[dict[str, Any]] | None, bool]]:
    """The fence test of a streamed request with two choices: choice 0's deltas in an event, and
    whether the event carries the fence on choice 1 (any choice-1 entry, or only one with text when
    `fence_has_text`: a server that sends an empty choice-1 delta of its own)."""

    def split(event: Any) -> tuple[list[dict[str, Any]] | None, bool]:
        choices = event.get("choices")
        if choices is None:
            if "error" in event:
                raise BackendError(backend, label, "stream", f"error event: {event['error']}")
            return None, False
        own: list[dict[str, Any]] = []
        fenced = False
        for choice in choices:
            delta = choice.get("delta") or {}
            if choice.get("index", 0) != 1:
                own.append(delta)
            elif not fence_has_text or delta.get("content") or delta.get("reasoning_content"):
                fenced = True
        return (own or None), fenced

    return split


class StreamRequest:
    """One streamed request whose steps are fenced (see `read_to_fence`): `step`, then `end`.

    `open` sends the request (after the first step is put: some servers answer headers only once
    their engine produced something); `split` is the fence test (`fence_splitter`). A response
    that ends before a step's fence is an error, unless `ends_early` says the server does that (smg
    ends the response once a call is complete): then later steps show nothing, as to a client.
    `skip_empty`: a step with no token is not sent (a server that cannot take one). `on_hang` is
    called when a step's answer does not come in the read timeout (smg stops that gateway).

    A server that stops (its last parser closed, `close`, exit) or dies while the request is open
    takes the request's state with it: the next `step` or `end` is a `ServerUnavailableError`
    naming `backend`, never a stream that quietly shows nothing more. Stopped means the script was
    cancelled (the server's stop cancels its scripts) or the response was cut (no ``[DONE]``) and
    `alive` says the server is gone: a live smg gateway also ends some responses without
    ``[DONE]`` (its step3 parser on several tokens a chunk), which stays its early end.

    A forked copy of the process that opened the request is refused the same way, at once: the
    script it would put a step on is its own copy, which the parent's server never reads, and
    the response is the parent's socket (it waited out the read timeout, 60 s for Dynamo, and
    could take events meant for the parent).
    """

    def __init__(
        self,
        script: Script,
        open: Callable[[], SseReader],
        split: Callable[[Any], tuple[list[dict[str, Any]] | None, bool]],
        *,
        backend: str,
        alive: Callable[[], bool],
        on_close: Callable[[], None] | None = None,
        on_hang: Callable[[], None] | None = None,
        skip_empty: bool = False,
        ends_early: bool = False,
    ) -> None:
        self.backend, self._alive = backend, alive
        self._on_close = on_close  # called once, when the request ends or is abandoned
        self._on_hang = on_hang  # called when a step's answer timed out (the server hangs)
        self.script = script
        self._open = open
        self._split = split
        self._skip_empty = skip_empty
        self._ends_early = ends_early
        self._readers: list[SseReader] = []
        self.ended_early = False
        self._pid = os.getpid()  # the process that opened it (`_check_server`)

    def step(self, token_ids: list[int]) -> list[dict[str, Any]]:
        """Put one engine step; the choice-0 deltas the server sent for it."""
        if self.ended_early or (self._skip_empty and not token_ids):
            return []
        self._check_server()
        self.script.put(token_ids)
        reader = self._readers[0] if self._readers else self._opened()
        try:
            parts, fenced = read_to_fence(reader, self._split)
        except TimeoutError:
            if self._on_hang is not None:
                self._on_hang()
            raise
        if not self.script.taken:  # (the engine takes it before it answers the first step)
            self._check_server()
            raise RuntimeError(undelivered("stream"))
        if not fenced:
            self._check_server()
            if not self._ends_early:
                raise RuntimeError("the server ended the stream before the step's fence")
            self.ended_early = True
        return [d for part in parts for d in part]

    def _check_server(self) -> None:
        """The typed error when the server stopped under this request: its script was cancelled
        by the server's stop (`ScriptBoard.cancel_all`), or its response was cut (`SseReader.cut`)
        and the server is not alive.
        (`end` and `abandon`, which end the script too, are this request's last calls.)"""
        if os.getpid() != self._pid:
            raise ServerUnavailableError(
                self.backend,
                f"this stream was opened in process {self._pid}, of which this one is a fork: its "
                "state is on that process's server; start a new stream() here",
            )
        if self.script.ended or (any(reader.cut for reader in self._readers) and not self._alive()):
            raise self._stopped()

    def _stopped(self) -> ServerUnavailableError:
        return ServerUnavailableError(
            self.backend,
            "the server stopped while this stream was open (a parser sharing it was closed, or it "
            "died); what the stream held went with it: start a new stream()",
        )

    def _opened(self) -> SseReader:
        try:
            reader = self._open()
        except BaseException:
            self.abandon()
            raise
        self._readers.append(reader)
        return reader

    def end(self) -> list[dict[str, Any]]:
        """Finish the request; the deltas its end produced (what the server held, the finish chunk)."""
        try:
            self._check_server()
            self.script.end()
            if not self._readers or self.ended_early:
                return []
            reader = self._readers[0]
            events = reader.rest()
            if reader.cut and not self._alive():
                raise self._stopped()
            return [d for event in events if (own := self._split(event)[0]) for d in own]
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Cancel the script and close the response (a stream dropped, or ended); runs `on_close`
        once (this is called by `end` and again when the stream is collected)."""
        self.script.cancel()
        for reader in self._readers:
            reader.close()
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()
