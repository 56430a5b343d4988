"""A time budget per parser call: the parser runs in a worker process that can be stopped.

Some framework parsers use regular expressions that backtrack badly on
adversarial output; a thread cannot interrupt them, a process can. With
``get_tool_parser(spec, timeout=SECONDS)`` the parser is built inside one
child process and every call (`parse`, and each stream's `feed`/`flush`)
goes there over a pipe. A call that outlives the budget gets the child
killed (the next call starts a fresh one) and raises `ParseTimeoutError`,
which the failure policy then turns into a typed error or a fallback to
plain content, like any other parser error.

Costs (see docs/failure-policy.md): a process start plus the
framework's import on first use, and one pipe round trip per call. Calls to
one budgeted parser are serialised, since one child serves them all.

The child is a fresh interpreter started with `subprocess` (not
`multiprocessing`'s spawn, which re-imports the parent's ``__main__``: a
plain script without ``if __name__ == "__main__":`` would run again in the
child and fail). It gets the parent's ``sys.path`` and the parser's
arguments over the pipe, so a budget works from a script, a notebook or
``python -c`` alike. Each child is a `lifecycle.Server` (a subprocess that
ends when its pipe closes); it is stopped when its parser is closed or
collected, or at interpreter exit, silently.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import pickle
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, Pipe
from typing import Any, NamedTuple

from ..lifecycle import Server, SubprocessLauncher
from ..protocol import (
    BackendError,
    InvalidSpecError,
    ParsebridgeError,
    ParseTimeoutError,
    ReasoningBlock,
    ReasoningParseResult,
    ReasoningStreamBase,
    ServerUnavailableError,
    StreamDelta,
    StreamStateError,
    ToolParseResult,
    ToolSpec,
    ToolStreamBase,
)
from ..protocol.families import Kind

#: How long a child may take to import its framework and build the parser.
STARTUP_TIMEOUT = 180.0
#: The longest budget a call may have: the pipe's poll takes whole milliseconds in a C int (about
#: 24.8 days); past it (and for inf or nan) every call failed, blamed on the parser.
MAX_TIMEOUT = 1_000_000.0


def _serve(
    conn: Connection,
    lookup: Callable[[str], Any],
    kind: Kind,
    backend: str,
    name: str,
    tools: Any,
    options: dict[str, Any],
) -> None:
    """Child process: build the parser once, then answer calls until the pipe closes.

    `lookup` (the registry's `get_backend`, pickled by reference) keeps this
    module free of an import of the registry, which imports it.
    """
    try:
        be = lookup(backend)
        if kind == "tool":
            parser: Any = be.create_tool_parser(name, tools=tools, **options)
        else:
            parser = be.create_reasoning_parser(name, **options)
    except BaseException as exc:  # reported to the parent, which raises it typed
        invalid = isinstance(exc, InvalidSpecError)
        conn.send(("invalid" if invalid else "err", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ok", None))
    streams: dict[int, Any] = {}
    while True:
        try:
            op, sid, args, kwargs = conn.recv()
        except (EOFError, OSError):
            return
        try:
            if op == "parse":
                value: Any = parser.parse(*args, **kwargs)
            elif op == "has":
                value = parser.has_tool_calls(*args) if kind == "tool" else parser.has_reasoning(*args)
            elif op == "format":
                value = parser.format_tool_result(*args)
            elif op == "open":
                streams[sid] = parser.stream(**kwargs)
                value = None
            elif op in ("feed", "flush"):
                stream = streams[sid]
                delta = getattr(stream, op)(*args)
                pending = getattr(stream, "pending_text", None)
                value = (delta, pending() if callable(pending) else "", getattr(stream, "block", None))
            elif op == "close":
                streams.pop(sid, None)
                value = None
            else:
                raise ValueError(f"unknown worker call {op!r}")
        except BaseException as exc:
            conn.send(("err", f"{type(exc).__name__}: {exc}"))
            continue
        conn.send(("ok", value))


#: What the child interpreter runs: the parent's sys.path first, then `child_main` on the pipe.
_CHILD_CODE = (
    "import sys, json; sys.path[:0] = json.loads(sys.argv[2]); "
    "from parsebridge.policy.budget import child_main; child_main(int(sys.argv[1]))"
)


def child_main(fd: int) -> None:
    """Entry point of a worker interpreter: read the parser's arguments, then serve calls."""
    with contextlib.suppress(ValueError, OSError):  # Ctrl-C is the parent's to handle
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = Connection(fd)
    try:
        args = conn.recv()
    except (EOFError, OSError):
        return
    except Exception as exc:  # an argument the child cannot unpickle (a class only the parent has)
        conn.send(("err", f"cannot receive the parser's arguments: {type(exc).__name__}: {exc}"))
        return
    _serve(conn, *args)


class _Handshake:
    """A worker's readiness (a `lifecycle` strategy): the parser's arguments sent, its first answer
    read. A child that cannot build the parser says why, as a typed error."""

    interval = 0  # `check` waits on the pipe itself

    def __init__(self, worker: _Worker, conn: Connection) -> None:
        self._worker, self._conn = worker, conn
        self._deadline: float | None = None

    def check(self, server: Server) -> bool:
        w, conn = self._worker, self._conn
        if self._deadline is None:
            self._deadline = time.monotonic() + STARTUP_TIMEOUT
            try:
                conn.send(w._args)
            except (pickle.PicklingError, TypeError, AttributeError) as exc:
                raise InvalidSpecError(
                    f"{w.backend}:{w.name}: timeout= runs the parser in a worker process, and its "
                    f"options cannot be sent there: {exc}"
                ) from exc
            except OSError as exc:
                raise BackendError(w.backend, w.name, "start", f"worker died: {exc}") from exc
        if not conn.poll(0.05):
            if time.monotonic() > self._deadline:
                raise ParseTimeoutError(w.backend, w.name, "start", f"worker not ready in {STARTUP_TIMEOUT}s")
            return False
        try:
            status, value = conn.recv()
        except (EOFError, OSError) as exc:
            raise BackendError(
                w.backend,
                w.name,
                "start",
                "the worker process exited before it was ready; its stderr above says why",
            ) from exc
        if status == "invalid":
            raise InvalidSpecError(f"{w.backend}:{w.name}: {value}")
        if status != "ok":
            raise BackendError(w.backend, w.name, "construct", value)
        return True


class Launch(NamedTuple):
    """What a worker's child builds its parser from: sent at every start, the same after a restart."""

    lookup: Callable[[str], Any]
    kind: Kind
    backend: str
    name: str
    tools: Any
    options: dict[str, Any]


class _Worker:
    """One child process serving one parser; restarted after a timeout."""

    def __init__(self, launch: Launch, timeout: float) -> None:
        self.kind, self.backend, self.name = launch.kind, launch.backend, launch.name
        self._args = tuple(launch)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._conn: Connection | None = None
        self._server: Server | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self.generation = 0  # bumps on every start and stop; streams of an old child are dead
        #: Why the last child stopped ("closed", or "" after a timeout or a broken pipe): what a
        #: stream it served is told when it is fed again.
        self._stopped_by = ""
        self._ids = itertools.count(1)
        #: The process whose child `_conn` talks to (None: none started yet).
        self._pid: int | None = None
        #: The process this one is a fork of, once `_forked` saw it (for the errors of its streams).
        self._forked_from: int | None = None

    def _forked(self) -> None:
        """In a forked copy of the process that started the child: forget that child.

        Its pipe is the parent's too, so calls from both went down one pipe and each read
        whichever answer came first (two forked processes parsing side by side read each other's
        results, most of them). The copy starts its own child on its next call; a stream opened
        before the fork is refused (`call`). A new lock too: the parent's may have been held by
        another thread at the fork. The copy closes only its own end of the pipe, which leaves
        the parent's child running."""
        if self._pid is None or self._pid == os.getpid():
            return
        conn, self._conn, self._server = self._conn, None, None
        self._forked_from, self._pid = self._pid, None
        if self._finalizer is not None:
            self._finalizer.detach()  # (`Server.stop` in a fork only forgets it: nothing to do)
            self._finalizer = None
        self._lock = threading.Lock()
        self.generation += 1
        self._stopped_by = "forked"
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.close()

    def _start(self) -> None:
        parent, child = Pipe()
        fd = child.fileno()
        code = [sys.executable, "-c", _CHILD_CODE, str(fd), json.dumps(sys.path)]
        # No parent-death watcher: the child ends by itself when this end of its pipe closes.
        launcher = SubprocessLauncher(
            lambda _: code,
            capture=False,
            parent_death=False,
            pass_fds=(fd,),
            on_ask=parent.close,
            needs_port=False,
        )
        server = Server(
            self.backend,
            f"time-budget worker of {self.name}",
            launcher,
            _Handshake(self, parent),
            start_timeout=STARTUP_TIMEOUT + 10,
        )
        try:
            server.start()  # the handshake's own errors (typed) pass as they are
        except ServerUnavailableError as exc:  # it could not be launched, or ended without a word
            raise BackendError(
                self.backend, self.name, "start", f"cannot start a worker process: {exc.reason}"
            ) from exc
        finally:
            child.close()
            if not server.is_alive():
                parent.close()
        self._conn, self._server = parent, server
        self._finalizer = weakref.finalize(self, server.stop)
        self._pid = os.getpid()
        self.generation += 1

    def _kill(self) -> None:
        """Stop the child at once (past its budget, or its pipe broke) and close the pipe."""
        finalizer, server, conn = self._finalizer, self._server, self._conn
        self._conn = self._server = self._finalizer = None
        self.generation += 1  # the child's streams died with it (another stream may still hold one)
        self._stopped_by = ""
        if finalizer is not None:
            finalizer.detach()
        if server is not None:
            server.stop(now=True)
        if conn is not None:
            conn.close()

    def start(self) -> None:
        """Start the child now, so a parser that cannot be built fails at creation."""
        self._forked()
        with self._lock:
            if self._conn is None:
                self._start()

    def new_stream_id(self) -> int:
        return next(self._ids)

    def call(self, op: str, sid: int = 0, *args: Any, generation: int | None = None, **kwargs: Any) -> Any:
        self._forked()
        with self._lock:
            if generation is not None and generation != self.generation:
                if self._stopped_by == "closed":
                    raise StreamStateError(
                        f"{self.backend}:{self.name} was closed while this stream was open: what it "
                        "held went with its worker; start a new stream()"
                    )
                if self._stopped_by == "forked":
                    raise StreamStateError(
                        f"this stream of {self.backend}:{self.name} was opened in process {self._forked_from}, "
                        "of which this one is a fork: its state is in that process's worker; start a "
                        "new stream() here"
                    )
                raise ParseTimeoutError(
                    self.backend, self.name, op, "the stream's worker was stopped after an earlier timeout"
                )
            if self._conn is None:
                self._start()
            assert self._conn is not None
            try:
                self._conn.send((op, sid, args, kwargs))
                ready = self._conn.poll(self.timeout)
            except (OSError, EOFError) as exc:
                self._kill()
                raise BackendError(self.backend, self.name, op, f"worker died: {exc}") from exc
            if not ready:
                self._kill()
                raise ParseTimeoutError(self.backend, self.name, op, f"exceeded the {self.timeout:g}s budget")
            try:
                status, value = self._conn.recv()
            except (OSError, EOFError) as exc:
                self._kill()
                raise BackendError(self.backend, self.name, op, f"worker died: {exc}") from exc
        if status != "ok":
            raise BackendError(self.backend, self.name, op, value)
        return value

    def close(self) -> None:
        """Stop the child: asked first (it ends when its pipe closes), killed if it does not.
        (In a fork of the process that started it: that process's child, left running.)"""
        self._forked()
        with self._lock:
            finalizer, self._finalizer = self._finalizer, None
            if self._conn is not None:
                self.generation += 1  # its open streams are refused (`call`), not sent to a new child
                self._stopped_by = "closed"
            self._conn = self._server = None
            if finalizer is not None:
                finalizer()  # `Server.stop`, once


class _BudgetedStream:
    """Stream state kept in the child; the parent remembers what it needs to recover."""

    def __init__(self, worker: _Worker, kwargs: dict[str, Any]) -> None:
        self._worker = worker
        self._sid = worker.new_stream_id()
        worker.call("open", self._sid, **kwargs)
        self._generation = worker.generation
        self._pending = ""
        self.block: ReasoningBlock | None = None

    def pending_text(self) -> str:
        """What the child held back as of the last answered call (the rest was streamed)."""
        return self._pending

    def _call(self, op: str, *args: Any) -> StreamDelta:
        delta, pending, block = self._worker.call(op, self._sid, *args, generation=self._generation)
        self._pending = pending
        if block is not None:
            self.block = block
        return delta  # type: ignore[no-any-return]

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        return self._call("feed", text, list(token_ids) if token_ids is not None else None)

    def _flush(self) -> StreamDelta:
        try:
            return self._call("flush")
        finally:
            with contextlib.suppress(ParsebridgeError):
                self._worker.call("close", self._sid, generation=self._generation)


class BudgetedToolStream(_BudgetedStream, ToolStreamBase):
    def __init__(self, worker: _Worker, kwargs: dict[str, Any]) -> None:
        ToolStreamBase.__init__(self)
        _BudgetedStream.__init__(self, worker, kwargs)


class BudgetedReasoningStream(_BudgetedStream, ReasoningStreamBase):
    def __init__(self, worker: _Worker, kwargs: dict[str, Any]) -> None:
        ReasoningStreamBase.__init__(self)
        _BudgetedStream.__init__(self, worker, kwargs)


class _Budgeted:
    backend: str
    name: str

    def __init__(self, launch: Launch, timeout: float) -> None:
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not 0 < timeout <= MAX_TIMEOUT  # nan compares false: refused too
        ):
            raise InvalidSpecError(
                f"timeout must be a positive number of seconds, not {timeout!r} (at most {MAX_TIMEOUT:.0f})"
            )
        self.backend, self.name = launch.backend, launch.name
        self.worker = _Worker(launch, timeout)
        self.worker.start()
        self.markers: tuple[str, ...] = ()

    @property
    def spec(self) -> str:
        return f"{self.backend}:{self.name}"

    def close(self) -> None:
        """Stop the worker process now (it is also stopped when the parser is collected)."""
        self.worker.close()


