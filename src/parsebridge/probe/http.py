"""The probe's HTTP client: one OpenAI-compatible endpoint, bounded, credentials kept to it.

Standard library only (`http.client`), which never follows a redirect: a 3xx answer is an
error naming where it pointed, and the key is never sent anywhere but `--base-url`. The key
comes only from an environment variable the user names; it is never part of a message, a
``repr`` or a saved file. Over plain http it is refused for any host but this machine unless
the user allows it. Every request is bounded: a socket timeout per read, a deadline for the
whole answer, and a cap on a stream's events and bytes.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import os
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from ..protocol import ParsebridgeError
from .redact import Redactor, basic_credential
from .retry import RATE_LIMITED, Retries, with_retries

#: A stream that sends more than this is cut (and the probe says so): far above any scenario's answer.
MAX_EVENTS = 20_000
MAX_BYTES = 16 * 1024 * 1024


class ProbeUsageError(ParsebridgeError, ValueError):
    """The probe cannot run as asked (exit 2): a bad URL, a missing key variable, a refused key."""


class EndpointUnreachable(ProbeUsageError):
    """The endpoint did not answer (connection refused, timeout, TLS failure, a redirect)."""


def is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")


def _page_text(text: str) -> str:
    """A body that is not JSON, on one line: an HTML page (a proxy's or a web server's error page,
    a wrong port) by its title, else its text without tags; whitespace runs made one space. The
    page itself spread an error message over a dozen lines of markup."""
    if text.lstrip()[:1] == "<" and _TAG.search(text):
        title = _TITLE.search(text)
        shown = title.group(1) if title and title.group(1).strip() else _TAG.sub(" ", text)
        return f"an HTML page: {' '.join(shown.split())}"
    return " ".join(text.split())


@dataclass
class Answer:
    """One HTTP exchange: the status, and the JSON body (non-streamed) or the events (streamed)."""

    status: int
    body: Any = None
    events: list[Any] = field(default_factory=list)
    #: Why the stream is incomplete (cut by a bound, a line that is not JSON), else "".
    problem: str = ""
    done: bool = False
    seconds: float = 0.0
    #: A stream's Content-Type header ("" when it had none; None for an answer not streamed).
    content_type: str | None = None
    #: A 429's Retry-After header, and the 429s waited out before this answer.
    retry_after: str | None = None
    retries: Retries = field(default_factory=Retries)

    def error_text(self) -> str:
        """The server's own error message, when it gave one."""
        body = self.body
        if isinstance(body, dict):
            err = body.get("error", body)
            # OpenAI's {"error": {"message"}}, vLLM's {"message"}, FastAPI's {"detail"}
            msg = err.get("message", err.get("detail")) if isinstance(err, dict) else err
            msg = body if msg is None else msg
            said = msg if isinstance(msg, str) else json.dumps(msg, ensure_ascii=False)
            return " ".join(said.split())[:300]  # (one line: pydantic's messages span several)
        return _page_text(str(body))[:300] if body else ""


#: The route a --base-url sometimes ends with by mistake (copied from a curl command).
_ROUTE_GIVEN = "/chat/completions"

#: A URL's user information (``//user:password@``, or at the start of a URL written without its
#: scheme), which is never shown.
_USERINFO = re.compile(r"(^|//)[^/?#@]*@")


def without_userinfo(url: str) -> str:
    """`url` as the probe shows it: any ``user:password@`` written ``***@``."""
    return _USERINFO.sub(r"\1***@", url)


