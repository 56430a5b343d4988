"""Keep Dynamo's per-request log lines off the user's terminal, and nothing else.

Dynamo's frontend (1.6.1) writes one INFO line per request to standard error
(``request_span: route request completed``, and on a dropped stream ``route
request cancelled`` and ``request cancellation received``). Its log settings cannot remove
it: Dynamo appends ``request_span=trace`` after ``DYN_LOG``'s directives, and
the only selectors that would outrank it (field selectors) switch Dynamo to a
slow filter that prints a four-line warning at import. So while the frontend
runs, `StderrFilter` puts a pipe in place of file descriptor 2 and a thread
copies everything written there to the original standard error, byte for
byte, except those request lines (INFO level, target ``request_span``) and,
once the frontend is being closed, the errors Dynamo logs about that close
(``monitor_instance_source: The Sender is dropped``; ``KeyValueStoreManager.watch
receiver closed`` in 1.6.1, ``... failed adding new key to channel`` in 1.4.2) and the errors and
warnings about requests other threads had under way (503, ``worker_disconnected``, ``worker_unavailable``, ``Failed to
publish complete final``, ``migration retries exhausted``: each such request gets
`ServerUnavailableError`). Other errors and warnings pass. Lines are held only while they could still become a request line
(a partial line that starts like a Dynamo log line); anything else is copied
at once. A log line may follow other output on the same line (a progress bar's
redraw ends in no newline): the text before it is copied, the log line judged alone. When the frontend stops, the original descriptor is put back (only
if descriptor 2 is still this pipe: a test runner may have swapped it) and the
pipe drained. A test runner that swaps descriptor 2 per test (pytest's
capture) takes it back meanwhile; the filter takes it again when the frontend
is closed, and keeps it until it has been quiet for a moment (at most a
second), so the close leaves nothing on the terminal either; what Dynamo logs
while such a runner has its own descriptor 2 in place goes where the runner
sends it.

When standard error is a terminal, the filter puts a pseudo-terminal in its
place rather than a pipe (raw mode, the terminal's size), so what checks
``isatty`` (a progress bar, which draws itself with ``\r`` only on a terminal)
behaves as without the filter; a partial line that cannot become a log line
(a progress bar's redraw) is copied at once.

``PARSEBRIDGE_DYNAMO_LOG=1``, or ``PARSEBRIDGE_FRAMEWORK_LOGS=1`` (what
``--framework-logs`` sets), leaves standard error alone: the request lines
show again. What else Dynamo logs is ``DYN_LOG``'s business (parsebridge
makes its default ``error``; ``DYN_LOG=info`` shows all of Dynamo's log).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import termios
import threading
import time
import tty

from .._common import framework_logs_wanted

#: Set to 1 (or any value but 0/empty) to see Dynamo's own log output unfiltered.
ENV = "PARSEBRIDGE_DYNAMO_LOG"
_ANSI = re.compile(rb"\x1b\[[0-9;]*m")
#: Dynamo's per-request lines: INFO level, target ``request_span`` after the span names, if any
#: ("route request completed", "... cancelled", "request cancellation received"; ANSI codes removed).
_REQUEST = re.compile(rb"^\S+\s+INFO\s+(?:\S+:\s)?request_span: ")
#: The errors and warnings Dynamo logs about parsebridge closing the frontend (its own shutdown, not
#: a failure): and, 1.6.1, about the requests other threads had under way, which each get
#: `ServerUnavailableError` (a 503 answer, the worker gone, the final chunk not published).
_CLOSING = re.compile(
    rb"\b(?:ERROR|WARN)\s.*(monitor_instance_source: The Sender is dropped|KeyValueStoreManager\.watch "
    rb"|Failed to publish complete final|worker_disconnected|worker_unavailable|migration retries exhausted"
    rb"|no backend worker available|status=503\b|Status code: 503"
    rb"|dynamo_llm::http::service::metrics: request completed)"
)
#: At close, the pipe is kept until it has been quiet this long (Dynamo's threads log their
#: shutdown a little after it returns), but no longer than `CLOSE_WAIT` seconds.
QUIET_GAP = 0.1
CLOSE_WAIT = 1.0
#: How a Dynamo log line starts: a timestamp, maybe after an ANSI code.
_LOG_START = re.compile(rb"^(\x1b\[[0-9;]*m)?\d{4}-\d\d-\d\dT")
#: The same, anywhere in a line (after a progress bar's redraw, written without a newline).
_LOG_AT = re.compile(rb"(\x1b\[[0-9;]*m)?\d{4}-\d\d-\d\dT")


def _split_log(line: bytes) -> tuple[bytes, bytes]:
    """(What comes before a Dynamo log line in `line`, that log line on: b"" when there is none.)"""
    m = _LOG_AT.search(line)
    return (line, b"") if m is None else (line[: m.start()], line[m.start() :])


def wanted() -> bool:
    """Whether Dynamo's output is filtered (the default) rather than left as it is."""
    return os.environ.get(ENV, "").strip() in ("", "0") and not framework_logs_wanted()


