"""Transcripts: one model output each, the unit the conformance suite and `compare` run on.

The format is shared by the bundled fixtures and by users' logs:
JSON Lines (one object per line), YAML (a list of objects) for hand-written
fixtures, or a bare text file (the whole file is one output).

Loading is lenient where user logs need it and strict where fixtures need
it:

* every field but `output` is optional at load time; unknown keys are kept
  (``transcript.model_extra``), so a log line can carry its own metadata;
* OpenAI-ish log lines are accepted: the output may be under ``output``,
  ``text``, ``completion``, ``response``, ``raw_output`` or
  ``choices[0].text`` / ``choices[0].message.content``; tools may sit under
  ``request.tools``;
* JSONL is read as a stream (`iter_transcripts` is a generator), so a
  100k-line log costs constant memory;
* `validate_transcripts` is the strict check the bundled fixtures must pass:
  unique ids, a family that exists in the family table for the transcript's
  kind, and well-formed known divergences.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import IO, Any

import yaml  # type: ignore[import-untyped,unused-ignore]
from pydantic import ValidationError

from ..protocol import ParsebridgeError, family_table
from ..protocol.errors import json_problem
from ..protocol.families import KINDS, FamilyTable
from .classes import DivergenceClass
from .record import (
    Expected,
    ExpectedCall,
    FinishReason,
    KnownDivergence,
    TokenizerRef,
    Transcript,
    TranscriptKind,
    transcript_json_schema,
    unused_token_texts,
)

__all__ = [
    "JSONL_SUFFIXES",
    "OUTPUT_KEYS",
    "YAML_SUFFIXES",
    "Expected",
    "ExpectedCall",
    "FinishReason",
    "KnownDivergence",
    "TokenizerRef",
    "Transcript",
    "TranscriptError",
    "TranscriptKind",
    "bundled_transcripts",
    "fixtures_dir",
    "iter_json_lines",
    "iter_transcripts",
    "normalize_record",
    "select",
    "transcript_from",
    "transcript_json_schema",
    "validate_transcripts",
]

#: Keys an OpenAI-ish log line may carry its raw output under (first found wins).
OUTPUT_KEYS: tuple[str, ...] = ("output", "text", "completion", "response", "raw_output")
#: File suffixes read as JSON Lines / YAML; anything else is one bare-text transcript.
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json"})
YAML_SUFFIXES = frozenset({".yaml", ".yml"})


class TranscriptError(ParsebridgeError, ValueError):
    """A transcript file or object that cannot be read; names the file and line."""


# ---------------------------------------------------------------- normalising raw objects


class ParsedMessageError(TranscriptError):
    """A chat completion's message that the server's parsers already split: not raw output."""


#: Fields of a chat completion's message that only a server's parsers fill.
PARSED_FIELDS = ("tool_calls", "function_call", "reasoning_content", "reasoning")


def _first_choice_text(obj: dict[str, Any]) -> str | None:
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    choice = choices[0]
    if isinstance(choice.get("text"), str):
        return str(choice["text"])
    message = choice.get("message")
    if not isinstance(message, dict):
        return None
    parsed = [k for k in PARSED_FIELDS if message.get(k)]
    if parsed:  # its content is what the parsers left: reading it as the output loses the rest
        raise ParsedMessageError(
            f"choices[0].message has {' and '.join(parsed)}: the server's parsers already read this "
            'output, so its content is not the raw model output (give that as "output", or log '
            "the completion from a server run without tool and reasoning parsers)"
        )
    return str(message["content"]) if isinstance(message.get("content"), str) else None


def normalize_record(obj: Any, default_id: str) -> dict[str, Any]:
    """A raw JSON/YAML object → the transcript field names (lenient; see module doc)."""
    if isinstance(obj, str):
        return {"id": default_id, "output": obj}
    if not isinstance(obj, dict):
        raise TranscriptError(f"{default_id}: a transcript is a JSON object, not {_json_type(obj)}")
    data = dict(obj)
    if "output" not in data:
        for key in OUTPUT_KEYS[1:]:
            if isinstance(data.get(key), str):
                data["output"] = data.pop(key)
                break
        else:
            text = _first_choice_text(data)
            if text is not None:
                data["output"] = text
    if "tools" not in data:
        request = data.get("request")
        if isinstance(request, dict) and request.get("tools") is not None:
            data["tools"] = request["tools"]  # not a list: refused as `tools` is, never ignored
    if data.get("id") in (None, ""):
        data["id"] = default_id
    else:
        data["id"] = str(data["id"])
    return data


def _json_type(obj: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if obj is None else names.get(type(obj), type(obj).__name__)


def _problems(exc: ValidationError) -> str:
    """A validation error as one line: ``output: missing; expected.contnet: unknown key``."""
    parts = []
    for e in exc.errors(include_url=False):
        where = ".".join(str(x) for x in e["loc"])
        if e["type"] == "missing" and e["loc"] == ("output",):
            parts.append(
                f'no model output (give it as "output", or {", ".join(OUTPUT_KEYS[1:])}, or choices[0].text '
                "or choices[0].message.content)"
            )
        elif e["type"] == "missing":
            parts.append(f"{where}: missing")
        elif e["type"] == "extra_forbidden":
            parts.append(f"{where}: unknown key")
        elif e["loc"] == ("prompt",) and isinstance(e.get("input"), list):
            parts.append("prompt: the rendered text; the prompt as token ids goes in prompt_token_ids")
        else:
            parts.append(f"{where}: {e['msg']}" if where else e["msg"])
    return "; ".join(parts)


#: Half of a UTF-16 pair: JSON's ``\\ud83d`` escape (or a non-UTF-8 byte in argv) can make one.
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(obj: Any, field: str = "") -> tuple[str, str] | None:
    """(field, character) of the first string in `obj` holding a lone surrogate, else None.

    Such a string is not text: nothing can print or encode it, so a record holding one is
    refused when it is read rather than crashing the output later.
    """
    if isinstance(obj, str):
        found = None if obj.isascii() else _SURROGATE.search(obj)
        return (field or "(the record)", found.group()) if found else None
    if isinstance(obj, dict):
        for key, value in obj.items():
            name = f"{field}.{key}" if field else str(key)
            hit = lone_surrogate(key, name) or lone_surrogate(value, name)
            if hit:
                return hit
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            hit = lone_surrogate(value, f"{field}[{i}]")
            if hit:
                return hit
    return None


def transcript_at(obj: Any, default_id: str, where: str) -> Transcript:
    """Validate one raw object read at `where` (``log.jsonl:12``); errors name that place once."""
    try:
        data = normalize_record(obj, default_id)
    except ParsedMessageError as exc:
        raise TranscriptError(f"{where}: not a valid transcript: {exc}") from None
    except TranscriptError:
        raise TranscriptError(f"{where}: a transcript is a JSON object, not {_json_type(obj)}") from None
    bad = lone_surrogate(data)
    if bad:
        field, char = bad
        raise TranscriptError(
            f"{where}: {field}: a lone surrogate U+{ord(char):04X} is not text (half of a UTF-16 pair: "
            "an escape such as \\ud83d without its other half, or a byte that is not UTF-8)"
        )
    try:
        return Transcript.model_validate(data)
    except ValidationError as exc:
        raise TranscriptError(f"{where}: not a valid transcript: {_problems(exc)}") from None


def transcript_from(obj: Any, default_id: str = "transcript") -> Transcript:
    """Validate one raw object (or a bare string) as a transcript; errors start with `default_id`."""
    return transcript_at(obj, default_id, default_id)


# ---------------------------------------------------------------- loading


def iter_transcripts(path: str | Path) -> Iterator[Transcript]:
    """Transcripts in one file, streamed (JSONL line by line; YAML and bare text at once).

    Ids default to ``STEM:LINE`` (JSONL), ``STEM:INDEX`` (YAML or a JSON
    array) or the file stem (bare text or one JSON object), so every
    transcript of a log has a stable name.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in YAML_SUFFIXES:
        yield from _iter_yaml(p)
    elif suffix in JSONL_SUFFIXES:
        yield from _iter_jsonl(p)
    else:
        yield transcript_from({"output": _raw_text(p)}, p.stem)


