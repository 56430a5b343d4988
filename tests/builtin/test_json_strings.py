"""Keys and names read without the JSON decoder decode exactly as `json.loads` would.

`string_body` / `string_or_value` return the text itself when it is a plain
JSON string (no quote, escape or control character) and fall back to the
decoder otherwise; `loads_or_none` uses one decoder built once instead of
`json.loads(…, parse_constant=…)` per call. Each must agree with the slow
definition on any text, including escapes, control characters, lone
surrogates and a byte-order mark.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from parsebridge.adapters.builtin.engines.scan import is_invalid, loads_or_none, string_body, string_or_value

_PIECES = st.text(
    alphabet=st.sampled_from(['"', "\\", "n", "u", "0", "a", "é", "\x01", "\ufeff", " ", "\ud800"])
)


def _reference(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(name)

    try:
        return json.loads(text, parse_constant=refuse)
    except (ValueError, RecursionError, TypeError):
        return "<invalid>"


def _seen(value: Any) -> Any:
    return "<invalid>" if is_invalid(value) else value


@given(st.one_of(st.text(), _PIECES))
def test_string_body_decodes_like_json(raw: str) -> None:
    assert _seen(string_body(raw)) == _reference('"' + raw + '"')


@given(
    st.one_of(st.text(), _PIECES, _PIECES.map(lambda s: f'"{s}"'), st.sampled_from(["NaN", "1", "[]", '"']))
)
def test_string_or_value_and_loads_decode_like_json(text: str) -> None:
    expected = _reference(text)
    assert _seen(string_or_value(text)) == expected
    assert _seen(loads_or_none(text)) == expected


def test_plain_strings_skip_the_decoder(monkeypatch: Any) -> None:
    import parsebridge.adapters.builtin.engines.scan as scan

    def fail(text: str) -> Any:
        raise AssertionError(f"decoder called for {text!r}")

    monkeypatch.setattr(scan, "loads_or_none", fail)
    assert string_body("get_weather") == "get_weather"
    assert string_or_value('"São Paulo"') == "São Paulo"
