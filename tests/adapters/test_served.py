"""The shared served-framework machinery (`adapters/_served`), against a tiny fake server.

No framework: a fake frontend serves one streamed route whose engine plays a
script, fenced after every step the way the Dynamo adapter fences, so the
life cycle (first use, readiness, restart once, typed error, close, fork)
and the attribution are tested on their own.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from _forking import said_in_fork
from parsebridge.adapters._served import (
    ServedFrontend,
    get_json,
    model_folder,
    open_sse,
    read_to_fence,
)
from parsebridge.adapters._served.answers import StreamRequest
from parsebridge.protocol import ServerUnavailableError


class FakeFrontend(ServedFrontend):
    """Streams each script step as an event {"step": text}, then a fence event {"fence": n}."""

    backend = "fake"
    start_timeout = 5.0

    def __init__(self, fail_starts: int = 0, folder: Any = None) -> None:
        super().__init__()
        self.fail_starts = fail_starts
        self.folder = folder or model_folder(["<tool_call>", "</tool_call>"])
        self.listener: asyncio.AbstractServer | None = None

    async def _start(self, port: int) -> None:
        if self.fail_starts > 0:
            self.fail_starts -= 1
            raise OSError("address in use (simulated)")
        self.listener = await asyncio.start_server(self._handle, "127.0.0.1", port)

    async def _stop(self) -> None:
        if self.listener is not None:
            self.listener.close()
            await self.listener.wait_closed()

    def _is_ready(self) -> bool:
        return get_json(self.ensure_port(), "/ready", 1.0) == {"ok": True}

    def ensure_port(self) -> int:
        assert self.port is not None
        return self.port

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        body = json.loads(await reader.readexactly(length)) if length else None
        if head.startswith(b"GET /ready"):
            payload = b'{"ok": true}'
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(payload), payload))
        else:
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
            script = self.board.take(body["prompt"])
            assert script is not None
            n = 0
            async for item in script.steps():
                if isinstance(item, str):
                    writer.write(b'data: {"finish": "%s"}\n\n' % item.encode())
                    break
                text = self.folder.decode(item)
                if "hold" not in text:  # a step the "server" holds back shows nothing
                    writer.write(b"data: %s\n\n" % json.dumps({"step": text}).encode())
                writer.write(b'data: {"fence": %d}\n\n' % n)
                await writer.drain()
                n += 1
            writer.write(b"data: [DONE]\n\n")
        await writer.drain()
        writer.close()


def _fence(event: Any) -> tuple[Any, bool]:
    return (None, True) if "fence" in event else (event, False)


def test_model_folder_is_cached_and_round_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARSEBRIDGE_CACHE", str(tmp_path))
    folder = model_folder(["<think>", "</think>", "<th"])
    assert folder.path.parent == tmp_path / "served"
    assert {p.name for p in folder.path.iterdir()} == {
        "tokenizer.json",
        "tokenizer_config.json",
        "config.json",
    }
    ids = folder.encode("é<think>x</think>")
    assert ids[:2] == list("é".encode()) and ids[2] == folder.marker_ids["<think>"]
    assert ids[-1] == folder.marker_ids["</think>"]
    assert folder.decode(ids) == "é<think>x</think>"
    assert model_folder(["<th", "</think>", "<think>"]) is folder  # same marker set: the same folder
    vocab = json.loads((folder.path / "tokenizer.json").read_text())
    assert len(vocab["model"]["vocab"]) == 256
    assert not any(t["special"] for t in vocab["added_tokens"] if t["content"] != "<|pb_eos|>")


def test_first_use_starts_fences_attribute_each_step_and_close_leaves_nothing() -> None:
    fe = FakeFrontend()
    before = threading.active_count()
    port = fe.ensure()
    assert fe.ensure() == port and fe.running
    script = fe.board.open()
    reader = open_sse(port, "/stream", {"prompt": script.key})
    per_step = []
    for chunk in ["Let me", " hold", "<tool_call>{}</tool_call>"]:
        script.put(fe.folder.encode(chunk))
        events, fenced = read_to_fence(reader, _fence)
        assert fenced
        per_step.append([e["step"] for e in events])
    script.end()
    rest, fenced = read_to_fence(reader, _fence)
    assert not fenced and rest == [{"finish": "stop"}]
    assert per_step == [["Let me"], [], ["<tool_call>{}</tool_call>"]]
    assert len(fe.board) == 0
    fe.close()
    assert threading.active_count() == before
    assert not fe.running
    with pytest.raises(OSError):
        get_json(port, "/ready", 0.5)


def test_a_failed_start_is_retried_once_then_a_typed_error() -> None:
    ok = FakeFrontend(fail_starts=1)
    assert ok.ensure() > 0
    ok.close()
    bad = FakeFrontend(fail_starts=2)
    with pytest.raises(ServerUnavailableError, match="address in use") as info:
        bad.ensure()
    assert info.value.backend == "fake" and "attempt 2" in info.value.reason
    assert bad.loop is None and not bad.running


class SlowToAnswer(FakeFrontend):
    """Answers ready only once the test allows it (`answer`): a server still starting."""

    def __init__(self) -> None:
        super().__init__()
        self.answer = threading.Event()

    def _is_ready(self) -> bool:
        return self.answer.is_set() and super()._is_ready()


def test_a_second_thread_waits_for_the_start_not_only_for_a_port() -> None:
    """The port is picked before the server answers; a second thread's first use returned it at
    once, then found no loop or routes: Dynamo's "the server's event loop is not running" for a
    thread pool's first parses (tests/adapters/test_dynamo_backend.py, run alone)."""
    fe = SlowToAnswer()
    starter = threading.Thread(target=fe.ensure)
    starter.start()
    try:
        deadline = time.monotonic() + 5
        while fe.server.port is None and time.monotonic() < deadline:  # the start has its port
            time.sleep(0.005)
        assert fe.server.port is not None and fe.server.ready_port is None
        second: list[int] = []
        other = threading.Thread(target=lambda: second.append(fe.ensure()))
        other.start()
        other.join(0.3)
        assert other.is_alive() and second == [], "returned a port before the server answered"
        fe.answer.set()
        starter.join(5)
        other.join(5)
        assert second == [fe.port] and fe.server.ready_port == fe.port
    finally:
        fe.answer.set()
        starter.join(5)
        fe.close()
    assert fe.server.ready_port is None


