"""Reports: `report.json` (the documented contract, plus more), `report.md`, `report.html`.

`report.json` fields:

* ``schema`` (int, this layout's version), ``parsebridge`` (version),
  ``generated`` (UTC ISO time), ``python``;
* ``backends`` — backend → version string (None when unavailable),
  ``unavailable`` — backend → reason, ``api_shapes`` — backend → framework API
  shape label;
* ``chunkings`` — the chunking names run;
* ``timing`` — ``wall_s`` (whole command, framework imports included),
  ``setup_s`` per backend (parser construction, where framework imports land),
  ``run_s``;
* ``summary`` — ``total``, ``by_status`` counts, ``by_family`` →
  ``kind:family`` → backend → status → count;
* ``transcripts`` — id → {family, kind, reasoning_family, output, tools,
  reasoning_started_in_prompt, expected, expected_by_backend,
  known_divergences, tags, notes} (each output once, not per result);
* ``results`` — one object per (backend, transcript, chunking): ``backend``,
  ``spec``, ``reasoning_spec``, ``family``, ``kind``, ``transcript``,
  ``chunking``, ``status``, ``classes``, ``detail``, ``known`` (+
  ``known_reason``), ``differences`` [{class, detail, source, known, reason}],
  ``observed`` {mode, reasoning, content, tool_calls, fragments, anomalies,
  error, elapsed_ms, chunks}, ``elapsed_ms``;
* ``roundtrip`` (when run) — drawn calls rendered by each tool family's
  format and parsed back (`roundtrip`): ``examples``, ``seed``,
  ``elapsed_s``, ``backends`` → backend → family → {spec, inputs, clean,
  escaped, errors, classes (class → examples showing it), examples (class →
  the shortest output seen, its expected reading, detail), unsupported}.
* ``consensus`` (when builtin, vLLM and SGLang all ran) — ``kind:family`` →
  {cases, consensus, agrees, reviewed, unexplained}: each transcript one-shot
  through the three with builtin under its default ``conventions="servers"``
  (`consensus.column`); the markdown and HTML show it as a "consensus" column.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .._version import __version__
from ..terminal import write_whole
from .checks import STATUSES
from .classes import DESCRIPTIONS
from .html import render_html
from .roundtrip import render_markdown as roundtrip_markdown
from .runner import Result
from .transcripts import Transcript

SCHEMA_VERSION = 1

CONSENSUS_HEADER = "consensus (builtin default)"
CONSENSUS_NOTE = (
    "*consensus*: transcripts where vLLM and SGLang agree one-shot, and how many of them builtin "
    'reads the same under its default `conventions="servers"` (the rows above run it `lossless`); '
    "reviewed: named in consensus.yaml with a reason (docs/consensus.md)."
)


def transcript_entry(t: Transcript) -> dict[str, Any]:
    """What the report keeps of a transcript (enough to re-run and to show side by side)."""
    return {
        "family": t.family_name,
        "kind": t.kind,
        "reasoning_family": t.reasoning_family,
        "output": t.output,
        "tools": t.tools,
        "reasoning_started_in_prompt": t.reasoning_started_in_prompt,
        "expected": t.expected.normalized() if t.expected else None,
        "expected_by_backend": {b: e.normalized() for b, e in t.expected_by_backend.items()},
        "known_divergences": [k.model_dump() for k in t.known_divergences],
        "tags": t.tags,
        "notes": t.notes,
    }


def summarize(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Counts per status overall and per (kind:family, backend)."""
    by_status: Counter[str] = Counter()
    by_family: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    total = 0
    for r in rows:
        total += 1
        by_status[r["status"]] += 1
        by_family[f"{r['kind']}:{r['family']}"][r["backend"]][r["status"]] += 1
    return {
        "total": total,
        "by_status": {s: by_status.get(s, 0) for s in STATUSES},
        "by_family": {
            fam: {b: {s: c[s] for s in STATUSES if c[s]} for b, c in sorted(per.items())}
            for fam, per in sorted(by_family.items())
        },
    }


