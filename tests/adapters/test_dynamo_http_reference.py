"""`dynamo:` readings equal Dynamo's own frontend driven over HTTP with no parsebridge code (issue 37).

`_dynamo_reference.py` runs in its own process: Dynamo, its own byte
tokenizer, a plain engine that yields every step back to back, and plain
HTTP requests (``n=1``, no fences). Here the same outputs go through
`dynamo:` parsers. On every bundled transcript of every family Dynamo names,
the one-shot parse equals the non-streamed answer, and what a `dynamo:`
stream sends (its deltas, assembled as a client does) equals what the plain
stream sends, at one token and at three characters per chunk; at one token,
so does what `OutputProcessor` with the `dynamo:` spec streams.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.adapters import get_backend
from parsebridge.conformance.chunking import parse_chunking
from parsebridge.conformance.transcripts import bundled_transcripts
from parsebridge.protocol import ParserUnsupportedError, family_table

pytestmark = pytest.mark.framework

_reason = get_backend("dynamo").unavailable_reason()
if _reason is not None:
    pytest.skip(f"dynamo is not installed: {_reason}", allow_module_level=True)

CHUNKINGS = ("token", "char-3")
HERE = Path(__file__).parent


def _cases() -> tuple[dict[str, list[str | None]], list[dict[str, Any]], dict[str, Any]]:
    """The reference job: one model per Dynamo parser, one case per transcript; and the parsers."""
    backend = get_backend("dynamo")
    registered = {
        "tool": set(backend.tool_parser_names()),
        "reasoning": set(backend.reasoning_parser_names()),
    }
    models: dict[str, list[str | None]] = {}
    cases, parsers = [], {}
    for t in bundled_transcripts():
        fam = family_table().get(t.kind, t.family or "")
        own = fam.parser_for("dynamo") if fam else None
        if own is None or own not in registered[t.kind]:
            continue
        model = f"{t.kind[0]}-{own}".replace("_", "-")
        models[model] = [own, None] if t.kind == "reasoning" else [None, own]
        spec = f"dynamo:{own}"
        parsers[t.id] = (
            pb.get_reasoning_parser(spec)
            if t.kind == "reasoning"
            else pb.get_tool_parser(spec, tools=t.tools)
        )
        streams = {c: [ch.text for ch in parse_chunking(c).split(t.output)] for c in CHUNKINGS}
        cases.append(
            {"id": t.id, "model": model, "tools": t.tools, "text": t.output, "streams": streams}
            | {"kind": t.kind, "own": own}
        )
    return models, cases, parsers


def _json_args(reading: dict[str, Any]) -> dict[str, Any]:
    """Arguments compared as JSON values: Dynamo's pythonic parser writes nested objects' keys in
    a different order from run to run (measured on 1.6.1), in its own frontend as here."""
    calls = []
    for name, args in reading["calls"]:
        try:
            calls.append([name, json.loads(args)])
        except ValueError:
            calls.append([name, args])
    return {**reading, "calls": calls}


def _assembled(stream: Any, chunks: list[str]) -> dict[str, Any]:
    content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
    for delta in [*(stream.feed(c) for c in chunks), stream.flush()]:
        content.append(delta.content)
        reasoning.append(delta.reasoning)
        for tc in delta.tool_calls:
            call = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            call["name"] += tc.name or ""
            call["arguments"] += tc.arguments
    return {
        "content": "".join(content),
        "reasoning": "".join(reasoning),
        "calls": [[c["name"], c["arguments"]] for _, c in sorted(calls.items())],
    }


def _served(case: dict[str, Any], kind: str, own: str, chunks: list[str]) -> dict[str, Any]:
    """What `OutputProcessor` with the `dynamo:` spec streams, assembled as a client does."""
    spec = f"dynamo:{own}"
    processor = (
        pb.OutputProcessor(spec, None)
        if kind == "reasoning"
        else pb.OutputProcessor(None, spec, tools=case["tools"] or None)
    )
    stream = processor.stream()
    content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
    for chunk in [c for step in chunks for c in stream.feed(step)] + list(stream.finish()):
        for choice in chunk.get("choices", []):
            d = choice.get("delta") or {}
            content.append(d.get("content") or "")
            reasoning.append(d.get("reasoning_content") or "")
            for tc in d.get("tool_calls") or []:
                call = calls.setdefault(tc.get("index", 0), {"name": "", "arguments": ""})
                fn = tc.get("function") or {}
                call["name"] += fn.get("name") or ""
                call["arguments"] += fn.get("arguments") or ""
    return {
        "content": "".join(content),
        "reasoning": "".join(reasoning),
        "calls": [[c["name"], c["arguments"]] for _, c in sorted(calls.items())],
    }


def _oneshot(parser: Any, text: str) -> dict[str, Any]:
    res = parser.parse(text)
    calls = [
        [c.name, c.invalid_arguments if c.invalid_arguments is not None else c.arguments]
        for c in getattr(res, "tool_calls", [])
    ]
    return {"content": res.content or "", "reasoning": getattr(res, "reasoning", None) or "", "calls": calls}


def _reference_oneshot(message: dict[str, Any]) -> dict[str, Any]:
    calls = []
    for call in message.get("tool_calls") or []:
        text = call["function"]["arguments"]
        try:
            args = json.loads(text)
        except ValueError:
            args = text
        calls.append([call["function"]["name"], args if isinstance(args, dict) else text])
    return {
        "content": message.get("content") or "",
        "reasoning": message.get("reasoning_content") or "",
        "calls": calls,
    }


def test_dynamo_readings_equal_the_frontend_over_http(tmp_path: Path) -> None:
    models, cases, parsers = _cases()
    assert len(models) >= 30 and len(cases) >= 300, (len(models), len(cases))
    env = dict(os.environ, HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, str(HERE / "_dynamo_reference.py")],
        input=json.dumps({"models": models, "cases": cases}),
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    reference = json.loads(done.stdout)
    differ = []
    for case in cases:
        parser, ref = parsers[case["id"]], reference[case["id"]]
        if _oneshot(parser, case["text"]) != _reference_oneshot(ref["oneshot"]):
            differ.append((case["id"], "oneshot"))
        for chunking, chunks in case["streams"].items():
            try:
                ours = _assembled(parser.stream(), chunks)
            except ParserUnsupportedError:
                pytest.skip("this Dynamo release cannot stream (see adapters/dynamo/_compat.py)")
            if _json_args(ours) != _json_args(ref[chunking]):
                differ.append((case["id"], chunking, ours, ref[chunking]))
            if chunking == "token":  # OutputProcessor with the dynamo: spec streams the same
                served = _served(case, case["kind"], case["own"], chunks)
                if _json_args(served) != _json_args(ref[chunking]):
                    differ.append((case["id"], "OutputProcessor", served, ref[chunking]))
    assert not differ, f"{len(differ)} of {len(cases) * 4} readings differ: {differ[:5]}"
