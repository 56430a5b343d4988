"""ByteDance Seed-OSS: ``<seed:tool_call><function=NAME><parameter=P>…</parameter></function></seed:tool_call>``."""

from __future__ import annotations

from typing import Any

from ._base import AFTER, BEFORE, BETWEEN, TextGrammar, ToolFormat, join_calls, joined, xml_call, xml_value
from .qwen3_coder import FN, FN_END, PARAM, PARAM_END

#: Qwen3-Coder's function and parameter tags (without their newlines) in Seed's own block.
START, END = "<seed:tool_call>", "</seed:tool_call>"


def render_call(name: str, args: dict[str, Any]) -> str:
    params = "".join(f"{PARAM}{k}>{xml_value(v)}{PARAM_END}\n" for k, v in args.items())
    return f"{START}\n{FN}{name}>\n{params}{FN_END}\n{END}"


GRAMMAR = TextGrammar(
    (START, END, FN, FN_END),
    xml_call(
        lambda n: f"{START}\n{FN}{n}>\n",
        f"{FN_END}\n{END}",
        lambda k, v: f"{PARAM}{k}>{v}{PARAM_END}\n",
    ),
    joined("\n"),
    json_args=False,
)


# Tool results: `ToolFormat`'s default, the result text as is: the Seed-OSS chat template puts a
# tool message's content verbatim in a ``tool`` turn.
TOOL = ToolFormat(
    family="seed_oss",
    summary="`<seed:tool_call><function=NAME><parameter=P>…</parameter></function></seed:tool_call>`, values typed by the tool schema",
    markers=(START, END, FN, FN_END, PARAM, PARAM_END),
    render=join_calls(render_call),
    grammar=GRAMMAR,
    content=BEFORE | AFTER | BETWEEN,
    typed_values=True,
)
