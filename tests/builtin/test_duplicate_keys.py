"""A JSON call object that writes its name or arguments key twice counts the last value.

``json.loads`` keeps a duplicate key's last value, and so do vLLM's and SGLang's one-shot
readings (Hermes, Llama 3: ``{"name": "get_time", "name": "get_weather", …}`` is a call to
``get_weather``). Builtin reads the same under both conventions, one-shot and streamed at every
chunking (the call is held until its object closes, so the stream never shows the first name).
"""

from __future__ import annotations

import pytest
from _streaming import assert_streams_like_oneshot, norm, random_chunkings

import parsebridge as pb
from parsebridge.conformance.chunking import approximate_tokens
from parsebridge.formats import tool_format
from parsebridge.formats.cases.catalogue import tools as catalogue_tools

#: the JSON call-object formats: family → (its name key, its arguments key)
KEYS = {
    "hermes": ("name", "arguments"),
    "llama3_json": ("name", "parameters"),
    "mistral": ("name", "arguments"),
    "granite": ("name", "arguments"),
    "jamba": ("name", "arguments"),
    "phi4_mini": ("name", "arguments"),
    "xlam": ("name", "arguments"),
    "internlm": ("name", "parameters"),
    "cohere": ("tool_name", "parameters"),
    "longcat": ("name", "arguments"),
    "gigachat3": ("name", "arguments"),
    "json": ("name", "arguments"),
}
PARIS = '{"location": "Paris"}'
ROME = '{"location": "Rome"}'


def _doubled(family: str, how: str) -> str:
    """The family's call to get_weather(location="Paris"), a key of it written twice (`how`)."""
    name_key, args_key = KEYS[family]
    text = tool_format(family).render([("get_weather", {"location": "Paris"})])
    name, args = f'"{name_key}": "get_weather"', f'"{args_key}": {PARIS}'
    assert name in text and args in text, text
    if how == "name":
        return text.replace(name, f'"{name_key}": "get_time", {name}')
    if how == "arguments":
        return text.replace(args, f'"{args_key}": {ROME}, {args}')
    assert how == "both, arguments first"
    text = text.replace(args, "").replace(
        name, f'"{args_key}": {ROME}, {args}, "{name_key}": "get_time", {name}'
    )
    return text.replace(", }", "}")


def _chunkings(text: str) -> list[list[str]]:
    tokens = approximate_tokens(text)
    groups = [["".join(tokens[i : i + k]) for i in range(0, len(tokens), k)] for k in (1, 5)]
    return [*groups, *random_chunkings(text, seed=len(text))]


@pytest.mark.parametrize("how", ["name", "arguments", "both, arguments first"])
@pytest.mark.parametrize("conventions", ["servers", "lossless"])
@pytest.mark.parametrize("family", sorted(KEYS))
def test_the_last_of_a_doubled_key_counts(family: str, conventions: str, how: str) -> None:
    text = _doubled(family, how)
    parser = pb.get_tool_parser(
        f"builtin:{family}", tools=catalogue_tools("get_weather", "get_time"), conventions=conventions
    )
    content, calls = norm(assert_streams_like_oneshot(parser, text, _chunkings(text)))
    assert calls == [("get_weather", {"location": "Paris"}, None)], text
    assert not (content or "").strip(), text
