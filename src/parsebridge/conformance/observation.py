"""What one parser produced for one transcript under one chunking, in a backend-neutral shape.

Observations are plain dataclasses, not pydantic models: the suite makes
thousands of them per run and `compare` hundreds of thousands, so building
one must cost next to nothing. `to_dict()` gives the JSON shape reports use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..protocol import ToolCall


def normalize_call(call: ToolCall) -> dict[str, Any]:
    """`{name, arguments}` for a valid call, `{name, invalid_arguments}` for a flagged one."""
    if call.invalid_arguments is not None:
        return {"name": call.name, "invalid_arguments": call.invalid_arguments}
    return {"name": call.name, "arguments": call.arguments}


@dataclass
class Observation:
    """The reading a parser gave, plus how it got there.

    `mode` is ``oneshot`` (a `parse` call) or ``stream`` (chunks fed through a
    stream; the reading is what a client assembled from the deltas).
    `fragments` are each call's argument fragments joined (streams only);
    `anomalies` are the OpenAI-protocol breaches the `DeltaAccumulator` (and
    the runner) noticed; `finish_mismatch` says how `finish()` disagreed with
    the deltas, when it did. `error` is set when the backend raised, and then
    the reading fields are empty.
    """

    mode: str
    chunking: str
    reasoning: str | None = None
    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    call_ids: list[str | None] = field(default_factory=list)
    fragments: list[str] = field(default_factory=list)
    anomalies: list[str] = field(default_factory=list)
    finish_mismatch: str | None = None
    error: str | None = None
    error_type: str | None = None
    elapsed: float = 0.0
    chunks: int = 0
    #: Which tokenizer cut the chunks (token chunkings) or the parser read with, and its Mistral mode.
    tokenizer: str | None = None
    #: Call indexes in the order streamed deltas first named them (streams only).
    call_order: list[int] = field(default_factory=list)
    #: For an output the token limit cut (finish_reason length): what the backend made of it.
    truncation: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def reading(self) -> dict[str, Any]:
        """The documented result shape: `{reasoning, content, tool_calls}`."""
        return {"reasoning": self.reasoning, "content": self.content, "tool_calls": self.tool_calls}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mode": self.mode, "chunking": self.chunking, **self.reading()}
        if self.mode == "stream":
            out["chunks"] = self.chunks
            out["fragments"] = self.fragments
        if self.anomalies:
            out["anomalies"] = self.anomalies
        if self.finish_mismatch:
            out["finish_mismatch"] = self.finish_mismatch
        if self.error is not None:
            out["error"] = self.error
            out["error_type"] = self.error_type
        if self.tokenizer is not None:
            out["tokenizer"] = self.tokenizer
        if self.truncation is not None:
            out["truncation"] = self.truncation
        out["elapsed_ms"] = round(self.elapsed * 1000, 3)
        return out
