"""Inkling: typed content blocks, each ``<|message_model|>[META]<|content_KIND|>BODY<|end_message|>``.

Kinds: ``content_text`` (visible text), ``content_thinking`` (reasoning),
``content_invoke_tool_json`` (a call: ``{"name": …, "args": {…}}``),
``content_invoke_tool_text`` / ``content_tool_error`` (shown as text).
``<|content_model_end_sampling|>`` may end a block instead of ``<|end_message|>``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ._base import Call, ReasoningFormat, ToolFormat

MESSAGE_MODEL = "<|message_model|>"
TEXT = "<|content_text|>"
THINKING = "<|content_thinking|>"
INVOKE_JSON = "<|content_invoke_tool_json|>"
INVOKE_TEXT = "<|content_invoke_tool_text|>"
TOOL_ERROR = "<|content_tool_error|>"
END_SAMPLING = "<|content_model_end_sampling|>"
END_MESSAGE = "<|end_message|>"
KINDS = (TEXT, THINKING, INVOKE_JSON, INVOKE_TEXT, TOOL_ERROR)
BLOCK_ENDS = (END_MESSAGE, END_SAMPLING)


def render(calls: Sequence[Call]) -> str:
    """One invoke block per call (compact JSON, as the model writes it)."""
    return "".join(
        f"{MESSAGE_MODEL}{INVOKE_JSON}"
        + json.dumps({"name": n, "args": a}, ensure_ascii=False, separators=(",", ":"))
        + END_MESSAGE
        for n, a in calls
    )


def render_text(text: str) -> str:
    return f"{MESSAGE_MODEL}{TEXT}{text}{END_MESSAGE}"


def render_thinking(text: str) -> str:
    return f"{MESSAGE_MODEL}{THINKING}{text}{END_MESSAGE}"


TOOL = ToolFormat(
    family="inkling",
    summary='blocks: `<|message_model|><|content_invoke_tool_json|>{"name":…,"args":{…}}<|end_message|>`, text/thinking blocks',
    markers=(MESSAGE_MODEL, *KINDS, END_SAMPLING, END_MESSAGE),
    render=render,
    notes="format_tool_result: the result text (no Inkling tool-block wrapper verified).",
    servers_content="keep",
    servers_markup="markers",
)


def render_reasoning(reasoning: str | None, content: str, *, started: bool | None = None) -> str:
    """A thinking block (when there is reasoning), then the answer as a text block."""
    head = render_thinking(reasoning) if reasoning is not None else ""
    return head + (render_text(content) if content else "")


#: Reasoning: the bodies of the thinking blocks; content: the text blocks' bodies, other blocks verbatim.
REASONING = ReasoningFormat(
    family="inkling",
    summary="thinking blocks `<|message_model|><|content_thinking|>…<|end_message|>`; text blocks are the content",
    start=THINKING,
    end=END_MESSAGE,
    extra_markers=(MESSAGE_MODEL, TEXT, END_SAMPLING),
    render=render_reasoning,
)
