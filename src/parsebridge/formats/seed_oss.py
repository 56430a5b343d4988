"""ByteDance Seed-OSS: ``<seed:tool_call><function=NAME><parameter=P>…</parameter></function></seed:tool_call>``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, join_calls, xml_value

START, END = "<seed:tool_call>", "</seed:tool_call>"


def render_call(name: str, args: dict[str, Any]) -> str:
    params = "".join(f"<parameter={k}>{xml_value(v)}</parameter>\n" for k, v in args.items())
    return f"{START}\n<function={name}>\n{params}</function>\n{END}"


TOOL = ToolFormat(
    family="seed_oss",
    summary="`<seed:tool_call><function=NAME><parameter=P>…</parameter></function></seed:tool_call>`",
    markers=(START, END),
    render=join_calls(render_call),
)
