"""StepFun Step-3 tool calls: steptml invoke elements in a ``<｜tool_calls_begin｜>`` section.

::

    <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">
    <steptml:parameter name="city">Paris</steptml:parameter>
    </steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>

Read by the shared invoke machine (`invoke`): the per-call wrapper
``<｜tool_call_begin｜>TYPE<｜tool_sep｜>`` … ``<｜tool_call_end｜>`` is structure
(the TYPE, always "function", is not checked: SGLang skips a call whose type
is not "function", vLLM does not look).

Value rule: a parameter declared in `tools` with a type that includes "string" →
the text, every character of it (the template writes a value inline; under
conventions="servers" stripped, as both frameworks strip it); declared with another
type → ``json.loads`` of the text, or the boolean or null a Python literal
(``True``/``False``/``None``) names where the type admits it (SGLang's
``literal_eval``; `schema_values.convert_value`), else the text itself;
undeclared (or no tools) → under conventions="servers" the text, as both servers
read a parameter the request's `tools` do not declare (measured on vLLM 0.33 and
SGLang 0.5.23: ``42`` stays "42"); under "lossless" JSON when the text is a JSON
value, else the text.

A value's own close tag with text after it, in a value declared a string, is
its text where another close follows (`invoke`; under "servers" the first close
ends it, as both servers read it).

Malformed output: see `invoke` (unnamed invoke → content; a section without a
named invoke → content; truncated → no call, its text is text: `whole_calls`).
Under conventions="servers" a section is read only once it is closed, and only the first
one (`whole_calls`): both servers' streams announce a call as it goes, but their one-shot
readings show an unclosed section (cut off anywhere, even after a complete call) as text,
markers included, and a later section as text; builtin's stream holds the section's calls
until its end marker, so it never shows what its final reading takes back.

`format_tool_result`: the result text, unwrapped — the content of the tool
message; no Step-3 wrapper for tool output could be verified.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...formats import step3 as fmt
from ...protocol.parsers import ToolSpec
from .engines.conventions import SERVERS
from .engines.invoke import InvokeStream, InvokeToolParser
from .engines.invoke_dialect import Dialect
from .engines.scan import is_invalid, loads_or_none
from .engines.schema_values import convert_value
from .qwen3_coder import schema_types


class Step3Stream(InvokeStream):
    """The invoke machine; under conventions="servers" the first section is read once closed (both
    servers' one-shot readings: an unclosed section, or a later one, is text)."""

    servers_whole_sections = True
    servers_untyped_strings = True
    servers_strips_values = True
    servers_types_by_type = True


class Step3ToolParser(InvokeToolParser):
    """Step-3 steptml invokes (builtin, incremental)."""

    name = "step3"
    stream_class = Step3Stream
    dialect = Dialect(
        section_begins=(fmt.CALLS_BEGIN,),
        section_end=fmt.CALLS_END,
        invoke_open=fmt.INVOKE_OPEN,
        invoke_close=fmt.INVOKE_END,
        param_open=fmt.PARAM_OPEN,
        param_close=fmt.PARAM_END,
        head_begin=fmt.CALL_BEGIN,
        head_end=fmt.SEP,
        call_end=fmt.CALL_END,
    )
    servers_bare_calls = False  # (both servers show a call outside a section as text)

    def __init__(self, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        by_type = self.conventions == SERVERS and self.stream_class.servers_types_by_type
        self.param_types = schema_types(self.tools, infer=not by_type)
        self._untyped_text = self.conventions == SERVERS and self.stream_class.servers_untyped_strings
        self._strips = self.conventions == SERVERS and self.stream_class.servers_strips_values

    def string_valued(self, function: str, param: str, attrs: dict[str, str]) -> bool:
        """Declared a string by the tool's schema."""
        return "string" in self.param_types.get(function, {}).get(param, ())

    def convert(self, function: str, param: str, attrs: dict[str, str], text: str) -> Any:
        if self._strips:
            text = text.strip()  # ("lossless" keeps every character of a string)
        types = self.param_types.get(function, {}).get(param)
        if types:
            return convert_value(text, types)
        if self._untyped_text:
            return text
        value = loads_or_none(text.strip())
        return text if is_invalid(value) else value