@dataclass
class Endpoint:
    """`base_url` (``http://host:port/v1``), the model, and the key (never shown). A
    ``user:password@`` in `base_url` is sent as HTTP Basic authentication (as curl sends it),
    and is a secret as the key is."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    deadline: float = 300.0
    #: How a rate limit is waited out (tests pass one that does not sleep).
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def __post_init__(self) -> None:
        try:  # urlsplit and .port raise ValueError on a broken IPv6 host or a port out of range
            parts = urlsplit(self.base_url)
            port = parts.port
        except ValueError as exc:
            shown = without_userinfo(self.base_url)
            raise ProbeUsageError(f"--base-url {shown!r} is not a usable URL: {exc}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProbeUsageError(_not_http(self.base_url))
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = port or (443 if parts.scheme == "https" else 80)
        path = parts.path.rstrip("/")
        if path.endswith(_ROUTE_GIVEN):  # (the probe adds the route: it would ask .../chat/completions twice)
            base = without_userinfo(self.base_url).split("?")[0].rstrip("/")[: -len(_ROUTE_GIVEN)]
            raise ProbeUsageError(
                f"--base-url ends with the route {_ROUTE_GIVEN}: give the base URL an OpenAI client "
                f"takes, {base!r} (the probe adds the route)"
            )
        self.path = path if path else "/v1"  # a bare host: the OpenAI routes live under /v1
        #: The URL's query (``api-version=...``), sent with every request as the URL gave it.
        self.query = f"?{parts.query}" if parts.query else ""
        #: The URL's ``user:password@``, percent-decoded (None: the URL had none).
        self.basic: str | None = None
        secrets = [self.api_key]
        if parts.username is not None or parts.password is not None:
            user, password = unquote(parts.username or ""), unquote(parts.password or "")
            self.basic = basic_credential(user, password)
            secrets += [password, parts.password, self.basic]
        self.redactor = Redactor(secrets)

    def redact(self, text: str) -> str:
        """`text` with the secrets blanked out, in every form they take (a server may echo a
        request's headers in an error, and a detail may quote it escaped)."""
        return self.redactor.text(text)

    def redact_data(self, value: Any) -> Any:
        """A JSON-like structure with the secrets blanked out of every string, before it is
        serialised (its escaping could otherwise hide a secret from `redact`)."""
        return self.redactor.data(value)

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address, as a URL writes it
        return f"{self.scheme}://{host}:{self.port}"

    def _connection(self) -> http.client.HTTPConnection:
        if self.scheme == "https":
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=ssl.create_default_context()
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        elif self.basic is not None:
            headers["Authorization"] = f"Basic {self.basic}"
        return headers

    def _send(
        self, conn: http.client.HTTPConnection, cut: _Deadline, method: str, route: str, body: Any
    ) -> Any:
        data = None if body is None else json.dumps(body).encode()
        try:
            conn.request(method, self.path + route + self.query, body=data, headers=self._headers())
            cut.sock = conn.sock  # (an answer that ends the connection takes the socket from conn)
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            raise EndpointUnreachable(f"{self.origin}{self.path}{route}: {cut.reason(exc)}") from None
        if 300 <= resp.status < 400:
            where = resp.getheader("Location") or "?"
            raise EndpointUnreachable(
                f"{self.origin}{self.path}{route} answered {resp.status}, a redirect to {where}: "
                "redirects are not followed (give the final URL as --base-url)"
            )
        return resp

    def _whole(self, method: str, route: str, body: dict[str, Any] | None, *, typed_read: bool) -> Answer:
        """One request and its whole answer. With `typed_read`, a connection that breaks while the
        answer is read is `EndpointUnreachable` (as one that breaks before); else it is raised as is."""
        start = time.monotonic()
        conn = self._connection()
        try:
            with _Deadline(self.deadline, self.timeout) as cut:
                resp = self._send(conn, cut, method, route, body)
                try:
                    data = _read_all(resp)
                    if cut.passed:  # (the cut read as the answer's end: what came is not all of it)
                        raise TimeoutError
                except (OSError, http.client.HTTPException) as exc:
                    if not typed_read:
                        raise
                    raise EndpointUnreachable(f"{self.origin}{self.path}{route}: {cut.reason(exc)}") from None
            return _answered(resp, data, start, self.redact)
        finally:
            conn.close()

    def _retried(self, attempt: Callable[[], Answer]) -> Answer:
        """`attempt` sent again while it is answered 429, as long as the server asks and the
        deadline for a whole answer allows (`retry.with_retries`)."""
        answer, retries = with_retries(attempt, self.deadline, self.sleep)
        answer.retries = retries
        return answer

    def get(self, route: str) -> Answer:
        return self._retried(lambda: self._whole("GET", route, None, typed_read=False))

    def post(self, route: str, body: dict[str, Any]) -> Answer:
        return self._retried(lambda: self._whole("POST", route, body, typed_read=True))

    def stream(self, route: str, body: dict[str, Any]) -> Answer:
        """A streamed request: the JSON of each ``data:`` event up to ``[DONE]``, within the bounds."""
        return self._retried(lambda: self._stream(route, body))

    def _stream(self, route: str, body: dict[str, Any]) -> Answer:
        start = time.monotonic()
        conn = self._connection()
        try:
            with _Deadline(self.deadline, self.timeout) as cut:
                resp = self._send(conn, cut, "POST", route, body)
                if resp.status != 200:
                    try:
                        data = _read_all(resp)
                    except (OSError, http.client.HTTPException) as exc:
                        raise EndpointUnreachable(
                            f"{self.origin}{self.path}{route}: {cut.reason(exc)}"
                        ) from None
                    return _answered(resp, data, start, self.redact)
                answer = Answer(resp.status, content_type=resp.getheader("Content-Type") or "")
                try:
                    _read_events(resp, answer, self.redact)
                except (OSError, http.client.HTTPException) as exc:
                    answer.problem = f"the stream broke off: {cut.reason(exc)}"
                if cut.passed and not answer.done:  # (the cut reads as the end: what came is not all)
                    answer.problem = f"the stream broke off: {cut.reason(None)}"
            answer.seconds = time.monotonic() - start
            return answer
        finally:
            conn.close()


def _answered(resp: Any, data: bytes, start: float, redact: Callable[[str], str]) -> Answer:
    """A whole answer read: its status and body (a 429 with its Retry-After), with the secrets
    `redact` blanks out of it as it came (before a detail quotes part of it: a quote cut inside
    the key would leave its start for the later redaction to miss)."""
    answer = Answer(resp.status, _json_or_text(redact, data), seconds=time.monotonic() - start)
    if resp.status == RATE_LIMITED:
        answer.retry_after = resp.getheader("Retry-After")
    return answer


class _Deadline:
    """Cuts a connection when `seconds` have passed since the request began. The socket timeout
    bounds each read only: a server that sends a byte now and then would hold an answer open for
    ever. The cut (a shutdown of the socket, from a timer thread) ends whatever read is waiting."""

    def __init__(self, seconds: float, read_timeout: float):
        self.seconds = seconds
        self.read_timeout = read_timeout
        self.passed = False
        #: The connection's socket once it is connected (`_send` sets it).
        self.sock: socket.socket | None = None
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True

    def _cut(self) -> None:
        self.passed = True
        sock = self.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def reason(self, exc: BaseException | None) -> str:
        """Why a request ended early: past the deadline, else what `exc` says."""
        if self.passed or exc is None:
            return f"no whole answer within {self.seconds:g} s (the deadline for a whole answer)"
        if isinstance(exc, socket.timeout | TimeoutError):
            return f"timed out: nothing came for {self.read_timeout:g} s (--timeout)"
        return _reason(exc)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, socket.timeout | TimeoutError):
        return "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the server running?)"
    if isinstance(exc, socket.gaierror):
        return f"the host name was not found ({exc.strerror or exc}): check --base-url"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]


