"""DeepSeek V3.2 "DSML" tool calls: ``<｜DSML｜function_calls>`` holding ``<｜DSML｜invoke name=…>`` elements.

Each argument is a ``<｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>``
element: ``string="true"`` marks V as the string's raw text, ``"false"`` as JSON.
V4 and V4.1 write the same elements with other tag names (formats/deepseek_v4.py,
formats/deepseek_v41.py); `dsml_renderer` serves all three.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._base import Call, ToolFormat, dump_json, result_text

DSML = "｜DSML｜"


class DsmlTags:
    """One DSML dialect's marker texts (block, invoke and parameter tag names after the DSML token)."""

    def __init__(self, block: str, invoke: str = "invoke", parameter: str = "parameter") -> None:
        self.calls_begin, self.calls_end = f"<{DSML}{block}>", f"</{DSML}{block}>"
        self.invoke_open, self.invoke_close = f"<{DSML}{invoke}", f"</{DSML}{invoke}>"
        self.param_open, self.param_close = f"<{DSML}{parameter}", f"</{DSML}{parameter}>"

    @property
    def markers(self) -> tuple[str, ...]:
        return (
            self.calls_begin,
            self.calls_end,
            self.invoke_open,
            self.invoke_close,
            self.param_open,
            self.param_close,
        )


TAGS = DsmlTags("function_calls")


def dsml_renderer(tags: DsmlTags) -> Any:
    """calls → the DSML block as DeepSeek's encoding scripts write it (one element a line)."""

    def render(calls: Sequence[Call]) -> str:
        invokes = []
        for name, args in calls:
            params = "\n".join(
                f'{tags.param_open} name="{k}" string="{"true" if isinstance(v, str) else "false"}">'
                f"{v if isinstance(v, str) else dump_json(v, ascii_only=False)}{tags.param_close}"
                for k, v in args.items()
            )
            invokes.append(f'{tags.invoke_open} name="{name}">\n{params}\n{tags.invoke_close}')
        return f"{tags.calls_begin}\n" + "\n".join(invokes) + f"\n{tags.calls_end}"

    return render


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """``<function_results>\\n<result>…</result>\\n</function_results>``: one result as V3.2's encoding renders it."""
    return f"<function_results>\n<result>{result_text(result)}</result>\n</function_results>"


TOOL = ToolFormat(
    family="deepseek_v32",
    summary='DSML: `<｜DSML｜function_calls><｜DSML｜invoke name="…"><｜DSML｜parameter name="…" string="true|false">…`',
    markers=TAGS.markers,
    render=dsml_renderer(TAGS),
    format_tool_result=format_tool_result,
    servers_content="marker",
)
