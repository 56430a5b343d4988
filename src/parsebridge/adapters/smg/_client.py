"""OpenAI chat requests to an smg gateway, one-shot and streamed with feed-to-delta attribution.

A one-shot parse is one non-streamed request whose answer is the whole
text. A stream is one streamed request with ``n=2``: the worker sends the
text of each `feed` as one engine step on choice 0, then a tick on choice 1
(`_worker`). The gateway handles its worker's stream in order, so the choice-0
events read before a step's tick are what that step produced
(`_served.read_to_fence`); what comes after the last tick, up to ``[DONE]``,
is the end of the stream. The per-event path builds no pydantic object.
"""

from __future__ import annotations

import http.client
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ...protocol import BackendError, ToolSpec
from .._served import HttpStatusError, SseReader, open_sse, post_json, read_to_fence
from ._gateway import Gateway, label_of, runtime
from ._worker import Script, encode, prompt_for

#: Tools sent when a parser has none: smg runs its tool parser only for a request that declares
#: tools, and reads calls of any name (one-shot and streamed) once it does.
PLACEHOLDER_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "parsebridge_any_tool", "parameters": {"type": "object"}}}
]
PATH = "/v1/chat/completions"
REQUEST_TIMEOUT = 120.0
Config = tuple[str | None, str | None]
Delta = tuple[str, str, list[Any]]
T = TypeVar("T")


def _tools_payload(config: Config, tools: Sequence[ToolSpec] | None) -> list[Any] | None:
    if config[0] is None:
        return None
    out = [t if "function" in t else {"type": "function", "function": t} for t in (tools or ()) if t]
    return out or PLACEHOLDER_TOOLS


def _body(key: str, tools: list[Any] | None, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "parsebridge", "messages": prompt_for(key), "stream": stream}
    if tools is not None:
        body["tools"] = tools
    if stream:
        body["n"] = 2
    return body


def _with_restart(config: Config, send: Callable[[Gateway], T]) -> T:
    """`send(gateway)`; when the gateway died under it, once more on a restarted one."""
    gw = runtime().gateway(config)
    try:
        return send(gw)
    except HttpStatusError as exc:
        raise BackendError("smg", gw.label, "chat", str(exc)) from exc
    except (OSError, http.client.HTTPException):
        if gw.alive():
            raise
    gw.restart()
    return send(gw)


def ensure(config: Config) -> None:
    """Start `config`'s gateway now (a parser is built): smg's refusal of a name or a pairing
    (`ParserUnsupportedError`) or a gateway that cannot start (`ServerUnavailableError`) shows
    at construction, not at the first parse."""
    runtime().gateway(config)


def oneshot(config: Config, text: str, tools: Sequence[ToolSpec] | None) -> dict[str, Any]:
    """The gateway's chat message for a non-streamed request whose output is `text`."""
    rt = runtime()
    key = rt.worker.register(Script(text))
    body = _body(key, _tools_payload(config, tools), False)
    try:
        answer = _with_restart(config, lambda gw: post_json(gw.port, PATH, body, REQUEST_TIMEOUT))
    finally:
        rt.worker.release(key)
    return answer["choices"][0]["message"]  # type: ignore[no-any-return]


def _fence(event: dict[str, Any]) -> tuple[Delta | None, bool]:
    """Choice 0's part of an event, and whether it carries a tick (text on choice 1)."""
    if "error" in event:
        raise BackendError("smg", "gateway", "stream", f"error event: {event['error']}")
    own: Delta | None = None
    ticked = False
    for choice in event.get("choices") or ():
        delta = choice.get("delta") or {}
        content = delta.get("content") or ""
        reasoning = delta.get("reasoning_content") or ""
        calls = delta.get("tool_calls") or []
        if choice.get("index", 0) == 1:
            ticked = ticked or bool(content or reasoning)
        elif content or reasoning or calls:
            own = (content, reasoning, calls)
    return own, ticked


class StreamSession:
    """One streamed request: `step(text)` → the choice-0 deltas that step produced; `end()` → the rest.

    Each delta is ``(content, reasoning, tool_calls)`` with tool calls as the
    OpenAI dicts the gateway sent. The request goes out with the first step
    (the gateway answers headers only once its worker has sent something).
    """

    def __init__(self, config: Config, tools: Sequence[ToolSpec] | None) -> None:
        self.config = config
        self.label = label_of(config)
        self._rt = runtime()
        self._script = Script()
        self._key = self._rt.worker.register(self._script)
        self._body = _body(self._key, _tools_payload(config, tools), True)
        self._reader: SseReader | None = None
        #: The gateway ended the response before the stream did (e.g. once a call is complete):
        #: later steps show nothing, as to a client.
        self.ended_early = False

    def _open(self) -> SseReader:
        gw = self._rt.gateway(self.config)
        try:
            self._reader = open_sse(gw.port, PATH, self._body, REQUEST_TIMEOUT)
        except HttpStatusError as exc:
            self.close()
            raise BackendError("smg", gw.label, "chat", str(exc)) from exc
        return self._reader

    def step(self, text: str) -> list[Delta]:
        """Send `text` as one engine step; the deltas the gateway showed for it."""
        ids = encode(text)
        if not ids or self.ended_early:
            return []
        self._script.step(ids)
        reader = self._reader or self._open()
        out, ticked = read_to_fence(reader, _fence)
        if not ticked:
            self.ended_early = True
        return out

    def end(self) -> list[Delta]:
        """Finish the request; the deltas its end produced (flushes, the finish chunk)."""
        self._script.end()
        try:
            if self._reader is None or self.ended_early:
                return []
            out, _ = read_to_fence(self._reader, lambda event: (_fence(event)[0], False))
            return out
        finally:
            self.close()

    def close(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
        self._rt.worker.release(self._key)
