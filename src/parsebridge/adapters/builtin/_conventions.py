"""`conventions=`: what a builtin parser shows as content when the output is not clean.

Two conventions, one policy layer in the shared engine (`_scan.BuiltinToolStream`), the
same for every format:

* ``"servers"`` (the default) — read as vLLM and SGLang read it where both agree:
  content is the text before the tool calls (`ToolFormat.servers_content`). Text after
  or between calls, and markup that opens no call where both servers leave it out (a
  doubled start marker, a header that opens no block: `ToolFormat.servers_markup`), are
  left out of the content.
* ``"lossless"`` — nothing is left out: every character that is not call structure is
  content (the builtin policy before conventions existed).

Under both, nothing is lost: what ``"servers"`` leaves out of the content is on the
result's `dropped` (never in a stream delta), and a stream equals its one-shot parse at
every chunking. The calls themselves are read the same way under both.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from ...protocol.errors import InvalidSpecError

SERVERS: Final = "servers"
LOSSLESS: Final = "lossless"
DEFAULT: Final = SERVERS

#: Convention → what it does, one line (the CLI's help and the README's table read these).
CONVENTIONS: Final[dict[str, str]] = {
    SERVERS: "content is the text before the calls, as vLLM and SGLang show it; "
    "text after or between calls and unnamed call markup go to `dropped`",
    LOSSLESS: "nothing is left out: every character that is not call structure is content",
}


@cache
def servers_content(parser_name: str) -> str:
    """How both servers show text the calls do not account for in the format of builtin
    parser `parser_name` (its `ToolFormat.servers_content`; "call" when it has no format)."""
    return _format_fact(parser_name, "servers_content", "call")


@cache
def servers_markup(parser_name: str) -> str:
    """Which markup that opens no call both servers leave out of the content in the format of
    builtin parser `parser_name` (its `ToolFormat.servers_markup`; "" when it has no format)."""
    return _format_fact(parser_name, "servers_markup", "")


def _format_fact(parser_name: str, field: str, default: str) -> str:
    from ...formats import tool_format

    try:
        return str(getattr(tool_format(parser_name), field))
    except Exception:
        return default


def check_conventions(value: object) -> str:
    """`value` when it names a convention; else a typed error naming the choices."""
    if value is None:
        return DEFAULT
    if isinstance(value, str) and value in CONVENTIONS:
        return value
    raise InvalidSpecError(f"unknown conventions={value!r}; expected one of: {', '.join(CONVENTIONS)}")
