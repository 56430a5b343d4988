"""Re-read what the server returned: its raw output through the parser it runs, and every other.

`reread` asks the server for each scenario's raw output (`raw.fetch`), records it as
transcripts (saved with `save`, for ``parsebridge compare``/``conformance`` to replay), and —
given the spec the server runs (``--parser dynamo:hermes``) — runs those transcripts through
that spec and through every installed backend's parser for the same family (`compare`, the
same machinery as ``parsebridge compare``). Each reading is set beside what the server
answered: the one-shot reading beside its non-streamed answer, the streamed reading (one
token a chunk) beside its streamed one. A difference from the named spec means the server
does not read its model's output the way that parser does (a different release, a different
configuration, or a server bug); a difference from another backend is where switching would
change what clients see.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..adapters._tokenizers import TokenizerUnavailable, load_tokenizer
from ..comparison import compare
from ..comparison.plan import available_backends, family_targets, targets_from
from ..protocol import ParserSpec, family_table
from .http import Endpoint, ProbeUsageError
from .raw import RawOutput, dump_jsonl, fetch, recorded
from .run import MAX_SILENT, ProbeReport, Row

HOW = (
    "each scenario asked again without streaming, with logprobs (temperature 0, the same seed): "
    "the generated tokens' bytes joined"
)


def family_of(spec: str | None, kind: str) -> str | None:
    """The family-table family of `spec`'s parser (None when the table has no row for it)."""
    if not spec:
        return None
    parsed = ParserSpec.parse(spec)
    row = family_table().for_parser(kind, parsed.backend, parsed.name)  # type: ignore[arg-type]
    return row.name if row is not None else None


def _norm(reading: dict[str, Any]) -> tuple[str, str, list[tuple[str, Any]]]:
    calls = [(c.get("name"), c.get("arguments")) for c in reading.get("tool_calls") or []]
    return (reading.get("reasoning") or "").strip(), (reading.get("content") or "").strip(), calls


def differs(served: dict[str, Any], reading: dict[str, Any]) -> tuple[str, str] | None:
    """(class, detail) where a parser's reading is not the server's answer, else None."""
    if reading.get("status", "ok") != "ok":
        return "backend_error", str(reading.get("error") or reading.get("status"))
    a, b = _norm(served), _norm(reading)
    for i, what in enumerate(("reasoning", "content", "tool_calls")):
        if a[i] != b[i]:
            return f"{what}_differs", f"server {a[i]!r}, parser {b[i]!r}"[:400]
    return None


def _targets(
    parser: str | None, reasoning_parser: str | None, families: list[str], backends: list[str] | None
) -> tuple[list[Any], set[str], dict[str, str]]:
    named = targets_from([parser] if parser else [], [reasoning_parser] if reasoning_parser else None)
    usable = [b for b in available_backends() if backends is None or b in backends]
    others, unsupported = family_targets(families, usable) if families else ([], {})
    labels = {t.label for t in named}
    return named + [t for t in others if t.label not in labels], labels, unsupported


