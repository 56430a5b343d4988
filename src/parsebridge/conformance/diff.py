"""What changed between two conformance reports (e.g. vLLM 0.15.1 → 0.33.0).

Users upgrade frameworks every few weeks and need to know, before they do,
what changes for their model family. Two `report.json` files
are matched on (backend, family, transcript, chunking); each pair whose
outcome moved is classified:

* ``fixed``      — was fail/diverge/error, now pass;
* ``regressed``  — was pass, now fail/diverge/error;
* ``changed``    — still not passing, but with other classes or status;
* ``appeared`` / ``vanished`` — the backend gained or lost a parser for
  the family (unsupported on one side only).

Parser names that appeared or vanished come from each report's
``parsers`` map when present, else from the specs its results used.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..protocol import ParsebridgeError
from ..protocol.errors import closest, json_problem
from ..protocol.spec import ParserBackend
from ..terminal import (
    BOM,
    InputFileError,
    check_output_path,
    counted,
    plain,
    print_error,
    styled,
    whole_number,
    write_whole,
)
from ..terminal import console as cli_console

PASSING = "pass"
ABSENT = "unsupported"
KINDS_OF_CHANGE = ("regressed", "fixed", "changed", "appeared", "vanished")

Key = tuple[str, str, str, str]


@dataclass(frozen=True)
class Change:
    """One transcript × chunking whose outcome moved between the reports."""

    kind: str
    backend: str
    family: str
    transcript: str
    chunking: str
    before: str
    after: str
    classes_before: tuple[str, ...] = ()
    classes_after: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "backend": self.backend,
            "family": self.family,
            "transcript": self.transcript,
            "chunking": self.chunking,
            "before": self.before,
            "after": self.after,
            "classes_before": list(self.classes_before),
            "classes_after": list(self.classes_after),
        }


@dataclass
class ReportDiff:
    """Everything that differs, with the versions each side ran."""

    versions_a: dict[str, str | None]
    versions_b: dict[str, str | None]
    changes: list[Change] = field(default_factory=list)
    parsers_appeared: dict[str, list[str]] = field(default_factory=dict)
    parsers_vanished: dict[str, list[str]] = field(default_factory=dict)
    compared: int = 0
    #: Results of a backend both reports ran that only one report holds (another chunking, family
    #: or transcript): not compared, and said, so a report that lost results does not pass as
    #: "0 changed".
    only_a: int = 0
    only_b: int = 0
    #: What the messages call the two reports: the CLI's paths as the user gave them.
    names: tuple[str, str] = ("REPORT_A", "REPORT_B")

    def unmatched(self) -> str:
        """The results left out for want of a match, as words ("" when none)."""
        sides = [
            f"{n} only in {name}" for n, name in zip((self.only_a, self.only_b), self.names, strict=True) if n
        ]
        return f"not compared: {', '.join(sides)}" if sides else ""

    def headline(self, *, markdown: bool = False) -> str:
        """Versions, counts, and what was not compared: the first line of the table and markdown."""
        a, b = _versions(self.versions_a), _versions(self.versions_b)
        sides = f"**Before:** {a} · **after:** {b} · " if markdown else f"before: {a}   after: {b}   "
        left = f"; {self.unmatched()}" if self.unmatched() else ""
        return f"{sides}{counted(self.compared, 'result')} compared, {len(self.changes)} changed{left}"

    def counts(self) -> dict[str, dict[str, int]]:
        """Family → kind of change → number of transcript × chunking results."""
        out: dict[str, Counter[str]] = defaultdict(Counter)
        for c in self.changes:
            out[c.family][c.kind] += 1
        return {fam: dict(counter) for fam, counter in sorted(out.items())}

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": self.versions_a,
            "b": self.versions_b,
            "compared": self.compared,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "counts": self.counts(),
            "parsers_appeared": self.parsers_appeared,
            "parsers_vanished": self.parsers_vanished,
            "changes": [c.as_dict() for c in self.changes],
        }


def load_report(path: str | Path) -> dict[str, Any]:
    """A report.json (or the directory holding one); `InputFileError` naming the file and the
    position for one that is not UTF-8 JSON or not a report (`FileNotFoundError` when missing)."""
    p = Path(path)
    if p.is_dir():
        p = p / "report.json"
    raw = p.read_bytes()
    try:
        text = raw.decode("utf-8").removeprefix(BOM)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputFileError(
            f"{p}: not UTF-8 text (byte 0x{raw[exc.start : exc.start + 1].hex()} at offset {exc.start}, "
            f"line {line}); a conformance report is UTF-8 JSON"
        ) from None
    if not text.strip():
        raise InputFileError(f"{p}: empty file, not a conformance report")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputFileError(f"{p}: not a JSON conformance report ({json_problem(exc)})") from None
    if not isinstance(data, dict) or "results" not in data:
        raise InputFileError(f"{p} is not a parsebridge conformance report (no 'results')")
    results = data["results"]
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise InputFileError(
            f"{p} is not a parsebridge conformance report ('results' is not a list of result objects)"
        )
    return data


def _index(report: Mapping[str, Any], backends: set[str] | None) -> dict[Key, Mapping[str, Any]]:
    out: dict[Key, Mapping[str, Any]] = {}
    for r in report.get("results", ()):
        if backends and r.get("backend") not in backends:
            continue
        key = (str(r.get("backend")), str(r.get("family")), str(r.get("transcript")), str(r.get("chunking")))
        out[key] = r
    return out


def _parsers(report: Mapping[str, Any]) -> dict[str, set[str]]:
    listed = report.get("parsers")
    if isinstance(listed, dict):
        return {
            backend: {f"{kind}:{n}" for kind, names in (kinds or {}).items() for n in names}
            for backend, kinds in listed.items()
        }
    seen: dict[str, set[str]] = defaultdict(set)
    for r in report.get("results", ()):
        if r.get("status") != ABSENT and r.get("spec"):
            seen[str(r.get("backend"))].add(str(r["spec"]))
    return seen


def classify(before: Mapping[str, Any], after: Mapping[str, Any]) -> str | None:
    """The kind of change between two results of one key (None: unchanged)."""
    sa, sb = before.get("status"), after.get("status")
    ca, cb = sorted(before.get("classes") or ()), sorted(after.get("classes") or ())
    if sa == sb and ca == cb:
        return None
    if sa == ABSENT:
        return "appeared"
    if sb == ABSENT:
        return "vanished"
    if sb == PASSING:
        return "fixed"
    if sa == PASSING:
        return "regressed"
    return "changed"


def diff_reports(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    *,
    backends: Iterable[str] | None = None,
    names: tuple[str, str] = ("REPORT_A", "REPORT_B"),
) -> ReportDiff:
    """Compare report `a` (before) with report `b` (after); `names` is what messages call them."""
    wanted = set(backends) if backends else None
    ia, ib = _index(a, wanted), _index(b, wanted)
    result = ReportDiff(dict(a.get("backends") or {}), dict(b.get("backends") or {}), names=names)
    for key in sorted(ia.keys() & ib.keys()):
        result.compared += 1
        kind = classify(ia[key], ib[key])
        if kind is not None:
            ra, rb = ia[key], ib[key]
            result.changes.append(
                Change(
                    kind,
                    *key,
                    before=str(ra.get("status")),
                    after=str(rb.get("status")),
                    classes_before=tuple(sorted(ra.get("classes") or ())),
                    classes_after=tuple(sorted(rb.get("classes") or ())),
                )
            )
    pa, pb = _parsers(a), _parsers(b)
    # A backend only one report ran is not compared (`backend_mismatch` says so): its parsers
    # did not appear or vanish.
    both = _backends_run(a, wanted) & _backends_run(b, wanted)
    result.only_a = sum(1 for key in ia.keys() - ib.keys() if key[0] in both)
    result.only_b = sum(1 for key in ib.keys() - ia.keys() if key[0] in both)
    for backend in sorted(pa.keys() | pb.keys()):
        if backend not in both:
            continue
        gained = sorted(pb.get(backend, set()) - pa.get(backend, set()))
        lost = sorted(pa.get(backend, set()) - pb.get(backend, set()))
        if gained:
            result.parsers_appeared[backend] = gained
        if lost:
            result.parsers_vanished[backend] = lost
    order = {k: i for i, k in enumerate(KINDS_OF_CHANGE)}
    result.changes.sort(key=lambda c: (order[c.kind], c.family, c.transcript, c.chunking))
    return result


@dataclass(frozen=True)
class GroupedChange:
    """Changes of one transcript that moved the same way at several chunkings (one row to read)."""

    kind: str
    backend: str
    family: str
    transcript: str
    chunkings: tuple[str, ...]
    before: str
    after: str
    classes_before: tuple[str, ...]
    classes_after: tuple[str, ...]


def grouped(changes: Iterable[Change]) -> list[GroupedChange]:
    """Merge changes that differ only in chunking, keeping the order of first appearance.

    A parser that changed behaviour usually does so at every chunking; one
    row per transcript keeps a README excerpt readable.
    """
    rows: dict[tuple[Any, ...], list[str]] = {}
    for c in changes:
        key = (
            c.kind,
            c.backend,
            c.family,
            c.transcript,
            c.before,
            c.after,
            c.classes_before,
            c.classes_after,
        )
        rows.setdefault(key, []).append(c.chunking)
    return [
        GroupedChange(kind, backend, fam, tr, tuple(chunks), before, after, cb, ca)
        for (kind, backend, fam, tr, before, after, cb, ca), chunks in rows.items()
    ]


def _versions(v: Mapping[str, str | None]) -> str:
    """The frameworks' versions (builtin's only when it ran alone: it moves with parsebridge)."""
    named = [f"{k} {val}" for k, val in sorted(v.items()) if val]
    return ", ".join(n for n in named if not n.startswith("builtin ")) or ", ".join(named) or "?"


def to_markdown(d: ReportDiff, *, limit: int = 40) -> str:
    """A README-ready summary: counts per family, then the changed transcripts."""
    lines = [d.headline(markdown=True), ""]
    counts = d.counts()
    if counts:
        lines += [
            "| family | " + " | ".join(KINDS_OF_CHANGE) + " |",
            "|---" * (len(KINDS_OF_CHANGE) + 1) + "|",
        ]
        for fam, per in counts.items():
            lines.append(f"| {fam} | " + " | ".join(str(per.get(k, 0) or "") for k in KINDS_OF_CHANGE) + " |")
        lines.append("")
    for label, table in (("appeared", d.parsers_appeared), ("vanished", d.parsers_vanished)):
        for backend, names in table.items():
            lines.append(f"- {backend} parsers {label} ({len(names)}): {', '.join(names)}")
    if d.parsers_appeared or d.parsers_vanished:
        lines.append("")
    if d.changes:
        lines += [
            "| change | backend | transcript | chunking | before | after |",
            "|---|---|---|---|---|---|",
        ]
        rows = grouped(d.changes)
        for g in rows[:limit]:
            before = g.before + (f" ({', '.join(g.classes_before)})" if g.classes_before else "")
            after = g.after + (f" ({', '.join(g.classes_after)})" if g.classes_after else "")
            chunkings = ", ".join(g.chunkings)
            lines.append(f"| {g.kind} | {g.backend} | {g.transcript} | {chunkings} | {before} | {after} |")
        if len(rows) > limit:
            lines.append(f"| … | | {len(rows) - limit} more rows | | | |")
    return "\n".join(lines) + "\n"


def print_table(d: ReportDiff, *, limit: int = 40) -> None:
    """The same summary on a terminal (rich); names and classes are printed as plain text."""
    from rich.table import Table

    console = cli_console()
    console.print(plain(d.headline()))
    counts = d.counts()
    if counts:
        t = Table(title="changes per family", title_justify="left")
        t.add_column("family")
        for k in KINDS_OF_CHANGE:
            t.add_column(k, justify="right")
        for fam, per in counts.items():
            t.add_row(plain(fam), *(str(per.get(k, 0) or "") for k in KINDS_OF_CHANGE))
        console.print(t)
    for label, table in (("appeared", d.parsers_appeared), ("vanished", d.parsers_vanished)):
        for backend, names in table.items():
            console.print(plain(f"{backend} parsers {label} ({len(names)}): {', '.join(names)}"))
    if d.changes:
        colour = {"fixed": "green", "regressed": "red", "changed": "yellow"}
        t = Table(title="changed results", title_justify="left")
        for col in ("change", "backend", "transcript", "chunking", "before", "after"):
            t.add_column(col)
        rows = grouped(d.changes)
        for g in rows[:limit]:
            style = colour.get(g.kind, "cyan")
            t.add_row(
                styled((g.kind, style)),
                plain(g.backend),
                plain(g.transcript),
                plain(", ".join(g.chunkings)),
                plain(g.before + (f" {', '.join(g.classes_before)}" if g.classes_before else "")),
                plain(g.after + (f" {', '.join(g.classes_after)}" if g.classes_after else "")),
            )
        console.print(t)
        if len(rows) > limit:
            console.print(plain(f"… {len(rows) - limit} more rows (use --format json for all)"))


def _backends_run(report: Mapping[str, Any], wanted: set[str] | None) -> set[str]:
    names = {str(r.get("backend")) for r in report.get("results", ())}
    return names & wanted if wanted else names


def check_wanted_backends(a: Mapping[str, Any], b: Mapping[str, Any], wanted: Iterable[str] | None) -> None:
    """A `--backend` neither report ran selects no result: `--backend vlm --strict` compared
    nothing and passed the gate (exit 0), where an unknown backend is a usage error elsewhere."""
    ran = _backends_run(a, None) | _backends_run(b, None)
    for name in wanted or ():
        if name not in ran:
            near = closest(name, sorted(ran | {backend.value for backend in ParserBackend}), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ParsebridgeError(
                f"--backend {name}: neither report ran it{hint}; they ran {', '.join(sorted(ran)) or 'none'}"
            )


def backend_mismatch(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    backends: Iterable[str] | None = None,
    names: tuple[str, str] = ("REPORT_A", "REPORT_B"),
) -> str | None:
    """Why some (or all) results could not be matched: the reports (called `names`) ran different
    backends. None if not."""
    wanted = set(backends) if backends else None
    ran_a, ran_b = _backends_run(a, wanted), _backends_run(b, wanted)
    if ran_a == ran_b:
        return None
    sides = "; ".join(
        f"{name} ran {', '.join(sorted(ran)) or 'none'}"
        for name, ran in zip(names, (ran_a, ran_b), strict=True)
    )
    if not ran_a & ran_b:
        return (
            f"the reports share no backend ({sides}): results are matched per backend, so none "
            "could be compared; diff two reports of the same backend (before and after an upgrade)"
        )
    only = sorted(ran_a ^ ran_b)
    return f"the reports ran different backends ({sides}): {', '.join(only)} not compared"


# ---------------------------------------------------------------- command line

FORMATS = ("table", "json", "markdown")


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the options of `parsebridge conformance diff` (the CLI owns `report_a`/`report_b`).

    Kept here so the command's options live next to the code that honours them;
    `main` also tolerates a namespace without them (defaults apply).
    """
    parser.add_argument(
        "--format", choices=FORMATS, default="table", help="table (terminal), json (everything) or markdown"
    )
    parser.add_argument(
        "--backend",
        action="append",
        metavar="B",
        help="only these backends (repeatable or comma-separated; default: every backend in both reports)",
    )
    parser.add_argument(
        "--limit",
        type=whole_number(0),  # (--limit -1 was a slice: every row but the last)
        default=40,
        metavar="N",
        help="changed results listed (table/markdown; default 40)",
    )
    parser.add_argument(
        "--out", metavar="FILE", help="write to FILE instead of standard output (table becomes markdown)"
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 if any result regressed, or REPORT_B lacks results REPORT_A holds (CI gate before an upgrade)",
    )
    return parser


