"""The scripted engine's step plan: the caller's thread puts steps, the server's engine takes them.

A request's prompt is its key (`ScriptBoard.open` makes a fresh one). The
engine handler, running in the server's event loop, looks the script up by
the prompt it was given (`ScriptBoard.take`) and yields one engine step per
item `Script.steps` gives: a list of token ids, then the finish reason. The
caller puts the steps (`Script.put` per chunk, `Script.end` last) from its own
thread; they cross into the loop with `call_soon_threadsafe`, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import threading
from collections.abc import AsyncIterator

#: What `Script.steps` yields last when the caller abandoned the request (never a finish reason).
CANCELLED = "cancelled"


class Script:
    """One request's engine steps (see module doc). `put`/`end`/`cancel` are thread-safe.

    Steps put before the engine asks are kept in order; from then on they go to the loop the
    engine runs in (which need not be the frontend's own: a framework may run its engine
    handlers on a loop of its choosing).
    """

    __slots__ = ("_board", "_early", "_lock", "_loop", "_queue", "ended", "key")

    def __init__(self, board: ScriptBoard, key: str) -> None:
        self._board = board
        self.key = key
        self._lock = threading.Lock()
        self._early: list[list[int] | str] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[list[int] | str] | None = None
        self.ended = False

    def _send(self, item: list[int] | str) -> None:
        with self._lock:
            loop, queue = self._loop, self._queue
            if loop is None or queue is None:
                self._early.append(item)
                return
        # A closed loop raises RuntimeError: the server is gone, nobody reads the step.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def put(self, token_ids: list[int]) -> None:
        """One engine step's token ids (an empty list is a step with no token)."""
        if not self.ended:
            self._send(token_ids)

    def end(self, finish_reason: str = "stop") -> None:
        """The last step: the engine finishes with `finish_reason`."""
        if not self.ended:
            self.ended = True
            self._send(finish_reason)

    def cancel(self) -> None:
        """Abandon the request: the engine stops without a finish reason; the key is forgotten."""
        if not self.ended:
            self.ended = True
            self._send(CANCELLED)
        self._board.discard(self.key)

    async def steps(self) -> AsyncIterator[list[int] | str]:
        """The engine side (in the engine's loop): token id lists, then one str (finish or CANCELLED)."""
        queue: asyncio.Queue[list[int] | str] = asyncio.Queue()
        with self._lock:
            for item in self._early:
                queue.put_nowait(item)
            self._early.clear()
            self._loop, self._queue = asyncio.get_running_loop(), queue
        while True:
            item = await queue.get()
            if isinstance(item, str):
                self._board.discard(self.key)
                yield item
                return
            yield item


class ScriptBoard:
    """The scripts of requests in flight, by key; one board per server."""

    def __init__(self, prefix: str = "pb") -> None:
        self._lock = threading.Lock()
        self._scripts: dict[str, Script] = {}
        self._counter = itertools.count()
        self._prefix = f"{prefix}-{os.getpid()}-{os.urandom(3).hex()}"
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def prefix(self) -> str:
        """What every key of this board starts with: ``NAME-PID-RANDOM`` (unique per board)."""
        return self._prefix

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The frontend's event loop (for the record: scripts follow the loop their engine runs in)."""
        self.loop = loop

    def open(self) -> Script:
        """A script under a fresh key (the text to send as the request's prompt)."""
        key = f"{self._prefix}-{next(self._counter)}"
        script = Script(self, key)
        with self._lock:
            self._scripts[key] = script
        return script

    def take(self, prompt: str) -> Script | None:
        """The script whose key the prompt holds (None: not one of ours, or already finished)."""
        key = prompt.strip()
        with self._lock:
            return self._scripts.get(key)

    def discard(self, key: str) -> None:
        with self._lock:
            self._scripts.pop(key, None)

    def cancel_all(self) -> None:
        """End every script in flight (the server is stopping)."""
        with self._lock:
            scripts = list(self._scripts.values())
        for script in scripts:
            script.cancel()

    def __len__(self) -> int:
        with self._lock:
            return len(self._scripts)

    def __repr__(self) -> str:
        return f"<ScriptBoard {self._prefix} in flight={len(self)}>"
