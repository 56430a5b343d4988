"""`parsebridge parse`: one raw model output through a reasoning and/or a tool parser.

One-shot, or streamed in chunks (`--stream`): the input is read in blocks, and with builtin
parsers the stream keeps no history and the result is spooled (`stream_output`), so memory
stays flat whatever the output's size. The result is shown as panels and a table, or as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import logging
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from .. import terminal as io
from ..adapters import get_pipeline
from ..adapters._common import quiet_framework_logs
from ..adapters.registry import resolve
from ..protocol import ParseResult, ToolCall
from ..protocol.spec import ParserSpec
from ..protocol.streams import without_history
from ..protocol.surrogates import escape_lone_surrogates
from ..terminal import UsageError, whole_number
from .stream_output import READ_BLOCK, RawCalls, StreamedJson, StreamedResult


def configure(pp: argparse.ArgumentParser) -> None:
    """`parsebridge parse`: its options (the parser `cli.commands` made for it)."""
    pp.description = (
        "Parse one raw model output (UTF-8 text) one-shot, or streamed in chunks. "
        "The input is read in blocks, so --stream with builtin parsers handles outputs of any size "
        "in bounded memory (vLLM's and SGLang's streams keep the text they were fed)."
    )
    pp.add_argument("input", help="a text file with the raw model output, or - for stdin")
    _add_parser_options(pp)
    pp.add_argument("--stream", action="store_true", help="feed the output in chunks through a stream")
    pp.add_argument(
        "--chunk-size",
        type=positive_int,
        default=None,
        metavar="N",
        action=GivenOnce,
        help="characters per chunk with --stream (default 4; an error without --stream)",
    )
    pp.add_argument(
        "--on-error",
        choices=("raise", "fallback"),
        default=None,
        action=GivenOnce,
        help="a parser that fails: exit 1 naming the error (raise, the default), or its text as content",
    )
    pp.add_argument(
        "--conventions",
        choices=("servers", "lossless"),
        default=None,
        action=GivenOnce,
        help="builtin parsers: content and where reasoning starts as vLLM and SGLang read them "
        "(servers, the default) or every character kept (lossless)",
    )
    pp.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output: one JSON object (result, message; with --stream, deltas first, "
        'and a failure part way ends it with "error": {type, message} in place of result and message)',
    )
    pp.add_argument(
        "--framework-logs",
        action="store_true",
        help="let vLLM, SGLang, Dynamo and smg log (quiet by default; also PARSEBRIDGE_FRAMEWORK_LOGS=1)",
    )
    pp.set_defaults(func=_cmd_parse)


def _add_parser_options(pp: argparse.ArgumentParser) -> None:
    """The options that choose the parsers and what they are told: specs, tools, where reasoning starts."""
    pp.add_argument(
        "--tool-parser",
        metavar="SPEC",
        action=GivenOnce,
        help="e.g. builtin:hermes, vllm:llama3_json, dynamo:hermes, smg:qwen (one; compare takes several)",
    )
    pp.add_argument(
        "--reasoning-parser",
        metavar="SPEC",
        action=GivenOnce,
        help="e.g. builtin:qwen3, sglang:deepseek-r1, dynamo:deepseek_r1, smg:qwen3",
    )
    pp.add_argument(
        "--tools",
        metavar="FILE",
        action=GivenOnce,
        help="JSON list of tool definitions (the OpenAI form, or flat: name, parameters); - for stdin "
        "when the output is a file",
    )
    pp.add_argument(
        "--reasoning-started",
        action=SaidOnce,
        default=None,
        help="the prompt already opened reasoning (--no-reasoning-started: it did not; default: the "
        "parser's own default, said in the output when it assumed reasoning open)",
    )


class GivenOnce(argparse.Action):
    """An option that takes one value: given again with another, a usage error naming both, not
    the last one silently (``--tool-parser a --tool-parser b`` parsed with b alone)."""

    def __call__(self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, *_: Any) -> None:
        before = getattr(ns, self.dest, None)
        if before is not None and before != value:
            parser.error(
                f"{self.option_strings[0]} is given twice ({before!r}, then {value!r}): parse takes one"
            )
        setattr(ns, self.dest, value)


class SaidOnce(argparse.BooleanOptionalAction):
    """``--reasoning-started`` / ``--no-reasoning-started``: both on one line is a usage error (the
    last one won, silently)."""

    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, *rest: Any
    ) -> None:
        before = getattr(ns, self.dest, None)
        super().__call__(parser, ns, value, *rest)
        if before is not None and before != getattr(ns, self.dest):
            parser.error("--reasoning-started and --no-reasoning-started are both given: say one")


#: Characters per chunk of `parse --stream` when --chunk-size is not given.
DEFAULT_CHUNK_SIZE = 4


#: argparse type: an integer ≥ 1 (a chunk size of 0 or less would lose the output).
positive_int = whole_number(1)


# ---------------------------------------------------------------- parse


def _chunks(blocks: Iterator[str], size: int) -> Iterator[str]:
    """Re-cut decoded blocks into pieces of `size` characters (the last may be shorter); a piece
    that spans two blocks is joined from its two parts, never the block from the part before it
    (which would copy every block once more)."""
    rest = ""
    for block in blocks:
        start = 0
        if rest:
            start = size - len(rest)
            if len(block) < start:
                rest += block
                continue
            yield rest + block[:start]
        cut = len(block) - (len(block) - start) % size
        for i in range(start, cut, size):
            yield block[i : i + size]
        rest = block[cut:]
    if rest:
        yield rest


def _cmd_parse(ns: argparse.Namespace) -> int:
    for flag, given in (("--tool-parser", ns.tool_parser), ("--reasoning-parser", ns.reasoning_parser)):
        if given is not None and not given.strip():  # (it read as if the flag were not there)
            raise UsageError(f"{flag} {given!r} names no parser: give a spec such as builtin:hermes")
    if not (ns.tool_parser or ns.reasoning_parser):
        raise UsageError("give --tool-parser SPEC and/or --reasoning-parser SPEC")
    if ns.chunk_size is not None and not ns.stream:
        raise UsageError("--chunk-size is for --stream (one-shot parsing reads the whole output at once)")
    if ns.tools and not ns.tool_parser:
        raise UsageError("--tools declares tools to a tool parser: give --tool-parser SPEC too")
    if ns.reasoning_started is not None and not ns.reasoning_parser:
        flag = "--reasoning-started" if ns.reasoning_started else "--no-reasoning-started"
        raise UsageError(f"{flag} says where a reasoning parser starts: give --reasoning-parser SPEC too")
    if ns.tools == "-" and ns.input == "-":
        raise UsageError("--tools - and the output - both read standard input: give one of them as a file")
    if ns.input != "-":
        io.exists_or_fail(ns.input)
    tools = io.load_tools(ns.tools)
    if ns.framework_logs:
        os.environ["PARSEBRIDGE_FRAMEWORK_LOGS"] = "1"  # the adapters then leave the frameworks' logs alone
    else:
        quiet_framework_logs()
    with _warnings_shown():
        _run_parse(ns, tools)
    return 0


class _WarningLines(logging.Handler):
    """parsebridge's warnings as ``warning:`` lines on stderr: the library's logger has only a
    NullHandler, so ``--on-error fallback`` showed a failed parser's text as content and said
    nothing of the failure."""

    def emit(self, record: logging.LogRecord) -> None:
        io.print_error(io.escape_controls(record.getMessage()), prefix="warning:")


@contextlib.contextmanager
def _warnings_shown() -> Iterator[None]:
    logger = logging.getLogger("parsebridge")
    handler, level = _WarningLines(logging.WARNING), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)  # (a conformance run in this process may have quietened it)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _run_parse(ns: argparse.Namespace, tools: Any) -> None:
    """Read the output (one-shot; `--stream` reads it in blocks as it goes), build the pipeline, parse."""
    text = None if ns.stream else io.read_text(ns.input)
    pipe = get_pipeline(
        ns.reasoning_parser,
        ns.tool_parser,
        tools=tools,
        reasoning_started=ns.reasoning_started,
        on_error=ns.on_error or "raise",
        **_conventions_option(ns),
    )
    if text is not None:
        result = pipe.parse(text)
        del text
        if ns.json:
            out = {"result": result.model_dump(mode="json"), "message": result.to_openai_message()}
            print(escape_lone_surrogates(json.dumps(out, indent=2, ensure_ascii=False)))
        else:
            _show_result(result, None)
            _say_assumed_open(pipe, ns, result)
            _say_undeclared_tools(ns, result, "oneshot")
        return
    _stream_parse(pipe, ns)


def _say_assumed_open(pipe: Any, ns: argparse.Namespace, result: Any) -> None:
    """A note when the reasoning shown started before the output (no start marker in it) and
    nothing on the command line said so: the parser's default assumed it open (builtin:qwen3's,
    as vLLM and SGLang read Qwen3; a template's that opens ``<think>``)."""
    block = getattr(result, "block", None)
    if ns.reasoning_started is not None or result.reasoning is None or block is None:
        return
    if block.start_marker is not None:
        return
    spec = (
        getattr(getattr(pipe, "reasoning", None), "spec", None) or (getattr(pipe, "specs", None) or [""])[0]
    )

    io.console().print(
        Text(
            f"reasoning assumed open at the start (the default of {spec}): the output has no start "
            "marker; --no-reasoning-started if the prompt did not open it",
            style="dim",
        ),
        soft_wrap=True,
    )


