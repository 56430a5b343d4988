"""ByteDance Seed-OSS: ``<seed:tool_call><function=NAME><parameter=P>…</parameter></function></seed:tool_call>``."""

from __future__ import annotations

from typing import Any

from ._base import TextGrammar, ToolFormat, join_calls, joined, xml_call, xml_value

START, END = "<seed:tool_call>", "</seed:tool_call>"
FN, FN_END = "<function=", "</function>"
PARAM, PARAM_END = "<parameter=", "</parameter>"


def render_call(name: str, args: dict[str, Any]) -> str:
    params = "".join(f"<parameter={k}>{xml_value(v)}</parameter>\n" for k, v in args.items())
    return f"{START}\n<function={name}>\n{params}</function>\n{END}"


GRAMMAR = TextGrammar(
    (START, END, FN, FN_END),
    xml_call(
        lambda n: f"{START}\n<function={n}>\n",
        f"</function>\n{END}",
        lambda k, v: f"<parameter={k}>{v}</parameter>\n",
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
    content_before=True,
    content_after=True,
    content_between=True,
    typed_values=True,
)
