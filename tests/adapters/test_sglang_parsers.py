"""Every parser SGLang registers constructs through parsebridge and runs a transcript.

Each parser gets an output in its own format where `_sglang_cases` has one
(else a hermes-style call or a think-tag split), one-shot and streamed per
character; results are recorded (``$REPORT_DIR/sglang-parsers.json``). Parsers
that cannot work without something this machine cannot have are listed in
`NEEDS` with the reason; for those the test checks that the failure is a
typed `BackendError` naming backend, parser and call.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sglang", reason="SGLang is not installed (parsebridge install-framework sglang-latest)")

from _sglang_cases import (
    DEFAULT_REASONING_TEXT,
    DEFAULT_TOOL_TEXT,
    REASONING_OUTPUTS,
    TOOL_OUTPUTS,
    TOOLS,
)

import parsebridge as pb
from parsebridge.adapters import resolve
from parsebridge.protocol import BackendError

#: Parsers that cannot run here, and why (a property of the parser, not of parsebridge).
NEEDS: dict[str, str] = {
    "response_template": "built from the served model's chat template (response-template metadata), "
    "which only a server with a loaded model has",
}

_RESULTS: list[dict[str, object]] = []


def _names(kind: str) -> list[str]:
    be = pb.get_backend("sglang")
    return sorted(be.tool_parser_names() if kind == "tool" else be.reasoning_parser_names())


def _record(kind: str, name: str, **fields: object) -> None:
    _RESULTS.append({"kind": kind, "name": name, **fields})
    out = os.environ.get("REPORT_DIR")
    if out:
        path = Path(out) / "sglang-parsers.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_RESULTS, indent=1, default=str))


def _run(parser: Any, text: str) -> tuple[Any, Any]:
    oneshot = parser.parse(text)
    stream = parser.stream()
    for ch in text:
        stream.feed(ch)
    return oneshot, stream.finish()


def test_listing_and_shape() -> None:
    info = pb.get_backend("sglang").info()
    assert info.available and info.version, info.reason
    assert "qwen25" in info.tool_parsers and "deepseek-r1" in info.reasoning_parsers
    assert info.api_shape and info.version in info.api_shape

    import _sglang_direct as direct

    assert sorted(info.tool_parsers) == direct.tool_names()
    assert sorted(info.reasoning_parsers) == direct.reasoning_names()


def test_family_table_names_exist() -> None:
    """Every sglang name in families.toml that this release registers resolves; the rest are newer."""
    from parsebridge.protocol import family_table

    tool, reasoning = set(_names("tool")), set(_names("reasoning"))
    for kind, names in (("tool", tool), ("reasoning", reasoning)):
        for fam in family_table().of_kind(kind):  # type: ignore[arg-type]
            own = fam.parser_for("sglang")
            registered = {n.lower().replace("-", "_") for n in names}
            if fam.name.lower().replace("-", "_") in registered:
                continue  # the backend's own name of that spelling wins (0.5.23 has its own `hermes`)
            if own is not None and own in names:
                _, resolved = resolve(kind, f"sglang:{fam.name}")  # type: ignore[arg-type]
                assert resolved == own


@pytest.mark.framework
@pytest.mark.parametrize("name", _names("tool"))
def test_every_tool_parser(name: str) -> None:
    text = TOOL_OUTPUTS.get(name, DEFAULT_TOOL_TEXT)
    try:
        tp = pb.get_tool_parser(f"sglang:{name}", tools=TOOLS)
        oneshot, streamed = _run(tp, text)
    except BackendError as exc:
        assert exc.backend == "sglang" and exc.parser == name and exc.call and exc.__cause__ is not None
        _record("tool", name, error=str(exc))
        if name in NEEDS:
            pytest.skip(f"{name}: {NEEDS[name]}")
        raise
    _record("tool", name, oneshot=oneshot.model_dump(), stream=streamed.model_dump())


@pytest.mark.framework
@pytest.mark.parametrize("name", _names("reasoning"))
def test_every_reasoning_parser(name: str) -> None:
    text = REASONING_OUTPUTS.get(name, DEFAULT_REASONING_TEXT)
    try:
        rp = pb.get_reasoning_parser(f"sglang:{name}")
        oneshot, streamed = _run(rp, text)
    except BackendError as exc:
        assert exc.backend == "sglang" and exc.parser == name and exc.call and exc.__cause__ is not None
        _record("reasoning", name, error=str(exc))
        if name in NEEDS:
            pytest.skip(f"{name}: {NEEDS[name]}")
        raise
    _record("reasoning", name, oneshot=oneshot.model_dump(), stream=streamed.model_dump())


@pytest.mark.framework
def test_errors_are_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception inside SGLang becomes a BackendError naming backend, parser and call."""
    with pytest.raises(pb.UnknownParserError):
        pb.get_tool_parser("sglang:no_such_parser")
    tp = pb.get_tool_parser("sglang:qwen25", tools=TOOLS)
    fc_cls = tp.engine.api.FunctionCallParser

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(fc_cls, "parse_non_stream", boom)
    monkeypatch.setattr(fc_cls, "parse_stream_chunk", boom)
    with pytest.raises(BackendError) as info:
        tp.parse(DEFAULT_TOOL_TEXT)
    assert info.value.backend == "sglang" and info.value.parser == "qwen25"
    assert info.value.call and isinstance(info.value.__cause__, RuntimeError)
    stream = tp.stream()
    with pytest.raises(BackendError) as sinfo:
        for ch in DEFAULT_TOOL_TEXT:
            stream.feed(ch)
        stream.flush()
    assert sinfo.value.call == "parse_stream_chunk" and isinstance(sinfo.value.__cause__, RuntimeError)
    # Under the fallback policy the stream goes on as plain content.
    lenient = pb.get_tool_parser("sglang:qwen25", tools=TOOLS, on_error="fallback")
    stream = lenient.stream()
    for ch in DEFAULT_TOOL_TEXT:
        stream.feed(ch)
    assert stream.finish().content == DEFAULT_TOOL_TEXT
    assert lenient.parse(DEFAULT_TOOL_TEXT).content == DEFAULT_TOOL_TEXT