def _raw_text(p: Path) -> str:
    """A bare text file's whole text as the model wrote it: its line ends kept (read with
    universal newlines, ``\r\n`` and ``\r`` came back as ``\n``, which `parse` and standard input
    keep), its byte order mark dropped."""
    with p.open(encoding="utf-8-sig", newline="") as fh:
        return fh.read()


def iter_json_lines(lines: Iterable[str], label: str, stem: str) -> Iterator[Transcript]:
    """JSON Lines (blank and ``//`` lines skipped): ids ``STEM:LINE``, errors at ``LABEL:LINE``."""
    for lineno, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("//"):
            continue
        try:
            obj = json.loads(text)
        except ValueError as exc:
            raise TranscriptError(f"{label}:{lineno}: not JSON: {json_problem(exc)}") from None
        yield transcript_at(obj, f"{stem}:{lineno}", f"{label}:{lineno}")


def _first_char(fh: IO[str]) -> str:
    """The first character that is not white space (or a BOM); the file is rewound."""
    while True:
        block = fh.read(1 << 16)
        if not block:
            fh.seek(0)
            return ""
        rest = block.lstrip().lstrip("\ufeff").lstrip()
        if rest:
            fh.seek(0)
            return rest[0]


def _iter_jsonl(p: Path) -> Iterator[Transcript]:
    """JSON Lines; or, in a ``.json`` file, one JSON array of transcripts or one (pretty-printed) object."""
    with p.open(encoding="utf-8-sig") as fh:
        first = _first_char(fh)
        if not first:
            return
        if first == "[":  # a .json file holding one list, not JSON Lines
            yield from _json_document(p, fh)
            return
        lines = iter(fh)
        head: list[str] = []
        content = ""
        for line in lines:  # the first line with content decides: a whole object, or JSON Lines
            head.append(line)
            if line.strip() and not line.strip().startswith("//"):
                content = line
                break
        if content and p.suffix.lower() == ".json" and not _is_json(content):
            fh.seek(0)
            yield from _json_document(p, fh)
            return
        yield from iter_json_lines(itertools.chain(head, lines), str(p), p.stem)


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _json_document(p: Path, fh: IO[str]) -> Iterator[Transcript]:
    """A whole ``.json`` file: an array (ids ``STEM:INDEX``) or one object (id: the stem)."""
    try:
        data = json.load(fh)
    except ValueError as exc:
        raise TranscriptError(f"{p}: not JSON: {json_problem(exc)}") from None
    if not isinstance(data, list):
        yield transcript_at(data, p.stem, str(p))
        return
    for i, obj in enumerate(data, 1):
        yield transcript_at(obj, f"{p.stem}:{i}", f"{p}: item {i}")


