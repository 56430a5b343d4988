"""Terminal output and input files shared by the `parsebridge` subcommands and the rooms that print.

Five rules every command keeps: model text (and anything quoting it, such as
an error message) is printed as plain text, never read as Rich markup or
emoji codes — a transcript containing ``[/INST]`` or ``:smile:`` must print
as itself, so every styled line is built by `styled` from literal parts and
the console reads no emoji codes — and its control characters are shown
escaped (`escape_controls`: ``\x1b``), so a transcript cannot recolour, retitle
or clear the terminal (JSON output and report files keep the exact text); output that goes to a file or a pipe is
not cut to 80 columns (names and spec strings are what people grep for); a
reader that goes away (``| head``) ends the command with status 141, as for
JSON output; an input file that cannot be used is a usage error naming
the file and the position, never a bare codec or JSON message; and an output
file is replaced whole (`replacing`), so Ctrl-C never leaves half of one.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import functools
import io
import json
import os
import re
import secrets
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from .protocol import InvalidToolsError, ParsebridgeError
from .protocol.errors import json_problem
from .protocol.tools import checked_tools


class UsageError(ParsebridgeError, ValueError):
    """The command line asks for something that cannot run as given (exit 2)."""


class InputFileError(ParsebridgeError, ValueError):
    """An input file named on the command line is missing, unreadable, empty or malformed (exit 2)."""


class MissingInputError(InputFileError, FileNotFoundError):
    """An input file that is not there (or a pattern that matches none): also a `FileNotFoundError`,
    what a caller of the Python API (`parsebridge.compare`) would catch for a missing file."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, with the line a command says about where it stopped (`cli.commands.main` prints it
    on stderr and exits 130; a bare `KeyboardInterrupt` gets ``interrupted (Ctrl-C)``)."""


def counted(n: int, noun: str, nouns: str | None = None) -> str:
    """``1 family``, ``2 families``: `n` and its noun, plural (`nouns`, default `noun` + s) unless n == 1."""
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"


#: Width used when the output is not a terminal: wide enough that no table
#: cell is cut; tables still only take the width their content needs.
PIPE_WIDTH = 1000

#: Exit statuses of every subcommand (also in `parsebridge --help`).
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_PIPE_CLOSED = 141

EXIT_STATUS_HELP = """\
exit status (every subcommand):
  0    success
  1    the run failed: parse's parser raised (BackendError), or --strict / --fail-on-diff
       found failures or differences (conformance and compare record a parser that raised
       as a result, so it fails the run only under those options)
  2    usage error: a bad option, an unknown backend, parser, family or transcript id, a
       framework that is not installed, an input file that is missing, unreadable, not
       UTF-8 or malformed, or a transcripts file without transcripts (the message names the
       file and the position; an empty model output to `parse` is valid)
  130  interrupted (Ctrl-C)
  141  the output pipe closed early (e.g. `| head`); nothing is reported"""


def width_for(stream: IO[str] | None) -> int | None:
    """None (Rich's own choice) on a terminal or when COLUMNS says; else `PIPE_WIDTH`."""
    if stream is None or "COLUMNS" in os.environ:
        return None
    try:
        if stream.isatty():
            return None
    except (AttributeError, ValueError):
        pass
    return PIPE_WIDTH


def console(stderr: bool = False, file: IO[str] | None = None) -> Any:
    """A Rich console for CLI output: no highlighting, no emoji codes, full width off a terminal.

    A closed output pipe raises `BrokenPipeError` (the command then exits
    141) instead of Rich's own ``SystemExit(1)``.
    """
    target = file if file is not None else (sys.stderr if stderr else sys.stdout)
    return _console_class()(
        file=file,
        stderr=stderr,
        highlight=False,
        emoji=False,
        soft_wrap=False,
        width=width_for(target),
    )


@functools.cache
def _console_class() -> Any:
    from rich.console import Console

    class PipeAwareConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True  # nothing more is written; `main` turns this into status 141
            raise BrokenPipeError

        def _render_buffer(self, buffer: Any) -> str:
            # Off a terminal, Rich pads a styled table title to the table's width: a file or
            # pipe gets its lines without trailing spaces.
            text: str = super()._render_buffer(buffer)
            if self.is_terminal:
                return text
            return "\n".join(line.rstrip(" ") for line in text.split("\n"))

    return PipeAwareConsole


#: What a terminal acts on instead of showing: the C0 controls but tab and newline (ESC starts
#: colour, title and clear-screen sequences, BEL rings, CR overwrites the line), DEL, and the C1
#: controls U+0080-U+009F (U+009B is ESC [ on terminals that read C1); and what reorders or breaks
#: the line around it unseen: the bidirectional marks, embeddings, overrides and isolates
#: (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069: an override shows text in another order
#: than it is read) and the line and paragraph separators U+2028-U+2029; and a lone surrogate
#: (U+D800-U+DFFF, which a parser keeps from a JSON escape such as ``\\ud800``): no terminal
#: can be sent one, as UTF-8 cannot encode it.
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r":
        return "\\r"
    return f"\\x{ord(char):02x}" if ord(char) <= 0xFF else f"\\u{ord(char):04x}"


def escape_controls(text: str) -> str:
    """`text` for a terminal: each control character it would act on written as Python writes it
    in a string (``\\x1b``, ``\\r``); tab and newline are kept. Human-readable output only: JSON
    output, conformance's report files and compare's HTML page keep the text exactly."""
    return _CONTROL.sub(_escaped, text)


def plain(text: object) -> Any:
    """`text` as a Rich renderable that is never parsed as markup or emoji codes, its control
    characters escaped (`escape_controls`)."""
    from rich.text import Text

    return Text(escape_controls(str(text)))


#: One part of a `styled` line: literal text, or (literal text, Rich style).
Part = str | tuple[str, str]


def styled(*parts: Part, style: str = "") -> Any:
    """One line from literal parts, each optionally styled: ``styled(("fail", "red"), " ", detail)``.

    The only way CLI code puts colour around text it did not write (model
    output, transcript ids, spec strings, error messages): no part is ever
    read as markup or emoji codes, and control characters are escaped
    (`escape_controls`). `style` applies to the whole line.
    """
    from rich.text import Text

    line = Text(style=style)
    for part in parts:
        if isinstance(part, tuple):
            line.append(escape_controls(str(part[0])), style=part[1])
        else:
            line.append(escape_controls(str(part)))
    return line


def whitespace_only(text: str) -> str | None:
    """How to show text that is only white space (a blank cell reads as nothing): its repr,
    e.g. ``'\\n\\n' (white space only)``; None for any other text."""
    if text and not text.strip():
        return f"{text!r} (white space only)" if len(text) <= 40 else f"{len(text)} white-space characters"
    return None


def print_error(message: object, *, prefix: str = "error:") -> None:
    """``error: MESSAGE`` on stderr; the message is printed verbatim."""
    console(stderr=True).print(styled((prefix, "red"), " " + str(message)), soft_wrap=True)


# ---------------------------------------------------------------- input files

#: Bytes read per block: memory for reading stays flat whatever the input size.
READ_BLOCK = 1 << 20
#: U+FEFF at the start of a file: a byte-order mark, dropped where files are read.
BOM = "\ufeff"


def _label(path: str) -> str:
    return "<stdin>" if path == "-" else path


def stdin_closed() -> InputFileError | None:
    """The error for ``-`` when this process has no standard input (started with it closed:
    ``<&-``, some service managers), where reading it failed with "'NoneType' object has no
    attribute 'buffer'"; None when there is one."""
    if sys.stdin is not None:
        return None
    return InputFileError("<stdin>: standard input is closed: give a file, or pipe the input in")


def _open_binary(path: str) -> IO[bytes]:
    if path == "-":
        closed = stdin_closed()
        if closed is not None:
            raise closed
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except IsADirectoryError:
        raise InputFileError(f"{path}: is a directory, not a file") from None
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read: {exc.strerror or exc}") from None


def not_utf8(label: str, byte: int, offset: int, line: int, what: str) -> InputFileError:
    """The one message for input that is not UTF-8: the file, the byte, its offset and line,
    and what parsebridge reads as UTF-8 (`what`: "model output", "transcripts", ...)."""
    return InputFileError(
        f"{label}: not UTF-8 text (byte 0x{byte:02x} at offset {offset}, line {line}); "
        f"parsebridge reads {what} as UTF-8"
    )


def first_non_utf8(
    label: str, fh: IO[bytes] | io.BufferedIOBase, what: str, block: int = READ_BLOCK
) -> InputFileError | None:
    """`not_utf8`'s error for the first byte of `fh` that is not UTF-8 (read to its end), None
    when it is all UTF-8: for a reader that decoded in text mode, whose `UnicodeDecodeError`
    knows only the block it failed in, not where that block was."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    consumed = lines = 0
    while True:
        data = fh.read(block)
        pending = decoder.getstate()[0]
        try:
            decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            buf = pending + data
            line = lines + buf[: exc.start].count(b"\n") + 1
            return not_utf8(label, buf[exc.start], consumed - len(pending) + exc.start, line, what)
        if not data:
            return None
        consumed += len(data)
        lines += data.count(b"\n")


def iter_text(path: str, block: int = READ_BLOCK, what: str = "model output") -> Iterator[str]:
    """The UTF-8 text of a file (``-``: stdin), decoded block by block; `what` the file holds is
    named in the error.

    A leading byte-order mark is the file's encoding signature, not model
    text: it is dropped (the API's `parse(text)` takes text as given and
    keeps one). Bytes that are not UTF-8 raise `InputFileError` with the
    byte, its offset and line, so a binary file is named instead of a codec
    traceback.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    fh = _open_binary(path)
    consumed = 0  # bytes handed to the decoder before the current block
    lines = 0
    first = True
    try:
        while True:
            data = fh.read(block)
            pending = decoder.getstate()[0]
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                buf = pending + data
                offset = consumed - len(pending) + exc.start
                line = lines + buf[: exc.start].count(b"\n") + 1
                raise not_utf8(_label(path), buf[exc.start], offset, line, what) from None
            if first and text:
                first = False
                if text[0] == BOM:
                    text = text[1:]
            if text:
                yield text
            if not data:
                return
            consumed += len(data)
            lines += data.count(b"\n")
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def read_text(path: str, what: str = "model output") -> str:
    """The whole UTF-8 text of a file (``-``: stdin), with `iter_text`'s errors."""
    return "".join(iter_text(path, what=what))


def load_tools(path: str | None) -> list[dict[str, Any]] | None:
    """OpenAI tool definitions from a JSON file: a list, or an object with a ``tools`` list."""
    if not path:
        return None
    text = read_text(path, what="tool definitions")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputFileError(f"{_label(path)}: not JSON ({json_problem(exc)})") from None
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, list):
        raise InputFileError(
            f"{_label(path)}: expected a JSON list of OpenAI tool definitions "
            '([{"type": "function", "function": {"name": …, "parameters": …}}, …]) '
            'or an object with a "tools" list'
        )
    try:  # each definition, as get_tool_parser checks it (the frameworks refused bad ones when built,
        # an error blamed on the parser; builtin parsers ignored them): the file is what is wrong
        return checked_tools(data)
    except InvalidToolsError as exc:
        raise InputFileError(f"{_label(path)}: {exc}") from None


