"""GigaChat 3: ``<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": …, "arguments": …}`` after the content."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json

CALL_PREFIX = "function call<|role_sep|>"
#: the special-token spelling some GigaChat 3 checkpoints write instead.
CALL_TOKEN = "<|function_call|>"
MESSAGE_SEP, EOS = "<|message_sep|>", "</s>"


def render(calls: Any, *, token: bool = False) -> str:
    """The content's closing ``<|message_sep|>`` and the call header, then the call object.

    One call per turn in the format; several are rendered one after another.
    With `token`, the single ``<|function_call|>`` token follows the content directly.
    """
    head = CALL_TOKEN if token else MESSAGE_SEP + "\n\n" + CALL_PREFIX + "\n"
    return "\n".join(head + dump_json({"name": n, "arguments": a}) for n, a in calls)


# Tool results: `ToolFormat`'s default, the result as the function-result message's content (JSON;
# the format has no id).
TOOL = ToolFormat(
    family="gigachat3",
    summary='`function call<|role_sep|>\\n{"name": …, "arguments": …}` (or `<|function_call|>`)',
    markers=(CALL_PREFIX, CALL_TOKEN, MESSAGE_SEP),
    servers_markup="doubled",
    render=render,
)
