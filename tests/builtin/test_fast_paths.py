"""The builtin tool driver's per-chunk shortcuts change nothing a client sees.

`BuiltinToolStream._feed` skips the format's step for a chunk of plain
content (`_content_firsts`) or a chunk inside a call's raw arguments
(`_args_scanner`). Each shortcut must hand out exactly the deltas the step
would have: same fragments, same order, same call indices and names. This
streams every bundled transcript of the formats that take them, at several
chunkings, with the shortcuts on and off, and compares delta by delta.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.adapters.builtin._scan import BuiltinToolStream
from parsebridge.conformance.transcripts import bundled_transcripts

FAMILIES = ("hermes", "llama3_json", "deepseek_v3")


def _chunkings(text: str) -> list[list[str]]:
    rng = random.Random(len(text))
    out = [[text[i : i + n] for i in range(0, len(text), n)] for n in (1, 2, 3, 7)]
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 12))) if len(text) > 1 else []
        out.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)])
    return out


def _deltas(spec: str, tools: list[dict[str, Any]], chunks: list[str]) -> list[dict[str, Any]]:
    parser = pb.get_tool_parser(spec, tools=tools)
    stream = parser.stream()
    seen = [stream.feed(c).to_openai() for c in chunks]
    seen.append(stream.flush().to_openai())
    for delta in seen:  # call ids are fresh per stream
        for call in delta.get("tool_calls", ()):
            call.pop("id", None)
    return seen


@pytest.mark.parametrize("family", FAMILIES)
def test_shortcuts_hand_out_the_steps_deltas(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    transcripts = bundled_transcripts(families=[family], kinds=["tool"])
    assert transcripts, family
    spec = f"builtin:{family}"
    shortcut_hits = 0
    for t in transcripts:
        for chunks in _chunkings(t.output):
            fast = _deltas(spec, t.tools, chunks)
            with monkeypatch.context() as m:
                m.setattr(BuiltinToolStream, "_content_firsts", lambda self: None)
                m.setattr(BuiltinToolStream, "_args_scanner", lambda self: None)
                stream_cls = type(pb.get_tool_parser(spec).inner.stream())
                m.setattr(stream_cls, "_content_firsts", lambda self: None)
                m.setattr(stream_cls, "_args_scanner", lambda self: None)
                slow = _deltas(spec, t.tools, chunks)
            assert fast == slow, (t.id, chunks)
            shortcut_hits += 1
    assert shortcut_hits > 0


def test_shortcuts_are_taken() -> None:
    """The shortcuts run (so the comparison above compares two different paths)."""
    parser = pb.get_tool_parser("builtin:hermes").inner
    stream = parser.stream()
    calls = {"content": 0, "args": 0}
    for chunk in ["Hello ", "there. ", '<tool_call>{"name": "f", "arguments": {"q": "', "long ", "text"]:
        before_content, before_args = stream._content_firsts(), stream._args_scanner()
        stream.feed(chunk)
        if before_content is not None and "<" not in chunk:
            calls["content"] += 1
        if before_args is not None and '"' not in chunk:
            calls["args"] += 1
    assert calls == {"content": 2, "args": 2}
    stream.feed('"}}</tool_call>')
    assert stream.finish().tool_calls[0].arguments == {"q": "long text"}
