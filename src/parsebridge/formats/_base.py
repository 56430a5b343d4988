"""The shape of what the project knows about one model output format.

A *tool format* knows its marker texts, how to render calls as the model
writes them (the inverse of parsing: fixtures, the round-trip property
suite, the adversarial corpus and the benchmarks all build model output with
it) and how a tool result goes back to the model (`format_tool_result`). A
*reasoning format* knows its start/end markers and how to render reasoning
and content. Builtin parsers import their markers from here, so a format is
written down once.

Depends on the standard library only: `protocol` and everything above may
import it, and it imports nothing of ours.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: One call to render: (function name, arguments object).
Call = tuple[str, dict[str, Any]]


def dump_json(obj: Any, ascii_only: bool = False) -> str:
    """JSON as models write it: ``", "`` / ``": "`` separators, unicode kept unless asked."""
    return json.dumps(obj, ensure_ascii=ascii_only)


def xml_value(value: Any) -> str:
    """A parameter value in the XML-ish formats: strings verbatim, anything else as JSON."""
    return value if isinstance(value, str) else dump_json(value)


def result_text(result: Any) -> str:
    """A tool result as text: a string verbatim, anything else as JSON (unicode kept)."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


class ContentAt(enum.Flag):
    """Places around a call region where plain text stays content."""

    NOWHERE = 0
    BEFORE = enum.auto()  # before the first call
    AFTER = enum.auto()  # after the last call
    BETWEEN = enum.auto()  # between two calls


BEFORE, AFTER, BETWEEN = ContentAt.BEFORE, ContentAt.AFTER, ContentAt.BETWEEN


@dataclass(frozen=True)
class ToolFormat:
    """A tool-call format: markers, renderer and the tool-result message."""

    family: str
    #: One line for the README's builtin table.
    summary: str
    #: Every marker text of the format (what must never leak into content).
    markers: tuple[str, ...]
    #: calls → the model's text for them (one call region holding every call).
    render: Callable[..., str]
    #: (tool_call_id, result) → the text the chat template gives the model back.
    format_tool_result: Callable[[str, Any], str] = lambda _id, result: result_text(result)
    #: Other families that write exactly this format (e.g. qwen3_xml for qwen3_coder). Filled in
    #: by `tool_format()` from `families.toml` (their `format` key); format modules leave it empty.
    aliases: tuple[str, ...] = ()
    notes: str = ""
    #: The reasoning family whose block precedes the calls in this format (gpt-oss harmony).
    reasoning_family: str | None = None
    #: The same calls with their arguments given as text (adversarial corpora, benchmarks).
    grammar: TextGrammar | None = None
    #: Where plain text stays content around a call region (the round-trip suite draws text
    #: only there): e.g. ``BEFORE | AFTER``.
    content: ContentAt = ContentAt.NOWHERE
    #: Several calls in one output are part of the format.
    multi: bool = True
    #: Argument values are text typed by the tool's JSON schema (XML-style formats): a round
    #: trip needs typed tools, and string values without markup or surrounding whitespace.
    typed_values: bool = False
    #: How vLLM and SGLang show text the calls do not account for, where both agree (what
    #: builtin's ``conventions="servers"`` follows): "marker" — content is the text before the
    #: first start marker (the rest is left out, whether a call follows or not); "call" — the
    #: same once a call is read, but a start marker no call follows stays content; "keep" —
    #: text around and between calls stays content (as builtin's "lossless" keeps it). "call"
    #: unless measured (the consensus check): the least a server leaves out.
    servers_content: str = "call"
    #: Markup that opens no call and that both servers leave out of the content anyway (what
    #: builtin's ``conventions="servers"`` puts on `dropped` instead): "markers" — every marker
    #: of the format, wherever it stands (special tokens both servers read as structure; the
    #: text around them stays); "doubled" — a start marker directly followed by another one that
    #: opens a call (both servers read that call from the first); "" — none: unused markup
    #: stays where `servers_content` puts it. "" unless measured (the consensus check).
    servers_markup: str = ""


