"""`conventions=`: "servers" (the default) reads like vLLM and SGLang, "lossless" drops nothing; in both,
nothing is lost and a stream equals its one-shot parse.

For every builtin tool parser, on its family's fixtures and on marker soups (see `_golden`):
the same calls (names and spans) under both conventions, but for calls both servers drop (to
undeclared tools: their text is on `dropped`), their arguments read as both servers read them under
"servers" (a cut-off call's complete parameters, untyped values, what parses of malformed arguments,
the rest on `dropped`, a value ended at the first tag that may end it, its first close tag included); "servers" content followed by its `dropped`
text holds every non-whitespace character "lossless" content holds, in order (where the
format's servers leave its markers out wherever they stand, `servers_markup="markers"`, the
content and `dropped` interleave to it); and a stream at several chunkings finishes with the
one-shot content, calls and `dropped`.
"""

from __future__ import annotations

import re
from typing import Any

import _golden
import pytest
from _streaming import interleaves

import parsebridge as pb
from parsebridge.adapters.builtin import TOOL_PARSERS
from parsebridge.adapters.builtin.engines.conventions import CONVENTIONS, servers_content, servers_markup
from parsebridge.protocol import InvalidSpecError

_WS = re.compile(r"\s+")
#: Tool parsers whose format holds reasoning bodies: not theirs to show, on `dropped` under both conventions.
REASONING_BODIES = {"gpt_oss"}
#: Soups per parser here (the golden test runs the full count under "lossless").
SOUPS = 60


def _calls(result: Any) -> list[Any]:
    return [(c.name, c.arguments, c.invalid_arguments, c.raw_text) for c in result.tool_calls]


def _spans(result: Any) -> list[Any]:
    return [(c.name, c.raw_text) for c in result.tool_calls]


def _malformed_left_out(one: Any, full: Any) -> str:
    """ "servers" `dropped` without the malformed argument text it holds where "lossless" keeps the
    call flagged (both servers read what parses, and builtin puts the rest, a suffix of lossless's
    `invalid_arguments`, on `dropped`: gemma4)."""
    dropped = one.dropped or ""
    valid = {(c.name, c.raw_text) for c in one.tool_calls if c.invalid_arguments is None}
    for c in full.tool_calls:
        if c.invalid_arguments and (c.name, c.raw_text) in valid:
            tail = next(
                (
                    c.invalid_arguments[i:]
                    for i in range(len(c.invalid_arguments))
                    if c.invalid_arguments[i:] in dropped
                ),
                "",
            )
            dropped = dropped.replace(tail, "", 1) if tail else dropped
    return dropped


def _shown_headers_left_out(one: Any, full: Any, parser: Any) -> str:
    """ "servers" content without a call header it shows as content too, where both servers' streams do
    (`servers_shown_starts`: the end of the content, the start of the first call's raw text)."""
    content, before = one.content or "", full.content or ""
    spec = getattr(getattr(parser, "stream_class", None), "spec", None)
    raw = one.tool_calls[0].raw_text or "" if one.tool_calls else ""
    for start in getattr(spec, "servers_shown_starts", ()):
        if content.endswith(start) and raw.startswith(start) and not before.endswith(start):
            content = content[: -len(start)]
    return content


def _values_cut_otherwise(parser: Any, one: Any, full: Any) -> bool:
    """Whether "servers" ended a value at a tag "lossless" reads as the value's text (the format's
    `servers_tag_ends_value`, or a close tag with text after it: `servers_first_close_ends_value`),
    so the calls' arguments differ: what follows such a tag is then read otherwise under each
    convention (a value, stray text, the next parameter), not only placed otherwise."""
    stream = getattr(parser, "stream_class", None)
    cuts = getattr(stream, "servers_tag_ends_value", False) or getattr(
        stream, "servers_first_close_ends_value", False
    )
    return bool(cuts) and [c.arguments for c in one.tool_calls] != [c.arguments for c in full.tool_calls]


def _cases(name: str) -> list[tuple[str, list[dict[str, Any]], list[list[str]]]]:
    cases = _golden.cases("tool", name)
    fixtures = [c for c in cases if c[0].startswith("fixture:")]
    return fixtures + [c for c in cases if c[0].startswith("soup:")][:SOUPS]


@pytest.mark.parametrize("name", list(TOOL_PARSERS))
def test_servers_drops_nothing_lossless_keeps_and_streams_as_one_shot(name: str) -> None:
    interleaved = servers_markup(name) == "markers"
    for label, tools, chunkings in _cases(name):
        text = "".join(chunkings[0])
        servers = pb.get_tool_parser(f"builtin:{name}", tools=tools or None)
        lossless = pb.get_tool_parser(f"builtin:{name}", tools=tools or None, conventions="lossless")
        one, full = servers.parse(text), lossless.parse(text)
        assert full.dropped is None or name in REASONING_BODIES, label
        # the calls "servers" reads are lossless's, but for calls both servers drop (their text on `dropped`)
        kept = _spans(one)
        if _values_cut_otherwise(servers, one, full):
            # (the calls' spans differ where the values do; the calls "servers" reads are lossless's)
            names = iter([c.name for c in full.tool_calls])
            assert all(c.name in names for c in one.tool_calls), label
            gone = []
        else:
            assert kept == [c for c in _spans(full) if c in kept], label
            gone = [c.raw_text or "" for c in full.tool_calls if (c.name, c.raw_text) not in kept]
        assert all(g in (one.content or "") + (one.dropped or "") for g in gone), label
        if interleaved:
            parts = (_WS.sub("", one.content or ""), _WS.sub("", one.dropped or ""))
            assert interleaves(_WS.sub("", full.content or ""), *parts), label
        elif not gone and not _values_cut_otherwise(servers, one, full):
            # (a dropped call's raw text may hold stray text lossless shows as content too)
            kept_text = _shown_headers_left_out(one, full, servers) + _malformed_left_out(one, full)
            assert interleaves(
                _WS.sub("", kept_text), _WS.sub("", full.content or ""), _WS.sub("", full.dropped or "")
            ), label
        for chunks in chunkings:
            stream = servers.stream()
            shown = "".join(stream.feed(chunk).content for chunk in chunks) + stream.flush().content
            got = stream.finish()
            assert (shown or None, got.content, got.dropped) == (one.content, one.content, one.dropped), label
            assert _calls(got) == _calls(one), label  # raw_text included


