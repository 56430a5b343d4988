"""MiniCPM (V3 tool schema): ``<function name="NAME"><param name="P">V</param></function>``, one element per call, no wrapper."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, join_calls, result_text, xml_value

FN, FN_END = "<function name=", "</function>"
PARAM, PARAM_END = "<param name=", "</param>"
CDATA, CDATA_END = "<![CDATA[", "]]>"


def _value(v: Any) -> str:
    text = xml_value(v)
    return f"{CDATA}{text}{CDATA_END}" if ("<" in text or "\n" in text) and CDATA_END not in text else text


def render_call(name: str, args: dict[str, Any]) -> str:
    params = "".join(f'{PARAM}"{k}">{_value(v)}{PARAM_END}' for k, v in args.items())
    return f'{FN}"{name}">{params}{FN_END}'


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """The result text as is: the frameworks ship no MiniCPM5 template, so we add no wrapper."""
    return result_text(result)


TOOL = ToolFormat(
    family="minicpm5",
    summary='`<function name="NAME"><param name="P">V</param></function>` (multi-line values in CDATA), values typed by the tool schema',
    markers=(FN, FN_END, PARAM, PARAM_END),
    render=join_calls(render_call),
    format_tool_result=format_tool_result,
)