def _backends(values: Iterable[str] | None) -> list[str]:
    return [p.strip() for v in values or () for p in v.split(",") if p.strip()]


def main(ns: argparse.Namespace) -> int:
    """`parsebridge conformance diff REPORT_A REPORT_B`: A is before, B after."""
    fmt = getattr(ns, "format", None) or "table"
    limit = getattr(ns, "limit", None)
    limit = 40 if limit is None else limit  # (0 lists no row: it was read as "not given")
    out = getattr(ns, "out", None)
    if out:  # refused before the work where it cannot be written; its folder is made, as --report's
        if Path(out).is_dir():
            raise ParsebridgeError(f"--out {out} is a directory, not a file")
        check_output_path(Path(out).parent, f"--out {out}'s folder", directory=True)
    try:
        a, b = load_report(ns.report_a), load_report(ns.report_b)
    except FileNotFoundError as exc:
        raise ParsebridgeError(f"no report at {exc.filename}") from exc
    wanted = _backends(getattr(ns, "backend", None)) or None
    check_wanted_backends(a, b, wanted)
    names = (str(ns.report_a), str(ns.report_b))  # as given: messages name the user's files
    d = diff_reports(a, b, backends=wanted, names=names)
    table = fmt == "table" and not out
    for warning in (
        backend_mismatch(a, b, wanted, names),
        "" if table else d.unmatched(),
    ):  # (the table heads with it)
        if warning:
            print_error(warning, prefix="warning:")
    if table:
        print_table(d, limit=limit)
    else:
        text = (
            json.dumps(d.as_dict(), indent=1, ensure_ascii=False) + "\n"
            if fmt == "json"
            else to_markdown(d, limit=limit)
        )
        if out:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            write_whole(out, text)  # the old page or the whole new one, never half
        else:
            sys.stdout.write(text)
    regressed = any(c.kind == "regressed" for c in d.changes)
    strict = getattr(ns, "strict", False)
    if strict and d.only_a:  # the gate must not pass an "after" run that lost results
        print_error(
            f"--strict: {ns.report_b} lacks {d.only_a} of the results {ns.report_a} holds (it ran "
            "fewer chunkings, families or transcripts): run both reports the same way",
        )
    return 1 if strict and (regressed or d.only_a) else 0