def _say_undeclared_tools(ns: argparse.Namespace, result: Any, mode: str) -> None:
    """A note when no call was read by a framework whose server reads calls only for tools the
    request declares (Dynamo, SGLang; smg streamed), and `--tools` declared none: its server's behaviour."""
    if not ns.tool_parser or ns.tools or result.tool_calls:
        return
    backend, name = resolve("tool", ns.tool_parser)
    rule = backend.undeclared_tools_rule(name, mode, any_declared=False)
    if rule is None:
        return
    io.console().print(
        Text(
            f"no tools declared: {rule}, so {ns.tool_parser} reads no call here "
            "(as that server would); --tools FILE declares them",
            style="dim",
        ),
        soft_wrap=True,
    )


def _conventions_option(ns: argparse.Namespace) -> dict[str, str]:
    """``conventions=`` for the pipeline when `--conventions` was given (builtin parsers only)."""
    if ns.conventions is None:
        return {}

    for spec in (ns.reasoning_parser, ns.tool_parser):
        if spec and ParserSpec.parse(spec).backend != "builtin":
            raise UsageError(f"--conventions is an option of the builtin parsers, not of {spec}")
    return {"conventions": ns.conventions}


def _stream_parse(pipe: Any, ns: argparse.Namespace) -> None:
    """Feed the input in chunks; print each delta as it comes (`--json`) and the result at the end.

    With builtin parsers the stream keeps no history and the result is spooled
    (`cli.stream_output`): memory stays flat whatever the output's size. vLLM's and SGLang's
    streams keep the text they were fed (their block is located in it at the end), so
    theirs keep their history too and the block comes from their `finish()`.
    """

    bounded = all(s is None or s.startswith("builtin:") for s in getattr(pipe, "specs", (None, None)))
    with without_history() if bounded else contextlib.nullcontext():
        stream = pipe.stream()
    raw: list[RawCalls] = []

    def observed(tools: Any) -> Any:
        raw.append(RawCalls(tools))
        return raw[-1]

    if hasattr(stream, "observe_tools"):  # each call's raw text, where the tool stream reports it
        stream.observe_tools(observed)
    collected = StreamedResult()
    out = StreamedJson(sys.stdout) if ns.json else None
    try:
        try:
            deltas = _feed_all(stream, ns, collected, out)
            block = getattr(stream, "block", None) if bounded else stream.finish().block
            result = collected.result(block, raw[0].texts if raw else ())
        except (Exception, KeyboardInterrupt) as exc:
            if out is not None:  # stdout stays one JSON object: it ends with the error (or Ctrl-C)
                out.failed(exc)
            raise
        if out is not None:
            out.result(collected, result)
        else:
            _show_result(result, deltas, collected.text_of, (collected.call_count, collected.calls()))
            _say_assumed_open(pipe, ns, result)
            _say_undeclared_tools(ns, result, "stream")
        if bounded and raw and raw[0].accumulator.dropped_parts:
            _say_left_out()
    finally:
        collected.close()


