"""Prompt ids that a ``python:`` parser's tokenizer cannot decode leave the request read as if it
gave no prompt, and that is said: a warning on the ``parsebridge`` logger naming the parser and the
tokenizer's error, as a run over records says it of a record's ids. It was silent."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.protocol import ReasoningParserBase, ReasoningParseResult


class _Undecodable:
    def decode(self, ids: list[int]) -> str:
        raise KeyError(ids[0])


class _Decodes:
    def decode(self, ids: list[int]) -> str:
        return "<think>" if ids == [1] else ""


class ThinkParser(ReasoningParserBase):
    """``<think>…</think>``; reasoning is open at the start when told so (the prompt opened it)."""

    name = "think_with_tokenizer"
    markers = ("<think>", "</think>")

    def __init__(self, tokenizer: Any) -> None:
        super().__init__()
        self.tokenizer = tokenizer

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        if not reasoning_started and not text.startswith("<think>"):
            return ReasoningParseResult(content=text or None)
        reasoning, _, content = text.removeprefix("<think>").partition("</think>")
        return ReasoningParseResult(reasoning=reasoning or None, content=content or None)


def test_ids_the_tokenizer_cannot_decode_are_said_not_read(caplog: pytest.LogCaptureFixture) -> None:
    proc = pb.OutputProcessor(ThinkParser(_Undecodable()))
    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        out = proc.parse("a</think>b", prompt_token_ids=[5, 6])
    assert (out.result.reasoning, out.result.content) == (None, "a</think>b")  # no prompt, as before
    (record,) = [r for r in caplog.records if r.name == "parsebridge"]
    assert record.getMessage() == (
        "prompt_token_ids not read: python:think_with_tokenizer's tokenizer cannot decode them "
        "(KeyError: 5); the request is read as if it gave no prompt"
    )


def test_ids_it_decodes_are_read_and_nothing_is_said(caplog: pytest.LogCaptureFixture) -> None:
    proc = pb.OutputProcessor(ThinkParser(_Decodes()))
    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        out = proc.parse("a</think>b", prompt_token_ids=[1])
    assert (out.result.reasoning, out.result.content) == ("a", "b")
    assert not [r for r in caplog.records if r.name == "parsebridge"]