@dataclass(frozen=True)
class ReasoningFormat:
    """A reasoning format: where reasoning starts and ends, and how the model writes it."""

    family: str
    summary: str
    start: str
    end: str
    #: True when the chat template opens reasoning in the prompt (output starts inside it).
    starts_in_prompt: bool = False
    #: The parser must be told the prompt opened reasoning (it cannot tell from the output).
    #: False for formats whose reading keeps the reasoning inside the content
    #: (append-think): generic reasoning/content corpora do not apply to them.
    splits_reasoning: bool = True
    needs_started: bool = False
    #: Other marker texts that must never leak (e.g. harmony's channel headers).
    extra_markers: tuple[str, ...] = ()
    #: Other families that write this format; filled in by `reasoning_format()` from `families.toml`.
    aliases: tuple[str, ...] = ()
    notes: str = ""
    render: Callable[..., str] | None = field(default=None)
    #: Other spellings that also open / close reasoning (granite's "Here's", effort variants).
    alt_starts: tuple[str, ...] = ()
    alt_ends: tuple[str, ...] = ()
    #: Markers that end reasoning without an end marker and stay in the content
    #: (a tool-call section opened straight from reasoning).
    closers: tuple[str, ...] = ()
    #: (closer, pattern): that closer ends reasoning only where the text after it matches the pattern
    #: (a call's start, within `CLOSER_WINDOW` characters) or only whitespace follows it; else it is
    #: reasoning's text (a model reasoning about its format writes the tool marker as text).
    closer_follows: tuple[tuple[str, str], ...] = ()
    #: Markers wrapping the answer that are dropped from the content (``<answer>``, ``<|START_TEXT|>``).
    content_wrappers: tuple[str, ...] = ()
    #: A reply that did not think may open with a bare end marker (left over from the template): drop it.
    drop_stray_end: bool = False
    #: Once an end marker closed reasoning, later (stray) end markers are dropped from the content
    #: (what vLLM's parser for the family does; SGLang keeps them).
    drop_later_ends: bool = False
    #: Markers that open a tool call in the formats written with this reasoning but do not end
    #: reasoning (unlike `closers`): with `drop_later_ends`, later end markers are dropped only before
    #: the first of these or of `closers` (after it they are a call's text: ``"Close with </think>."``).
    call_starts: tuple[str, ...] = ()
    #: The calls after `closers`/`call_starts` are JSON: a `content_wrappers` marker inside one of
    #: their strings is the call's text (``"Wrap it in <answer> tags"``), not a wrapper.
    json_calls: bool = False
    #: ... or the calls' values lie between these (open, close) markers (Kimi K3's XTML arguments):
    #: a wrapper marker inside one is the value's text.
    value_spans: tuple[tuple[str, str], ...] = ()
    #: Both servers keep a start marker repeated right after the opener as reasoning text (Kimi K3):
    #: so does builtin under conventions="servers" ("lossless" consumes it, as for every family).
    servers_keep_repeated_start: bool = False
    #: Both servers read only `start` and `end` (not `alt_starts`/`alt_ends`): so does builtin under
    #: conventions="servers" ("lossless" reads every spelling).
    servers_canonical_markers: bool = False

    @property
    def markers(self) -> tuple[str, ...]:
        every = (
            self.start,
            self.end,
            *self.alt_starts,
            *self.alt_ends,
            *self.content_wrappers,
            *self.extra_markers,
        )
        return tuple(m for m in every if m)

    @property
    def starts(self) -> tuple[str, ...]:
        """Every text that opens reasoning (the canonical start marker first)."""
        return (self.start, *self.alt_starts)

    @property
    def ends(self) -> tuple[str, ...]:
        """Every text that closes reasoning (the canonical end marker first)."""
        return (self.end, *self.alt_ends)

    def render_text(self, reasoning: str | None, content: str, *, started: bool | None = None) -> str:
        """Model output holding `reasoning` then `content` (start marker omitted when the prompt opened it)."""
        if self.render is not None:
            return self.render(reasoning, content, started=started)
        if reasoning is None:
            return content
        opened = self.starts_in_prompt if started is None else started
        return ("" if opened else self.start) + reasoning + self.end + content


#: (function name, arguments as text, index of the call) → one call in the model's text.
CallText = Callable[[str, str, int], str]


#: How much text after a closer `ReasoningFormat.closer_follows` looks at (a stream holds at most this).
CLOSER_WINDOW = 80


@dataclass(frozen=True)
class TextGrammar:
    """A format's calls with their arguments given as *text*, not as an object.

    Adversarial corpora and benchmarks need what a dict renderer cannot write:
    arguments that are malformed, megabytes long or nested 10k deep (deeper
    than `json` reads). `call` renders one call (XML-style formats expand a
    JSON object into parameters and put anything else verbatim as the body),
    `wrap` the region holding the rendered calls. `markers` start with the
    region's start and end marker (cases repeat and truncate them).
    """

    markers: tuple[str, ...]
    call: CallText
    wrap: Callable[[list[str]], str]
    #: Arguments travel as JSON text (not as per-parameter XML).
    json_args: bool = True

    def calls(self, items: Sequence[tuple[str, str]]) -> str:
        """One region holding these (name, arguments text) calls."""
        return self.wrap([self.call(n, a, i) for i, (n, a) in enumerate(items)])