def yaml_problem(exc: Exception) -> str:
    """A YAML error in one line, as `json_problem` says a JSON one: PyYAML's own message spans
    lines (the context, a caret under a quoted copy of the text), which a one-line error cut."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if not problem:
        return " ".join(str(exc).split())
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{problem}{where}"


def _iter_yaml(p: Path) -> Iterator[Transcript]:
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8-sig"))
    except yaml.YAMLError as exc:
        raise TranscriptError(f"{p}: not YAML: {yaml_problem(exc)}") from None
    if data is None:
        return
    if isinstance(data, dict):
        data = data.get("transcripts", [data])
    if not isinstance(data, list):
        raise TranscriptError(f"{p}: expected a YAML list of transcripts")
    for i, obj in enumerate(data, 1):
        yield transcript_at(obj, f"{p.stem}:{i}", f"{p}: item {i}")


def _fixture_files(directory: Path) -> list[Path]:
    """The bundled fixtures, beside their notes (`log_files.load_transcripts` reads any directory;
    it imports this module, so the package's own folder, flat and uncompressed, is listed here)."""
    suffixes = JSONL_SUFFIXES | YAML_SUFFIXES
    return sorted(f for f in directory.iterdir() if f.is_file() and f.suffix.lower() in suffixes)


def fixtures_dir() -> Path:
    """Where the bundled fixtures live (``parsebridge/conformance/fixtures``)."""
    return Path(str(resources.files(__package__).joinpath("fixtures")))


@cache
def _bundled() -> tuple[Transcript, ...]:
    d = fixtures_dir()
    if not d.is_dir():
        return ()
    transcripts = [t for f in _fixture_files(d) for t in iter_transcripts(f)]
    validate_transcripts(transcripts, strict=True)
    return tuple(transcripts)


def bundled_transcripts(
    families: Sequence[str] | None = None, kinds: Sequence[str] | None = None
) -> list[Transcript]:
    """The fixtures shipped with parsebridge, validated, filtered by family (aliases ok) and kind.

    Returns copies, so callers may not corrupt the cache.
    """
    return [t.model_copy() for t in select(_bundled(), families=families, kinds=kinds)]


def split_names(values: Sequence[str] | None, option: str | None = None) -> list[str]:
    """The names of a comma-separated, repeatable option (``--family a,b --family c``).

    With `option`, an option given but naming nothing (``--backends ''``) is an error: it used to
    read as the option left out, its default (every backend, every family)."""
    names = [p.strip() for v in values or () for p in v.split(",") if p.strip()]
    if option and values and not names:  # (an append option left out is None or [])
        raise ParsebridgeError(f"{option} names nothing (give a comma-separated list, or leave it out)")
    return names


def select(
    transcripts: Iterable[Transcript],
    *,
    families: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
) -> Iterator[Transcript]:
    """Filter lazily. A family filter matches the transcript's family or its reasoning family."""
    table = family_table()
    wanted: set[str] | None = None
    if families:
        wanted = set()
        for name in families:
            for kind in KINDS:
                fam = table.get(kind, name)
                wanted.add(f"{kind}:{fam.name if fam else name}")
    for t in transcripts:
        if kinds and t.kind not in kinds:
            continue
        if ids and t.id not in ids:
            continue
        if tags and not set(tags) & set(t.tags):
            continue
        if wanted is not None:
            fam = t.resolve_family(table)
            rfam = t.resolve_reasoning_family(table)
            mine = {f"{t.kind}:{fam.name if fam else t.family}"}
            if rfam is not None:
                mine.add(f"reasoning:{rfam.name}")
            if not mine & wanted:
                continue
        yield t


def validate_transcripts(
    transcripts: Iterable[Transcript], *, table: FamilyTable | None = None, strict: bool = True
) -> list[str]:
    """Problems that make transcripts unusable as conformance fixtures.

    Checks unique ids, that `family` (and `reasoning_family`) exist in the
    family table for the transcript's kind, and that known-divergence classes
    are known class names. With `strict`, raises `TranscriptError` listing
    every problem; otherwise returns them.
    """
    table = table or family_table()
    class_names = {c.value for c in DivergenceClass}
    problems: list[str] = []
    seen: set[str] = set()
    for t in transcripts:
        if not t.id:
            problems.append("a transcript without an id")
        elif t.id in seen:
            problems.append(f"{t.id}: duplicate id")
        seen.add(t.id)
        if not t.family:
            problems.append(f"{t.id}: no family")
        elif t.resolve_family(table) is None:
            problems.append(f"{t.id}: {t.kind} family {t.family!r} is not in the family table")
        if t.reasoning_family:
            if t.kind == "reasoning":
                problems.append(f"{t.id}: reasoning_family is for tool transcripts")
            elif table.get("reasoning", t.reasoning_family) is None:
                problems.append(f"{t.id}: reasoning family {t.reasoning_family!r} is not in the family table")
        if t.kind == "reasoning" and t.expected is not None and t.expected.tool_calls:
            problems.append(f"{t.id}: a reasoning transcript expects no tool calls")
        for k in t.known_divergences:
            bad = [c for c in k.classes if c not in class_names]
            if bad:
                problems.append(f"{t.id}: known divergence names unknown classes {bad}")
            if not k.reason.strip():
                problems.append(f"{t.id}: known divergence for {k.backend!r} gives no reason")
        unused = unused_token_texts(t)
        if unused:
            problems.append(unused)
    if strict and problems:
        raise TranscriptError("invalid transcripts:\n  " + "\n  ".join(problems))
    return problems
