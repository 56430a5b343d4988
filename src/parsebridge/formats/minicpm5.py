"""MiniCPM 5 tool calls: bare ``<function name="NAME"><param name="K">V</param></function>`` elements.

No section marker; several calls follow each other. A multi-line value may be
wrapped in ``<![CDATA[…]]>``. Values are text; their JSON type comes from the
tool's schema.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._base import Call, ToolFormat, xml_value

FUNCTION_OPEN, FUNCTION_CLOSE = "<function", "</function>"
PARAM_OPEN, PARAM_CLOSE = "<param", "</param>"
CDATA_OPEN, CDATA_CLOSE = "<![CDATA[", "]]>"


def render(calls: Sequence[Call]) -> str:
    out = []
    for name, args in calls:
        params = "".join(
            f'{PARAM_OPEN} name="{k}">'
            + (
                f"{CDATA_OPEN}{v}{CDATA_CLOSE}"
                if isinstance(v, str) and ("\n" in v or "<" in v)
                else xml_value(v)
            )
            + PARAM_CLOSE
            for k, v in args.items()
        )
        out.append(f'{FUNCTION_OPEN} name="{name}">{params}{FUNCTION_CLOSE}')
    return "".join(out)


TOOL = ToolFormat(
    family="minicpm5",
    summary='`<function name="NAME"><param name="K">V</param></function>` (CDATA for multi-line values)',
    markers=(FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, PARAM_CLOSE),
    render=render,
    notes="format_tool_result: the result text (no MiniCPM 5 tool-message wrapper verified).",
    servers_markup="doubled",
)
