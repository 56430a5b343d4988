"""What `compare --resume` continues: the previous json output, checked before it is touched.

A json output is one run: its first line (`CompareRun`) records the settings that decide
every reading (specs, backends and their versions, chunkings, conventions, the ``--tools``
definitions, ``--reasoning-started``). Resuming with other settings would mix two runs'
readings under one summary, so it is refused, naming what differs. So is a file that is not
a compare output, or one written before the settings were recorded (nothing to check them
against). The only line ever dropped is a torn last line (not JSON: an interrupted write);
summary lines are left out, as the run ends with a new one. On a refusal the file is untouched.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from .._version import __version__
from ..protocol import ParsebridgeError
from ..terminal import replacing
from .models import CompareRun, CompareSummary, TranscriptComparison, load_record
from .plan import ComparePlan
from .summary import SummaryBuilder, backend_group, backend_versions

#: The settings compared on --resume, and how a message names each.
SETTINGS: dict[str, str] = {
    "targets": "parsers",
    "backends": "backends",
    "families": "--family",
    "versions": "backend versions",
    "modes": "chunkings (modes)",
    "conventions": "--conventions",
    "tools_sha256": "--tools definitions (SHA-256)",
    "reasoning_started": "--reasoning-started",
}


class ResumeError(ParsebridgeError):
    """The --output file cannot be continued by this run (exit 2); the file is left as it was."""


def run_settings(
    plan: ComparePlan, tools: Sequence[dict[str, Any]] | None = None, reasoning_started: bool = False
) -> CompareRun:
    """The settings of this run that decide its readings, as the output's first line."""
    targets = [t.label for t in plan.targets]
    groups = {backend_group(t) for t in targets} | set(plan.backends)
    digest = None
    if tools:
        canonical = json.dumps(list(tools), sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    return CompareRun(
        parsebridge=__version__,
        targets=targets,
        backends=list(plan.backends),
        families=[f"{kind}:{name}" for kind, name in plan.families],
        versions=backend_versions(sorted(groups)),
        modes=plan.modes,
        conventions=plan.conventions,
        tools_sha256=digest,
        reasoning_started=reasoning_started,
    )


def read_previous(path: Path, builder: SummaryBuilder, settings: CompareRun) -> tuple[Counter[str], bool]:
    """How many times each transcript id was compared already in the json output at `path` (every
    comparison goes into `builder`), and whether the file still lacks its first line (absent or empty).

    The file is checked whole before it is replaced (streaming, through a temporary file beside it):
    without summary lines and without a torn last line. Comparisons whose ids repeat (an input may
    repeat an id) are all kept: `pending_transcripts` skips that many transcripts of the id, in
    input order.
    """
    done: Counter[str] = Counter()
    if not path.exists():
        return done, True
    try:
        with replacing(path) as dst, path.open(encoding="utf-8") as src:
            reader = _Previous(path, settings, builder, done)
            torn = reader.copy(src, dst)
    except UnicodeDecodeError:
        raise ResumeError(
            f"{path}: not UTF-8 text, so not a compare output --resume may continue; the file is left as it is"
        ) from None
    if torn:
        print(f"resume: dropped the torn last line of {path} (an interrupted write)", file=sys.stderr)
    return done, not reader.header


class _Previous:
    """Reads a previous output line by line, refusing at the first line it may not continue."""

    def __init__(self, path: Path, settings: CompareRun, builder: SummaryBuilder, done: Counter[str]) -> None:
        self.path, self.settings, self.builder, self.done = path, settings, builder, done
        self.header = False
        self.records = 0

    def copy(self, src: IO[str], dst: IO[str]) -> bool:
        """Copy what is kept from `src` to `dst`; True when a torn last line was dropped."""
        for lineno, line in enumerate(src, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except ValueError:
                if not line.endswith("\n"):  # no newline: the last line, cut short by an interruption
                    return True
                raise self._refuse(lineno, "a complete line that is not JSON") from None
            self._take(lineno, data, dst, line if line.endswith("\n") else line + "\n")
        return False

    def _take(self, lineno: int, data: Any, dst: IO[str], line: str) -> None:
        try:
            rec = load_record(data)
        except ValueError:
            raise self._refuse(lineno, "a line that is not a compare record") from None
        self.records += 1
        if isinstance(rec, CompareRun):
            if self.records > 1:
                raise self._refuse(lineno, "a second run's first line (two outputs in one file?)")
            self._check(rec)
            self.header = True
        elif not self.header:
            raise ResumeError(
                f"{self.path} starts without the line that records its run's settings (written by an "
                "older parsebridge), so --resume cannot check this run's options match: write to a new "
                "file; the file is left as it is"
            )
        elif isinstance(rec, TranscriptComparison):
            self.done[rec.transcript] += 1
            self.builder.add(rec)
        if not isinstance(rec, CompareSummary):  # a summary is left out: the run ends with a new one
            dst.write(line)

    def _check(self, previous: CompareRun) -> None:
        """Refuse settings that differ from this run's, naming each difference."""
        differ = [
            f"{label}: {_shown(key, getattr(previous, key))} there, {_shown(key, getattr(self.settings, key))} here"
            for key, label in SETTINGS.items()
            if getattr(previous, key) != getattr(self.settings, key)
        ]
        if differ:
            raise ResumeError(
                f"{self.path} was made with other settings ({'; '.join(differ)}): --resume continues a run "
                "with the same options; give those, or write to a new file"
            )

    def _refuse(self, lineno: int, what: str) -> ResumeError:
        return ResumeError(
            f"{self.path}:{lineno}: {what}, so this is not a compare output --resume may continue "
            "(only a torn last line is dropped); the file is left as it is"
        )


def _shown(key: str, value: Any) -> str:
    """A setting as a message shows it: chunking names, a short digest, given / not given."""
    if key == "modes":
        return ", ".join(value.values())
    if key == "tools_sha256" and value:
        return f"{value[:12]}…"
    if isinstance(value, bool):
        return "given" if value else "not given"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    return str(value) if value is not None else "none"