class BudgetedToolParser(_Budgeted):
    """A tool parser whose every call runs in a worker process under a time budget."""

    def __init__(
        self,
        lookup: Callable[[str], Any],
        backend: str,
        name: str,
        tools: Sequence[ToolSpec] | None,
        options: dict[str, Any],
        timeout: float,
    ):
        super().__init__(
            Launch(lookup, "tool", backend, name, list(tools) if tools else None, options), timeout
        )
        self.tools = list(tools or [])

    def parse(self, text: str) -> ToolParseResult:
        return self.worker.call("parse", 0, text)  # type: ignore[no-any-return]

    def parse_tool_calls(self, text: str) -> list[Any]:
        return self.parse(text).tool_calls

    def has_tool_calls(self, text: str) -> bool:
        return bool(self.worker.call("has", 0, text))

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        return str(self.worker.call("format", 0, tool_call_id, result))

    def stream(self, **kwargs: Any) -> BudgetedToolStream:
        return BudgetedToolStream(self.worker, kwargs)


class BudgetedReasoningParser(_Budgeted):
    """A reasoning parser whose every call runs in a worker process under a time budget."""

    def __init__(
        self, lookup: Callable[[str], Any], backend: str, name: str, options: dict[str, Any], timeout: float
    ):
        super().__init__(Launch(lookup, "reasoning", backend, name, None, options), timeout)

    def parse(
        self, text: str, *, reasoning_started: bool | None = None, **kwargs: Any
    ) -> ReasoningParseResult:
        return self.worker.call("parse", 0, text, reasoning_started=reasoning_started, **kwargs)  # type: ignore[no-any-return]

    def parse_reasoning(self, text: str) -> ReasoningBlock | None:
        return self.parse(text).block

    def has_reasoning(self, text: str) -> bool:
        return bool(self.worker.call("has", 0, text))

    def stream(self, *, reasoning_started: bool | None = None, **kwargs: Any) -> BudgetedReasoningStream:
        return BudgetedReasoningStream(self.worker, {"reasoning_started": reasoning_started, **kwargs})