class StderrFilter:
    """Descriptor 2 through a pipe, minus Dynamo's request lines (see module doc)."""

    def __init__(self) -> None:
        self.closing = False
        self._pid = os.getpid()
        self._last = 0.0  # when the pipe last had data (monotonic)
        read, self._write = _pty_like(2) if os.isatty(2) else os.pipe()
        self._pipe_id = _ident(self._write)
        #: Where the copy goes: what descriptor 2 was when the pipe took its place (`_take`).
        self._target = -1
        self._old: list[int] = []
        self._take()
        self._thread = threading.Thread(target=self._copy, args=(read,), name="pb-dynamo-stderr", daemon=True)
        self._thread.start()

    def _take(self) -> None:
        """Put the pipe on descriptor 2 unless it is there, copying to what was there until now."""
        if _ident(2) == self._pipe_id:
            return
        if self._target >= 0:
            self._old.append(self._target)
        self._target = os.dup(2)
        os.dup2(self._write, 2)

    def begin_close(self) -> None:
        """The frontend is about to stop: take descriptor 2 again (a test runner may have put its own
        there since) and drop the error Dynamo logs about the stop."""
        if self._pid != os.getpid():
            return
        self.closing = True
        self._take()

    def _drop(self, line: bytes) -> bool:
        plain = _ANSI.sub(b"", line)
        return bool(_REQUEST.search(plain) or (self.closing and _CLOSING.search(plain)))

    def _kept(self, line: bytes) -> bytes:
        """What of one line (its newline removed) is copied: all of it, with its newline, unless a
        log line in it is dropped (then what came before it on the line, a bar's redraw)."""
        before, log = _split_log(line)
        if log and self._drop(log):
            return before
        return line + b"\n"

    def _copy(self, read: int) -> None:
        held = b""
        with contextlib.suppress(OSError):
            while data := os.read(read, 65536):
                self._last = time.monotonic()
                *lines, held = (held + data).split(b"\n")
                out = b"".join(self._kept(line) for line in lines)
                before, log = _split_log(held)
                if log:  # a log line in the making: copy what comes before it now
                    out, held = out + before, log
                elif held and len(held) < 4096:
                    out, held = out + held, b""  # not a log line in the making: copy it now
                if out:
                    _write_all(self._target, out)
        if held and not self._drop(held):
            _write_all(self._target, held)
        os.close(read)

    def close(self) -> None:
        """Put back what descriptor 2 was (if it is still the pipe) and copy what the pipe still holds."""
        if self._pid != os.getpid():  # a forked child: the thread and the descriptors are the parent's
            return
        began = time.monotonic()
        while time.monotonic() - max(self._last, began) < QUIET_GAP:
            if time.monotonic() - began > CLOSE_WAIT:
                break
            time.sleep(QUIET_GAP / 4)
        if _ident(2) == self._pipe_id:
            os.dup2(self._target, 2)
        os.close(self._write)
        self._thread.join(2.0)  # ends at end-of-file (later if a forked child still holds the pipe)
        if not self._thread.is_alive():
            for fd in [*self._old, self._target]:
                os.close(fd)


def _pty_like(fd: int) -> tuple[int, int]:
    """A pseudo-terminal (reading end, writing end) in raw mode, the size of the terminal on `fd`."""
    master, slave = os.openpty()
    tty.setraw(slave)
    with contextlib.suppress(OSError):
        fcntl.ioctl(slave, termios.TIOCSWINSZ, fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))
    return master, slave


def _ident(fd: int) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