def exists_or_fail(path: str | os.PathLike[str]) -> Path:
    """`path` as a Path when it exists, else `InputFileError` (a usage error)."""
    p = Path(path)
    if not p.exists():
        pattern = any(ch in str(path) for ch in "*?[")
        raise InputFileError(
            f"{p}: no such file or directory" + (" (as a pattern, it matches no file)" if pattern else "")
        )
    return p


# ---------------------------------------------------------------- output files


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number ≥ `minimum`, for counts shown or drawn (0: a negative one
    was read as a Python slice, ``--top -1`` listing all but one, or failed inside the run) and
    sizes (1: a chunk size of 0 would lose the output)."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more, not {value}")
        return value

    return whole


def check_output_path(path: str | os.PathLike[str], what: str, *, directory: bool = False) -> None:
    """Refuse, before any work, an output that cannot be written where it is named (`what`:
    ``--output out.html``): a folder where a file goes, or a file where a folder on its path goes
    (missing folders are made when the output is written: `replacing`, or `directory`, a
    folder made with its parents). Found only when the output was written, after the whole run,
    such a path lost the run (and the message named a temporary file)."""
    p = Path(path)
    if directory:
        if p.exists() and not p.is_dir():
            raise UsageError(f"{what} is a file, not a folder")
        existing = next((a for a in p.parents if a.exists()), Path("."))
        if not existing.is_dir():
            raise UsageError(f"{what}: {existing} is a file, so no folder can be made in it")
        return
    if p.is_dir():
        raise UsageError(f"{what} is a directory, not a file")
    existing = next((a for a in p.parents if a.exists()), Path("."))
    if not p.exists() and not existing.is_dir():
        raise UsageError(f"{what}: {existing} is a file, not a folder")


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """A text file to write `path`'s new content into, put in its place only once it is whole.

    Missing folders on the way to `path` are made first (as ``conformance --report`` makes its
    folder). The content goes to a temporary file beside `path` (the same folder, so the same file
    system), which `os.replace` renames over `path` in one step: an interruption (Ctrl-C, a full
    disk, an error while writing) leaves the old file as it was, or no file, never half of the
    new one, and the temporary file is removed. The new file keeps the old one's permissions.
    A symbolic link is followed (the file it names is replaced, the link stays); what is not a
    regular file (``-o /dev/stdout``, a named pipe) is written in place: it cannot be replaced.
    """
    if os.path.exists(path) and not os.path.isfile(path):  # (both follow links: /dev/stdout → a pipe)
        with open(path, "w", encoding="utf-8") as fh:
            yield fh
        return
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_whole(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` to `path` through `replacing`: the old file or the whole new one, never half."""
    with replacing(path) as fh:
        fh.write(text)
