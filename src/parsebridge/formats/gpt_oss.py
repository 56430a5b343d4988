"""OpenAI gpt-oss "harmony": channels for reasoning (analysis), content (final) and calls (commentary).

A message is ``[<|start|>ROLE]<|channel|>CHANNEL[ to=RECIPIENT][ <|constrain|>TYPE]<|message|>BODY``
ended by ``<|end|>``, ``<|call|>`` (a tool call) or ``<|return|>`` (end of the
turn). The first message of an output has no ``<|start|>assistant``: the
prompt wrote it. A recipient may also sit in the role part
(``<|start|>assistant to=functions.f<|channel|>commentary json<|message|>``), and so the
output may start with it (`` to=functions.f<|channel|>commentary json<|message|>…``).
A message to a built-in tool (``to=python``, ``to=browser.search``) calls no function.
"""

from __future__ import annotations

import re
from typing import Any

from ._base import ReasoningFormat, TextGrammar, ToolFormat, dump_json, join_calls, joined, result_text

CHANNEL, MESSAGE, END, CALL, START, CONSTRAIN = (
    "<|channel|>",
    "<|message|>",
    "<|end|>",
    "<|call|>",
    "<|start|>",
    "<|constrain|>",
)
RETURN = "<|return|>"
ANALYSIS = CHANNEL + "analysis" + MESSAGE + "{}" + END
NEXT = START + "assistant"
#: what ends a message body (the first two also open the next message)
BODY_ENDS = (END, CALL, RETURN, START, CHANNEL)
HEADER_OPENS = (START, CHANNEL)
FUNCTIONS = "functions."
#: How the output's first header opens when the prompt ends with ``<|start|>assistant``: its recipient.
LEAD = "to="

_HEADER = re.compile(
    r"(?:<\|start\|>\s*assistant)?\s*(?:to=([^\s<]+)\s*)?"
    r"(?:<\|channel\|>\s*([A-Za-z_]+)\s*)?(?:to=([^\s<]+)\s*)?"
    r"(?:(?:<\|constrain\|>\s*)?([A-Za-z0-9_./-]+)\s*)?\Z"
)


def read_header(header: str, *, first: bool = False) -> tuple[str | None, str | None] | None:
    """(channel, recipient) of a well-formed message header, else None.

    `header` is the text from the message's opening marker up to ``<|message|>``.
    Well formed: ``[<|start|>assistant][ to=R]<|channel|>CHANNEL[ to=R][ [<|constrain|>]TYPE]``.
    With `first` (the output's first message, whose ``<|start|>assistant`` the prompt wrote), it
    may open with the role part's recipient: `` to=R<|channel|>…`` (`LEAD`).
    """
    m = _HEADER.match(header)
    opens = header.startswith(("<|start|>", "<|channel|>")) or (first and header.lstrip().startswith(LEAD))
    if m is None or not opens:
        return None
    return m.group(2), m.group(3) or m.group(1)


def is_function(recipient: str) -> bool:
    """Whether a message to `recipient` calls a function (``functions.NAME``); a built-in tool
    (``python``, ``browser.search``, ``container.exec``) is no function call."""
    return recipient.startswith(FUNCTIONS)


def call_name(recipient: str) -> str:
    """``functions.NAME`` → NAME; any other recipient (a built-in tool such as ``browser.search``) as is."""
    return recipient[len(FUNCTIONS) :] if recipient.startswith(FUNCTIONS) else recipient


def render_call(name: str, args: dict[str, Any]) -> str:
    return f"{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}{dump_json(args)}{CALL}"


def render_analysis(text: str) -> str:
    """An analysis (reasoning) message, followed by the next message's header."""
    return ANALYSIS.format(text) + NEXT


GRAMMAR = TextGrammar(
    (CHANNEL, CALL, MESSAGE, CONSTRAIN, NEXT),
    lambda n, a, i: f"{CHANNEL}commentary to=functions.{n} {CONSTRAIN}json{MESSAGE}{a}{CALL}",
    joined(NEXT),
)


def render_reasoning(reasoning: str | None, content: str, *, started: bool | None = None) -> str:
    """An analysis message (when there is reasoning) then a final message holding `content`."""
    head = render_analysis(reasoning) if reasoning is not None else ""
    return f"{head}{CHANNEL}final{MESSAGE}{content}"


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """A tool message as harmony renders it; the tool's name is not known here, so the id stands in.

    ``<|start|>functions.NAME to=assistant<|channel|>commentary<|message|>{result}<|end|>``;
    pass the function name as `tool_call_id` to get the exact header.
    """
    name = call_name(tool_call_id)
    return f"{START}functions.{name} to=assistant{CHANNEL}commentary{MESSAGE}{result_text(result)}{END}"


TOOL = ToolFormat(
    family="gpt_oss",
    summary="harmony: `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>`",
    markers=(CHANNEL, MESSAGE, END, CALL, START, CONSTRAIN),
    render=join_calls(render_call, sep=""),
    grammar=GRAMMAR,
    reasoning_family="gpt_oss",
    format_tool_result=format_tool_result,
)

REASONING = ReasoningFormat(
    family="gpt_oss",
    summary="harmony: `<|channel|>analysis<|message|>…<|end|>` is reasoning, the `final` channel is content",
    start=CHANNEL + "analysis" + MESSAGE,
    end=END,
    extra_markers=(START, CALL, RETURN, CONSTRAIN, MESSAGE, CHANNEL, CHANNEL + "final" + MESSAGE, NEXT),
    render=render_reasoning,
)
