"""OpenAI chat requests to an smg gateway, one-shot and streamed with feed-to-delta attribution.

A one-shot parse is one non-streamed request whose answer is the whole
text. A stream is one streamed request with ``n=2``: the worker sends the
text of each `feed` as one engine step on choice 0, then a tick on choice 1
(`_worker`). The gateway handles its worker's stream in order, so the choice-0
events read before a step's tick are what that step produced; what comes
after the last tick, up to ``[DONE]``, is the end of the stream. Standard
library HTTP only (`http.client`); the per-event path builds no pydantic
object.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Sequence
from typing import Any

from ...protocol import ToolSpec
from ._gateway import Gateway, GatewayError, runtime
from ._worker import Script, encode, prompt_for

#: Tools sent when a parser has none: smg runs its tool parser only for a request that declares
#: tools, and reads calls of any name (one-shot and streamed) once it does.
PLACEHOLDER_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "parsebridge_any_tool", "parameters": {"type": "object"}}}
]
REQUEST_TIMEOUT = 120.0
Config = tuple[str | None, str | None]


def _tools_payload(config: Config, tools: Sequence[ToolSpec] | None) -> list[Any] | None:
    if config[0] is None:
        return None
    out = [t if "function" in t else {"type": "function", "function": t} for t in (tools or ()) if t]
    return out or PLACEHOLDER_TOOLS


def _body(key: str, tools: list[Any] | None, stream: bool) -> str:
    body: dict[str, Any] = {"model": "parsebridge", "messages": prompt_for(key), "stream": stream}
    if tools is not None:
        body["tools"] = tools
    if stream:
        body["n"] = 2
    return json.dumps(body)


def _post(gw: Gateway, body: str) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=REQUEST_TIMEOUT)
    try:
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        return conn, conn.getresponse()
    except BaseException:
        conn.close()
        raise


def _with_restart(config: Config, send: Any) -> Any:
    """`send(gateway)`; when the gateway died under it, once more on a restarted one."""
    gw = runtime().gateway(config)
    try:
        return send(gw)
    except (OSError, http.client.HTTPException):
        if gw.alive():
            raise
    gw.restart()
    return send(gw)


def oneshot(config: Config, text: str, tools: Sequence[ToolSpec] | None) -> dict[str, Any]:
    """The gateway's chat message for a non-streamed request whose output is `text`."""
    rt = runtime()
    key = rt.worker.register(Script(text))
    payload = _tools_payload(config, tools)

    def send(gw: Gateway) -> dict[str, Any]:
        conn, resp = _post(gw, _body(key, payload, False))
        try:
            data = resp.read()
        finally:
            conn.close()
        if resp.status != 200:
            raise GatewayError(gw.label, f"HTTP {resp.status}: {data[:300]!r}")
        return json.loads(data)["choices"][0]["message"]  # type: ignore[no-any-return]

    try:
        return _with_restart(config, send)  # type: ignore[no-any-return]
    finally:
        rt.worker.release(key)


class StreamSession:
    """One streamed request: `step(text)` → the choice-0 deltas that step produced; `end()` → the rest.

    Each delta is ``(content, reasoning, tool_calls)`` with tool calls as the
    OpenAI dicts the gateway sent.
    """

    def __init__(self, config: Config, tools: Sequence[ToolSpec] | None) -> None:
        self.config = config
        self._payload = _tools_payload(config, tools)
        self._rt = runtime()
        self._script = Script()
        self._key = self._rt.worker.register(self._script)
        self._conn: http.client.HTTPConnection | None = None
        self._resp: http.client.HTTPResponse | None = None
        self._steps = 0
        self._ticks = 0
        self._done = False

    def _open(self) -> None:
        gw = self._rt.gateway(self.config)
        self._label = gw.label
        self._conn, self._resp = _post(gw, _body(self._key, self._payload, True))
        if self._resp.status != 200:
            data = self._resp.read()
            self.close()
            raise GatewayError(gw.label, f"HTTP {self._resp.status}: {data[:300]!r}")

    def step(self, text: str) -> list[tuple[str, str, list[Any]]]:
        """Send `text` as one engine step; the deltas the gateway showed for it."""
        ids = encode(text)
        if not ids:
            return []
        self._script.step(ids)
        self._steps += 1
        if self._resp is None:
            self._open()
        return self._read(until_ticks=self._steps)

    def end(self) -> list[tuple[str, str, list[Any]]]:
        """Finish the request; the deltas its end produced (flushes, the finish chunk)."""
        self._script.end()
        if self._resp is None:
            if self._steps == 0:
                self._rt.worker.release(self._key)
                return []
            self._open()
        try:
            return self._read(until_ticks=None)
        finally:
            self.close()

    def _read(self, until_ticks: int | None) -> list[tuple[str, str, list[Any]]]:
        out: list[tuple[str, str, list[Any]]] = []
        resp = self._resp
        assert resp is not None
        while until_ticks is None or self._ticks < until_ticks:
            line = resp.readline()
            if not line:
                if until_ticks is None:
                    return out
                raise GatewayError(self._label, "the stream ended before the step was answered")
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                self._done = True
                return out
            self._event(json.loads(data), out)
        return out

    def _event(self, event: dict[str, Any], out: list[tuple[str, str, list[Any]]]) -> None:
        if "error" in event:
            raise GatewayError(self._label, f"error event: {event['error']}")
        for choice in event.get("choices") or ():
            delta = choice.get("delta") or {}
            content = delta.get("content") or ""
            reasoning = delta.get("reasoning_content") or ""
            calls = delta.get("tool_calls") or []
            if choice.get("index", 0) == 1:
                self._ticks += len(content) + len(reasoning)
            elif content or reasoning or calls:
                out.append((content, reasoning, calls))

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        self._rt.worker.release(self._key)
