"""What a `parsebridge conformance` run knows of its backends, writes and prints.

`RunBackends`: the backends a run asked for, with each one's version, why it is
unavailable, its API shape and its parsers; `write_run_report`: the JSON/Markdown report
(with the plugin probes and the consensus column); `print_summary`: the family × backend
table and the first results not passing.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..adapters import get_backend
from ..plugins.probe import probe
from ..terminal import plain, styled
from .consensus import column
from .report import build_report, write_report

DEFAULT_BACKENDS: tuple[str, ...] = ("builtin", "vllm", "sglang", "dynamo", "smg", "llamacpp")
STATUS_STYLE = {"pass": "green", "diverge": "yellow", "fail": "red", "unsupported": "dim", "error": "magenta"}


def plugin_probes(backends: list[str]) -> dict[str, Any]:
    """Per framework backend run: can this release serve parsebridge parsers (the support table's plugin column)."""

    return {b: probe(b) for b in backends if b in ("vllm", "sglang")}


def backend_meta(names: Sequence[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """(versions, unavailable reasons) per backend, found without importing a framework."""

    versions: dict[str, Any] = {}
    unavailable: dict[str, str] = {}
    for name in names:
        try:
            backend = get_backend(name)
            reason = backend.unavailable_reason()
        except Exception as exc:
            versions[name], unavailable[name] = None, str(exc)
            continue
        if reason is not None:
            versions[name], unavailable[name] = None, reason
            continue
        versions[name] = backend.version()
    return versions, unavailable


@dataclass
class RunBackends:
    """The backends a run asked for and what is known about each (version, why unavailable, …)."""

    requested: list[str]
    explicit: bool
    versions: dict[str, Any]
    unavailable: dict[str, str]
    shapes: dict[str, Any] = field(default_factory=dict)
    parsers: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, explicit: list[str]) -> RunBackends:
        requested = explicit or list(DEFAULT_BACKENDS)
        return cls(requested, bool(explicit), *backend_meta(requested))

    @property
    def running(self) -> list[str]:
        """Named backends all run (an unavailable one is reported); by default, the available ones."""
        return self.requested if self.explicit else [b for b in self.requested if b not in self.unavailable]

    def describe(self) -> None:
        """Each installed backend's API shape and parser lists, for the report. Asked after the run:
        it imports the framework, which the run's staged workers import while others work
        (`parallel`). One that is installed but will not import or list is unavailable here, and
        its results already say why (each is an error naming it)."""
        for name in self.requested:
            if name in self.unavailable:
                continue
            try:
                backend = get_backend(name)
                self.shapes[name] = backend.api_shape()
                self.parsers[name] = {
                    "tool": sorted(backend.tool_parser_names()),
                    "reasoning": sorted(backend.reasoning_parser_names()),
                }
            except Exception as exc:
                self.unavailable[name] = f"{type(exc).__name__}: {exc}"


def write_run_report(
    where: str,
    results: list[Any],
    transcripts: list[Any],
    backends: RunBackends,
    chunkings: list[Any],
    timing: dict[str, Any],
    roundtrip: Any,
    written: list[Any] | None = None,
) -> dict[str, Any]:
    """The report built and written (`report.write_report`: each file whole, its path appended to
    `written` once in place)."""

    report = build_report(
        results,
        transcripts,
        backends={b: backends.versions.get(b) for b in backends.requested},
        unavailable=backends.unavailable,
        api_shapes=backends.shapes,
        chunkings=[c.name for c in chunkings],
        timing=timing,
    )
    report["parsers"] = backends.parsers
    report["plugins"] = plugin_probes([b for b in backends.running if b not in backends.unavailable])
    if roundtrip is not None:
        report["roundtrip"] = roundtrip
    if column.applies([b for b in backends.running if b not in backends.unavailable]):
        report["consensus"] = column.consensus_column(transcripts, results)
    return write_report(where, report, written)


def _cell(counts: Counter[str]) -> Any:
    parts: list[tuple[str, str] | str] = []
    for s in STATUS_STYLE:
        if counts[s]:
            parts += [" "] if parts else []
            parts.append((f"{counts[s]} {s}", STATUS_STYLE[s]))
    return styled(*parts) if parts else styled(("–", "dim"))


def print_summary(
    console: Any,
    results: Sequence[Any],
    backends: Sequence[str],
    versions: dict[str, Any],
    show: int,
    report: str | None = None,
) -> None:
    from rich.table import Table

    per: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        per[f"{r.kind}:{r.family}"][r.backend][r.status] += 1
        totals[r.backend][r.status] += 1
    # The title on a line of its own: as a table's title Rich wraps it to the table's width (one
    # narrow backend column: "conformance:" / "family ×" / "backend").
    console.print(styled(("conformance: family × backend", "italic")), soft_wrap=True)
    table = Table()
    table.add_column("family", overflow="fold")
    for b in backends:
        table.add_column(plain(f"{b} {versions.get(b) or ''}".strip()), overflow="fold")
    for fam in sorted(per):
        table.add_row(plain(fam), *(_cell(per[fam][b]) for b in backends))
    table.add_section()
    table.add_row(styled(("total", "bold")), *(_cell(totals[b]) for b in backends))
    console.print(table)
    if show <= 0:
        return
    order = {"error": 0, "fail": 1, "diverge": 2}
    bad = sorted(
        (r for r in results if r.status in order and not r.known),
        key=lambda r: (order[r.status], r.backend, r.transcript, r.chunking),
    )

    for r in bad[:show]:
        detail = r.detail if len(r.detail) <= 200 else r.detail[:199] + "…"
        line = styled((r.status, STATUS_STYLE[r.status]), f" {r.spec} {r.transcript} [{r.chunking}] {detail}")
        console.print(line, soft_wrap=True)
    if len(bad) > show:
        where = (
            f"see the report in {report}" if report else "--show N lists more, --report DIR writes them all"
        )
        console.print(styled(f"… {len(bad) - show} more not passing (undocumented); {where}", style="dim"))
