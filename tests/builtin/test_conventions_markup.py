"""`conventions="servers"`: markup that opens no call, where vLLM 0.33 and SGLang 0.5.23 both leave
it out of the content (the format's `servers_markup`, measured by the consensus check).

* Inkling ("markers"): both servers read every Inkling marker as structure, so a header that
  opens no block (doubled, cut off, left at the end) leaves its markers on `dropped`; text in
  it (metadata, a cut-off kind marker's text) stays content.
* MiniCPM 5 ("doubled"): ``<function<function name=…>`` — both servers read the call from the
  first marker, so the first one is left out; a ``<function`` no call follows stays content.

Each case: one-shot and streamed at every cut point, under both conventions; "lossless" keeps
today's reading (every character that is not call structure is content); no character is lost:
the output is the "lossless" content, the calls' raw text and the case's stray structure (a
lone end marker) interleaved, and the "servers" content and `dropped` interleave to the
"lossless" content, with the same calls.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import _golden
import pytest
from _streaming import interleaves

import parsebridge as pb
from parsebridge.formats import inkling, minicpm5

M, J, E = inkling.MESSAGE_MODEL, inkling.INVOKE_JSON, inkling.END_MESSAGE
INK_CALL = M + J + '{"name":"get_weather","args":{"location":"Paris"}}' + E
FN = minicpm5.FUNCTION_OPEN
CPM_CALL = FN + ' name="get_weather"><param name="location">Paris</param></function>'
WEATHER = ["get_weather"]
_WS = re.compile(r"\s+")


class Case(NamedTuple):
    family: str
    output: str
    servers: tuple[str | None, str | None]  # (content, dropped)
    lossless: str | None  # content (`dropped` is None)
    names: list[str]
    structure: str = ""  # stray markers that are structure under both conventions


CASES = [
    # Inkling: a doubled header before a call (the consensus corpus's doubled-start)
    Case("inkling", M + INK_CALL, (None, M), M, WEATHER),
    # ... cut off after the kind marker, before the body (truncated@59)
    Case("inkling", "Let me check. " + M + J, ("Let me check. ", M + J), "Let me check. " + M + J, []),
    # ... a header left at the end after a call (truncated@158)
    Case("inkling", "Let me check. " + INK_CALL + M, ("Let me check. ", M), "Let me check. " + M, WEATHER),
    # ... a header cut off inside its kind marker: the text stays (truncated@172)
    Case(
        "inkling",
        "Let me check. " + INK_CALL + M + "<|content_invo",
        ("Let me check. <|content_invo", M),
        "Let me check. " + M + "<|content_invo",
        WEATHER,
    ),
    # ... a header with metadata that opens no block: the metadata is text
    Case("inkling", M + "get_weather" + E + "Hi.", ("get_weatherHi.", M), M + "get_weatherHi.", [], E),
    # ... an invoke block without a name: its body is text, its markers are not
    Case(
        "inkling",
        M + J + '{"args":{"x":1}}' + E,
        ('{"args":{"x":1}}', M + J + E),
        M + J + '{"args":{"x":1}}' + E,
        [],
    ),
    # ... a marker in prose
    Case("inkling", f"A literal {M} in prose.", ("A literal  in prose.", M), f"A literal {M} in prose.", []),
    # MiniCPM 5: a doubled start marker before a call (doubled-start), after text, tripled
    Case("minicpm5", FN + CPM_CALL, (None, FN), FN, WEATHER),
    Case(
        "minicpm5", "Let me check. " + FN + CPM_CALL, ("Let me check. ", FN), "Let me check. " + FN, WEATHER
    ),
    Case("minicpm5", FN + FN + CPM_CALL + " Done.", (None, FN + FN + " Done."), FN + FN + " Done.", WEATHER),
    # ... a start marker no call follows stays content, doubled or not (both servers keep it)
    Case("minicpm5", f"Hi {FN}{FN} in prose", (f"Hi {FN}{FN} in prose", None), f"Hi {FN}{FN} in prose", []),
    Case(
        "minicpm5",
        f"A literal {FN} in prose.",
        (f"A literal {FN} in prose.", None),
        f"A literal {FN} in prose.",
        [],
    ),
    Case("minicpm5", "Let me check. " + FN, ("Let me check. " + FN, None), "Let me check. " + FN, []),
]


def _every_chunking(text: str) -> list[list[str]]:
    """Every cut point (each two-piece split), one character at a time, whole, and fixed sizes."""
    plans = [[text[:i], text[i:]] for i in range(1, len(text))]
    plans += [[text[i : i + n] for i in range(0, len(text), n)] for n in (1, 2, 3, 5, 7)]
    return [*plans, [text]]


def _read(parser: Any, text: str, content: str | None, dropped: str | None, names: list[str]) -> Any:
    """The one-shot reading, checked, and every chunking's stream equal to it."""
    one = parser.parse(text)
    assert (one.content, one.dropped, [c.name for c in one.tool_calls]) == (content, dropped, names)
    calls = [(c.name, c.arguments, c.invalid_arguments) for c in one.tool_calls]
    for chunks in _every_chunking(text):
        stream = parser.stream()
        shown = "".join(stream.feed(chunk).content for chunk in chunks) + stream.flush().content
        got = stream.finish()
        assert (shown or None, got.content, got.dropped) == (content, content, dropped), chunks
        assert [(c.name, c.arguments, c.invalid_arguments) for c in got.tool_calls] == calls, chunks
    return one


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.family}:{c.output}")
def test_unused_markup_under_both_conventions(case: Case) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    spec = f"builtin:{case.family}"
    one = _read(pb.get_tool_parser(spec, tools=tools), case.output, *case.servers, case.names)
    full = _read(
        pb.get_tool_parser(spec, tools=tools, conventions="lossless"),
        case.output,
        case.lossless,
        None,
        case.names,
    )
    raw = [c.raw_text for c in one.tool_calls]
    assert raw == [c.raw_text for c in full.tool_calls] and all(raw)
    kept = _WS.sub("", full.content or "")
    assert interleaves(_WS.sub("", case.output), kept, _WS.sub("", "".join(raw)), case.structure)
    assert interleaves(kept, _WS.sub("", one.content or ""), _WS.sub("", one.dropped or ""))


def test_no_inkling_marker_reaches_servers_content() -> None:
    """On the golden marker soups (and fixtures) of Inkling: no marker in the content, every one
    of them accounted for (content and `dropped` interleave to the "lossless" content)."""
    servers = pb.get_tool_parser("builtin:inkling")
    lossless = pb.get_tool_parser("builtin:inkling", conventions="lossless")
    seen = 0
    for label, _tools, chunkings in _golden.cases("tool", "inkling"):
        text = "".join(chunkings[0])
        one = servers.parse(text)
        assert not any(m in (one.content or "") for m in inkling.TOOL.markers), label
        full = _WS.sub("", lossless.parse(text).content or "")
        assert interleaves(full, _WS.sub("", one.content or ""), _WS.sub("", one.dropped or "")), label
        seen += any(m in full for m in inkling.TOOL.markers)
    assert seen  # (soups where "lossless" shows a marker: the rule is exercised)


def test_interleaves_keeps_each_part_in_order() -> None:
    assert interleaves("abcd", "ac", "bd") and interleaves("abcd", "abcd", "")
    assert not interleaves("abcd", "ca", "bd") and not interleaves("abc", "ab", "")
