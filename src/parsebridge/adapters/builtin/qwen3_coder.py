"""Qwen3-Coder XML-ish tool calls.

Format::

    <tool_call>
    <function=NAME>
    <parameter=P>
    VALUE
    </parameter>
    </function>
    </tool_call>

Value rule: a value is the text between ``<parameter=P>`` and ``</parameter>``
(a missing ``</parameter>`` is tolerated: the next ``<parameter=`` or
``</function>`` ends it, but only where no ``</parameter>`` follows before the
next ``<tool_call>``: a model writing about its own format puts those tags in a
value as text; ``<tool_call>``/``</tool_call>`` inside a value are plain text)
with ONE leading and ONE trailing newline removed (`tagged_values`). Then:

* P declared in `tools` with a JSON-schema type that includes "string" → the text as is;
* P declared with other types (integer, number, boolean, object, array, null) → ``json.loads``
  of the stripped text when it is valid JSON, else the text as a string;
* P undeclared (or declared without a type) → obvious JSON literals (numbers, true/false/null,
  objects, arrays) are decoded, anything else stays a string.

Python's ``True``/``False``/``None`` are the boolean or null they name where the schema
allows that type; ``None``, what the chat template writes for a null argument (``args_value |
string``), is null also where the schema allows a string beside null (``["string", "null"]``). NaN/Infinity are never decoded (they are not JSON). Repeated parameters produce
repeated keys in the arguments JSON; the last one wins when parsed.

Streaming builds the arguments JSON incrementally and prefix-stably: ``{`` and
``"P": `` as soon as a parameter opens; string-typed values stream as JSON
string fragments (a trailing newline is held until we know it is not the
last one); other values are emitted when their parameter closes. The call is
announced when ``<function=NAME>`` is complete.

The machine is `tagged`'s (seed_oss's), with Qwen3-Coder's four rules:
one call per block, names stripped of whitespace only, a parameter head that
is not one dropped, a key cut off by the end of output not kept.

A call may open without its block: ``<function=NAME>…</function>`` straight from
content is read as a call (a ``</tool_call>`` right after it is its close).

Malformed output (builtin policy, see `scan`): a block without a readable
``<function=NAME>`` stays in the content verbatim; stray text between
parameters (not a tag), or between ``</function>`` and ``</tool_call>``
(unless only whitespace), is not part of the call: it is shown as content,
in place, verbatim (nothing is lost); ``</tool_call>`` without ``</function>``
closes the arguments object normally, and so does a new ``<tool_call>``. A call the end of output cuts off
before its ``</function>`` is no call, its text is text (`whole_calls`; both
servers return it with the parameters so far: a reviewed divergence); one cut off
after it is a call. Under ``conventions="servers"`` (as vLLM's and SGLang's
qwen3_coder and step3p5 parsers read it) a value with no declared schema stays
a string, a value ends at the first ``</function>`` or ``<parameter=`` whatever
follows, and ``None`` stays text.

`format_tool_result`: ``<tool_response>\\n{result}\\n</tool_response>``, as the
Qwen3-Coder chat template renders a tool message (no id in this format).
"""

from __future__ import annotations

from ...formats.qwen3_coder import END, FN, FN_END, PARAM, PARAM_END, START
from .engines.call_steps import stripped_name
from .engines.schema_values import convert_value, schema_types
from .engines.tagged import TaggedCallStream
from .engines.tagged_parser import TaggedCallParser

__all__ = ["MimoToolParser", "Qwen3CoderToolParser", "convert_value", "schema_types"]


class Qwen3CoderToolStream(TaggedCallStream):
    """Incremental Qwen3-Coder machine; builds the arguments JSON as parameters arrive."""

    start, end = START, END
    call_open, call_close = FN, FN_END
    param_open, param_close = PARAM, PARAM_END
    one_call_per_block = True
    name_of = staticmethod(stripped_name)
    shows_bad_param_head = False
    keeps_cut_key = False
    servers_untyped_strings = True
    servers_tag_ends_value = True
    servers_none_is_text = True
    template_writes_none = True
    bare_calls = True


class Qwen3CoderToolParser(TaggedCallParser):
    """Qwen3-Coder ``<function=…><parameter=…>`` calls (builtin, incremental)."""

    name = "qwen3_coder"
    stream_class = Qwen3CoderToolStream


class MimoToolStream(Qwen3CoderToolStream):
    """MiMo's reading of the Qwen3-Coder layout: under "servers", values keep their newlines."""

    servers_keeps_value_newlines = True


class MimoToolParser(Qwen3CoderToolParser):
    """MiMo: Qwen3-Coder's layout, read as vLLM's and SGLang's mimo parsers both read it under
    ``conventions="servers"`` (a value keeps the newlines the format writes around it); under
    ``"lossless"`` exactly as `Qwen3CoderToolParser`."""

    name = "mimo"
    stream_class = MimoToolStream
