"""The harness process: llama.cpp's chat code behind JSON lines on a 127.0.0.1 socket.

One harness per process and snapshot, owned by a `lifecycle.Server` (a subprocess that ends with
this process, started on first use, its log tail in errors). A crash in C++ (an abort, a
segfault on some input) ends the harness, not Python: the request that was being answered fails
with a `BackendError` carrying the log tail, and the next request starts a new harness.

A *session* is one rendered request (template, tools, options → the parser llama.cpp built for
it); the harness keeps them by number, and this side keeps the apply request of each, so that a
restarted harness gets its sessions back on demand. A *stream* is a session's parse state across
steps (`open_stream`, then `step` per engine step, the last one `final`). A stream's state is the
harness's alone: a stream opened before a restart is refused (`HarnessCrash`) at its next step,
as the harness numbers its new streams from the start again and the old number may be another's.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ...lifecycle import PollUntil, Server, SubprocessLauncher
from ...protocol import BackendError
from ._templates import Snapshot

#: Seconds one request may take (a parse re-reads the whole text; a pathological input is an error).
REQUEST_TIMEOUT = 60.0
#: Rendered requests kept in the harness (the oldest are closed past this).
MAX_SESSIONS = 512
#: Bytes of requests sent before their answers are read (`Harness.pipeline`).
WINDOW_BYTES = 32 * 1024


#: Linux's TCP_QUICKACK (None elsewhere), set before each answer of a pipelined window is read: a
#: harness built before its connections set TCP_NODELAY sends an answer only once the one before is
#: acknowledged, and a delayed ACK cost about 40 ms a window (conformance --family hermes --jobs 1:
#: 20.7 s wall before, 11.0 s after, CPU alike). The kernel clears the flag by itself, hence each read.
_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)


class HarnessCrash(BackendError):
    """The harness ended while answering a request (a C++ crash): the log tail says how."""


class Harness:
    """The client of one harness process (see module doc); thread-safe, one request at a time."""

    def __init__(self, snap: Snapshot) -> None:
        self.snapshot = snap
        binary = str(snap.binary)
        self.server = Server(
            "llamacpp",
            f"pb-llamacpp-harness {snap.version}",
            SubprocessLauncher(lambda port: [binary, "--port", str(port)]),
            PollUntil(self._connect),
            start_timeout=30.0,
        )
        self._lock = threading.RLock()
        self._sock: socket.socket | None = None
        self._reader: Any = None
        #: Apply request (as JSON) → (session number, apply answer).
        self._sessions: OrderedDict[str, tuple[int, dict[str, Any]]] = OrderedDict()
        #: Harness processes started: the session and stream numbers of one mean nothing to the next.
        self.generation = 0

    @property
    def lock(self) -> threading.RLock:
        """Held across the calls that use one session or stream number (`session`, `generation`)."""
        return self._lock

    def _connect(self, server: Server) -> bool:
        sock = socket.create_connection(("127.0.0.1", server.port or 0), timeout=REQUEST_TIMEOUT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # A window of requests fits in the send buffer whole (`pipeline`): sending it never waits
        # on the harness, which may itself be waiting for its answers to be read.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * WINDOW_BYTES)
        self._sock, self._reader = sock, sock.makefile("rb")
        return True

    def _ensure(self) -> None:
        if self.server.is_alive() and self._sock is not None and not self._closed_by_harness():
            return
        self._drop()
        if self.server.port is not None:  # it ended: the next start is a restart
            self.server.stop(now=True)
            self.server.restarts += 1
        self.generation += 1
        self.server.start()

    def _check_generation(self, generation: int | None, what: str, op: str) -> None:
        """Refuse a request made for an earlier harness (`generation`: when its stream or session opened)."""
        if generation is not None and generation != self.generation:
            raise HarnessCrash(
                "llamacpp",
                what,
                op,
                "the harness ended and was started again since this stream opened: the stream's "
                "state went with it; start a new stream()",
            )

    def _closed_by_harness(self) -> bool:
        """Whether the harness closed the connection since the last answer (it ended between
        requests: its watcher may not have noticed yet)."""
        assert self._sock is not None
        readable, _, _ = select.select([self._sock], [], [], 0)
        if not readable:
            return False
        try:
            return self._sock.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _drop(self) -> None:
        sock, self._sock, self._reader = self._sock, None, None
        self._sessions.clear()
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

    def call(self, request: dict[str, Any], what: str, generation: int | None = None) -> dict[str, Any]:
        """Send one request; the answer, or `BackendError` with the harness's words (or log tail).
        `generation`: the harness the request's stream or session belongs to (`_check_generation`)."""
        with self._lock:
            self._ensure()
            self._check_generation(generation, what, str(request.get("op")))
            answer = self._exchange(request, what)
        if not answer.get("ok"):
            raise BackendError("llamacpp", what, str(request.get("op")), str(answer.get("error")))
        return answer

    def _exchange(self, request: dict[str, Any], what: str) -> dict[str, Any]:
        assert self._sock is not None
        line = json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n"
        try:
            self._sock.sendall(line)
            raw = self._reader.readline()
        except (OSError, TimeoutError) as exc:
            raw, failure = b"", f"{type(exc).__name__}: {exc}"
        else:
            failure = "it closed the connection"
        if raw:
            return json.loads(raw)  # type: ignore[no-any-return]
        # It ended (or hangs): take it down, say why; the next request starts a new one.
        self.server.stop(now=True)
        tail = self.server.launcher.log_tail(800)
        self._drop()
        raise HarnessCrash(
            "llamacpp", what, str(request.get("op")), f"the harness failed: {failure}; log: {tail}"
        )

    def pipeline(self, requests: Sequence[dict[str, Any]], what: str) -> list[dict[str, Any]]:
        """Send many requests and read their answers in order, ``ok`` or not (a stream's steps:
        one wait for the harness per window, not per step; each answer is what `call` would read).

        Requests go in windows that fit in this side's send buffer whole, so the harness, writing
        its answers, never waits on a reader that is still writing."""
        lines = [json.dumps(r, ensure_ascii=False).encode("utf-8") + b"\n" for r in requests]
        return self.pipeline_lines(lines, what)

    def steps(
        self, stream: int, texts: Sequence[str], what: str, generation: int | None = None
    ) -> list[dict[str, Any]]:
        """`pipeline` of one stream's steps (not final), their lines written out directly;
        `generation` as for `call`."""
        head = b'{"op":"step","final":false,"stream":%d,"text":' % stream
        lines = [head + _string(t).encode("utf-8") + b"}\n" for t in texts]
        return self.pipeline_lines(lines, what, generation)

    def pipeline_lines(
        self, lines: Sequence[bytes], what: str, generation: int | None = None
    ) -> list[dict[str, Any]]:
        """`pipeline` of requests already written as JSON lines."""
        answers: list[dict[str, Any]] = []
        with self._lock:
            self._ensure()
            self._check_generation(generation, what, "step")
            for window in _windows(lines):
                answers += self._exchange_many(window, what)
        return answers

    def _exchange_many(self, lines: list[bytes], what: str) -> list[dict[str, Any]]:
        assert self._sock is not None
        answers: list[dict[str, Any]] = []
        try:
            self._sock.sendall(b"".join(lines))
            for _ in lines:
                if _QUICKACK is not None:  # (each answer acknowledged at once: see `_QUICKACK`)
                    self._sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)
                raw = self._reader.readline()
                if not raw:
                    break
                # Most steps change nothing: their answer is one constant line.
                answers.append(_NO_CHANGE if raw == _NO_CHANGE_LINE else json.loads(raw))
        except (OSError, TimeoutError) as exc:
            failure = f"{type(exc).__name__}: {exc}"
        else:
            if len(answers) == len(lines):
                return answers
            failure = "it closed the connection"
        self.server.stop(now=True)
        tail = self.server.launcher.log_tail(800)
        self._drop()
        raise HarnessCrash("llamacpp", what, "step", f"the harness failed: {failure}; log: {tail}")

    def session(self, apply: dict[str, Any], what: str) -> tuple[int, dict[str, Any]]:
        """The harness's session number for a rendered request (rendered now if new), and the
        apply answer (the format llama.cpp chose, the prompt, the reasoning markers...). The number
        is the current harness's (`generation`): hold `lock` until it is used, or pass that on."""
        key = json.dumps(apply, sort_keys=True, ensure_ascii=False)
        with self._lock:
            self._ensure()
            found = self._sessions.get(key)
            if found is not None:
                self._sessions.move_to_end(key)
                return found
            answer = self.call({"op": "apply", **apply}, what)
            found = self._sessions[key] = (int(answer["session"]), answer)
            while len(self._sessions) > MAX_SESSIONS:
                _, (old, _) = self._sessions.popitem(last=False)
                self.call({"op": "close", "session": old}, what)
            return found


#: A step's answer when the message did not change, as the harness writes it, and as read.
_NO_CHANGE_LINE = b'{"ok":true,"diffs":[]}\n'
_NO_CHANGE: dict[str, Any] = {"ok": True, "diffs": []}
#: A string as a JSON string literal (non-ASCII kept, as `json.dumps(..., ensure_ascii=False)`).
_string = json.encoder.encode_basestring


def _windows(lines: Sequence[bytes]) -> list[list[bytes]]:
    """The request lines grouped in windows of at most `WINDOW_BYTES` (or one line)."""
    windows: list[list[bytes]] = []
    size = WINDOW_BYTES
    for line in lines:
        if size + len(line) > WINDOW_BYTES:
            windows.append([])
            size = 0
        windows[-1].append(line)
        size += len(line)
    return windows


_harnesses: dict[tuple[int, str], Harness] = {}
_lock = threading.Lock()


def harness(snap: Snapshot) -> Harness:
    """This process's harness for `snap` (a forked child makes its own)."""
    key = (os.getpid(), str(snap.root))
    with _lock:
        found = _harnesses.get(key)
        if found is None:
            found = _harnesses[key] = Harness(snap)
        return found
