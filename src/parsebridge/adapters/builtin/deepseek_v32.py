"""DeepSeek DSML tool calls: V3.2 (``function_calls``), V4 (``tool_calls``) and V4.1 (spaced tags).

::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">杭州</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

V4 names the block ``<｜DSML｜tool_calls>`` (``<｜DSML｜toolcalls>`` and
``<｜DSML｜tool>`` are read as openers too); V4.1 writes ``<｜DSML｜ calls>``,
``<｜DSML｜ invoke``, ``<｜DSML｜ parameter`` (a space after the DSML token).
The shared invoke machine (`invoke`) reads them; a bare invoke without the
block is accepted, like both frameworks do.

Value rule: ``string="true"`` → the text verbatim (nothing stripped: the
encoder writes the raw string); ``string="false"`` or no ``string``
attribute → ``json.loads`` of the stripped text, and the text itself when that
is not JSON (vLLM and SGLang both fall back to the text). NaN/Infinity are
never decoded. Repeated parameters produce repeated keys (the last one wins).

Where the frameworks differ: vLLM drops text after the block (a call ends the
turn); we keep it as content (nothing is lost). Neither framework unwraps
anything we do not: vLLM's ``{"arguments": {…}}`` unwrapping against the tool
schema is not done here (arguments are what the model wrote).

DSML written inside a value (a model documenting the format) is the value's text
where the value's close follows (`invoke`), under both conventions: vLLM ends the
value at the first tag and SGLang reads no call, so there is no reading both share.

An invoke whose body is one JSON object and no parameter elements
(``<｜DSML｜invoke name="f">{"city": "Hangzhou"}</｜DSML｜invoke>``) has that object as
its arguments, under both conventions, as SGLang reads it (vLLM returns the call
with no arguments, the object lost).

Malformed output: see `invoke` (unnamed invoke → content; a block without a
named invoke → content; truncated → no call, its text is text: `whole_calls`).

`format_tool_result`: V3.2 ``<function_results>\\n<result>…</result>\\n</function_results>``,
V4/V4.1 ``<tool_result>…</tool_result>`` — one result as each encoding script renders it.
"""

from __future__ import annotations

from typing import Any

from ...formats import deepseek_v4, deepseek_v32, deepseek_v41
from .engines.invoke import InvokeStream, InvokeToolParser
from .engines.invoke_dialect import Dialect
from .engines.scan import is_invalid, loads_or_none


def _dialect(tags: deepseek_v32.DsmlTags, alt_begins: tuple[str, ...] = ()) -> Dialect:
    return Dialect(
        section_begins=(tags.calls_begin, *alt_begins),
        section_end=tags.calls_end,
        invoke_open=tags.invoke_open,
        invoke_close=tags.invoke_close,
        param_open=tags.param_open,
        param_close=tags.param_close,
    )


class DsmlStream(InvokeStream):
    """The invoke machine, reading a DSML tag inside a value as both conventions' text where its
    value's close follows (vLLM and SGLang do not agree on another reading: SGLang reads no call)."""

    servers_tag_ends_value = False
    servers_first_close_ends_value = False
    json_body = True


class DeepSeekV32ToolParser(InvokeToolParser):
    """DeepSeek V3.2 DSML ``function_calls`` blocks (builtin, incremental)."""

    name = "deepseek_v32"
    dialect = _dialect(deepseek_v32.TAGS)
    stream_class = DsmlStream
    _result = staticmethod(deepseek_v32.format_tool_result)

    def string_valued(self, function: str, param: str, attrs: dict[str, str]) -> bool:
        return attrs.get("string", "").strip().lower() == "true"

    def convert(self, function: str, param: str, attrs: dict[str, str], text: str) -> Any:
        if attrs.get("string", "").strip().lower() == "true":
            return text
        value = loads_or_none(text.strip())
        return text if is_invalid(value) else value

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The tool result as this DeepSeek version's encoding script renders one."""
        return self._result(tool_call_id, result)


class DeepSeekV4ToolParser(DeepSeekV32ToolParser):
    """DeepSeek V4 DSML ``tool_calls`` blocks (builtin, incremental)."""

    name = "deepseek_v4"
    dialect = _dialect(deepseek_v4.TAGS, deepseek_v4.ALT_BEGINS)
    _result = staticmethod(deepseek_v4.format_tool_result)


class DeepSeekV41ToolParser(DeepSeekV32ToolParser):
    """DeepSeek V4.1 spaced DSML ``calls`` blocks (builtin, incremental)."""

    name = "deepseek_v41"
    dialect = _dialect(deepseek_v41.TAGS)
    _result = staticmethod(deepseek_v4.format_tool_result)  # V4.1 renders results like V4