def _say_left_out() -> None:
    """A warning when the stream left text out of the content (conventions=servers: text after
    the calls; gpt-oss's analysis channel). The streamed result does not keep it (its memory would
    grow with the output), so it is neither in the table nor in --json's result: stderr says where
    to see it."""
    io.print_error(
        "the tool parser left text out of the content (the result's 'dropped', which --stream "
        "does not keep: under conventions=servers, text after the calls); parse without --stream "
        "shows it",
        prefix="warning:",
    )


def _feed_all(
    stream: Any, ns: argparse.Namespace, collected: StreamedResult, out: StreamedJson | None
) -> int:
    """Feed the input in chunks, then flush; each delta that says something is collected and
    (`--json`) written as it comes. The number of those deltas."""
    deltas = 0
    chunks = _chunks(io.iter_text(ns.input, READ_BLOCK), ns.chunk_size or DEFAULT_CHUNK_SIZE)
    for piece in itertools.chain(chunks, [None]):
        d = stream.feed(piece) if piece is not None else stream.flush()
        if not d:
            continue
        if out is not None:
            out.delta(d)
        collected.add(d)
        deltas += 1
    return deltas


#: Text up to this many characters is shown in a panel; longer text is written as it is
#: between two rules (Rich lays a panel's text out line by line: seconds per megabyte).
PANEL_MAX = 1 << 16