def build_report(
    results: Sequence[Result],
    transcripts: Sequence[Transcript],
    *,
    backends: dict[str, str | None],
    unavailable: dict[str, str] | None = None,
    api_shapes: dict[str, str | None] | None = None,
    chunkings: Sequence[str] = (),
    timing: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report as a JSON-ready dict (see the module doc for the fields)."""
    rows = [r.to_dict() for r in results]
    used = {r.transcript for r in results}
    return {
        "schema": SCHEMA_VERSION,
        "parsebridge": __version__,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "backends": dict(backends),
        "unavailable": dict(unavailable or {}),
        "api_shapes": dict(api_shapes or {}),
        "chunkings": list(chunkings),
        "timing": dict(timing or {}),
        "classes": {c.value: d for c, d in DESCRIPTIONS.items()},
        "summary": summarize(rows),
        "transcripts": {t.id: transcript_entry(t) for t in transcripts if t.id in used},
        "results": rows,
    }


# ---------------------------------------------------------------- markdown


def _md_escape(text: str, limit: int = 300) -> str:
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("|", "\\|").replace("\n", "⏎")


def _consensus_cell(row: dict[str, Any] | None) -> str:
    """``agrees/consensus`` and what explains the rest (``–``: no consensus in the family)."""
    if not row or not row["consensus"]:
        return "–"
    text = f"{row['agrees']}/{row['consensus']}"
    if row["reviewed"]:
        text += f" ({row['reviewed']} reviewed)"
    if row["unexplained"]:
        text += f" ({len(row['unexplained'])} unexplained)"
    return text


def _family_table(report: dict[str, Any], backends: list[str]) -> list[str]:
    """Counts per family and backend, and the consensus column when the report has it."""
    consensus = report.get("consensus")
    extra = [CONSENSUS_HEADER] if consensus is not None else []
    out = [
        "| family | " + " | ".join([*backends, *extra]) + " |",
        "|---|" + "---|" * (len(backends) + len(extra)),
    ]
    for fam, per in report["summary"]["by_family"].items():
        cells = [" ".join(f"{s} {n}" for s, n in per.get(b, {}).items()) or "–" for b in backends]
        if consensus is not None:
            cells.append(_consensus_cell(consensus.get(fam)))
        out.append(f"| {fam} | " + " | ".join(cells) + " |")
    return out + (["", CONSENSUS_NOTE] if consensus is not None else [])


def render_markdown(report: dict[str, Any], max_rows: int = 400) -> str:
    """A human summary: matrix of counts, then every non-pass result (up to `max_rows`)."""
    backends = list(report["backends"])
    out = [
        f"# parsebridge conformance report (parsebridge {report['parsebridge']})",
        "",
        f"Generated {report['generated']}. Backends: "
        + ", ".join(f"{b} {v or '(unavailable)'}" for b, v in report["backends"].items())
        + f". Chunkings: {', '.join(report['chunkings'])}.",
        "",
    ]
    if report["unavailable"]:
        out += ["Unavailable backends:", ""]
        out += [f"- **{b}**: {_md_escape(why)}" for b, why in report["unavailable"].items()]
        out.append("")
    summary = report["summary"]
    out += [
        "Totals: "
        + ", ".join(f"{s} {n}" for s, n in summary["by_status"].items())
        + f" (of {summary['total']}).",
        "",
        *_family_table(report, backends),
    ]
    bad = [r for r in report["results"] if r["status"] in ("fail", "error", "diverge")]
    order = {"error": 0, "fail": 1, "diverge": 2}
    bad.sort(key=lambda r: (order[r["status"]], r["backend"], r["transcript"], r["chunking"]))
    if bad:
        out += [
            "",
            "## Results that are not `pass`",
            "",
            "| status | backend | spec | transcript | chunking | classes | detail |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in bad[:max_rows]:
            status = r["status"] + (" (known)" if r.get("known") else "")
            out.append(
                f"| {status} | {r['backend']} | `{r['spec']}` | {r['transcript']} | {r['chunking']} | "
                f"{', '.join(r['classes'])} | {_md_escape(r['detail'])} |"
            )
        if len(bad) > max_rows:
            out.append(f"\n… and {len(bad) - max_rows} more (see report.json).")
    if report.get("roundtrip"):
        out += ["", *roundtrip_markdown(report["roundtrip"])]
    out += ["", "## Divergence classes", ""]
    out += [f"- `{c}` — {d}" for c, d in report["classes"].items()]
    timing = report.get("timing") or {}
    if timing:
        out += ["", f"Wall time {timing.get('wall_s', 0):.1f} s."]
    return "\n".join(out) + "\n"


REPORT_FILES: tuple[str, ...] = ("report.json", "report.md", "report.html")


def write_report(
    directory: str | Path, report: dict[str, Any], written: list[Path] | None = None
) -> dict[str, Path]:
    """Write report.json, report.md and report.html into `directory` (created); return their paths.

    All three are rendered first, then each file is replaced whole (`terminal.replacing`): an
    interruption leaves every file either as it was or complete. Each path is appended to
    `written` once its file is in place, so an interrupted caller can say which ones were.
    """

    d = Path(directory)
    texts = {
        "json": json.dumps(report, indent=1, ensure_ascii=False) + "\n",
        "md": render_markdown(report),
        "html": render_html(report),
    }
    d.mkdir(parents=True, exist_ok=True)
    paths = {key: d / name for key, name in zip(texts, REPORT_FILES, strict=True)}
    for key, text in texts.items():
        write_whole(paths[key], text)
        if written is not None:
            written.append(paths[key])
    return paths
