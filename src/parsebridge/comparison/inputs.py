"""What `parsebridge compare` reads: the command line's inputs (``--resume``'s previous output: `resume`).

An input is a transcript directory or file (JSONL, gzip, YAML), a glob of
log parts, ``-`` for stdin, or ``--text`` (one raw output); nothing is read
until the comparison pulls it. Usage errors about inputs (a missing, empty,
non-UTF-8 file; a raw output that names no family) are raised here.
"""

from __future__ import annotations

import argparse
import io
import itertools
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from ..conformance.log_files import (
    CountedBytes,
    directory_files,
    inner_suffix,
    is_gzip,
    iter_log,
    not_utf8_in,
)
from ..conformance.record_use import RecordWarnings
from ..conformance.transcripts import (
    JSONL_SUFFIXES,
    YAML_SUFFIXES,
    bundled_transcripts,
    iter_json_lines,
    split_names,
    transcript_from,
)
from ..protocol import ParsebridgeError
from ..protocol.spec import BACKEND_ALIASES, ParserBackend
from ..terminal import InputFileError, MissingInputError, check_output_path, print_error, stdin_closed
from .logs import count_lines, expand, is_glob


def usage_error(message: str) -> Exception:
    return ParsebridgeError(message)


class Source:
    """One input, opened lazily; `count` is cheap (a line count), None when unknown; `paths`: the
    files it reads (none for stdin, ``--text`` and the bundled transcripts)."""

    def __init__(
        self,
        label: str,
        items: Iterable[Any],
        count: int | None,
        raw: bool = False,
        paths: Sequence[Path] = (),
    ) -> None:
        self.label, self.items, self.count, self.raw = label, items, count, raw
        self.paths = tuple(paths)


def stdin_transcripts(stream: IO[str], raw_ok: bool = True, label: str = "<stdin>") -> Iterator[Any]:
    """JSON Lines when stdin starts with ``{``, else one raw output (refused unless `raw_ok`).
    A byte order mark (a Windows shell's pipe writes one) is no text, as in a file. `label`
    names the stream in errors (a pipe given by path: `stream_transcripts`)."""

    first = stream.readline().removeprefix("\ufeff")
    while first and not first.strip():  # leading blank lines: read on to the first text
        line = stream.readline()
        if not line:
            break
        first += line
    if not first.strip():  # as an empty file is
        why = "empty" if not first else "only blank lines"
        raise InputFileError(f"{label}: {why} (expected transcripts or one raw output)")
    tid = label.strip("<>")
    if not first.lstrip().startswith("{"):
        if not raw_ok:
            raise _raw_without_family(label)
        yield transcript_from({"output": first + stream.read()}, tid)
        return
    yield from iter_json_lines(itertools.chain([first], stream), label, tid)


def strict_stdin_transcripts(raw_ok: bool) -> Iterator[Any]:
    """Standard input read as a file is: UTF-8, a byte that is not refused by name. `sys.stdin`'s
    own text layer reads such a byte as a lone surrogate (surrogateescape, in a C or C.UTF-8
    locale), which the record then refused as "a lone surrogate U+DC95 is not text"."""
    closed = stdin_closed()
    if closed is not None:
        raise closed
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # stdin replaced by a text stream (an embedding program): read as given
        yield from stdin_transcripts(sys.stdin, raw_ok)
        return
    counted = CountedBytes(buffer)
    stream = io.TextIOWrapper(counted, encoding="utf-8", newline="\n")  # as sys.stdin: "\r" kept
    try:
        yield from named_errors("<stdin>", stdin_transcripts(stream, raw_ok), counted)
    finally:
        stream.detach()  # sys.stdin's buffer stays open


def stream_transcripts(path: Path, raw_ok: bool = True) -> Iterator[Any]:
    """A path that is neither a file nor a directory but can be read (a pipe: ``<(zcat log.gz)``,
    ``/dev/stdin``; a device such as ``/dev/null``), read once as standard input is: it cannot be
    read twice, for a line count or a first look."""
    with path.open("rb") as raw:
        counted = CountedBytes(raw)
        stream = io.TextIOWrapper(counted, encoding="utf-8", newline="\n")  # as sys.stdin: "\r" kept
        yield from named_errors(str(path), stdin_transcripts(stream, raw_ok, str(path)), counted)


def _file_source(path: Path) -> Source:
    """One file: JSONL (gzip too) streamed with a cheap line count for the progress bar."""

    suffix = inner_suffix(path)
    jsonl = suffix in (".jsonl", ".ndjson") or is_gzip(path)
    raw = not is_gzip(path) and suffix not in JSONL_SUFFIXES | YAML_SUFFIXES  # the whole file is one output
    count = count_lines(path) if jsonl else (1 if raw else None)
    return Source(str(path), named_errors(str(path), iter_log(path)), count, raw=raw, paths=[path])


def warn_on_stderr(message: str) -> None:
    print_error(message, prefix="warning:")


