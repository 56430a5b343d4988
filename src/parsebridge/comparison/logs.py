"""Logs as `compare` reads them: many files, globs, gzip, streamed line by line.

A production log is rarely one file: it is a day of rotated, compressed
JSONL parts (``chat-*.jsonl.gz``). `expand` turns the command line's
arguments into files (a glob matches in sorted order), and `iter_log`
streams one file's transcripts, decompressing ``.gz`` on the fly, with the
same ids as an uncompressed copy would get (``STEM:LINE``, the stem without
``.gz``), so a log compared compressed or not gives the same records.
"""

from __future__ import annotations

import glob
import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..conformance.transcripts import (
    JSONL_SUFFIXES,
    YAML_SUFFIXES,
    TranscriptError,
    iter_json_lines,
    iter_transcripts,
)

if TYPE_CHECKING:  # the CLI imports this module at start-up: pydantic loads only when a log is read
    from ..conformance.transcripts import Transcript

GZIP_SUFFIX = ".gz"
_GLOB_CHARS = frozenset("*?[")


def is_glob(arg: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in arg)


def expand(arg: str) -> list[Path]:
    """The files a glob matches, sorted (directories left out); [] when none."""
    return [Path(p) for p in sorted(glob.glob(arg, recursive=True)) if Path(p).is_file()]


def is_gzip(path: Path) -> bool:
    return path.suffix.lower() == GZIP_SUFFIX


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


def count_lines(path: Path) -> int:
    """Lines in a file, read in 1 MiB blocks (gzip decompressed on the fly); memory stays flat."""
    n, last = 0, b"\n"
    with gzip.open(path, "rb") if is_gzip(path) else path.open("rb") as fh:
        while block := fh.read(1 << 20):
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


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
            raise TranscriptError(f"{path}: not a readable gzip file: {exc}") from exc