HERMES = 'Let me check.\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>\nDone.'


def test_servers_is_the_default_and_lossless_keeps_text_after_the_calls() -> None:
    servers = pb.get_tool_parser("builtin:hermes").parse(HERMES)
    assert (servers.content, servers.dropped) == ("Let me check.\n", "\nDone.")
    lossless = pb.get_tool_parser("builtin:hermes", conventions="lossless").parse(HERMES)
    assert (lossless.content, lossless.dropped) == ("Let me check.\n\nDone.", None)
    assert [c.name for c in servers.tool_calls] == [c.name for c in lossless.tool_calls] == ["f"]


def test_a_start_marker_no_call_follows_cuts_the_content_where_both_servers_cut_it() -> None:
    text = "A literal <｜tool▁calls▁begin｜> in prose."
    assert servers_content("deepseek_v3") == "marker"
    got = pb.get_tool_parser("builtin:deepseek_v3").parse(text)
    assert (got.content, got.dropped, got.tool_calls) == (
        "A literal ",
        "<｜tool▁calls▁begin｜> in prose.",
        [],
    )
    assert pb.get_tool_parser("builtin:deepseek_v3", conventions="lossless").parse(text).content == text
    # hermes's servers keep a start marker no call follows: so does "servers"
    assert servers_content("hermes") == "call"
    assert pb.get_tool_parser("builtin:hermes").parse("a <tool_call> b").content == "a <tool_call> b"


def test_a_pipeline_carries_the_dropped_text() -> None:
    pipe = pb.get_pipeline("builtin:qwen3", "builtin:hermes", reasoning_started=False)
    text = "<think>hm</think>" + HERMES
    one = pipe.parse(text)
    assert (one.reasoning, one.content, one.dropped) == ("hm", "Let me check.\n", "\nDone.")
    stream = pipe.stream()
    for ch in text:
        stream.feed(ch)
    got = stream.finish()
    assert (got.reasoning, got.content, got.dropped) == ("hm", "Let me check.\n", "\nDone.")


@pytest.mark.parametrize("kind", ["tool", "reasoning"])
def test_an_unknown_convention_is_a_typed_error(kind: str) -> None:
    with pytest.raises(InvalidSpecError, match="servers, lossless"):
        if kind == "tool":
            pb.get_tool_parser("builtin:hermes", conventions="strict")
        else:
            pb.get_reasoning_parser("builtin:qwen3", conventions="strict")
    assert list(CONVENTIONS) == ["servers", "lossless"]


def test_every_format_says_how_the_servers_show_the_content() -> None:
    from parsebridge.formats import tool_families, tool_format

    for family in tool_families():
        assert tool_format(family).servers_content in ("marker", "call", "keep"), family
        assert tool_format(family).servers_markup in ("markers", "doubled", ""), family


def test_parsebridge_list_describes_the_conventions_from_the_same_rules(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from parsebridge.adapters.builtin.engines.conventions import REASONING_CONVENTIONS, servers_rules
    from parsebridge.cli import main

    assert main(["list", "--brief", "--backend", "builtin", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["builtin_conventions"]
    assert listed["tool"] == CONVENTIONS and listed["reasoning"] == REASONING_CONVENTIONS
    rules = [(r["kind"], r["rule"], r["parsers"]) for r in listed["servers"]]
    assert rules == servers_rules()
    kinds = {(kind, name) for kind, _, names in rules for name in names}
    assert kinds == {("tool", n) for n in TOOL_PARSERS} | {
        ("reasoning", n) for n in pb.list_backends()[0].reasoning_parsers
    }
    assert sorted(next(names for kind, rule, names in rules if kind == "reasoning")) == [
        "glm45",
        "ling3",
        "qwen3",
    ]
    assert main(["list", "--brief", "--backend", "builtin"]) == 0
    table = capsys.readouterr().out
    assert "builtin conventions" in table and "servers (default)" in table and "lossless" in table


def test_a_format_fact_defaults_only_for_a_parser_without_a_format():
    from parsebridge.adapters.builtin.engines import conventions

    assert conventions._format_fact("no_such_parser", "servers_content", "call") == "call"
    with pytest.raises(AttributeError):  # a typo in a field name is an error, not the default
        conventions._format_fact("hermes", "servers_contnet", "call")
