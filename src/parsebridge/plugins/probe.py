"""Whether the installed framework release can serve parsebridge parsers: the support table's plugin column.

`probe(framework)` registers the plugin into the installed release, looks
``pb:builtin:hermes`` and ``pb:builtin:qwen3`` up through the framework's
own tables, and parses a tool call and a reasoning block with them, one-shot
and streamed. The conformance run records the answer in its report
(``plugins``), and `parsebridge conformance support` renders it per release.
Never raises: a release where the plugin cannot work gives the reason.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

from ..adapters.vllm._compat import get_api
from ..formats import hermes, think
from . import ENV_BACKENDS, vllm_plugin_file
from ._tables import tables_restored

TOOL, REASONING = "pb:builtin:hermes", "pb:builtin:qwen3"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
CALL_TEXT = f'Sure.{hermes.START}\n{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}\n{hermes.END}'
THINK_TEXT = f"{think.START}pondering{think.END}The answer."
WANT_CALL = ("Sure.", "get_weather", {"city": "Paris"})
WANT_REASONING = ("pondering", "The answer.")


@contextmanager
def _builtin_only() -> Any:
    """Register builtin parsers only (the probe needs no second framework)."""
    old = os.environ.get(ENV_BACKENDS)
    os.environ[ENV_BACKENDS] = "builtin"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV_BACKENDS, None)
        else:
            os.environ[ENV_BACKENDS] = old


def _pieces(text: str, per: int = 3) -> list[str]:
    return [text[i : i + per] for i in range(0, len(text), per)]


def _probe_vllm() -> dict[str, Any]:
    api = get_api()
    argument = vllm_plugin_argument()
    how = "--tool-parser-plugin " + (
        argument if argument == "parsebridge.plugins.vllm" else "FILE (python -m parsebridge.plugins vllm)"
    )
    with _builtin_only():
        api.ToolParserManager.import_tool_parser(argument)
    tool_cls = api.ToolParserManager.get_tool_parser(TOOL)
    reasoning_cls = api.ReasoningParserManager.get_reasoning_parser(REASONING)
    request = api.make_request(TOOLS, "auto")
    one = tool_cls(None).extract_tool_calls(CALL_TEXT, request)
    got_one = (one.content, one.tool_calls[0].function.name, json.loads(one.tool_calls[0].function.arguments))
    stream, content, args = tool_cls(None), "", ""
    for piece in _pieces(CALL_TEXT):
        d = stream.extract_tool_calls_streaming("", "", piece, [], [], [], request)
        content += (d.content or "") if d is not None else ""
        args += "".join(tc.function.arguments or "" for tc in (d.tool_calls if d is not None else ()))
    end = stream.finish_streaming()
    args += "".join(tc.function.arguments or "" for tc in (end.tool_calls if end is not None else ()))
    got_stream = (content, "get_weather", json.loads(args or "{}"))
    reasoning = getattr(reasoning_cls(None), api.reasoning_method)(THINK_TEXT, request)
    return _verdict(got_one, got_stream, tuple(reasoning), api.has_parser_driver, how)


def vllm_plugin_argument() -> str:
    """What to give the installed vLLM's ``--tool-parser-plugin``: the module name where its loader
    imports module names, else the plugin file's path (vLLM 0.11 loads files only).

    A path-only loader given a module name leaves a broken module under part of that name in
    `sys.modules`, so the form is read from the loader's source, not found by trying it.
    """
    import inspect

    try:
        source = inspect.getsource(get_api().ToolParserManager.import_tool_parser)
    except (OSError, TypeError):
        source = ""
    return "parsebridge.plugins.vllm" if "import_plugin" in source else vllm_plugin_file()


def _probe_sglang() -> dict[str, Any]:
    from . import sglang as plugin  # SGLang's plugin module imports SGLang itself

    plugin.register_all(["builtin"])
    fcp_cls = plugin.FunctionCallParser
    tools = [importlib.import_module("sglang.srt.entrypoints.openai.protocol").Tool(**t) for t in TOOLS]
    normal, items = fcp_cls(tools, TOOL).parse_non_stream(CALL_TEXT)
    got_one = (normal, items[0].name, json.loads(items[0].parameters))
    fcp, content, args = fcp_cls(tools, TOOL), "", ""
    for piece in _pieces(CALL_TEXT):
        text, calls = fcp.parse_stream_chunk(piece)
        content += text
        args += "".join(c.parameters for c in calls)
    end = getattr(fcp, "parse_stream_end", None)
    if end is not None:
        text, calls = end()
        content += text
        args += "".join(c.parameters for c in calls)
    got_stream = (content, "get_weather", json.loads(args or "{}"))
    reasoning = plugin.ReasoningParser(REASONING).parse_non_stream(THINK_TEXT)
    loader = importlib.util.find_spec("sglang.srt.plugins") is not None
    how = (
        "sglang.srt.plugins entry point" if loader else "no plugin loader: call register_all() before launch"
    )
    return _verdict(got_one, got_stream, tuple(reasoning), end is not None, how)


def _verdict(
    got_one: tuple[Any, ...], got_stream: tuple[Any, ...], reasoning: tuple[Any, ...], flush: bool, how: str
) -> dict[str, Any]:
    problems = []
    if got_one != WANT_CALL:
        problems.append(f"one-shot tool call read {got_one!r}")
    if got_stream != WANT_CALL:
        problems.append(f"streamed tool call read {got_stream!r}")
    if reasoning != WANT_REASONING:
        problems.append(f"reasoning read {reasoning!r}")
    return {
        "available": not problems,
        "end_of_output_flush": flush,
        "loaded_by": how,
        "detail": "; ".join(problems) or f"{TOOL} and {REASONING} served",
    }


PROBES: dict[str, Callable[[], dict[str, Any]]] = {"vllm": _probe_vllm, "sglang": _probe_sglang}


def probe(framework: str) -> dict[str, Any]:
    """Can this release serve parsebridge parsers through the plugin? (never raises)"""
    if importlib.util.find_spec(framework) is None:
        return {"available": False, "detail": f"{framework} is not installed"}

    try:
        with tables_restored():  # the probe's pb: names do not stay in the framework's tables
            return PROBES[framework]()
    except Exception as exc:
        return {"available": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}


def cell(result: dict[str, Any] | None) -> str:
    """The support table's plugin cell for one release."""
    if not result:
        return "not probed"
    if not result.get("available"):
        return f"no: {result.get('detail', '?')}"
    flush = (
        ""
        if result.get("end_of_output_flush")
        else "; no end-of-output call: text a stream holds at the end is lost"
    )
    return f"yes ({result.get('loaded_by', '')}{flush})"
