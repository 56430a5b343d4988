"""The family table's `single_tokens` against the real vocabularies on PyPI, and the docs table
rendered from it (tools/check_vocab_markers.py): a marker a format gains must be declared one
token or several, as the model's own vocabulary has it, and docs/tokens.md must say so."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import check_vocab_markers as vocab_markers  # noqa: E402

sys.path.remove(str(ROOT / "tools"))


def test_the_docs_marker_table_is_rendered_from_the_family_table() -> None:
    doc = vocab_markers.DOC.read_text(encoding="utf-8")
    assert vocab_markers.render(doc) == doc, "run: python tools/check_vocab_markers.py"


@pytest.mark.framework
@pytest.mark.parametrize("vocabulary", sorted(vocab_markers.COUNTERS))
def test_declared_single_tokens_match_the_real_vocabulary(vocabulary: str) -> None:
    module, make = vocab_markers.COUNTERS[vocabulary]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{vocabulary} is not installed (the framework envs install it)")
    count = make()
    declared = [r for r in vocab_markers.rows() if r.single_tokens and r.vocabulary == vocabulary]
    assert declared, f"no family declares its single tokens against {vocabulary}"
    problems = [p for row in declared for p in vocab_markers.check(row, count)]
    assert problems == []
