"""Transcript files on disk, as every reader takes them: which files a directory holds (its
subfolders too), and one file's transcripts with gzipped JSON Lines decompressed on the fly.

`compare`'s inputs, `conformance --transcripts` and `load_transcripts` (the library, the pytest
plugin's ``--parsebridge-transcripts``) read a directory by this one rule: JSON Lines
(``.jsonl``, ``.ndjson``), JSON, YAML and ``.jsonl.gz``; other files beside them (notes,
binaries) are not transcripts. A gzipped log gets the ids an uncompressed copy would
(``STEM:LINE``, the stem without ``.gz``), so a log read compressed or not gives the same records.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from ..terminal import InputFileError, first_non_utf8, not_utf8
from .transcripts import (
    JSONL_SUFFIXES,
    YAML_SUFFIXES,
    Transcript,
    TranscriptError,
    iter_json_lines,
    iter_transcripts,
)

GZIP_SUFFIX = ".gz"


def is_gzip(path: Path) -> bool:
    return path.suffix.lower() == GZIP_SUFFIX


def unreadable_gzip(path: Path, exc: BaseException) -> TranscriptError:
    """The error for a ``.gz`` file that is not gzip or was cut short: the input's fault (exit 2)."""
    return TranscriptError(f"{path}: not a readable gzip file: {exc}")


def inner_suffix(path: Path) -> str:
    """``log.jsonl.gz`` → ``.jsonl``; ``log.jsonl`` → ``.jsonl``."""
    return Path(path.stem).suffix.lower() if is_gzip(path) else path.suffix.lower()


def is_transcript_file(path: Path) -> bool:
    """A file a directory input reads: JSON Lines, JSON or YAML by its suffix, or gzipped JSON Lines."""
    if is_gzip(path):
        return inner_suffix(path) in JSONL_SUFFIXES
    return path.suffix.lower() in JSONL_SUFFIXES | YAML_SUFFIXES


def directory_files(directory: Path) -> tuple[list[Path], list[Path]]:
    """The transcript files under `directory`, its subfolders too, in sorted order, and the files
    left out for their suffix (a named file of any other suffix is one raw output; in a folder,
    where notes and binaries sit beside logs, it is not read, and the caller says so)."""
    files = sorted(p for p in directory.rglob("*") if p.is_file())
    return [f for f in files if is_transcript_file(f)], [f for f in files if not is_transcript_file(f)]


def iter_log(path: Path) -> Iterator[Transcript]:
    """One file's transcripts, lazily; a ``.gz`` file is JSON Lines, compressed."""

    if not is_gzip(path):
        yield from iter_transcripts(path)
        return
    stem = Path(path.stem).stem  # chat-01.jsonl.gz → chat-01, as the uncompressed file's ids
    with gzip.open(path, "rt", encoding="utf-8-sig") as fh:
        try:
            yield from iter_json_lines(fh, str(path), stem)
        except (OSError, EOFError) as exc:  # not gzip, or a truncated part
            raise unreadable_gzip(path, exc) from exc


def load_transcripts(paths: Iterable[str | Path]) -> list[Transcript]:
    """Every transcript of several files and directories, in order; a directory means its
    transcript files (`directory_files`: subfolders too), other files in it are left out."""
    out: list[Transcript] = []
    for path in paths:
        p = Path(path)
        for f in directory_files(p)[0] if p.is_dir() else [p]:
            out.extend(iter_log(f))
    return out


class CountedBytes(io.BufferedIOBase):
    """A byte stream (standard input, a pipe) that counts the bytes and line ends it hands a text
    reader, so a byte the reader cannot decode is placed without reading the stream twice."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__()
        self._raw = raw
        self.count = self.newlines = 0
        self.last = b""  # the last block handed out

    @property
    def name(self) -> Any:  # (a text reader's name is its buffer's)
        return getattr(self._raw, "name", None)

    def readable(self) -> bool:
        return True

    def _seen(self, data: bytes) -> bytes:
        if data:
            self.count += len(data)
            self.newlines += data.count(b"\n")
            self.last = data
        return data

    def read(self, size: int | None = -1, /) -> bytes:
        return self._seen(self._raw.read(-1 if size is None else size))

    def read1(self, size: int = -1, /) -> bytes:
        read1 = getattr(self._raw, "read1", self._raw.read)
        return self._seen(read1(size))

    def place(self, exc: UnicodeDecodeError) -> tuple[int, int] | None:
        """(offset, line) of `exc`'s byte: the bytes it was decoding end the bytes handed out
        (a block, after the undecoded end of the one before); None where they do not."""
        seen = exc.object
        if not isinstance(seen, bytes) or not (seen.endswith(self.last) or self.last.endswith(seen)):
            return None
        before = self.newlines - seen.count(b"\n")
        return self.count - len(seen) + exc.start, before + seen[: exc.start].count(b"\n") + 1


def not_utf8_in(label: str, exc: UnicodeDecodeError, counted: CountedBytes | None = None) -> InputFileError:
    """A text-mode reader's `exc` as `parse` says it: file, byte, offset and line. A file is read
    again for where the byte is (the error knows only the block it failed in), a stream is placed
    by its `counted` bytes; one that cannot be placed is named with the byte alone."""
    path = Path(label)
    place = counted.place(exc) if counted is not None else None
    if place is not None:
        return not_utf8(label, exc.object[exc.start], *place, "transcripts")
    if path.is_file():
        with gzip.open(path, "rb") if is_gzip(path) else path.open("rb") as fh:
            found = first_non_utf8(label, fh, "transcripts")
        if found is not None:
            return found
    bad = exc.object[exc.start : exc.start + 1].hex()
    return InputFileError(f"{label}: not UTF-8 text (byte 0x{bad}); parsebridge reads transcripts as UTF-8")