def _show_text(console: Any, title: str, text: Any, style: str | None) -> None:
    """Reasoning or content (a str or a `cli.stream_output.Spool`), verbatim but for control
    characters, which are shown escaped (`terminal.escape_controls`), titled."""
    if text is None:
        text = Text("(none)", style="dim")
    elif isinstance(text, str) and (shown := io.whitespace_only(text)):
        text = Text(shown, style="dim")
    elif isinstance(text, str) and len(text) <= PANEL_MAX:
        text = io.plain(text)
    elif not isinstance(text, str) and text.size <= PANEL_MAX:
        head = text.head(PANEL_MAX)
        shown = io.whitespace_only(head)
        text = Text(shown, style="dim") if shown else io.plain(head)
    else:
        console.print(Rule(Text(title), align="left", style=style or "none"))
        blocks = (
            (text[i : i + PANEL_MAX] for i in range(0, len(text), PANEL_MAX))
            if isinstance(text, str)
            else text.blocks()
        )
        for block in blocks:  # straight to the file: Rich would lay out every line
            console.file.write(io.escape_controls(block))  # as `io.plain` shows a shorter text
        console.file.write("\n")
        console.print(Rule(style=style or "none"))
        return
    console.print(
        Panel(text, title=title, title_align="left", border_style=style or "none", expand=console.is_terminal)
    )


#: More calls than this are listed one line each (a Rich table lays out every row in memory first).
TABLE_MAX_ROWS = 500


def _show_call_lines(console: Any, count: int, calls: Iterable[ToolCall]) -> None:
    """Tool calls as tab-separated lines (#, id, name, arguments), written as they are but for
    control characters (`_line_field`)."""
    console.print(Rule(Text(f"tool calls ({count}): #, id, name, arguments"), align="left"))
    out = console.file
    for i, call in enumerate(calls):
        args = call.arguments_json if call.valid else f"invalid: {call.invalid_arguments}"
        out.write("\t".join((str(i), *(_line_field(f) for f in (call.id, call.name, args)))) + "\n")
    console.print(Rule())


def _line_field(text: str) -> str:
    """One field of a call line: control characters escaped as the table shows them, and tab and
    newline too, which would otherwise shift the columns or start a line of their own."""
    return io.escape_controls(text).replace("\t", "\\t").replace("\n", "\\n")


def _show_result(
    result: ParseResult,
    deltas: int | None,
    text_of: Any = None,
    calls: tuple[int, Iterable[ToolCall]] | None = None,
) -> None:
    """The result as panels and a table; `text_of` maps placeholders to spooled text, `calls`
    (count, calls) stands in for `result.tool_calls` (made one at a time)."""

    console = io.console()
    text_of = text_of or (lambda value: value)
    if result.reasoning is not None:
        _show_text(console, "reasoning", text_of(result.reasoning), "magenta")
    _show_text(console, "content", text_of(result.content), None)
    if getattr(result, "dropped", None):
        _show_text(console, "left out of the content (conventions=servers)", text_of(result.dropped), "dim")
    count, tool_calls = calls or (len(result.tool_calls), result.tool_calls)
    if count > TABLE_MAX_ROWS:
        _show_call_lines(console, count, tool_calls)
    elif count:
        t = Table(title="tool calls", title_justify="left")
        for col in ("#", "id", "name", "arguments"):
            t.add_column(col, overflow="fold")
        for i, call in enumerate(tool_calls):
            if call.valid:
                args = io.plain(call.arguments_json)
            else:
                args = Text("invalid: ", style="red")
                args.append(io.escape_controls(str(call.invalid_arguments)))
            t.add_row(str(i), io.plain(call.id), io.plain(call.name), args)
        console.print(t)
    else:
        console.print(Text("no tool calls", style="dim"))
    if deltas is not None:
        console.print(Text(f"{deltas} non-empty delta{'' if deltas == 1 else 's'} streamed", style="dim"))
