"""Logs as `compare` names them: many files and globs.

A production log is rarely one file: it is a day of rotated, compressed
JSONL parts (``chat-*.jsonl.gz``). `expand` turns the command line's
arguments into files (a glob matches in sorted order) and `count_lines`
sizes one for the progress bar; what a transcript file is and how one is
read, gzip included, is `conformance.log_files`.
"""

from __future__ import annotations

import glob
import gzip
from pathlib import Path

from ..conformance.log_files import is_gzip, unreadable_gzip

_GLOB_CHARS = frozenset("*?[")


def is_glob(arg: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in arg)


def expand(arg: str) -> list[Path]:
    """The files a glob matches, sorted (directories left out); [] when none."""
    return [Path(p) for p in sorted(glob.glob(arg, recursive=True)) if Path(p).is_file()]


def count_lines(path: Path) -> int:
    """Lines in a file, read in 1 MiB blocks (gzip decompressed on the fly); memory stays flat.

    A ``.gz`` file that is not gzip, or was cut short, is refused here, naming the file, as reading
    its transcripts would refuse it: this count is the first read of it."""
    n, last = 0, b"\n"
    with gzip.open(path, "rb") if is_gzip(path) else path.open("rb") as fh:
        try:
            while block := fh.read(1 << 20):
                n += block.count(b"\n")
                last = block[-1:]
        except (OSError, EOFError) as exc:
            if not is_gzip(path):
                raise
            raise unreadable_gzip(path, exc) from exc
    return n + (last != b"\n")
