"""MiniCPM 5 tool calls: bare ``<function name="NAME"><param name="K">V</param></function>`` elements.

::

    Let me check.<function name="get_weather"><param name="city">北京</param><param name="days">3</param></function>

Read by the shared invoke machine (`invoke`) with no section marker: every
``<function name=…>`` element is a call. A CDATA section in a value
(``<![CDATA[…]]>``, usually the whole value) is its raw text, whatever tags it
holds: it ends only at ``]]>``, under both conventions (vLLM and SGLang read a
``</param>`` in it as text too, but read no call where it holds ``</function>``).

Value rule: a parameter declared in `tools` with a type is read by `schema_values` (the text
``null`` where the schema allows null → null; a type that includes "string" → the text, nothing
stripped; another type → ``json.loads`` of the stripped text, or the boolean or null a Python
literal ``True``/``False``/``None`` names where the type admits it, as both servers read it, else
the text); a CDATA-wrapped value is its raw text; undeclared (or declared without a type) →
``json.loads`` of the stripped text, the text itself when that is not JSON. (SGLang also tries a Python literal; vLLM's
parser additionally renames some tool names for one benchmark's tools — we
do neither: arguments and names are what the model wrote.)

Malformed output: see `invoke` (a function without a name → content; one cut off by the end
of output is no call, its text content: `whole_calls`). Under conventions="servers", as both
servers read it, a call to a tool the request's `tools` do not declare is content. Under conventions="servers" a doubled
``<function<function name=…>`` leaves the first marker on `dropped` (both servers read
the call from it; `ToolFormat.servers_markup`).

`format_tool_result`: the result text (no MiniCPM 5 tool-message wrapper could be verified).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...formats import minicpm5 as fmt
from ...protocol.parsers import ToolSpec
from .engines.conventions import SERVERS
from .engines.invoke import InvokeStream, InvokeToolParser
from .engines.invoke_dialect import Dialect
from .engines.scan import is_invalid, loads_or_none
from .engines.schema_values import convert_value
from .qwen3_coder import schema_types

#: A CDATA section of a value (the machine read it whole: `Dialect.cdata_open`).
_CDATA = re.compile(re.escape(fmt.CDATA_OPEN) + "(.*?)" + re.escape(fmt.CDATA_CLOSE), re.S)


class MiniCPM5Stream(InvokeStream):
    """The invoke machine (under conventions="servers" a call to an undeclared tool is text)."""

    servers_drops_undeclared = True  # (both servers show a call to an undeclared tool as text)
    servers_types_by_type = True  # (both servers type a value by its schema's `type` only)


class MiniCPM5ToolParser(InvokeToolParser):
    """MiniCPM 5 ``<function name=…>`` elements (builtin, incremental)."""

    name = "minicpm5"
    stream_class = MiniCPM5Stream
    dialect = Dialect(
        section_begins=(),
        section_end="",
        invoke_open=fmt.FUNCTION_OPEN,
        invoke_close=fmt.FUNCTION_CLOSE,
        param_open=fmt.PARAM_OPEN,
        param_close=fmt.PARAM_CLOSE,
        cdata_open=fmt.CDATA_OPEN,
        cdata_close=fmt.CDATA_CLOSE,
    )

    def __init__(self, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        by_type = self.conventions == SERVERS and self.stream_class.servers_types_by_type
        self.param_types = schema_types(self.tools, infer=not by_type)

    def string_valued(self, function: str, param: str, attrs: dict[str, str]) -> bool:
        """Declared a string by the tool's schema."""
        return "string" in self.param_types.get(function, {}).get(param, ())

    def convert(self, function: str, param: str, attrs: dict[str, str], text: str) -> Any:
        stripped = text.strip()
        if fmt.CDATA_OPEN in stripped:  # (each section is its raw text; what is around it stays)
            return _CDATA.sub(lambda m: m.group(1), stripped)
        types = self.param_types.get(function, {}).get(param)
        if types:  # (declared with a type: as every schema-typed format reads it, Python literals too)
            return convert_value(text, types)
        value = loads_or_none(stripped)
        return text if is_invalid(value) else value
