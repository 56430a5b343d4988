"""Shared properties of the JSON-payload builtin parsers (`adapters/builtin/_jsoncalls`).

Each family's test module checks its own format's cases and calls these for
the properties every such format has: stream ≡ one-shot at per-character and
random chunkings over generated calls and text, adversarial "soup" input
never raising, bounded holding (linear streaming) and a step count that grows
linearly with the output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from _streaming import (
    assert_streams_like_oneshot,
    check_soup,
    chunk_plan,
    expected_content,
    json_args,
    max_held,
    names,
    noise,
    norm,
    random_chunkings,
)
from hypothesis import strategies as st

from parsebridge.protocol.parsers import ToolParserBase

Render = Callable[[list[tuple[str, dict[str, Any]]]], str]


def check(
    parser: ToolParserBase, text: str, content: str | None, calls: list[tuple[str, Any, str | None]]
) -> None:
    """`text` parses to (content, calls), identically at every chunking tried."""
    result = assert_streams_like_oneshot(parser, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls), norm(result)


def streaming_equals_oneshot(
    parser: ToolParserBase, render: Render, markers: Sequence[str], data: st.DataObject, *, bare: bool = False
) -> None:
    """Text and call regions in any order: the expected reading, at a random chunking and per character.

    `bare`: the format's unmarked form, which only opens the output — one region, first.
    """
    items: list[tuple[str, Any]] = []
    calls: list[tuple[str, dict[str, Any], None]] = []
    for _ in range(1 if bare else data.draw(st.integers(1, 4))):
        if not bare and data.draw(st.booleans()):
            items.append(("text", data.draw(noise)))
        batch = [
            (data.draw(names), data.draw(json_args(markers))) for _ in range(data.draw(st.integers(1, 2)))
        ]
        items.append(("call", render(batch)))
        calls += [(n, a, None) for n, a in batch]
    if data.draw(st.booleans()):
        items.append(("text", data.draw(noise)))
    text = "".join(v for _, v in items)
    result = assert_streams_like_oneshot(parser, text, [data.draw(chunk_plan(text))])
    assert norm(result) == (expected_content(items), calls), (text, norm(result))


def soup(parser: ToolParserBase, markers: Sequence[str], data: st.DataObject) -> None:
    check_soup(parser, data, markers)


def holds_little(parser: ToolParserBase, render: Render, marker_text: str) -> None:
    """A long argument full of marker text never makes the stream hold more than a marker and a name."""
    text = "before " + render([("f", {"s": marker_text * 1500, "t": list(range(300))})]) + " after"
    assert max_held(parser, text) < 128
    result = parser.parse(text)
    assert [c.name for c in result.tool_calls] == ["f"]
    assert result.tool_calls[0].arguments["s"] == marker_text * 1500


def steps_grow_linearly(parser: ToolParserBase, render: Render, monkeypatch: Any) -> None:
    """The machine's step count per character is the same for n and 4n calls (an operation count)."""
    stream_class: Any = type(parser.stream())
    counter = {"n": 0}
    original = stream_class._step

    def counted(self: Any) -> bool:
        counter["n"] += 1
        return bool(original(self))

    monkeypatch.setattr(stream_class, "_step", counted)

    def steps(n: int) -> float:
        counter["n"] = 0
        text = "x " + render([("f", {"a": i, "b": "y" * 20}) for i in range(n)])
        s = parser.stream()
        for ch in text:
            s.feed(ch)
        s.finish()
        return counter["n"] / len(text)

    small, large = steps(10), steps(40)
    assert large <= small * 1.25, (small, large)