@pytest.mark.framework
def test_reasoning_errors_are_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    rp = pb.get_reasoning_parser("sglang:deepseek-r1")
    rp_cls = rp.engine.api.ReasoningParser

    def boom(*args: object, **kwargs: object) -> None:
        raise ValueError("bad")

    monkeypatch.setattr(rp_cls, "parse_non_stream", boom)
    with pytest.raises(BackendError) as info:
        rp.parse(DEFAULT_REASONING_TEXT)
    assert info.value.backend == "sglang" and info.value.parser == "deepseek-r1"
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.framework
def test_chunks_and_user_tokenizer(tmp_path: Path) -> None:
    tp = pb.get_tool_parser("sglang:qwen25", tools=TOOLS)
    chunks = tp.chunks(DEFAULT_TOOL_TEXT, 1)
    assert "".join(c.text for c in chunks) == DEFAULT_TOOL_TEXT
    assert any(c.text == "<tool_call>" for c in chunks), "markers are single tokens"
    assert all(c.token_ids for c in chunks)
    tp.tokenizer.backend_tokenizer.save(str(tmp_path / "tokenizer.json"))
    other = pb.get_tool_parser("sglang:qwen25", tools=TOOLS, tokenizer=tmp_path / "tokenizer.json")
    assert [c.text for c in other.chunks(DEFAULT_TOOL_TEXT, 5)] == [
        c.text for c in tp.chunks(DEFAULT_TOOL_TEXT, 5)
    ]


@pytest.mark.framework
def test_has_tool_calls_and_options() -> None:
    tp = pb.get_tool_parser("sglang:qwen25", tools=TOOLS)
    assert tp.has_tool_calls(DEFAULT_TOOL_TEXT)
    assert not tp.has_tool_calls("just text")
    off = pb.get_tool_parser("sglang:qwen25", tools=TOOLS, tool_choice="none")
    assert off.parse(DEFAULT_TOOL_TEXT).tool_calls == []
    if not pb.get_backend("sglang").server_forced_choices():  # before 0.5.23's shape
        with pytest.raises(ValueError):
            pb.get_tool_parser("sglang:qwen25", tools=TOOLS, tool_choice="required")
    with pytest.raises(ValueError):
        pb.get_tool_parser("sglang:qwen25", tools=TOOLS, tool_choice="sometimes")


@pytest.mark.framework
def test_forced_choices_parse_as_the_server_does() -> None:
    """0.5.23: required/named go to the tool parser when it owns its format (qwen25), else to
    SGLang's JsonArrayParser (pythonic): one-shot and streamed agree."""
    if not pb.get_backend("sglang").server_forced_choices():
        with pytest.raises(ValueError):
            pb.get_tool_parser("sglang:pythonic", tools=TOOLS, tool_choice="required")
        return
    name = TOOLS[0]["function"]["name"]
    array = json.dumps([{"name": name, "parameters": {"city": "Paris"}}])
    for choice in ("required", {"type": "function", "function": {"name": name}}):
        json_parser = pb.get_tool_parser("sglang:pythonic", tools=TOOLS, tool_choice=choice)
        result = json_parser.parse(array)
        assert [(c.name, c.arguments) for c in result.tool_calls] == [(name, {"city": "Paris"})]
        assert result.content is None
        stream = json_parser.stream()
        for i in range(0, len(array), 3):
            stream.feed(array[i : i + 3])
        streamed = stream.finish()
        assert [(c.name, c.arguments) for c in streamed.tool_calls] == [(name, {"city": "Paris"})]
        assert json_parser.parse("not json").content == "not json"
        native = pb.get_tool_parser("sglang:qwen25", tools=TOOLS, tool_choice=choice)
        assert native.parse(array).tool_calls == []  # the model's own format is what it reads
        assert native.parse(DEFAULT_TOOL_TEXT).tool_calls
