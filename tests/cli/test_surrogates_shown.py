"""A model's JSON escape of half a UTF-16 pair (``\\ud800``, all ASCII in the input) decodes to a
lone surrogate, which UTF-8 cannot encode: `parse` and `compare` show it as that escape (table,
JSON, HTML) where they ended with a bare UnicodeEncodeError (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parsebridge.cli import main

OUTPUT = r'hi <tool_call>{"name": "f", "arguments": {"a": "\ud800"}}</tool_call>'


@pytest.fixture
def output(tmp_path: Path) -> Path:
    path = tmp_path / "out.txt"
    path.write_text(OUTPUT, encoding="utf-8")
    return path


@pytest.mark.parametrize("stream", [[], ["--stream"]])
def test_parse_shows_it_escaped_and_its_json_keeps_it(
    output: Path, stream: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    run = ["parse", "--tool-parser", "builtin:hermes", *stream, str(output)]
    assert main(run) == 0
    assert '{"a": "\\ud800"}' in capsys.readouterr().out
    assert main([*run, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["result"]["tool_calls"][0]["arguments"] == {"a": "\ud800"}  # the character, as parsed
    assert json.loads(data["message"]["tool_calls"][0]["function"]["arguments"]) == {"a": "\ud800"}


def test_compare_table_json_and_html_show_it(
    output: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = ["compare", "--tool-parser", "builtin:hermes", "--no-progress", "--chunking", "token", str(output)]
    assert main(run) == 0
    assert '"\\ud800"' in capsys.readouterr().out
    assert main([*run, "--format", "json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (record,) = [r for r in lines if r["type"] == "transcript"]
    assert record["results"]["builtin:hermes"]["oneshot"]["tool_calls"][0]["arguments"] == {"a": "\ud800"}
    page = tmp_path / "page.html"
    assert main([*run, "--format", "html", "-o", str(page)]) == 0
    assert "\\ud800" in page.read_text(encoding="utf-8")
