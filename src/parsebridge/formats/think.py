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
    needs_started=True,
)
GLM45 = ReasoningFormat(
    family="glm45",
    summary="`<think>…</think>` (GLM-4.5: the model writes the start tag)",
    start=START,
    end=END,
)
STEP3 = ReasoningFormat(
    family="step3",
    summary="reasoning from the first token (no start tag) to `</think>`",
    start=START,
    end=END,
    starts_in_prompt=True,
)
MINIMAX_M2 = ReasoningFormat(
    family="minimax_m2",
    summary="the template opens `<think>`; output holds `…</think>`",
    start=START,
    end=END,
    starts_in_prompt=True,
    needs_started=True,
)
#: Kimi's older ◁think▷ tags, never content either.
KIMI_START, KIMI_END = "◁think▷", "◁/think▷"
KIMI_K2 = ReasoningFormat(
    family="kimi_k2",
    summary="`<think>…</think>` (Kimi K2 thinking)",
    start=START,
    end=END,
    extra_markers=(KIMI_START, KIMI_END),
)
