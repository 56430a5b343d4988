"""Fixture cases as data: ``<kind>-<family>.yaml`` here, rendered into transcripts.

A tool case is a list of *segments* (content text, call regions rendered by
the family's format, or literal malformed regions with the calls they stand
for); the output and its expected reading come from the same segments, so
they cannot drift apart. `render_cases()` turns every YAML file of this
directory into transcript dicts (the conformance fixtures' JSONL records);
`tools/make_fixtures.py` writes them. The schema is in ``README.md`` here.

Rules of the derived reading (the builtin policy, rule 1): content is the
text segments verbatim, except whitespace-only text when the output holds a
call region; empty content is ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import tool_format
from .catalogue import DEFAULT, TOOLS, tools

#: Where the YAML case files live (one per kind and family).
CASES_DIR = Path(__file__).resolve().parent

Built = tuple[str, "str | None", list[dict[str, Any]]]


class CaseError(ValueError):
    """A case file that does not follow the schema (names the file and case)."""


def call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """An expected call: name and arguments object."""
    return {"name": name, "arguments": arguments or {}}


@dataclass
class Span:
    """A call region of the output and the calls it holds (``[]`` when it holds none)."""

    text: str
    calls: list[dict[str, Any]] = field(default_factory=list)


def build(*segments: str | Span) -> Built:
    """Output, expected content and expected calls from text segments and call spans."""
    out: list[str] = []
    content: list[str] = []
    calls: list[dict[str, Any]] = []
    has_call = any(isinstance(s, Span) for s in segments)
    for seg in segments:
        if isinstance(seg, Span):
            out.append(seg.text)
            calls.extend(seg.calls)
        else:
            out.append(seg)
            if seg.strip() or not has_call:
                content.append(seg)
    text = "".join(content).strip()
    return "".join(out), (text or None), calls


def segment(family: str, seg: Any) -> str | Span:
    """A YAML segment: ``{text}``, ``{calls, options, format}`` (rendered) or ``{raw, expect}``."""

    if isinstance(seg, str):
        return seg
    if not isinstance(seg, dict):
        raise CaseError(f"segment is neither text nor a mapping: {seg!r}")
    if "text" in seg:
        return str(seg["text"])
    if "calls" in seg:
        calls = [
            (c[0], c[1]) if isinstance(c, list) else (c["name"], c.get("arguments", {})) for c in seg["calls"]
        ]
        text = tool_format(seg.get("format", family)).render(calls, **seg.get("options", {}))
        return Span(text, [call(n, a) for n, a in calls])
    if "raw" in seg:
        return Span(str(seg["raw"]), list(seg.get("expect", [])))
    raise CaseError(f"segment without text/calls/raw: {seg!r}")


def record(
    family: str,
    case: dict[str, Any],
    *,
    kind: str = "tool",
    reasoning_family: str | None = None,
    known_divergences: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """One transcript (the fixtures' JSONL record) from one YAML case; `known_divergences`: the
    file's, which hold for every case (an engine's parser that fails whatever the output), before
    the case's own."""
    if "output" in case:
        output, content, calls = str(case["output"]), None, []
    else:
        output, content, calls = build(*(segment(family, s) for s in case["segments"]))
    if "content" in case or (kind == "reasoning" and "output" in case):
        content = case.get("content")
    if "calls" in case:
        calls = case["calls"]
    slug = case["slug"] if kind == "tool" else f"reasoning-{case['slug']}"
    names = tuple(case.get("tools", DEFAULT)) if kind == "tool" else ()
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise CaseError(f"tools not in the catalogue: {unknown}")
    rec: dict[str, Any] = {
        "id": f"{family}-{slug}",
        "family": family,
        "kind": kind,
        "reasoning_family": case.get("reasoning_family", reasoning_family),
        "output": output,
        "tools": tools(*names),
        "reasoning_started_in_prompt": bool(case.get("started", False)),
        "expected": {"reasoning": case.get("reasoning"), "content": content, "tool_calls": calls},
        "tags": list(case.get("tags", [])),
    }
    if "truncated" in rec["tags"]:  # the output stops where the token limit cut it
        rec["finish_reason"] = "length"
    known = [*known_divergences, *(case.get("known_divergences") or [])]
    if known:
        rec["known_divergences"] = known
    if case.get("notes"):
        rec["notes"] = case["notes"]
    return rec


@dataclass
class CaseFile:
    """One YAML file: its family, kind, fixture-index summary and rendered transcripts."""

    path: Path
    family: str
    kind: str
    summary: str
    records: list[dict[str, Any]]


def load_case_file(path: Path) -> CaseFile:
    """Render one ``<kind>-<family>.yaml`` file."""
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or "family" not in doc or "cases" not in doc:
        raise CaseError(f"{path.name}: needs `family` and `cases`")
    family, kind = doc["family"], doc.get("kind", "tool")
    if kind not in ("tool", "reasoning"):
        raise CaseError(f"{path.name}: kind must be tool or reasoning, not {kind!r}")
    known = doc.get("known_divergences") or []
    if not isinstance(known, list):
        raise CaseError(f"{path.name}: known_divergences must be a list")
    records = []
    for case in doc["cases"]:
        try:
            records.append(
                record(
                    family,
                    case,
                    kind=kind,
                    reasoning_family=doc.get("reasoning_family"),
                    known_divergences=known,
                )
            )
        except (CaseError, KeyError, TypeError, ValueError) as exc:
            raise CaseError(f"{path.name}: case {case.get('slug')!r}: {exc}") from exc
    return CaseFile(path, family, kind, str(doc.get("summary") or ""), records)


def case_files(directory: Path | None = None) -> list[CaseFile]:
    """Every case file of `directory` (default: this package's), sorted by file name."""
    return [load_case_file(p) for p in sorted((directory or CASES_DIR).glob("*.yaml"))]


def render_cases(files: Iterable[CaseFile] | None = None) -> list[dict[str, Any]]:
    """Every transcript of every case file, file by file; duplicate ids are an error."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for cf in case_files() if files is None else files:
        for rec in cf.records:
            if rec["id"] in seen:
                raise CaseError(f"{cf.path.name}: duplicate id {rec['id']}")
            seen.add(rec["id"])
            out.append(rec)
    return out


def summaries(files: Sequence[CaseFile]) -> dict[tuple[str, str], str]:
    """(kind, family) → the fixture index's format line."""
    return {(cf.kind, cf.family): cf.summary for cf in files if cf.summary}


__all__ = [
    "CASES_DIR",
    "DEFAULT",
    "TOOLS",
    "CaseError",
    "CaseFile",
    "Span",
    "build",
    "call",
    "case_files",
    "load_case_file",
    "record",
    "render_cases",
    "segment",
    "summaries",
    "tools",
]