def _read_all(resp: Any) -> bytes:
    data = resp.read(MAX_BYTES + 1)
    return bytes(data[:MAX_BYTES])


def _json_or_text(redact: Callable[[str], str], data: bytes) -> Any:
    text = redact(data.decode("utf-8", "replace"))
    try:
        return json.loads(text)
    except ValueError:
        return text


def _lines(resp: Any) -> Iterator[bytes]:
    total = 0
    while True:
        line = resp.readline(MAX_BYTES)
        if not line:
            return
        total += len(line)
        if total > MAX_BYTES:
            raise OSError(f"the stream sent more than {MAX_BYTES} bytes")
        yield line


#: The field names of server-sent events (a line ``NAME: value``, or ``NAME`` alone).
_SSE_FIELDS = ("data", "event", "id", "retry")


def _is_sse_line(line: str) -> bool:
    """A line an event stream may hold: blank, a ``:`` comment, or one of the SSE fields."""
    return not line or line.startswith(":") or line.partition(":")[0] in _SSE_FIELDS


def _not_a_stream(resp: Any, other: str) -> str:
    """Why a stream with no event at all is not an event stream: what came, and what a client reads."""
    ctype = resp.getheader("Content-Type") or "no Content-Type"
    return (
        f"the stream request was answered with a body that is not an event stream ({ctype}): "
        f"{other[:120]!r}; a client reads 'data: {{chunk}}' lines ending with 'data: [DONE]'"
    )


