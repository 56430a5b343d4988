"""The bundled conformance fixtures are well-formed and cover what the suite promises.

Checks the raw JSON Lines (not via the loader, so a loader bug cannot hide a
bad fixture): shape of every field, unique ids, families that exist in the
family table for their kind, expected values of the right shape, and the
coverage floor (transcript, family and tag counts).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from parsebridge.protocol import family_table

FIXTURES = Path(__file__).resolve().parents[2] / "src" / "parsebridge" / "conformance" / "fixtures"

TAGS = {
    "single",
    "multi-call",
    "parallel",
    "content-before",
    "content-between",
    "content-after",
    "no-call",
    "unicode",
    "emoji",
    "escaped-quotes",
    "nested",
    "large-args",
    "empty-args",
    "truncated",
    "malformed",
    "unknown-tool",
    "reasoning-no-start-tag",
    "reasoning-unclosed",
    "reasoning-then-tools",
    "empty-output",
    "marker-in-string",
    "whitespace",
}
BACKENDS = {"builtin", "vllm", "sglang"}
KNOWN_KEYS = {
    "finish_reason",
    "id",
    "family",
    "kind",
    "reasoning_family",
    "output",
    "tools",
    "reasoning_started_in_prompt",
    "expected",
    "expected_by_backend",
    "known_divergences",
    "tags",
    "notes",
    "token_ids",
    "token_texts",
}
JSON_TYPES = {"string", "integer", "number", "boolean", "object", "array", "null"}

MIN_TRANSCRIPTS = 150
MIN_TOOL_FAMILIES = 15
MIN_REASONING_FAMILIES = 8
MIN_PER_FAMILY = 6
#: Families the builtin backend implements, plus hermes: at least this many cases each.
MIN_PER_CORE_FAMILY = 12
CORE_FAMILIES = {
    ("tool", "hermes"),
    ("tool", "llama3_json"),
    ("tool", "mistral"),
    ("tool", "pythonic"),
    ("tool", "deepseek_v3"),
    ("tool", "qwen3_coder"),
    ("reasoning", "qwen3"),
    ("reasoning", "deepseek_r1"),
}


def _load() -> list[tuple[str, int, dict[str, Any]]]:
    records = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:  # pragma: no cover - the failure message is the point
                pytest.fail(f"{path.name}:{lineno}: not JSON: {exc}")
            records.append((path.name, lineno, obj))
    return records


RECORDS = _load()


def _where(name: str, lineno: int, rec: dict[str, Any]) -> str:
    return f"{name}:{lineno} ({rec.get('id')})"


def _check_expected(exp: Any, where: str) -> None:
    assert isinstance(exp, dict), f"{where}: expected must be an object"
    assert set(exp) <= {"reasoning", "content", "tool_calls"}, f"{where}: unknown expected keys {set(exp)}"
    for key in ("reasoning", "content"):
        assert exp.get(key) is None or isinstance(exp[key], str), (
            f"{where}: expected.{key} must be str or null"
        )
    calls = exp.get("tool_calls", [])
    assert isinstance(calls, list), f"{where}: expected.tool_calls must be a list"
    for call in calls:
        assert isinstance(call, dict), f"{where}: a tool call must be an object"
        assert isinstance(call.get("name"), str) and call["name"], f"{where}: a tool call needs a name"
        has_args, has_bad = "arguments" in call, "invalid_arguments" in call
        assert has_args != has_bad, f"{where}: a call has exactly one of arguments / invalid_arguments"
        assert set(call) <= {"name", "arguments", "invalid_arguments"}, (
            f"{where}: unknown call keys {set(call)}"
        )
        if has_args:
            assert isinstance(call["arguments"], dict), f"{where}: arguments must be a JSON object"
        else:
            assert isinstance(call["invalid_arguments"], str), (
                f"{where}: invalid_arguments must be verbatim text"
            )


def _check_tool(tool: Any, where: str) -> None:
    assert isinstance(tool, dict) and tool.get("type") == "function", (
        f"{where}: tools are OpenAI function tools"
    )
    fn = tool.get("function")
    assert isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"], (
        f"{where}: tool needs a name"
    )
    assert isinstance(fn.get("description"), str), f"{where}: tool {fn['name']} needs a description"
    params = fn.get("parameters")
    assert isinstance(params, dict) and params.get("type") == "object", (
        f"{where}: parameters must be an object schema"
    )
    props = params.get("properties", {})
    assert isinstance(props, dict)
    for pname, schema in props.items():
        types = schema.get("type") if isinstance(schema, dict) else None
        types = types if isinstance(types, list) else [types]  # (a nullable value: ["integer", "null"])
        if types == [None] and isinstance(schema, dict) and isinstance(schema.get("anyOf"), list):
            # (a nullable value spelled {"anyOf": [{"type": "string"}, {"type": "null"}]})
            types = [part.get("type") if isinstance(part, dict) else None for part in schema["anyOf"]]
        assert isinstance(schema, dict) and types and all(t in JSON_TYPES for t in types), (
            f"{where}: parameter {fn['name']}.{pname} needs a JSON-schema type"
        )
    for req in params.get("required", []):
        assert req in props, f"{where}: required parameter {req} of {fn['name']} is not a property"


def test_fixture_files_exist() -> None:
    assert FIXTURES.is_dir()
    assert (FIXTURES / "README.md").is_file(), (
        "the fixtures README lists files, families, tags and conventions"
    )
    assert RECORDS, "no fixtures found"


@pytest.mark.parametrize(
    ("name", "lineno", "rec"), RECORDS, ids=[r[2].get("id", f"{r[0]}:{r[1]}") for r in RECORDS]
)
def test_record_shape(name: str, lineno: int, rec: dict[str, Any]) -> None:
    where = _where(name, lineno, rec)
    table = family_table()
    assert set(rec) <= KNOWN_KEYS, f"{where}: unknown keys {set(rec) - KNOWN_KEYS}"
    assert isinstance(rec.get("id"), str) and rec["id"], f"{where}: id required"
    kind = rec.get("kind", "tool")
    assert kind in ("tool", "reasoning"), f"{where}: kind must be tool or reasoning"
    family = rec.get("family")
    assert isinstance(family, str) and table.get(kind, family) is not None, (
        f"{where}: family {family!r} is not a [{kind}.*] row of the family table"
    )
    assert rec["id"].startswith(f"{family}-"), f"{where}: ids are '<family>-<slug>'"
    assert name == f"{kind}-{family}.jsonl", f"{where}: one file per family, named '<kind>-<family>.jsonl'"
    rf = rec.get("reasoning_family")
    if rf is not None:
        assert kind == "tool", f"{where}: reasoning_family is for tool transcripts"
        assert table.get("reasoning", rf) is not None, f"{where}: reasoning_family {rf!r} not in the table"
    assert isinstance(rec.get("output"), str), f"{where}: output must be a string"
    assert isinstance(rec.get("reasoning_started_in_prompt", False), bool)
    tools = rec.get("tools", [])
    assert isinstance(tools, list)
    for tool in tools:
        _check_tool(tool, where)
    if kind == "tool" and rec["output"].strip():
        assert tools, f"{where}: a tool transcript carries the request's tools"
    assert "expected" in rec, f"{where}: bundled fixtures always carry expected"
    _check_expected(rec["expected"], where)
    if kind == "reasoning":
        assert not rec["expected"].get("tool_calls"), f"{where}: reasoning transcripts expect no tool calls"
    for backend, exp in rec.get("expected_by_backend", {}).items():
        assert backend in BACKENDS, f"{where}: expected_by_backend names an unknown backend {backend}"
        _check_expected(exp, f"{where} [{backend}]")
    for div in rec.get("known_divergences", []):
        assert isinstance(div, dict) and div.get("backend") in BACKENDS, (
            f"{where}: bad known divergence {div}"
        )
        assert isinstance(div.get("reason"), str) and div["reason"], (
            f"{where}: a known divergence needs a reason"
        )
        assert isinstance(div.get("classes", []), list)
        assert div.get("chunking") is None or isinstance(div["chunking"], str)
    tags = rec.get("tags", [])
    assert isinstance(tags, list), f"{where}: tags is a list"
    if kind == "tool":
        assert tags, f"{where}: tool transcripts carry at least one tag"
    assert set(tags) <= TAGS, f"{where}: unknown tags {set(tags) - TAGS}"
    assert isinstance(rec.get("notes", ""), str)
    # Tags that describe the output must be true of it.
    if "empty-output" in tags:
        assert rec["output"] == ""
    if "no-call" in tags:
        assert not rec["expected"].get("tool_calls"), f"{where}: no-call with expected calls"
    if "large-args" in tags:
        assert len(rec["output"]) > 4096, f"{where}: large-args fixtures exceed 4 KB"
    if "reasoning-then-tools" in tags:
        assert kind == "tool" and rf, f"{where}: reasoning-then-tools needs kind tool and a reasoning_family"


def test_ids_unique() -> None:
    counts = Counter(rec["id"] for _, _, rec in RECORDS)
    dupes = sorted(i for i, n in counts.items() if n > 1)
    assert not dupes, f"duplicate ids: {dupes}"


def test_coverage() -> None:
    assert len(RECORDS) >= MIN_TRANSCRIPTS
    per_family = Counter((rec.get("kind", "tool"), rec["family"]) for _, _, rec in RECORDS)
    tool_families = {f for k, f in per_family if k == "tool"}
    reasoning_families = {f for k, f in per_family if k == "reasoning"}
    assert len(tool_families) >= MIN_TOOL_FAMILIES, sorted(tool_families)
    assert len(reasoning_families) >= MIN_REASONING_FAMILIES, sorted(reasoning_families)
    thin = {f"{k}:{f}": n for (k, f), n in per_family.items() if n < MIN_PER_FAMILY}
    assert not thin, f"families with fewer than {MIN_PER_FAMILY} transcripts: {thin}"
    thin_core = {
        f"{k}:{f}": per_family.get((k, f), 0)
        for k, f in CORE_FAMILIES
        if per_family.get((k, f), 0) < MIN_PER_CORE_FAMILY
    }
    assert not thin_core, f"builtin families (and hermes) need {MIN_PER_CORE_FAMILY}+: {thin_core}"


def test_every_tag_category_present() -> None:
    seen = {tag for _, _, rec in RECORDS for tag in rec.get("tags", [])}
    assert not TAGS - seen, f"tags never used: {sorted(TAGS - seen)}"


def test_large_args_really_large() -> None:
    big = [rec for _, _, rec in RECORDS if "large-args" in rec.get("tags", [])]
    assert any(len(rec["output"]) > 4096 for rec in big)


def test_reasoning_started_in_prompt_with_bare_end_marker() -> None:
    assert any(
        rec.get("reasoning_started_in_prompt")
        and "</think>" in rec["output"]
        and "<think>" not in rec["output"]
        for _, _, rec in RECORDS
    )


def test_readme_lists_every_file() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in FIXTURES.glob("*.jsonl") if p.name not in readme]
    assert not missing, f"README.md does not list: {missing}"
