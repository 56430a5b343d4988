"""The human views of a compare run: a rich table on the terminal, and one self-contained HTML page.

Both take the summary and a bounded list of comparisons (every transcript of
a small run, or the most different ones of a large run), so a 100k-line log
renders as fast as ten. The HTML page reuses the conformance report's
stylesheet (read from its template) so the two reports look alike without a
second copy of the CSS.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from importlib import resources
from typing import Any

from ..adapters import get_backend
from ..conformance.classes import DESCRIPTIONS, DivergenceClass
from ..protocol.surrogates import escape_lone_surrogates
from ..terminal import Part, counted, plain, replacing, styled, whitespace_only
from ..terminal import console as cli_console
from .models import CallOut, CompareSummary, PairAgreement, Reading, TranscriptComparison

_MAX_CELL = 400


def _describe(cls: str) -> str:
    try:
        return DESCRIPTIONS[DivergenceClass(cls)]
    except ValueError:
        return ""


def _calls_text(calls: Sequence[CallOut]) -> str:
    out = []
    for c in calls:
        if c.invalid_arguments is not None:
            out.append(f"{c.name}(invalid: {c.invalid_arguments})")
        else:
            out.append(f"{c.name}({json.dumps(c.arguments, ensure_ascii=False, sort_keys=True)})")
    return "\n".join(out)


def _cut(text: str | None) -> str:
    if text is None:
        return "∅"

    shown = whitespace_only(text)
    if shown:
        return shown
    return text if len(text) <= _MAX_CELL else text[: _MAX_CELL - 1] + "…"


def _key(r: Reading) -> tuple[Any, ...]:
    return (r.status, r.error, r.reasoning, r.content, _calls_text(r.tool_calls))


def rows_of(rec: TranscriptComparison) -> list[tuple[str, list[str], Reading]]:
    """(spec, modes with this same reading, reading): each spec's modes that read alike share a row."""
    rows = []
    for spec, modes in rec.results.items():
        groups: dict[tuple[Any, ...], tuple[list[str], Reading]] = {}
        for mode, reading in modes.items():
            groups.setdefault(_key(reading), ([], reading))[0].append(mode)
        for ms, reading in groups.values():
            rows.append((spec, ms, reading))
    return rows


def grouped_differences(rec: TranscriptComparison) -> list[tuple[str, str, str]]:
    """(class, where, detail): the same difference at several modes is one line (``A vs B at oneshot, stream``)."""
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for x in [*rec.differences, *rec.against_expected]:
        sa, _, ma = x.a.rpartition("/")
        sb, _, mb = x.b.rpartition("/")
        if x.b == "expected":
            key, where = (x.class_, sa, "expected", x.detail), ma
        elif sa == sb and ma != mb:
            key, where = (x.class_, sa, "", x.detail), f"{ma} vs {mb}"
        else:
            key, where = (x.class_, sa, sb, x.detail), ma
        groups.setdefault(key, []).append(where)
    out = []
    for (cls, a, b, detail), wheres in groups.items():
        if not b:
            out.append((cls, f"{a}: {', '.join(wheres)}", detail))
        elif b == "expected":  # (the detail's 'X vs Y' gives the expected value first)
            out.append((cls, f"expected vs {a} at {', '.join(wheres)}", detail))
        elif a == b:
            out.append((cls, f"{a} at {', '.join(wheres)}", detail))
        else:
            out.append((cls, f"{a} vs {b} at {', '.join(wheres)}", detail))
    return out


def _rate(p: PairAgreement) -> str:
    return f"{p.agree}/{p.transcripts} ({p.rate:.0%})"


