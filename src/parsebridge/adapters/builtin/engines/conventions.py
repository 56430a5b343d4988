"""`conventions=`: what a builtin parser shows as content when the output is not clean.

Two conventions, one policy layer in the shared engine (`scan.BuiltinToolStream`), the
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
every chunking. Under ``"servers"`` builtin may differ from a reading both servers agree on
only where the servers contradict themselves (their one-shot reading differs from what their
own stream already showed a client); so the calls themselves are read as both servers read
them where a format says so (`SERVERS_CALLS`: no call outside a section, none to an undeclared
tool, a cut-off call's complete parameters, no call in a section left unclosed), and leniencies
stay with ``"lossless"``.

Reasoning parsers take the same option; it decides only where reasoning starts when
neither the caller nor the prompt says (`reasoning_start`): under ``"servers"``, inside
reasoning for the families whose servers both start there (``servers_started`` in
`families.toml`), under ``"lossless"`` where the family's chat template opens it.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from ....formats import UnknownFormatError, reasoning_format, tool_format
from ....protocol.errors import InvalidSpecError
from ....protocol.family_rows import rows_of

SERVERS: Final = "servers"
LOSSLESS: Final = "lossless"
DEFAULT: Final = SERVERS

#: Convention → what it does, one line (the CLI's help and the README's table read these).
CONVENTIONS: Final[dict[str, str]] = {
    SERVERS: "content is the text before the calls, as vLLM and SGLang show it; "
    "text after or between calls and unnamed call markup go to `dropped`",
    LOSSLESS: "nothing is left out: every character that is not call structure is content",
}

#: The same for reasoning parsers, where a convention decides only the start state.
REASONING_CONVENTIONS: Final[dict[str, str]] = {
    SERVERS: "output that opens without a start marker is reasoning where both servers read it so "
    "(`servers_started` families)",
    LOSSLESS: "output starts inside reasoning only where the family's chat template opens it",
}

#: What "servers" shows, per value of a tool format's `servers_content`.
SERVERS_CONTENT: Final[dict[str, str]] = {
    "marker": "content ends at the first start marker, whether a call follows or not",
    "call": "content ends where the first call begins; a start marker no call follows stays content",
    "keep": "text around and between calls stays content (both servers keep it): as `lossless`",
}
#: ... and what else it leaves out, per value of a tool format's `servers_markup` (markup that opens no call).
SERVERS_MARKUP: Final[dict[str, str]] = {
    "markers": "also left out: every marker of the format, wherever it stands (the text beside it stays)",
    "doubled": "also left out: a start marker directly followed by another that opens a call",
}
#: How "servers" reads the calls themselves where both servers read them otherwise than `lossless`,
#: per flag of a builtin parser (a `BuiltinToolParser` attribute, or its stream class's).
SERVERS_CALLS: Final[dict[str, str]] = {
    "servers_bare_calls": "calls are read only inside the format's section: a call marker outside one is text",
    "servers_drops_undeclared": "a call to a tool the request's `tools` do not declare is no call (its text "
    "is left out like other markup)",
    "servers_untyped_strings": "a value with no declared schema stays a string",
    "servers_untyped_null": "where a value with no declared schema stays a string, the text `null` (in any "
    "case) is null even so",
    "servers_keeps_value_newlines": "a parameter value keeps the newlines the format writes around it",
    "servers_trims_one_newline": "a value the format writes inline loses one leading and one trailing newline "
    "(vLLM's reading; `lossless` keeps every character between its tags)",
    "servers_strips_values": "a value loses the whitespace around it, as both servers strip it (`lossless` keeps "
    "every character between its tags)",
    "servers_whole_sections": "a section's calls are shown once the section is closed; a section cut off by "
    "the end of output is text, markers included, and so is any section after the first",
    "servers_tag_ends_value": "a value ends at the first marker that may end it (the call's or the block's "
    "close, the next parameter's head), even where its own close follows (under `lossless` such a marker "
    "is the value's text)",
    "servers_key_in_value_is_text": "where a value ends at the first marker that may end it, the next "
    "parameter's head is even so the value's text where its close tag follows (both servers read a value up to "
    "its close tag): only the call's close ends it early",
    "servers_first_close_ends_value": "a value ends at its first close tag, even where text follows that tag and "
    "another close tag of the value comes later (under `lossless`, in a value declared a string, such a close "
    "tag is the value's text)",
    "servers_none_is_text": 'a Python `None` stays the text "None" where the schema allows null (`True` and '
    "`False` are booleans under both; `lossless` reads `None` as null)",
    "servers_containers_are_text": "a Python list or dict literal (`['a', 'b']`) stays text where the schema "
    "says array or object (`lossless` reads the array or object)",
    "servers_types_by_type": "a value is typed by its schema's `type` only: an `enum`'s or `const`'s values "
    '(`{"enum": [1, 2]}`) give it none (`lossless` types it by them)',
    "servers_doubled_start_no_call": "a block opened right after another start marker is no call (its text "
    "is left out like other markup)",
}
#: What every builtin tool parser does with a call that is not whole, under both conventions (`whole_calls`).
WHOLE_CALLS: Final = (
    "a call that is not whole (cut off by the end of output, or arguments that are not a complete JSON object) "
    "is no call, and a stream never shows it: its text is content before the first call, left out after it "
    "(`lossless`: content), though both servers return some such calls"
)
#: What "servers" does with the start state, for reasoning parsers with and without `servers_started`.
SERVERS_START: Final[dict[bool, str]] = {
    True: "output that opens without a start marker is reasoning up to the end marker, as both servers "
    "read it (unless `reasoning_started=False` or a prompt that closed the block says otherwise)",
    False: "reasoning starts where the family's chat template opens it: as `lossless`",
}


#: ... and for reasoning formats whose servers read only their own markers (`servers_canonical_markers`).
SERVERS_CANONICAL: Final = (
    "only the format's own markers open and close reasoning; its other spellings (Magistral's plain-text "
    "think tags) are text, as both servers read them (`lossless` reads every spelling)"
)


def servers_rules() -> list[tuple[str, str, list[str]]]:
    """(kind, what "servers" does, the builtin parsers it does it for): the table the README and
    `parsebridge list` show, read from the formats (`servers_content`, `servers_markup`) and
    `families.toml` (`servers_started`)."""
    from .. import TOOL_PARSERS, reasoning_parsers  # a circle: the builtin package imports this module

    rows: list[tuple[str, str, list[str]]] = [("tool", WHOLE_CALLS, list(TOOL_PARSERS))]
    for value, rule in SERVERS_CONTENT.items():
        rows.append(("tool", rule, [n for n in TOOL_PARSERS if servers_content(n) == value]))
    for value, rule in SERVERS_MARKUP.items():
        rows.append(("tool", rule, [n for n in TOOL_PARSERS if servers_markup(n) == value]))
    for attr, rule in SERVERS_CALLS.items():
        rows.append(("tool", rule, [n for n in TOOL_PARSERS if _reads_as(n, attr)]))
    started = servers_started()
    for value, rule in SERVERS_START.items():
        rows.append(("reasoning", rule, [n for n in reasoning_parsers() if (n in started) == value]))
    canonical = [
        n for n in reasoning_parsers() if _format_fact(n, "servers_canonical_markers", False, "reasoning")
    ]
    rows.append(("reasoning", SERVERS_CANONICAL, canonical))
    return rows


@cache
def _reads_as(parser_name: str, attr: str) -> bool:
    """Whether builtin tool parser `parser_name` reads calls by `attr` (`SERVERS_CALLS`) under "servers"."""
    from .. import TOOL_PARSERS, _load  # a circle: the builtin package imports this module

    cls = _load(TOOL_PARSERS[parser_name])
    if attr == "servers_bare_calls":
        return not getattr(cls, "servers_bare_calls", True)
    return bool(getattr(getattr(cls, "stream_class", None), attr, False))


@cache
def servers_started() -> frozenset[str]:
    """Builtin reasoning parsers that start inside reasoning under ``"servers"`` (`families.toml`'s
    ``servers_started``; `reasoning_start` applies it)."""

    return frozenset(
        r.parsers["builtin"] for r in rows_of("reasoning") if r.servers_started and "builtin" in r.parsers
    )


@cache
def servers_content(parser_name: str) -> str:
    """How both servers show text the calls do not account for in the format of builtin
    parser `parser_name` (its `ToolFormat.servers_content`; "call" when it has no format)."""
    return str(_format_fact(parser_name, "servers_content", "call"))


@cache
def servers_markup(parser_name: str) -> str:
    """Which markup that opens no call both servers leave out of the content in the format of
    builtin parser `parser_name` (its `ToolFormat.servers_markup`; "" when it has no format)."""
    return str(_format_fact(parser_name, "servers_markup", ""))


def _format_fact(parser_name: str, field: str, default: Any, kind: str = "tool") -> Any:
    """`field` of the parser's (`kind`) format; `default` only when it has no format (a wrong field raises)."""

    try:
        fmt: Any = tool_format(parser_name) if kind == "tool" else reasoning_format(parser_name)
    except UnknownFormatError:
        return default
    value = getattr(fmt, field)
    return str(value) if isinstance(default, str) else value


def check_conventions(value: object) -> str:
    """`value` when it names a convention; else a typed error naming the choices."""
    if value is None:
        return DEFAULT
    if isinstance(value, str) and value in CONVENTIONS:
        return value
    raise InvalidSpecError(f"unknown conventions={value!r}; expected one of: {', '.join(CONVENTIONS)}")
