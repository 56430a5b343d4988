"""Tiny transcripts in the toy formats of `_confparsers` (helpers, not fixtures)."""

from __future__ import annotations

from parsebridge.conformance import Transcript, transcript_from

OUT_CALL = 'Hello there, friend. <call>{"name": "f", "arguments": {"a": 1}}</call> And bye.'


def tool_transcript(**kw) -> Transcript:
    data = {
        "id": "toy-call",
        "family": "toycall",
        "output": OUT_CALL,
        "expected": {
            "content": "Hello there, friend.  And bye.",
            "tool_calls": [{"name": "f", "arguments": {"a": 1}}],
        },
    }
    data.update(kw)
    return transcript_from(data)


def reasoning_transcript(**kw) -> Transcript:
    data = {
        "id": "toy-think",
        "family": "toythink",
        "kind": "reasoning",
        "output": "<r>let me think</r>The answer is 4.",
        "expected": {"reasoning": "let me think", "content": "The answer is 4."},
    }
    data.update(kw)
    return transcript_from(data)