def directory_inputs(path: Path, warn: Callable[[str], None] = warn_on_stderr) -> list[Path]:
    """A directory input's transcript files (subfolders too, sorted); a warning (`warn`) for the
    files it leaves out, so none is skipped unsaid; no transcript file at all is an error.
    `conformance --transcripts DIR` reads a directory by the same rule."""
    files, skipped = directory_files(path)
    if skipped:
        names = ", ".join(str(f.relative_to(path)) for f in skipped[:3]) + (", …" if len(skipped) > 3 else "")
        warn(
            f"{path}: skipped {len(skipped)} file{'s' if len(skipped) != 1 else ''} of another suffix "
            f"({names}); a directory's .jsonl, .ndjson, .json, .yaml, .yml and .jsonl.gz files are read"
        )
    if not files:
        raise InputFileError(f"{path}: no transcript files in this directory or its subfolders")
    return files


def _blank(path: Path) -> str | None:
    """Why a file holds nothing to compare ("empty file", "only blank lines"), or None.

    Reads only until the first character that is not white space.
    """
    if is_gzip(path):
        return None
    with path.open("rb") as fh:
        first = fh.read(1)
        if not first:
            return "empty file"
        block = first
        while block:
            if block.strip():
                return None
            block = fh.read(1 << 16)
    return "only blank lines"


#: Suffixes that make a one-line `str` given to `parsebridge.compare` a path (see `names_a_path`).
TRANSCRIPT_SUFFIXES = tuple(sorted(JSONL_SUFFIXES | YAML_SUFFIXES | {".gz"}))


def names_a_path(text: str) -> bool:
    """Whether `parsebridge.compare` reads a `str` as a path rather than as one raw output: it
    names a file or directory that exists, or it is one word (no white space) ending in a
    transcript file's suffix (``.jsonl``, ``.ndjson``, ``.json``, ``.yaml``, ``.yml``, ``.gz``),
    which, missing, is an error rather than a file name compared as model output. A sentence
    that ends in a file name ("saved to out.json") stays model output."""
    if "\n" in text or not text.strip():
        return False
    if os.path.exists(text):
        return True
    word = text.strip()
    return not any(c.isspace() for c in word) and word.lower().endswith(TRANSCRIPT_SUFFIXES)


def path_sources(
    arg: str,
    *,
    text_hint: str = "give it with --text",
    warn: Callable[[str], None] = warn_on_stderr,
    raw_ok: bool = True,
) -> list[Source]:
    """What one path argument reads, as the command line reads it: a directory's transcript files,
    a file, a pipe or device (`stream_transcripts`; `raw_ok` as for standard input), or the files
    a glob matches; a missing one is `MissingInputError` (`text_hint`: how to compare the argument
    as text instead)."""
    path = Path(arg)
    if path.is_dir():
        return [_file_source(f) for f in directory_inputs(path, warn)]
    if path.is_file():
        why = _blank(path)
        if why:
            raise InputFileError(f"{arg}: {why} (expected transcripts or one raw output)")
        return [_file_source(path)]
    if path.exists():
        return [Source(arg, stream_transcripts(path, raw_ok), None)]
    if is_glob(arg):
        matched = expand(arg)
        if not matched:
            raise MissingInputError(f"no file matches {arg!r}")
        return [_file_source(p) for p in matched]  # a log in parts: chat-*.jsonl.gz
    raise MissingInputError(f"no such file: {arg} ({_what_to_write_instead(arg, text_hint)})")


def _what_to_write_instead(arg: str, text_hint: str) -> str:
    """For an argument that is no file: a parser spec (``builtin:hermes``, written where
    `compare`'s inputs go) goes with --tool-parser; else the text may be a model output."""
    backend, colon, name = arg.partition(":")
    if colon and name.strip() and backend.strip().lower() in _BACKENDS:
        return f"a parser spec goes with --tool-parser {arg} or --reasoning-parser {arg}"
    return f"to compare literal output text, {text_hint}"


_BACKENDS = frozenset({*(b.value for b in ParserBackend), *BACKEND_ALIASES})


def sources(ns: argparse.Namespace) -> list[Source]:
    """The inputs named on the command line, in order (nothing is read yet)."""

    out: list[Source] = []
    raw_ok = bool(ns.tool_parser or ns.reasoning_parser or ns.family)
    for arg in ns.inputs:
        if arg == "-":
            out.append(Source("<stdin>", strict_stdin_transcripts(raw_ok), None))
            continue
        out.extend(path_sources(arg, raw_ok=raw_ok))
    for n, text in enumerate(getattr(ns, "text", None) or (), 1):
        tid = "text" if n == 1 else f"text-{n}"
        out.append(Source(tid, [transcript_from({"output": text}, tid)], 1, raw=True))
    if ns.bundled or not (ns.inputs or getattr(ns, "text", None)):
        fams = split_names(ns.family, "--family") or None
        items = bundled_transcripts(families=fams)
        if not items:
            raise ParsebridgeError(f"no bundled transcripts{' for ' + ', '.join(fams) if fams else ''}")
        out.append(Source("bundled", items, len(items)))
    return out


