"""Mistral: ``[TOOL_CALLS]`` + a JSON array (pre-v11), ``[TOOL_CALLS]name[ARGS]{…}`` (v11+); ``[THINK]`` reasoning."""

from __future__ import annotations

import json
import secrets
import string
from typing import Any

from ._base import AFTER, BEFORE, ReasoningFormat, TextGrammar, ToolFormat, dump_json, joined, object_call

TOOL_CALLS, ARGS, CALL_ID = "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"
TOOL_RESULTS, TOOL_RESULTS_END = "[TOOL_RESULTS]", "[/TOOL_RESULTS]"
THINK, THINK_END = "[THINK]", "[/THINK]"


def render(calls: Any, *, sep: str = " ", style: str = "array") -> str:
    """`style`: ``array`` (``[TOOL_CALLS] [{…}]``), ``args`` (v11: ``[TOOL_CALLS]name[ARGS]{…}`` per call),
    ``call_id`` (v13: ``[TOOL_CALLS]name[CALL_ID]id[ARGS]{…}`` per call, ids of nine characters)."""
    if style == "args":
        return "".join(f"{TOOL_CALLS}{n}{ARGS}{dump_json(a)}" for n, a in calls)
    if style == "call_id":
        return "".join(
            f"{TOOL_CALLS}{n}{CALL_ID}{i:09d}{ARGS}{dump_json(a)}" for i, (n, a) in enumerate(calls)
        )
    arr = "[" + ", ".join(dump_json({"name": n, "arguments": a}) for n, a in calls) + "]"
    return f"{TOOL_CALLS}{sep}{arr}"


#: What Mistral's tokenizers (mistral-common) accept as a tool-call id: nine letters or digits;
#: a conversation sent back with another id is refused.
CALL_ID_ALPHABET, CALL_ID_LENGTH = string.ascii_letters + string.digits, 9


def new_call_id() -> str:
    """A fresh call id of the form Mistral's tokenizers accept (vLLM's Mistral parser mints the same)."""
    return "".join(secrets.choice(CALL_ID_ALPHABET) for _ in range(CALL_ID_LENGTH))


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """``[TOOL_RESULTS]{"call_id": …, "content": …}[/TOOL_RESULTS]`` (Mistral v3 tokenizer)."""
    payload = {"call_id": tool_call_id, "content": result}
    return f"{TOOL_RESULTS}{json.dumps(payload, ensure_ascii=False)}{TOOL_RESULTS_END}"


GRAMMAR = TextGrammar((TOOL_CALLS,), object_call(), joined(", ", f"{TOOL_CALLS} [", "]"))

TOOL = ToolFormat(
    family="mistral",
    summary="`[TOOL_CALLS]` + JSON array; `[TOOL_CALLS]name{…}`, `name[ARGS]{…}` and `name[CALL_ID]id[ARGS]{…}`",
    markers=(TOOL_CALLS, ARGS, CALL_ID),
    render=render,
    format_tool_result=format_tool_result,
    grammar=GRAMMAR,
    content=BEFORE | AFTER,
    servers_content="marker",
)

REASONING = ReasoningFormat(
    family="mistral",
    drop_later_ends=True,  # vLLM drops a stray end marker after the one that closed reasoning
    summary="`[THINK]…[/THINK]` (Magistral; its first releases write plain-text `<think>…</think>`)",
    start=THINK,
    end=THINK_END,
    # (Magistral Small/Medium 2506 think in plain text: `<think>` and `</think>` are no special tokens;
    # vLLM's and SGLang's mistral parsers read only [THINK], so "servers" does too)
    alt_starts=("<think>",),
    alt_ends=("</think>",),
    servers_canonical_markers=True,
    call_starts=(TOOL_CALLS,),  # (a [/THINK] in a call's arguments is their text)
)
