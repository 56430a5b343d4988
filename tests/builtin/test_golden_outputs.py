"""Builtin parsers hand out what they handed out when `golden/outputs.json` was recorded.

One-shot results, streamed deltas, held-back text after every chunk, finished results
and call spans, on the bundled fixtures and on generated marker soups (see `_golden`),
compared by digest. Under the ``dev`` hypothesis profile (``tox -e core``) each parser's
fixture cases and one soup in `_golden.DEV_SOUP_STRIDE` are compared; under ``thorough``
(``tox -e thorough``, which CI runs) every case. A restructuring of the builtin engines must leave every digest as
it was; a change meant to alter outputs regenerates the file and says so.
"""

from __future__ import annotations

import json
import os

import _golden
import pytest

#: The hypothesis profile tests/conftest.py loaded (same variable, same default).
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")

RECORDED: dict[str, dict[str, str]] = json.loads(_golden.GOLDEN.read_text(encoding="utf-8"))


def test_every_builtin_parser_is_recorded() -> None:
    assert sorted(RECORDED) == sorted(f"{kind}:{name}" for kind, name in _golden.parsers())


@pytest.mark.parametrize(("kind", "name"), _golden.parsers(), ids=lambda v: v)
def test_outputs_are_as_recorded(kind: str, name: str) -> None:
    recorded = RECORDED[f"{kind}:{name}"]
    sample = PROFILE == "dev"
    now = _golden.observe(kind, name, sample=sample)
    if sample:
        recorded = {label: d for label, d in recorded.items() if _golden.in_dev_sample(label)}
    assert sorted(now) == sorted(recorded)
    changed = [label for label in now if now[label] != recorded[label]]
    assert not changed, f"{kind}:{name}: outputs changed on {len(changed)} cases: {changed[:10]}"


def test_a_changed_output_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a parser that drops one character of content differs."""
    import parsebridge as pb

    parser = pb.get_tool_parser("builtin:hermes")
    chunks = [["Hi <tool_call>", '{"name": "f", "arguments": {}}', "</tool_call>"]]
    before = _golden.digest(_golden.observe_tool("builtin:hermes", [], chunks))
    real = type(parser).parse
    monkeypatch.setattr(type(parser), "parse", lambda self, text: real(self, text[1:]))
    assert _golden.digest(_golden.observe_tool("builtin:hermes", [], chunks)) != before
