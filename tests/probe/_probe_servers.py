"""Probe tests' servers: real servers on 127.0.0.1 (subprocesses always stopped), a proxy that
injects faults, a small recording server that answers what a test scripts, and `parsebridge
probe` run as the command runs."""

from __future__ import annotations

import contextlib
import http.server
import io
import json
import os
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

#: Bounded wait for a server to answer (framework servers import torch: slow on a busy machine).
STARTUP_SECONDS = float(os.environ.get("PARSEBRIDGE_SERVER_STARTUP", "300"))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str, model: str | None = None) -> bool:
    """`url` answers 200 (and, with `model`, its OpenAI model list names that model)."""
    try:
        with urllib.request.urlopen(url, timeout=2.0) as resp:
            if resp.status != 200:
                return False
            if model is None:
                return True
            listed = json.loads(resp.read()).get("data") or []
    except (OSError, ValueError, AttributeError):
        return False
    return any(isinstance(m, dict) and m.get("id") == model for m in listed)


class Process:
    """A server in a subprocess on 127.0.0.1:`port`, ready when `ready_path` answers 200, and with
    `ready_model` when the model list it answers names that model (Dynamo's frontend answers
    ``/v1/models`` before its engine has registered the model, and 404 to a request for it then)."""

    def __init__(
        self,
        cmd: Sequence[str],
        port: int,
        ready_path: str = "/v1/models",
        env: dict[str, str] | None = None,
        ready_model: str | None = None,
    ):
        self.port = port
        self.origin = f"http://127.0.0.1:{port}"
        full_env = {**os.environ, **(env or {})}
        full_env["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT / "src"), str(HERE), full_env.get("PYTHONPATH", "")]
        )
        # Its log goes to a file, not a pipe: a pipe nobody reads fills up, and a server that logs
        # an error per request then blocks in the middle of a probe (seen with vLLM 0.11).
        self._log = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 (closed by stop)
        self.proc = subprocess.Popen(list(cmd), env=full_env, stdout=subprocess.DEVNULL, stderr=self._log)
        self._wait(self.origin + ready_path, ready_model)

    def _wait(self, url: str, model: str | None) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._log.seek(0)
                err = self._log.read()
                raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{err[-3000:]}")
            if _answers(url, model):
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the server did not answer within {STARTUP_SECONDS:.0f}s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()


@contextlib.contextmanager
def serving(cmd: Sequence[str], port: int, **kwargs: Any) -> Iterator[Process]:
    server = Process(cmd, port, **kwargs)
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def fault_proxy(upstream: str, fault: str) -> Iterator[Process]:
    port = free_port()
    cmd = [
        sys.executable,
        str(HERE / "_probe_faults.py"),
        "--upstream",
        upstream,
        "--fault",
        fault,
        "--port",
        str(port),
    ]
    with serving(cmd, port) as proxy:
        yield proxy


#: A scripted answer: (HTTP status, Content-Type, body).
Reply = tuple[int, str, bytes]


def json_reply(body: Any, status: int = 200) -> Reply:
    return status, "application/json", json.dumps(body).encode()


def sse_reply(*events: Any, done: bool = True) -> Reply:
    """An event stream: each event as a ``data:`` line (bytes as they are), then ``[DONE]``."""
    lines = [e if isinstance(e, bytes) else json.dumps(e).encode() for e in events]
    lines += [b"[DONE]"] if done else []
    return 200, "text/event-stream", b"".join(b"data: " + line + b"\n\n" for line in lines)


