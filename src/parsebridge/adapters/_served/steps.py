"""The scripted engine's step plan: the caller's thread puts steps, the server's engine takes them.

One `ScriptBoard` per server; a request's key is the text its prompt carries
(`ScriptBoard.open` makes a fresh one). The engine side finds the script by
the prompt it was given (`ScriptBoard.take`: the key, or a text that holds it,
as a chat template wraps it) and plays one engine step per item it takes: a
list of token ids, then one str (the finish reason, or `CANCELLED` when the
caller abandoned the request). The caller puts the steps (`Script.put` per
chunk, `Script.end` last) from its own thread. The engine may take them in an
asyncio loop (`Script.steps`, Dynamo's in-process frontend) or in a thread of
its own (`Script.blocking_steps`, smg's gRPC worker): the same board serves
both, and a one-shot request puts every step before it sends the request.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator

#: What a script's steps end with when the caller abandoned the request (never a finish reason).
CANCELLED = "cancelled"
Step = list[int] | str


class Script:
    """One request's engine steps (see module doc). `put`/`end`/`cancel` are thread-safe."""

    __slots__ = ("_board", "_items", "_lock", "_wake", "ended", "finished", "key", "taken")

    def __init__(self, board: ScriptBoard, key: str) -> None:
        self._board = board
        self.key = key
        self._lock = threading.Lock()
        self._items: deque[Step] = deque()
        #: How the engine side is woken when a step arrives (set once it starts taking).
        self._wake: Callable[[], None] | None = None
        self.ended = False
        #: The engine side took the last step (a str).
        self.finished = False
        #: The engine side found this script (`ScriptBoard.take`): False after an answer means the
        #: request reached the engine without its key (`undelivered`).
        self.taken = False

    def _send(self, item: Step) -> None:
        with self._lock:
            self._items.append(item)
            wake = self._wake
        if wake is not None:
            wake()

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

    def _available(self) -> Iterator[Step]:
        """The steps put so far, in order; the key is forgotten as the last one (a str) is taken."""
        while True:
            with self._lock:
                if not self._items:
                    return
                item = self._items.popleft()
            if isinstance(item, str):
                self.finished = True
                self._board.discard(self.key)
            yield item
            if self.finished:
                return

    async def steps(self) -> AsyncIterator[Step]:
        """The engine side in an asyncio loop: token id lists, then one str (finish or CANCELLED)."""
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()

        def wake() -> None:
            # A closed loop raises RuntimeError: the server is gone, nobody reads the step.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(ready.set)

        with self._lock:
            self._wake = wake
        while not self.finished:
            ready.clear()
            for item in self._available():
                yield item
            if not self.finished:
                await ready.wait()

    def blocking_steps(self, timeout: float) -> Iterator[Step]:
        """The engine side in a thread: as `steps`; stops early (no str) after `timeout` s without a step."""
        ready = threading.Event()
        with self._lock:
            self._wake = ready.set
        while not self.finished:
            ready.clear()
            yield from self._available()
            if not self.finished and not ready.wait(timeout):
                return


class ScriptBoard:
    """The scripts of requests in flight, by key; one board per server."""

    def __init__(self, prefix: str = "pb") -> None:
        self._lock = threading.Lock()
        self._scripts: dict[str, Script] = {}
        self._counter = itertools.count()
        self._prefix = f"{prefix}-{os.getpid()}-{os.urandom(3).hex()}"
        self._key = re.compile(re.escape(self._prefix) + r"-\d+")

    @property
    def prefix(self) -> str:
        """What every key of this board starts with: ``NAME-PID-RANDOM`` (unique per board)."""
        return self._prefix

    def open(self) -> Script:
        """A script under a fresh key (the text to send as the request's prompt)."""
        key = f"{self._prefix}-{next(self._counter)}"
        script = Script(self, key)
        with self._lock:
            self._scripts[key] = script
        return script

    def take(self, prompt: str) -> Script | None:
        """The script whose key the prompt is or holds (its last key, when a template wraps it),
        marked `Script.taken`; None: not one of ours, or already finished."""
        key = prompt.strip()
        with self._lock:
            script = self._scripts.get(key)
        if script is None:
            found = self._key.findall(prompt)
            if not found:
                return None
            with self._lock:
                script = self._scripts.get(found[-1])
        if script is not None:
            script.taken = True
        return script

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


def undelivered(what: str) -> str:
    """Why an answer came without the engine having found the request's script (`Script.taken`):
    the server's answer is not a reading of the output, which never reached its parser."""
    return (
        f"the server answered the {what} without its engine having received the output: the prompt "
        "the server tokenized and the engine decoded no longer carried the request's key (a "
        "tokenizer= whose decode does not give back the text it encoded, e.g. one that joins "
        "word pieces with spaces, cannot be used with a served backend)"
    )
