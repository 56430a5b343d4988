"""The probe's terminal view: one row per scenario and mode, one column per check, then why.

Printed through `parsebridge.terminal` (plain text for everything the server wrote: a server's error
message or a leaked marker is shown as itself, never read as markup).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, Any

from .. import terminal as io
from .assemble import LONE_SURROGATE
from .checks import CHECKS, FAIL, NA, PASS, SKIP
from .run import ProbeReport


def _data_as_is(value: Any) -> Any:
    return value


def json_text(report: ProbeReport, redact_data: Callable[[Any], Any] = _data_as_is) -> str:
    """`--json`'s one line. What a server sent is kept as it came: a lone surrogate in it (which
    the answer check names) is written as its JSON escape, as the server sent it, since UTF-8
    output cannot hold the character itself. `redact_data` blanks the secrets out of the report's
    strings before they are escaped (after, a key holding a quote or a non-ASCII character no
    longer reads as itself)."""
    text = json.dumps(redact_data(report.to_json()), ensure_ascii=False)
    return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_CELL = {PASS: ("ok", "green"), FAIL: ("FAIL", "bold red"), NA: ("-", "dim"), SKIP: ("skip", "yellow")}


def _as_is(text: str) -> str:
    return text


def render(report: ProbeReport, file: IO[str] | None = None, redact: Callable[[str], str] = _as_is) -> None:
    """The table, each failure's detail, the notes and the re-read. `redact` blanks the key out of
    what the server wrote (a detail quotes arguments and content, which a server may fill with
    the request's own Authorization header)."""
    console = io.console(file=file)
    console.print(_table(console, report))
    _details(console, report, redact)
    if report.reread is not None:
        _reread(console, report.reread, redact)
    failed = len(report.failures)
    verdict = (
        ("all checks pass", "green")
        if not failed
        else (f"{failed} of {io.counted(len(report.rows), 'answer')} fail", "bold red")
    )
    if report.interrupted:
        verdict = (
            f"interrupted (Ctrl-C) after {io.counted(len(report.rows), 'answer')}; of those, {verdict[0]}",
            "yellow",
        )
    console.print(io.styled(verdict))


def _table(console: Any, report: ProbeReport) -> Any:
    """One column per check where that fits the terminal; on a narrower one (80 columns cannot
    hold twelve), one column that names each row's failed and skipped checks, wrapped, never cut."""
    from rich.measure import Measurement
    from rich.table import Table  # rich is a dependency; imported where the table is drawn

    title = io.plain(f"parsebridge probe: {report.model} at {report.base_url}")
    wide = Table(title=title, show_lines=False)
    wide.add_column("scenario", no_wrap=True)
    wide.add_column("mode", no_wrap=True)
    for name in CHECKS:
        wide.add_column(name, justify="center", no_wrap=True)
    for row in report.rows:
        cells = [io.styled(_CELL[row.outcomes[n].status]) for n in CHECKS]
        wide.add_row(io.plain(row.scenario.name), io.plain(row.mode), *cells)
    natural = Measurement.get(console, console.options.update_width(10**6), wide).maximum
    if natural <= console.width:
        return wide
    narrow = Table(title=title, show_lines=False)
    narrow.add_column("scenario", overflow="fold")
    narrow.add_column("mode", overflow="fold")
    narrow.add_column("checks", overflow="fold")
    for row in report.rows:
        narrow.add_row(io.plain(row.scenario.name), io.plain(row.mode), _verdicts(row))
    return narrow


def _verdicts(row: Any) -> Any:
    """A row's checks in one cell: `ok` when every one that applies passes, else which fail and
    which were skipped (`FAIL index, ids`)."""
    failed = [n for n in CHECKS if row.outcomes[n].status == FAIL]
    skipped = [n for n in CHECKS if row.outcomes[n].status == SKIP]
    parts: list[io.Part] = []
    if failed:
        parts += [("FAIL", "bold red"), " " + ", ".join(failed)]
    if skipped:
        parts += ["; " if parts else "", ("skip", "yellow"), " " + ", ".join(skipped)]
    return io.styled(*parts) if parts else io.styled(("ok", "green"))


def _details(console: Any, report: ProbeReport, redact: Callable[[str], str]) -> None:
    for row in report.rows:
        for name in row.failed:
            console.print(
                io.styled(
                    (f"{row.scenario.name} ({row.mode}) {name}: ", "red"), redact(row.outcomes[name].detail)
                )
            )
    for row in report.rows:
        for note in (row.expectation(), row.retry_note()):
            if note:
                console.print(io.styled((f"{row.scenario.name} ({row.mode}) note: ", "yellow"), note))


def _reread(console: Any, reread: dict[str, Any], redact: Callable[[str], str]) -> None:
    console.print(io.styled(("raw output: ", "bold"), reread.get("how", "")))
    for line in reread.get("unavailable", []):
        console.print(io.styled(("  not re-read: ", "yellow"), redact(line)))
    for line in reread.get("warnings", []):
        console.print(io.styled(("  warning: ", "yellow"), redact(line)))
    for diff in reread.get("differences", []):
        # a difference from the spec the server runs fails the run; one from another backend informs
        head = (
            ("  differs from --parser: ", "bold red")
            if diff.get("named")
            else ("  another backend: ", "yellow")
        )
        said = f"{diff['transcript']}: {diff['a']} vs {diff['b']}: {diff['class']}: {diff['detail']}"
        console.print(io.styled(head, redact(said)))
    if reread.get("saved"):
        # the count: a file with none in it (no raw output came) is no input for compare
        count = reread.get("transcripts", 0)
        console.print(
            io.styled((f"  {count} transcript{'s' if count != 1 else ''} saved to ", "bold"), reread["saved"])
        )
    agree = reread.get("agree") or []
    if agree:
        console.print(io.styled(("  agree with the server: ", "green"), ", ".join(agree)))