#: One call to get_weather, and a server's right answers carrying it (one-shot and streamed).
WEATHER_CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}
WEATHER_ANSWERS = {
    "oneshot": json_reply(
        {"choices": [{"index": 0, "message": {"tool_calls": [WEATHER_CALL]}, "finish_reason": "tool_calls"}]}
    ),
    "stream": sse_reply(
        {
            "choices": [
                {"index": 0, "delta": {"tool_calls": [{"index": 0, **WEATHER_CALL}]}, "finish_reason": None}
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ),
}


class Recorder(http.server.BaseHTTPRequestHandler):
    """Records each POST (path, Authorization) and answers it: a redirect to `redirect_to`, the
    scripted reply for the request's mode (`replies["oneshot"]`, `replies["stream"]`), or else a
    500 whose message echoes the Authorization header (as a careless server might). After
    `answers` requests (None: never) it hangs up without an answer, as a server that died. The
    first `limited` requests are answered 429 (rate limited), with `retry_after` as Retry-After."""

    seen: ClassVar[list[tuple[str, str | None]]] = []
    redirect_to: ClassVar[str | None] = None
    replies: ClassVar[dict[str, Reply]] = {}
    answers: ClassVar[int | None] = None
    limited: ClassVar[int] = 0
    retry_after: ClassVar[str | None] = None

    def do_POST(self) -> None:
        self.seen.append((self.path, self.headers.get("Authorization")))
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if len(self.seen) <= self.limited:
            self._rate_limited()
            return
        if self.answers is not None and len(self.seen) > self.answers:
            self.close_connection = True
            return
        if self.redirect_to:
            self.send_response(307)
            self.send_header("Location", self.redirect_to + self.path)
            self.end_headers()
            return
        error = {"error": {"message": f"bad key {self.headers.get('Authorization')}"}}
        mode = "stream" if request.get("stream") else "oneshot"
        status, ctype, body = self.replies.get(mode) or json_reply(error, 500)
        self.send_response(status)
        if ctype:  # "" scripts an answer with no Content-Type at all
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _rate_limited(self) -> None:
        body = json.dumps({"error": {"message": "Rate limit reached", "type": "rate_limit"}}).encode()
        self.send_response(429)
        if self.retry_after is not None:
            self.send_header("Retry-After", self.retry_after)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def recording_server(
    redirect_to: str | None = None,
    replies: dict[str, Reply] | None = None,
    answers: int | None = None,
    limited: int = 0,
    retry_after: str | None = None,
) -> tuple[http.server.HTTPServer, type[Recorder]]:
    """A `Recorder` on 127.0.0.1 in a thread (the `recorders` fixture shuts it down)."""
    fields = {
        "seen": [],
        "redirect_to": redirect_to,
        "replies": replies or {},
        "answers": answers,
        "limited": limited,
        "retry_after": retry_after,
    }
    handler = type("Handler", (Recorder,), fields)
    server = http.server.HTTPServer(("127.0.0.1", free_port()), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, handler


class _Trickle(socketserver.BaseRequestHandler):
    """Reads a request, sends `head`, then one byte every `every` seconds for `seconds` seconds."""

    head: ClassVar[bytes] = b""
    every: ClassVar[float] = 0.2
    seconds: ClassVar[float] = 8.0

    def handle(self) -> None:
        self.request.recv(65536)
        with contextlib.suppress(OSError):  # (the client may cut the connection: what is tested)
            self.request.sendall(self.head)
            end = time.monotonic() + self.seconds
            while time.monotonic() < end:
                time.sleep(self.every)
                self.request.sendall(b" ")


def trickling_server(head: bytes) -> socketserver.ThreadingTCPServer:
    """A server on 127.0.0.1 that answers every request with `head` and then a space now and then,
    never finishing the answer: each read gets a byte, so only a deadline for the whole answer ends
    it. Shut it down with ``shutdown()`` and ``server_close()``."""
    handler = type("Handler", (_Trickle,), {"head": head})
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def url_of(server: http.server.HTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def run_probe(*args: str) -> tuple[int, Any, str]:
    """`parsebridge probe ARGS --json` in this process: (exit status, the JSON report or None, stderr)."""
    from parsebridge.cli.commands import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["probe", *args, "--json"])
    text = out.getvalue()
    return code, json.loads(text) if text.strip() else None, err.getvalue()


def failed_checks(report: Any) -> set[tuple[str, str, str]]:
    """(scenario, mode, check) of every failed check."""
    return {
        (r["scenario"], r["mode"], name)
        for r in report["results"]
        for name, outcome in r["checks"].items()
        if outcome["status"] == "fail"
    }