def _compared(
    records: list[dict[str, Any]], targets: list[Any], named: set[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    served = {r["id"]: r["served"] for r in records}
    result = compare(records, targets, chunkings=["token"])
    differences: list[dict[str, Any]] = []
    for comp in result.comparisons:
        for label, modes in comp.model_dump()["results"].items():
            for mode, server_mode in (("oneshot", "oneshot"), ("stream", "stream")):
                if mode not in modes or server_mode not in served[comp.transcript]:
                    continue
                found = differs(served[comp.transcript][server_mode], modes[mode])
                if found is not None:
                    differences.append(
                        {
                            "transcript": comp.transcript,
                            "a": f"server/{server_mode}",
                            "b": f"{label}/{mode}",
                            "class": found[0],
                            "detail": found[1],
                            "named": label in named,
                        }
                    )
    wrong = {d["b"].rsplit("/", 1)[0] for d in differences}
    return differences, [t.label for t in targets if t.label not in wrong]


def load_decoder(path: str) -> Any:
    """The model's tokenizer from a local path; a usage error when it cannot be loaded here."""
    try:
        return load_tokenizer(path)
    except ImportError as exc:
        raise ProbeUsageError(f"--tokenizer needs transformers ({exc.name} is not installed)") from None
    except (OSError, ValueError, TokenizerUnavailable) as exc:
        raise ProbeUsageError(f"--tokenizer {path}: {exc}") from None


def _fetched(
    endpoint: Endpoint,
    asked: list[Row],
    *,
    max_tokens: int,
    seed: int,
    decoder: Any,
    progress: Callable[[str], None] | None = None,
) -> list[RawOutput]:
    """Each row's raw output; after `MAX_SILENT` requests in a row with no answer, the rest are not
    sent (a server that hung would hold each one for the whole timeout)."""
    raws: list[RawOutput] = []
    silent = 0
    for row in asked:
        if silent >= MAX_SILENT:
            raws.append(
                RawOutput(row.scenario.name, why_not=f"not asked: the last {silent} requests got no answer")
            )
            continue
        if progress is not None:
            progress(f"{row.scenario.name} (raw output)")
        raw = fetch(endpoint, row, max_tokens=max_tokens, seed=seed, tokenizer=decoder)
        silent = silent + 1 if raw.no_answer else 0
        raws.append(raw)
    return raws


def _records(
    raws: list[RawOutput],
    report: ProbeReport,
    parser: str | None,
    reasoning_parser: str | None,
    tokenizer: str | None,
) -> list[dict[str, Any]]:
    """A transcript for each raw output that came, with where it came from."""
    rows: dict[tuple[str, str], Row] = {(r.scenario.name, r.mode): r for r in report.rows}
    source = {
        "base_url": report.base_url,
        "model": report.model,
        "parser": parser,
        "reasoning_parser": reasoning_parser,
    }
    return [
        recorded(
            raw,
            rows,
            family=family_of(parser, "tool"),
            reasoning_family=family_of(reasoning_parser, "reasoning"),
            source=source,
            tokenizer_path=tokenizer,
        )
        for raw in raws
        if raw.text is not None
    ]


def reread(
    endpoint: Endpoint,
    report: ProbeReport,
    *,
    parser: str | None,
    reasoning_parser: str | None = None,
    save: Path | None = None,
    max_tokens: int = 512,
    seed: int = 1234,
    tokenizer: str | None = None,
    backends: list[str] | None = None,
    decoder: Any = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Fetch the raw outputs, save them, and (given a spec) compare the readings with the server's.

    `decoder`: `tokenizer` already loaded (`load_decoder`; the command loads it before the probe
    sends anything, so a bad path fails first)."""
    asked = [r for r in report.rows if r.mode == "oneshot" and not r.reading.problem]
    if decoder is None and tokenizer:
        decoder = load_decoder(tokenizer)
    raws = _fetched(endpoint, asked, max_tokens=max_tokens, seed=seed, decoder=decoder, progress=progress)
    family, reasoning_family = family_of(parser, "tool"), family_of(reasoning_parser, "reasoning")
    records = _records(raws, report, parser, reasoning_parser, tokenizer)
    out: dict[str, Any] = {
        "how": HOW,
        "transcripts": len(records),
        "unavailable": [f"{raw.scenario}: {raw.why_not}" for raw in raws if raw.text is None],
        "warnings": [f"{raw.scenario}: {raw.extra['warning']}" for raw in raws if raw.extra.get("warning")],
        "differences": [],
        "agree": [],
        "saved": None,
    }
    if save is not None:
        save.write_text(dump_jsonl(endpoint.redact_data(records)), encoding="utf-8")
        out["saved"] = str(save)
    if (parser or reasoning_parser) and records:
        families = [f for f in (family, reasoning_family) if f]
        targets, named, unsupported = _targets(parser, reasoning_parser, families, backends)
        out["differences"], out["agree"] = _compared(records, targets, named)
        out["specs"] = [t.label for t in targets]
        out["unsupported"] = unsupported
    return out