def _top_classes(classes: dict[str, int], n: int = 4) -> str:
    items = sorted(classes.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return ", ".join(f"{c} {k}" for c, k in items)


# ---------------------------------------------------------------- terminal


def print_table(
    summary: CompareSummary,
    shown: Sequence[TranscriptComparison],
    *,
    path: str | None = None,
    all_shown: bool = True,
) -> None:
    """Side-by-side readings of the given transcripts, then the summary tables."""

    if path:
        with replacing(path) as fh:  # the old file or the whole new table, whatever interrupts
            _print(cli_console(file=fh), summary, shown, all_shown)
    else:
        _print(cli_console(), summary, shown, all_shown)


def _print(
    console: Any, summary: CompareSummary, shown: Sequence[TranscriptComparison], all_shown: bool
) -> None:
    from rich.table import Table

    if shown and not all_shown:
        console.print(
            styled(f"The {len(shown)} most different of {summary.transcripts} transcripts", style="bold")
        )
    for d in shown:
        differing = {ref for x in d.differences for ref in (x.a, x.b)}
        wrong = {x.a for x in d.against_expected}
        title = styled((d.transcript, "bold"), (f" ({d.family})", "dim") if d.family else "")
        t = Table(title=title, title_justify="left", show_lines=True)
        for col in ("spec", "modes", "reasoning", "content", "tool calls"):
            t.add_column(col, overflow="fold")
        if d.expected is not None:
            t.add_column("expected", overflow="fold")
        for spec, modes, r in rows_of(d):
            hot = any(f"{spec}/{m}" in differing for m in modes)
            style = "red" if hot else ""
            cells = [plain(spec), plain(", ".join(modes))]
            if r.status != "ok":
                cells += [plain(""), styled(f"{r.status}: {_cut(r.error)}", style="magenta"), plain("")]
            else:
                cells += [
                    plain(_cut(r.reasoning)),
                    plain(_cut(r.content)),
                    plain(_cut(_calls_text(r.tool_calls)) or "—"),
                ]
            if d.expected is not None:
                ok = [not any(f"{spec}/{m}" == w for w in wrong) for m in modes]
                known = spec in d.expected
                cells.append(
                    (styled(("✓", "green")) if all(ok) else styled(("✗", "red"))) if known else plain("")
                )
            t.add_row(*cells, style=style)
        console.print(t)
        for cls, where, detail in grouped_differences(d):
            console.print(styled("  ", (cls, "yellow"), f" {where}: ", (detail, "dim")))
        for who, why in d.unsupported.items():
            console.print(styled(f"  unsupported {who}: {why}", style="dim"))
        if not d.differences and not d.against_expected and len(d.results) > 1:
            console.print(styled(("  all specs agree at every mode", "green")))
        console.print()
    _print_summary(console, summary)


def _print_summary(console: Any, s: CompareSummary) -> None:
    console.print(_summary_head(s))
    for title, pairs in (
        ("agreement per backend pair", s.backend_pairs),
        ("agreement per spec pair", s.pairs),
    ):
        if pairs:
            console.print(_pairs_table(title, pairs))
            if len(pairs) > _PAIRS_SHOWN:
                more = len(pairs) - _PAIRS_SHOWN
                console.print(styled(f"… {more} more pairs (--format json has all)", style="dim"))
    if s.specs:
        console.print(_specs_table(s))
    if s.classes:
        console.print(_classes_table(s))
    if s.most_different and s.differing:
        most = ", ".join(f"{r.transcript} ({r.score})" for r in s.most_different[:10])
        console.print(styled("most different: " + most))
    for who, n in s.unsupported.items():
        console.print(styled(f"unsupported: {who} on {counted(n, 'transcript')}", style="dim"))
    hint = single_backend_hint(s)
    if hint:
        console.print(styled(hint, style="dim"))


#: Pairs listed per agreement table on the terminal (the JSON and HTML have all).
_PAIRS_SHOWN = 30


def _summary_head(s: CompareSummary) -> Any:
    """``N transcripts: A without differences …, D with`` and the modes line."""

    modes = ", ".join(f"{m}={c}" if m != c else m for m, c in s.modes.items())
    parts: list[Part] = [(counted(s.transcripts, "transcript"), "bold")]
    if s.skipped:
        parts.append(f" ({s.skipped} from a previous run)")
    parts += [": ", (f"{s.agreeing} without differences between readings", "green"), ", "]
    parts.append((f"{s.differing} with", "yellow"))
    if s.wrong:
        parts += [", ", (f"{s.wrong} with a reading wrong against expected", "red")]
    if s.not_run:
        parts += [", ", (f"{s.not_run} no spec could run", "dim")]
    details = "".join(f"\n{spec} runs {what}" for spec, what in s.details.items())
    return styled(*parts, f"\nmodes: {modes}; builtin conventions: {s.conventions}{details}")


def _table(title: str, columns: Sequence[str]) -> Any:
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for col in columns:
        t.add_column(col, overflow="fold")
    return t


def _pairs_table(title: str, pairs: Sequence[PairAgreement]) -> Any:
    t = _table(
        title,
        ("a", "b", "agree at every mode", "one-shot agree", "stream agree", "classes (transcripts)"),
    )
    for p in sorted(pairs, key=lambda p: (p.rate, p.a, p.b))[:_PAIRS_SHOWN]:
        colour = "green" if p.agree == p.transcripts else "yellow"
        t.add_row(
            plain(p.a),
            plain(p.b),
            styled((_rate(p), colour)),
            f"{p.oneshot_agree}/{p.transcripts}",
            f"{p.stream_agree}/{p.transcripts}",
            plain(_top_classes(p.classes)),
        )
    return t


def _specs_table(s: CompareSummary) -> Any:
    t = _table(
        "per spec", ("spec", "transcripts", "stream = one-shot", "errors", "correct (of scored)", "classes")
    )
    for st in s.specs[:40]:
        t.add_row(
            plain(st.spec),
            str(st.transcripts),
            f"{st.stream_consistent}/{st.transcripts}",
            str(st.errors) if st.errors else "",
            f"{st.correct}/{st.scored}" if st.scored else "",
            plain(_top_classes(st.classes)),
        )
    return t


def _classes_table(s: CompareSummary) -> Any:
    t = _table("divergence classes", ("class", "transcripts", "meaning"))
    for c, n in s.classes.items():
        t.add_row(plain(c), str(n), plain(_describe(c)))
    return t


def single_backend_hint(s: CompareSummary) -> str | None:
    """Why nothing was compared across backends, when only one (builtin) could run."""
    if s.pairs or list(s.backends) != ["builtin"]:
        return None
    installed = [fw for fw in ("vllm", "sglang", "dynamo", "smg") if _installed(fw)]
    if installed:
        return (
            "only the builtin backend ran, so there is nothing to compare it with; "
            f"{' and '.join(installed)} {'is' if len(installed) == 1 else 'are'} installed here: "
            f"to compare, add {', '.join(installed)} to --backends (or leave --backends out), or, with "
            f"specs, give theirs beside yours (--tool-parser {installed[0]}:NAME)"
        )
    return (
        "only the builtin backend ran here, so there is nothing to compare it with: install a framework's "
        "parsers and run the same command again: parsebridge install-framework smg-latest or "
        "dynamo-latest (Rust parsers, no torch: a few hundred MB on disk), or vllm-latest / sglang-latest "
        "(CPU torch: gigabytes)"
    )


def _installed(backend: str) -> bool:
    try:
        return get_backend(backend).unavailable_reason() is None
    except Exception:  # a broken backend module counts as not installed
        return False


# ---------------------------------------------------------------- html

_EXTRA_CSS = """
details.transcript { overflow-x: auto; }
details.transcript table.cmp { width: 100%; table-layout: fixed; }
details.transcript table.cmp td { min-width: 0; max-width: none; overflow-wrap: anywhere; }
table.cmp th:nth-child(1) { width: 15%; } table.cmp th:nth-child(2) { width: 12%; }
table.cmp th.expected { width: 5.5rem; }
tr.hot td { background: #fff3e0; }
td.ok { color: var(--pass); } td.bad { color: var(--fail); font-weight: 600; }
.pairs td.rate { font-weight: 600; }
"""


def _css() -> str:
    try:
        template = (
            resources.files("parsebridge.conformance")
            .joinpath("templates/report.html")
            .read_text(encoding="utf-8")
        )
        m = re.search(r"<style>(.*?)</style>", template, re.DOTALL)
        return (m.group(1) if m else "") + _EXTRA_CSS
    except OSError:
        return _EXTRA_CSS


def _e(text: Any) -> str:
    """`text` for the page, HTML-escaped; a lone surrogate (which no page can hold: UTF-8 cannot
    encode it) shown as its escape ``\\ud800``, as the table and JSON output show it."""
    return html.escape(escape_lone_surrogates(str(text)), quote=True)


def _pairs_html(title: str, pairs: Sequence[PairAgreement]) -> str:
    if not pairs:
        return ""
    rows = "".join(
        f"<tr><td>{_e(p.a)}</td><td>{_e(p.b)}</td><td class='rate'>{_e(_rate(p))}</td>"
        f"<td>{p.oneshot_agree}/{p.transcripts}</td><td>{p.stream_agree}/{p.transcripts}</td>"
        f"<td class='classes'>{_e(_top_classes(p.classes, 8))}</td></tr>"
        for p in sorted(pairs, key=lambda p: (p.rate, p.a, p.b))
    )
    return (
        f"<h2>{_e(title)}</h2><table class='pairs'><thead><tr><th>a</th><th>b</th><th>agree at every mode</th>"
        f"<th>one-shot agree</th><th>stream agree</th><th>classes (transcripts)</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _transcript_html(d: TranscriptComparison) -> str:
    differing = {ref for x in d.differences for ref in (x.a, x.b)}
    wrong = {x.a for x in d.against_expected}
    scored = d.expected is not None
    head = "<tr><th>spec</th><th>modes</th><th>reasoning</th><th>content</th><th>tool calls</th>"
    head += "<th class='expected'>expected</th></tr>" if scored else "</tr>"
    body = []
    for spec, modes, r in rows_of(d):
        hot = any(f"{spec}/{m}" in differing for m in modes)
        if r.status != "ok":
            cells = f"<td></td><td class='bad'>{_e(r.status)}: {_e(r.error)}</td><td></td>"
        else:
            cells = "".join(
                f"<td><pre>{_e(v)}</pre></td>"
                for v in (_cut(r.reasoning), _cut(r.content), _calls_text(r.tool_calls) or "—")
            )
        if scored:
            if spec in (d.expected or {}):
                ok = not any(f"{spec}/{m}" in wrong for m in modes)
                cells += f"<td class='{'ok' if ok else 'bad'}'>{'✓' if ok else '✗'}</td>"
            else:
                cells += "<td></td>"
        body.append(
            f"<tr class='{'hot' if hot else ''}'><td>{_e(spec)}</td><td>{_e(', '.join(modes))}</td>{cells}</tr>"
        )
    diffs = "".join(
        f"<li><span class='classes'>{_e(cls)}</span> {_e(where)}: <span class='detail'>{_e(detail)}</span></li>"
        for cls, where, detail in grouped_differences(d)
    )
    unsup = "".join(f"<li class='muted'>unsupported {_e(k)}: {_e(v)}</li>" for k, v in d.unsupported.items())
    n = d.score
    badge = (
        f"<span class='badge s-diverge'>{counted(n, 'difference')}</span>"
        if n
        else "<span class='badge s-pass'>agree</span>"
    )
    fam = f" <span class='muted'>({_e(d.family)})</span>" if d.family else ""
    return (
        f"<details class='transcript'{' open' if n else ''}><summary>{_e(d.transcript)}{fam} {badge}</summary>"
        f"<table class='cmp'><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"
        f"<ul>{diffs}{unsup}</ul></details>"
    )


def render_html(
    summary: CompareSummary, shown: Sequence[TranscriptComparison], *, all_shown: bool = True
) -> str:
    """One self-contained page (inline CSS, no script, no network): summary, then transcripts."""
    s = summary
    modes = ", ".join(f"{m} = {c}" for m, c in s.modes.items())
    versions = " · ".join(f"{b} {v or '?'}" for b, v in s.backends.items())
    spec_rows = "".join(
        f"<tr><td>{_e(st.spec)}</td><td>{st.transcripts}</td><td>{st.stream_consistent}/{st.transcripts}</td>"
        f"<td>{st.errors or ''}</td><td>{f'{st.correct}/{st.scored}' if st.scored else ''}</td>"
        f"<td class='classes'>{_e(_top_classes(st.classes, 8))}</td></tr>"
        for st in s.specs
    )
    class_rows = "".join(
        f"<tr><td class='classes'>{_e(c)}</td><td>{n}</td><td>{_e(_describe(c))}</td></tr>"
        for c, n in s.classes.items()
    )
    heading = (
        "Transcripts" if all_shown else f"The {len(shown)} most different of {s.transcripts} transcripts"
    )
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>parsebridge compare</title><style>{_css()}</style></head><body>",
        "<h1>parsebridge compare</h1>",
        f"<div class='meta'>parsebridge {_e(s.parsebridge)} · {_e(versions)} · modes: {_e(modes)}<br>"
        f"{counted(s.transcripts, 'transcript')}: <span class='badge s-pass'>{s.agreeing} agree</span> "
        f"<span class='badge s-diverge'>{s.differing} differ</span>"
        + (f" <span class='badge s-fail'>{s.wrong} wrong vs expected</span>" if s.wrong else "")
        + (f" <span class='badge s-unsupported'>{s.not_run} not run</span>" if s.not_run else "")
        + (f" · {s.skipped} from a previous run" if s.skipped else "")
        + ("" if s.complete else " · <b>interrupted</b>")
        + "".join(f"<br>{_e(spec)} runs {_e(what)}" for spec, what in s.details.items())
        + "</div>",
        _pairs_html("Agreement per backend pair", s.backend_pairs),
        _pairs_html("Agreement per spec pair", s.pairs),
    ]
    if spec_rows:
        parts.append(
            "<h2>Per spec</h2><table><thead><tr><th>spec</th><th>transcripts</th><th>stream = one-shot</th>"
            f"<th>errors</th><th>correct (of scored)</th><th>classes</th></tr></thead><tbody>{spec_rows}</tbody></table>"
        )
    if class_rows:
        parts.append(
            "<h2>Divergence classes</h2><table><thead><tr><th>class</th><th>transcripts</th><th>meaning</th></tr>"
            f"</thead><tbody>{class_rows}</tbody></table>"
        )
    hint = single_backend_hint(s)
    if hint:
        parts.append(f"<p class='muted'>{_e(hint)}</p>")
    parts.append(f"<h2>{_e(heading)}</h2>")
    parts.extend(_transcript_html(d) for d in shown)
    parts.append("</body></html>\n")
    return "".join(parts)
