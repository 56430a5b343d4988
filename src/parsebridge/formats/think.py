"""Think-tag reasoning: ``<think>…</think>`` (Qwen3, DeepSeek-R1 and many others)."""

from __future__ import annotations

from ._base import ReasoningFormat

START, END = "<think>", "</think>"

QWEN3 = ReasoningFormat(
    family="qwen3",
    summary="`<think>…</think>` opened by the output (or by the prompt)",
    start=START,
    end=END,
)
DEEPSEEK_R1 = ReasoningFormat(
    family="deepseek_r1",
    summary="output starts inside reasoning (the template opened it); `</think>` ends it",
    start=START,
    end=END,
    starts_in_prompt=True,
)
QWEN3_THINKING = ReasoningFormat(
    family="qwen3_thinking",
    summary="Qwen3 thinking-2507: the template opens `<think>`; `</think>` ends it",
    start=START,
    end=END,
    starts_in_prompt=True,
)
