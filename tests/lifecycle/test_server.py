"""`lifecycle.Server` with its subprocess launcher, on a tiny HTTP server (no framework)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from parsebridge.lifecycle import HttpAnswer, PollUntil, Server, SubprocessLauncher, stop_all
from parsebridge.lifecycle import server as server_module
from parsebridge.protocol import ServerUnavailableError

#: A server on the port it is given; says hello on standard output, answers GET /ready with 200.
SERVER = textwrap.dedent(
    """
    import http.server, sys
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
        def log_message(self, *a): pass
    print("hello from the server", flush=True)
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """
)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _server(script: str = SERVER, **launch: object) -> Server:
    launcher = SubprocessLauncher(lambda port: [sys.executable, "-c", script, str(port)], **launch)  # type: ignore[arg-type]
    return Server("test", "tiny server", launcher, HttpAnswer("/ready"), start_timeout=20)


def test_with_starts_until_ready_and_stop_leaves_nothing() -> None:
    with _server() as server:
        assert server.is_alive() and server.port is not None
        port, pid = server.port, server.launcher.pid
        assert _listening(port)
        deadline = time.monotonic() + 10  # the log is read by a thread of its own
        while "hello from the server" not in server.log_tail() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "hello from the server" in server.log_tail()
    assert not server.is_alive() and server.port is None
    assert pid is not None and _gone(pid)
    assert not _listening(port)


def test_restart_uses_the_same_command_on_a_new_port() -> None:
    server = _server().start()
    try:
        first = server.port
        server.restart()
        assert server.is_alive() and server.port != first and server.restarts == 1
        assert _listening(server.port)  # type: ignore[arg-type]
    finally:
        server.stop()


def _never_ready_once_it_said(word: str) -> Callable[[Server], bool]:
    """A readiness check that is never true, and first waits (within reason) until the server's
    log shows `word`: on a loaded machine Python may take longer than the start timeout to print."""

    def check(server: Server) -> bool:
        deadline = time.monotonic() + 10
        while word not in server.log_tail() and time.monotonic() < deadline:
            time.sleep(0.05)
        return False

    return check


def test_a_server_that_ends_or_never_gets_ready_is_a_typed_error_with_its_log_tail() -> None:
    dies = _server("import sys; print('no luck: port taken', flush=True); sys.exit(3)")
    with pytest.raises(ServerUnavailableError, match="ended while starting: no luck: port taken"):
        dies.start()
    slow = Server(
        "test",
        "mute server",
        SubprocessLauncher(  # no flush: the launcher runs a captured Python server unbuffered
            lambda port: [sys.executable, "-c", "print('waiting'); import time; time.sleep(60)"]
        ),
        PollUntil(_never_ready_once_it_said("waiting")),
        start_timeout=0.5,
    )
    with pytest.raises(ServerUnavailableError, match=r"not ready after 0.5 s.*waiting"):
        slow.start()
    assert not slow.is_alive()


def test_stop_asks_then_terminates_then_kills() -> None:
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    server = Server(
        "test",
        "stubborn",
        SubprocessLauncher(lambda _: [sys.executable, "-c", stubborn], needs_port=False),
        PollUntil(lambda s: "up" in s.log_tail()),
    )
    server.stop_waits = (0.2, 0.2, 10.0)
    server.start()
    pid = server.launcher.pid
    began = time.monotonic()
    server.stop()
    assert pid is not None and _gone(pid, 1.0)
    assert time.monotonic() - began < 5


def test_stop_all_stops_every_server_this_process_started() -> None:
    servers = [_server().start() for _ in range(2)]
    pids = [s.launcher.pid for s in servers]
    stop_all()
    assert all(pid is not None and _gone(pid) for pid in pids)
    assert not any(s.is_alive() for s in servers)


def test_a_sigkilled_parent_leaves_no_server(tmp_path: Path) -> None:
    """The parent-death pipe: a server started by a process killed with SIGKILL ends by itself,
    whether it runs a module in the watcher (``python -m``) or as the watcher's child."""
    src = str(Path(__file__).resolve().parents[2] / "src")
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {src!r})
        from parsebridge.lifecycle import HttpAnswer, Server, SubprocessLauncher
        script = {SERVER!r}
        a = Server("t", "child", SubprocessLauncher(lambda p: [sys.executable, "-c", script, str(p)]), HttpAnswer("/ready")).start()
        b = Server("t", "module", SubprocessLauncher(lambda p: [sys.executable, "-m", "http.server", "-b", "127.0.0.1", str(p)]), HttpAnswer("/")).start()
        print(a.port, b.port, flush=True)
        import time; time.sleep(120)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        line = parent.stdout.readline()  # type: ignore[union-attr]
        ports = [int(p) for p in line.split()]
        assert len(ports) == 2 and all(_listening(p) for p in ports)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 10
    while any(_listening(p) for p in ports) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_listening(p) for p in ports)


def test_free_port_avoids_the_ports_it_is_told(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that needs two ports (smg: its listener and its metrics) gets two different ones,
    even when the OS hands the first one out again (CI saw smg refuse `--port` = `--prometheus-port`)."""
    picks = iter([5000, 5000, 5000, 5001])

    class OsPicks:
        def __init__(self, *args: object) -> None:
            self.port = next(picks)

        def __enter__(self) -> OsPicks:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def bind(self, address: object) -> None:
            return None

        def getsockname(self) -> tuple[str, int]:
            return ("127.0.0.1", self.port)

    monkeypatch.setattr(server_module.socket, "socket", OsPicks)
    assert server_module.free_port() == 5000
    assert server_module.free_port(avoid=(5000,)) == 5001


def test_stop_now_kills_at_once() -> None:
    """`stop(now=True)` is for a stuck server (a gateway that stopped answering, a worker past its
    time budget): it said "kill at once" and asked first, then terminated, waiting 2 s after each
    (measured: 4.0 s for a SIGSTOPped server, which acts on neither)."""
    server = _server().start()
    pid = server.launcher.pid
    assert pid is not None
    # (the server runs as the watcher's child: a watcher killed while stopped cannot end it)
    children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    os.kill(pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        server.stop(now=True)
        assert time.monotonic() - began < 1.5
        assert _gone(pid) and not server.is_alive()
    finally:
        for left in [pid, *children]:
            if not _gone(left, 0.1):
                os.kill(left, signal.SIGKILL)
