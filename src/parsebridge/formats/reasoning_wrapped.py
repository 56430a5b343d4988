"""Reasoning formats that are not a bare think-tag pair.

* granite — Granite 3.x writes the phrases "Here is my thought process:" …
  "Here is my response:" (quantised builds also write "Here's").
* hunyuan_a13b — ``<think>…</think>`` then the answer wrapped in
  ``<answer>…</answer>`` (the wrapper is not content).
* ernie45 — ERNIE-4.5 thinking: output starts inside reasoning; the answer
  may be wrapped in ``<response>…</response>``.
* cohere_command3 / cohere_command4 — Command A reasoning:
  ``<|START_THINKING|>…<|END_THINKING|>`` then the answer in
  ``<|START_RESPONSE|>…<|END_RESPONSE|>`` (command3) or
  ``<|START_TEXT|>…<|END_TEXT|>`` (command4, whose template opens the
  thinking block); an ``<|START_ACTION|>`` block (tool calls) is content.
* kimi_k3 — Kimi K3's XTML channels: ``<|open|>think<|sep|>…<|close|>think<|sep|>``
  (prefilled by the template), the answer wrapped in response/message
  channel markers, and a ``tools`` channel left to the tool parser.
* minimax_m2_append_think — MiniMax-M2 served with its reasoning kept in the
  message: the template opened ``<think>``, so the start marker is put back
  and the whole output is content (MiniMax asks clients to send the
  ``<think>…</think>`` block back in later turns).
"""

from __future__ import annotations

from . import cohere as _cohere
from . import jamba as _jamba
from . import kimi_k3 as _kimi_k3
from ._base import ReasoningFormat
from .think import END, START, think_tags

GRANITE_THINK, GRANITE_THINK_ALT = "Here is my thought process:", "Here's my thought process:"
GRANITE_RESPONSE, GRANITE_RESPONSE_ALT = "Here is my response:", "Here's my response:"

GRANITE = ReasoningFormat(
    family="granite",
    summary='Granite 3.x: "Here is my thought process:" … "Here is my response:" (or "Here\'s")',
    start=GRANITE_THINK,
    end=GRANITE_RESPONSE,
    alt_starts=(GRANITE_THINK_ALT,),
    alt_ends=(GRANITE_RESPONSE_ALT,),
)

ANSWER, ANSWER_END = "<answer>", "</answer>"
HUNYUAN_A13B = think_tags(
    "hunyuan_a13b",
    "Hunyuan: `<think>…</think>` then `<answer>…</answer>` (the answer tags are not content)",
    closers=(_jamba.START,),
    json_calls=True,  # (a wrapper marker in a call's JSON string is its text)
    content_wrappers=(ANSWER, ANSWER_END),
)

RESPONSE, RESPONSE_END = "<response>", "</response>"
ERNIE45 = think_tags(
    "ernie45",
    "ERNIE-4.5 thinking: output starts inside reasoning; `</think>` ends it; `<response>` tags dropped",
    starts_in_prompt=True,
    closers=("<tool_call>",),
    json_calls=True,  # (a wrapper marker in a call's JSON string is its text)
    content_wrappers=(RESPONSE, RESPONSE_END),
)

COHERE_THINK, COHERE_THINK_END = _cohere.START_THINKING, _cohere.END_THINKING
COHERE_RESPONSE, COHERE_RESPONSE_END = _cohere.START_RESPONSE, _cohere.END_RESPONSE
COHERE_TEXT, COHERE_TEXT_END = _cohere.START_TEXT, _cohere.END_TEXT
COHERE_ACTION = _cohere.START_ACTION
COHERE_COMMAND3 = ReasoningFormat(
    family="cohere_command3",
    summary="Command A reasoning: `<|START_THINKING|>…<|END_THINKING|>`, answer in `<|START_RESPONSE|>…<|END_RESPONSE|>`",
    start=COHERE_THINK,
    end=COHERE_THINK_END,
    closers=(COHERE_ACTION,),
    json_calls=True,  # (a wrapper marker in a call's JSON string is its text)
    content_wrappers=(COHERE_RESPONSE, COHERE_RESPONSE_END),
)
COHERE_COMMAND4 = ReasoningFormat(
    family="cohere_command4",
    drop_later_ends=True,  # vLLM drops a stray end marker after the one that closed reasoning
    summary="Command 4: the template opens `<|START_THINKING|>`; answer in `<|START_TEXT|>…<|END_TEXT|>`",
    start=COHERE_THINK,
    end=COHERE_THINK_END,
    starts_in_prompt=True,
    closers=(COHERE_ACTION,),
    json_calls=True,  # (a wrapper marker in a call's JSON string is its text)
    content_wrappers=(COHERE_TEXT, COHERE_TEXT_END),
)

K3_THINK, K3_THINK_END = "<|open|>think<|sep|>", "<|close|>think<|sep|>"
K3_RESPONSE, K3_RESPONSE_END = "<|open|>response<|sep|>", "<|close|>response<|sep|>"
K3_MESSAGE_END, K3_TOOLS = "<|close|>message<|sep|>", "<|open|>tools<|sep|>"
KIMI_K3 = ReasoningFormat(
    family="kimi_k3",
    summary="Kimi K3 XTML: `<|open|>think<|sep|>…<|close|>think<|sep|>` (prefilled), answer in response channel markers",
    start=K3_THINK,
    end=K3_THINK_END,
    starts_in_prompt=True,
    closers=(K3_RESPONSE, K3_TOOLS),
    content_wrappers=(K3_RESPONSE, K3_RESPONSE_END, K3_MESSAGE_END),
    value_spans=((_kimi_k3.ARG_OPEN, _kimi_k3.ARG_CLOSE),),  # (a wrapper in an argument is its text)
    servers_keep_repeated_start=True,
)


def _render_append_think(reasoning: str | None, content: str, *, started: bool | None = None) -> str:
    opened = True if started is None else started
    if reasoning is None:
        return content
    return ("" if opened else START) + reasoning + END + content


MINIMAX_M2_APPEND_THINK = think_tags(
    "minimax_m2_append_think",
    "MiniMax-M2, reasoning kept in the message: `<think>` is put back and everything is content",
    starts_in_prompt=True,
    render=_render_append_think,
    splits_reasoning=False,
)