class _User:
    """A parser as the server counts it (weakly referenced)."""


class SlowToStop(FakeFrontend):
    """Its stop waits until the test allows it (`let_stop`): a server being stopped."""

    def __init__(self) -> None:
        super().__init__()
        self.stopping = threading.Event()
        self.let_stop = threading.Event()

    async def _stop(self) -> None:
        self.stopping.set()
        while not self.let_stop.is_set():
            await asyncio.sleep(0.005)
        await super()._stop()


def test_a_new_user_during_the_last_release_gets_a_running_server() -> None:
    """One parser's `release` stops the server it was the last user of; another parser's first
    use at that moment was counted after the emptiness check and handed the stopping server's
    port, so its first parse met a server that was gone."""
    fe = SlowToStop()
    first, second = _User(), _User()
    fe.use(first)
    releaser = threading.Thread(target=fe.release, args=(first,))
    releaser.start()
    got: list[int] = []
    user = threading.Thread(target=lambda: got.append(fe.use(second)))
    try:
        assert fe.stopping.wait(5)
        user.start()
        user.join(0.3)
        fe.let_stop.set()
        releaser.join(5)
        user.join(5)
        assert got and fe.running and got == [fe.port], "the new user was given a stopped server"
    finally:
        fe.let_stop.set()
        releaser.join(5)
        user.join(5)
        fe.release(second)
    assert not fe.running


def test_close_removes_cleanup_paths(tmp_path: Path) -> None:
    fe = FakeFrontend()
    fe.ensure()
    junk = tmp_path / "written-by-the-server"
    junk.mkdir()
    (junk / "f").write_text("x")
    fe.cleanup_paths.append(junk)
    fe.close()
    assert not junk.exists()
    fe.close()  # twice is fine


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_its_own_server_or_refuses_clearly() -> None:
    fe = FakeFrontend()
    parent_port = fe.ensure()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, never return into pytest
        try:
            child_port = fe.ensure()
            msg = "ok" if child_port != parent_port and fe.running else "same"
            fe.close()
            FakeFrontend.fork_policy = "refuse"
            refusing = FakeFrontend()
            refusing.ensure()
            pid2 = os.fork()
            if pid2 == 0:
                try:
                    refusing.ensure()
                    os.write(write, b"no-refusal")
                except ServerUnavailableError as exc:
                    os.write(write, b"refused" if "forked" in str(exc) else b"wrong-error")
                os._exit(0)
            os.waitpid(pid2, 0)
            refusing.close()
            os.write(write, ("|" + msg).encode())
        except BaseException as exc:  # reported to the parent
            os.write(write, f"|error {exc!r}".encode())
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(write)
    with os.fdopen(read) as fh:
        said = fh.read()
    FakeFrontend.fork_policy = "restart"
    assert said == "refused|ok"
    assert fe.ensure() == parent_port  # the parent's server is untouched
    fe.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_stream_opened_before_a_fork_is_refused_in_the_child_at_once() -> None:
    """Before: the child put its step on its own copy of the script, which the parent's server
    never reads, and waited on the parent's socket for the read timeout (60 s for Dynamo)."""
    fe = FakeFrontend()
    port = fe.ensure()
    script = fe.board.open()

    def split(event: Any) -> tuple[list[dict[str, Any]] | None, bool]:
        return ([{"content": event["step"]}] if "step" in event else None), "fence" in event

    request = StreamRequest(
        script,
        lambda: open_sse(port, "/stream", {"prompt": script.key}, 3.0),
        split,
        backend="fake",
        alive=lambda: fe.running,
    )
    try:
        assert request.step(fe.folder.encode("one")) == [{"content": "one"}]

        def step_in_the_copy() -> str:
            began = time.monotonic()
            try:
                request.step(fe.folder.encode("two"))
                said = "stepped"
            except ServerUnavailableError as exc:
                said = "refused" if "fork" in str(exc) else f"wrong error: {exc}"
            return f"{said} {time.monotonic() - began < 1}"

        said = said_in_fork(step_in_the_copy)
        assert said == "refused True"
        assert request.step(fe.folder.encode("three")) == [{"content": "three"}]  # the parent's goes on
    finally:
        request.abandon()
        fe.close()
