"""A small stdlib HTTP client for a local server: JSON requests and server-sent events.

One connection per request (127.0.0.1: connecting costs well under a
millisecond), so threads never share one. `SseReader` reads a streamed
response one ``data:`` event at a time; `read_to_fence` is the feed-to-delta
attribution (see the package doc).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from typing import Any

#: The event a stream ends with (OpenAI's convention).
DONE = "[DONE]"


class HttpStatusError(RuntimeError):
    """The server answered with an error status; `body` is what it said."""

    def __init__(self, status: int, body: str) -> None:
        self.status = status
        self.body = body
        super().__init__(f"HTTP {status}: {body[:500]}")


def _request(
    port: int, method: str, path: str, body: Any, timeout: float
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"content-type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        if resp.status >= 400:
            raise HttpStatusError(resp.status, resp.read().decode("utf-8", "replace"))
        return conn, resp
    except BaseException:
        conn.close()
        raise


def get_json(port: int, path: str, timeout: float = 10.0) -> Any:
    """GET `path`; the decoded JSON body."""
    conn, resp = _request(port, "GET", path, None, timeout)
    try:
        return json.loads(resp.read())
    finally:
        conn.close()


def post_json(port: int, path: str, body: Any, timeout: float = 60.0) -> Any:
    """POST `body` as JSON to `path`; the decoded JSON answer."""
    conn, resp = _request(port, "POST", path, body, timeout)
    try:
        return json.loads(resp.read())
    finally:
        conn.close()


class SseReader:
    """A streamed response, one event at a time (`next_event`); `close` when done."""

    __slots__ = ("_conn", "_resp", "cut", "done")

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse) -> None:
        self._conn = conn
        self._resp = resp
        self.done = False
        #: The response ended without ``[DONE]``: the server stopped or died while it was sending.
        self.cut = False

    def next_event(self) -> Any | None:
        """The next ``data:`` event's JSON; None at ``[DONE]`` or the end of the response."""
        if self.done:
            return None
        readline = self._resp.readline
        while True:
            line = readline()
            if not line:
                self.cut = True
                self.close()
                return None
            if not line.startswith(b"data:"):
                continue  # blank separators, comments, `event:` lines
            payload = line[5:].strip()
            if payload == b"[DONE]":
                self.close()
                return None
            return json.loads(payload)

    def rest(self) -> list[Any]:
        """Every event still to come, to the end of the response."""
        out = []
        while (event := self.next_event()) is not None:
            out.append(event)
        return out

    def close(self) -> None:
        self.done = True
        self._conn.close()


def open_sse(port: int, path: str, body: Any, timeout: float = 60.0) -> SseReader:
    """POST `body` to `path` and return the streamed response's reader (headers already read)."""
    conn, resp = _request(port, "POST", path, body, timeout)
    return SseReader(conn, resp)


def read_to_fence(
    reader: SseReader, fence: Callable[[Any], tuple[Any | None, bool]]
) -> tuple[list[Any], bool]:
    """The events a step produced: those before the next fence event, and whether a fence came.

    `fence(event)` gives the part of the event that is the step's own (None for none) and whether
    the event carries the fence (an event may carry both: the step's last output and the fence).
    False means the response ended first: everything it still had is in the list.
    """
    out: list[Any] = []
    while True:
        event = reader.next_event()
        if event is None:
            return out, False
        own, fenced = fence(event)
        if own is not None:
            out.append(own)
        if fenced:
            return out, True