def object_call(key: str = "arguments") -> CallText:
    """``{"name": NAME, "<key>": ARGS}`` with the arguments text spliced in verbatim."""
    return lambda n, a, i: '{"name": ' + dump_json(n) + f', "{key}": ' + a + "}"


def joined(sep: str, before: str = "", after: str = "") -> Callable[[list[str]], str]:
    """A region: `before`, the calls joined by `sep`, `after`."""
    return lambda calls: before + sep.join(calls) + after


def _xml_params(args: str, param: Callable[[str, str], str]) -> str | None:
    try:
        value = json.loads(args)
    except RecursionError:  # only a deep-nesting case is this deep: {"a": <the rest>}
        key, _, rest = args.partition(": ")
        return param(json.loads(key[1:]), rest[:-1])
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    return "".join(param(k, v if isinstance(v, str) else dump_json(v)) for k, v in value.items())


def xml_call(head: Callable[[str], str], tail: str, param: Callable[[str, str], str]) -> CallText:
    """An XML-style call: a JSON object's members become parameters; other text is the body verbatim."""

    def call(name: str, args: str, index: int) -> str:
        params = _xml_params(args, param)
        return head(name) + (params if params is not None else args) + tail

    return call


@dataclass(frozen=True)
class XmlCalls:
    """An XML-style call syntax written once: `head` (name), one `param` per argument, `tail`.

    Calls are joined by `sep` between `before` and `after`. The renderer (argument values
    as `xml_value` writes them) and the text grammar both follow from it, so the two cannot
    drift apart.
    """

    head: Callable[[str], str]
    tail: str
    param: Callable[[str, str], str]
    sep: str = "\n"
    before: str = ""
    after: str = ""

    def render_call(self, name: str, args: dict[str, Any]) -> str:
        """One call, its arguments as parameters."""
        return self.head(name) + "".join(self.param(k, xml_value(v)) for k, v in args.items()) + self.tail

    def render(self, calls: Sequence[Call]) -> str:
        """The model's text for these calls (a `ToolFormat.render`)."""
        return self.before + self.sep.join(self.render_call(n, a) for n, a in calls) + self.after

    def grammar(self, markers: tuple[str, ...]) -> TextGrammar:
        """The same calls with their arguments given as text (`markers`: the grammar's, region first)."""
        call = xml_call(self.head, self.tail, self.param)
        return TextGrammar(markers, call, joined(self.sep, self.before, self.after), json_args=False)

    def tool_format(
        self, family: str, summary: str, markers: tuple[str, ...], grammar: tuple[str, ...] = (), **facts: Any
    ) -> ToolFormat:
        """The format writing these calls, its values typed by the tool schema (as XML-style values
        are); a text grammar where `grammar` names its markers; `facts`: its other fields."""
        text = self.grammar(grammar) if grammar else None
        return ToolFormat(
            family=family,
            summary=summary,
            markers=markers,
            render=self.render,
            grammar=text,
            typed_values=True,
            **facts,
        )


def json_list_format(family: str, summary: str, start: str, end: str = "", **facts: Any) -> ToolFormat:
    """A format whose calls are one JSON list of ``{"name", "arguments"}`` objects after `start`
    (and before `end`, where the format closes it): Jamba, Llama-Nemotron, Granite 3.x, Phi-4-mini.

    `facts` are the format's other `ToolFormat` fields (where content stays, its tool result).
    """
    tags = (start, end) if end else (start,)

    def render(calls: Sequence[Call], *, key: str = "arguments") -> str:
        return start + dump_json([{"name": n, key: a} for n, a in calls]) + end

    grammar = TextGrammar(tags, object_call(), joined(", ", start + "[", "]" + end))
    return ToolFormat(family=family, summary=summary, markers=tags, render=render, grammar=grammar, **facts)


def join_calls(render_one: Callable[[str, dict[str, Any]], str], sep: str = "\n") -> Callable[..., str]:
    """A renderer for formats that wrap each call on its own: calls joined by `sep`."""

    def render(calls: Sequence[Call], **options: Any) -> str:
        return sep.join(render_one(name, args, **options) for name, args in calls)

    return render