def check_outputs(ns: argparse.Namespace, srcs: Sequence[Source]) -> None:
    """Refuse an output file (``-o``, ``--summary``) that is one of the inputs (or the other output):
    it is opened for writing before the inputs are read, so the user's file would be lost."""
    outputs = [(f"--output {ns.output}", Path(ns.output))] if ns.output else []
    if ns.summary:
        outputs.append((f"--summary {ns.summary}", Path(ns.summary)))
    if len(outputs) == 2 and _same(outputs[0][1], outputs[1][1]):
        raise usage_error(f"--output and --summary are the same file ({ns.output}): give two files")
    for what, out in outputs:
        check_output_path(out, what)
    inputs = [p for s in srcs for p in s.paths]
    if ns.tools:
        inputs.append(Path(ns.tools))
    for what, out in outputs:
        for path in inputs:
            if _same(out, path):
                raise usage_error(
                    f"{what} is the input {path}: writing it would destroy that input before it is read; "
                    "give another file"
                )


def _same(a: Path, b: Path) -> bool:
    """One file under two names (links, ``./``, ``..``); a file that does not exist yet is no input."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def named_errors(label: str, items: Iterator[Any], counted: CountedBytes | None = None) -> Iterator[Any]:
    """`items`, with a non-UTF-8 file turned into a usage error that names it (and the byte's place:
    `counted`, the bytes of a stream read)."""

    try:
        yield from items
    except UnicodeDecodeError as exc:
        raise not_utf8_in(label, exc, counted) from None


def _with_defaults(items: Iterable[Any], tools: list[dict[str, Any]] | None, started: bool) -> Iterator[Any]:
    """`--tools` and `--reasoning-started` for the transcripts that do not say: a record with its
    own generation prompt says where reasoning starts (the flag would win over it)."""
    for t in items:
        update: dict[str, Any] = {}
        if tools and not t.tools:
            update["tools"] = tools
        says = (
            "reasoning_started_in_prompt" in t.model_fields_set or t.prompt is not None or t.prompt_token_ids
        )
        if started and not says:
            update["reasoning_started_in_prompt"] = True
        yield t.model_copy(update=update) if update else t


def check_raw_outputs(ns: argparse.Namespace, srcs: Sequence[Source]) -> None:
    """A raw output (text, or a file that is not transcripts) has no family: it needs specs or --family."""
    if ns.tool_parser or ns.reasoning_parser or ns.family:
        return
    raw = [s.label for s in srcs if s.raw]
    if raw:
        raise _raw_without_family(raw[0])


def _raw_without_family(label: str) -> Exception:
    return usage_error(
        f"{label} is a raw output, which names no family: give --tool-parser/--reasoning-parser SPEC "
        "or --family NAME"
    )


def pending_transcripts(
    srcs: Sequence[Source],
    tools: list[dict[str, Any]] | None,
    started: bool,
    done: Counter[str],
    need_family: bool = False,
) -> Iterator[Any]:
    """Every input's transcripts with the command line's defaults, minus those already compared
    (`done`: how many of each id, skipped in input order), with a warning for a repeated id.

    `need_family` (no spec and no ``--family``: each transcript runs its own family's parsers):
    a transcript that names no family is a usage error, as a raw output is. A record field that
    no reading will use (`record_use.record_warnings`) is warned about on stderr.
    """
    left = Counter(done)
    repeats = _Repeats()
    unread = RecordWarnings(warn_on_stderr)
    for src in srcs:
        for t in _with_defaults(src.items, tools, started):
            if need_family and not t.family:
                raise usage_error(
                    f'{src.label}: transcript {t.id!r} names no family (a record\'s "family" key; '
                    '"reasoning_family" alone names only the reasoning parser beside it), and no parser '
                    "was given: give --tool-parser/--reasoning-parser SPEC or --family NAME"
                )
            repeats.see(t.id, src.label)
            if left[t.id]:
                left[t.id] -= 1
                continue
            unread.see(t)
            yield t
    repeats.close()
    unread.close()


#: Ids remembered to find a repeated one: a bound, so a log of any length runs in flat memory.
REPEATS_CHECKED = 10_000


class _Repeats:
    """Warns (on stderr, as `conformance` does) about a transcript id that comes again: a result
    keyed by id would be ambiguous. Exact among the first `REPEATS_CHECKED` ids."""

    SHOWN = 5

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.found = 0

    def see(self, tid: str, label: str) -> None:
        if tid not in self.ids:
            if len(self.ids) < REPEATS_CHECKED:
                self.ids.add(tid)
            return
        self.found += 1
        if self.found <= self.SHOWN:
            print_error(
                f"{label}: transcript id {tid!r} comes again; its comparisons are all kept, in input order",
                prefix="warning:",
            )

    def close(self) -> None:
        if self.found > self.SHOWN:
            print_error(f"{self.found} repeated transcript ids in all", prefix="warning:")