def _read_events(resp: Any, answer: Answer, redact: Callable[[str], str]) -> None:
    """Server-sent events as an SSE client reads them (the openai package's among them): an
    event's ``data:`` lines, joined by a newline, end at a blank line, and each event is one JSON
    chunk, until ``[DONE]`` or the end. Data lines with no blank line between them are one event,
    as those clients read them (its JSON then breaks: such a stream fails, as it fails them). A
    body with no ``data:`` line but lines no event stream has (HTML, a whole JSON answer) is named
    so."""
    other = ""  # what came that no event stream holds, before the first data line
    data: list[str] = []  # the data lines of the event being read
    for line in map(redact, _sse_lines(resp)):  # (the secrets blanked as they come, as `_answered` does)
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            if not _dispatch(answer, data):
                return
            data = []
        elif not answer.events and not data and not _is_sse_line(line) and len(other) < 120:
            other += line.strip() + " "
        # (comments, event names: a client skips what it does not know)
    if data:  # the last event had no blank line after it: read it, as line-by-line clients do
        _dispatch(answer, data)
    if other and not answer.events and not answer.done:
        answer.problem = _not_a_stream(resp, other.strip())


#: An event stream's line ends: CRLF, LF, or CR alone (the SSE format allows all three).
_LINE_END = re.compile(r"\r\n|\r|\n")


def _sse_lines(resp: Any) -> Iterator[str]:
    """The stream's lines, split at any of the SSE line ends (`readline` splits at LF only: a stream
    of CR line ends would be one line). JSON holds no raw CR, so a data line is never split."""
    for raw in _lines(resp):
        pieces = _LINE_END.split(raw.decode("utf-8", "replace"))
        yield from pieces[:-1] if len(pieces) > 1 and not pieces[-1] else pieces


def _dispatch(answer: Answer, data: list[str]) -> bool:
    """Read one event's data into `answer`; False when the stream is over (``[DONE]``, an event
    that is not JSON, the cap on events)."""
    payload = "\n".join(data)
    if payload == "[DONE]":
        answer.done = True
        return False
    try:
        answer.events.append(json.loads(payload))
    except ValueError:
        joined = (
            f" (its {len(data)} data lines had no blank line between them: an SSE client reads "
            "them as one event)"
            if len(data) > 1
            else ""
        )
        answer.problem = f"event {len(answer.events) + 1} is not JSON{joined}: {payload[:120]!r}"
        return False
    if len(answer.events) >= MAX_EVENTS:
        answer.problem = f"the stream was cut after {MAX_EVENTS} events"
        return False
    return True


#: An environment variable's name as a shell writes one.
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def endpoint_from(
    base_url: str, model: str, key_env: str | None, allow_insecure_key: bool, timeout: float = 60.0
) -> Endpoint:
    """The endpoint, with the key read from `key_env` (an environment variable's name) if given."""
    key = None
    if key_env and not _ENV_NAME.fullmatch(key_env):
        # (likely the key itself, given where its variable's name goes: never echoed back)
        raise ProbeUsageError(
            "--api-key-env takes the name of the environment variable that holds the key "
            "(e.g. OPENAI_API_KEY), not the key itself"
        )
    if key_env:
        key = os.environ.get(key_env)
        if not key:
            raise ProbeUsageError(f"--api-key-env {key_env}: that environment variable is not set or empty")
    endpoint = Endpoint(base_url, model, key, timeout=timeout, deadline=max(timeout * 5, 60.0))
    if key and endpoint.basic is not None:
        raise ProbeUsageError(
            "--base-url holds a user:password and --api-key-env a key: both would be the "
            "Authorization header; give one"
        )
    secret = "the API key" if key else "the password of --base-url" if endpoint.basic else None
    insecure = endpoint.scheme == "http" and not is_loopback(endpoint.host)
    if secret and insecure and not allow_insecure_key:
        raise ProbeUsageError(
            f"refusing to send {secret} over plain http to {endpoint.host}: use https, or "
            "--allow-insecure-key if this network is trusted"
        )
    return endpoint


def _not_http(url: str) -> str:
    """Why `url` is no --base-url; a URL with no scheme (``localhost:8000/v1``) gets the one to write."""
    shown = without_userinfo(url)
    said = f"--base-url must be an http:// or https:// URL, not {shown!r}"
    if "://" not in url:
        return f"{said} (did you mean 'http://{shown}'?)"
    return said
