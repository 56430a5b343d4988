"""Reference driver for the SGLang tests: SGLang called directly, the chat server's way.

Written independently of `parsebridge.adapters.sglang` (no import from it), so
the faithfulness tests compare two separate code paths. It restates what
``sglang/srt/entrypoints/openai/serving_chat.py`` does per release for a
request with tools and ``tool_choice="auto"``: reasoning first, then the
function-call parser on the remaining text; streamed, one parser pair per
request, the last chunk handled together with the finish reason
(``parse_stream_end()`` where it exists, then the unstreamed-arguments flush).
Results are normalised to (reasoning, content, [(name, arguments)]):
arguments parsed as JSON where they parse and kept as text where not, ``""``
read as None.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Sequence
from typing import Any

Normal = tuple[str | None, str | None, list[tuple[str, Any]]]


def version() -> tuple[int, ...]:
    import importlib.metadata

    raw = importlib.metadata.version("sglang")
    return tuple(int(p) for p in raw.split(".")[:3] if p.isdigit())


def _fc_cls() -> Any:
    try:
        mod = importlib.import_module("sglang.srt.function_call.function_call_parser")
    except ModuleNotFoundError:
        mod = importlib.import_module("sglang.srt.function_call_parser")
    return mod.FunctionCallParser


def _rp_cls() -> Any:
    try:
        mod = importlib.import_module("sglang.srt.parser.reasoning_parser")
    except ModuleNotFoundError:
        mod = importlib.import_module("sglang.srt.reasoning_parser")
    return mod.ReasoningParser


def tool_names() -> list[str]:
    return sorted(_fc_cls().ToolCallParserEnum)


def reasoning_names() -> list[str]:
    return sorted(_rp_cls().DetectorMap)


def _takes(cls: Any, name: str) -> bool:
    return name in inspect.signature(cls.__init__).parameters


def _tools(tools: Sequence[dict[str, Any]]) -> list[Any]:
    from sglang.srt.entrypoints.openai.protocol import Tool

    return [Tool(**t) for t in tools]


def _request(tools: list[Any]) -> Any:
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest

    fields: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    if tools:
        fields.update(tools=tools, tool_choice="auto")
    return ChatCompletionRequest(**fields)


def _active(tool: str | None, tools: list[Any]) -> bool:
    if tool is None:
        return False
    if tools:
        return True  # tool_choice "auto"
    detector = _fc_cls().ToolCallParserEnum[tool]
    return bool(getattr(detector, "parses_without_tools", lambda: False)())


def _fc(tool: str, tools: list[Any], tokenizer: Any, oneshot: bool) -> Any:
    cls = _fc_cls()
    kw: dict[str, Any] = {}
    if tokenizer is not None and _takes(cls, "tokenizer"):
        kw["tokenizer"] = tokenizer
    if oneshot and _takes(cls, "tool_choice"):
        kw["tool_choice"] = "auto" if tools else _request([]).tool_choice
    return cls(tools, tool, **kw)


def _rp(name: str, stream: bool, force: bool | None, tools: list[Any], tokenizer: Any, active: bool) -> Any:
    cls = _rp_cls()
    kw: dict[str, Any] = {"stream_reasoning": stream}
    if force is not None and _takes(cls, "force_reasoning"):
        kw["force_reasoning"] = force
    if _takes(cls, "request"):
        kw["request"] = _request(tools)
    if tokenizer is not None and _takes(cls, "tokenizer"):
        kw["tokenizer"] = tokenizer
    if active and _takes(cls, "tool_call_parser_active"):
        kw["tool_call_parser_active"] = True
    return cls(name, **kw)


def _args(text: Any) -> Any:
    if isinstance(text, dict):
        return text
    if not (text or "").strip():
        return {}  # no argument text at all reads as no arguments (parsebridge's convention)
    try:
        value = json.loads(text or "")
    except ValueError:
        return text or ""
    return value if isinstance(value, dict) else text


def normal(reasoning: str | None, content: str | None, calls: list[tuple[str, Any]]) -> Normal:
    return (reasoning or None, content or None, [(n, _args(a)) for n, a in calls])


def oneshot(
    tool: str | None,
    reasoning: str | None,
    tools: Sequence[dict[str, Any]],
    text: str,
    *,
    force: bool | None = None,
    tokenizer: Any = None,
) -> Normal:
    sg_tools = _tools(tools)
    active = _active(tool, sg_tools)
    r_text = None
    if reasoning is not None:
        r_text, text = _rp(reasoning, False, force, sg_tools, tokenizer, active).parse_non_stream(text)
        text = text or ""
    calls: list[tuple[str, Any]] = []
    if tool is not None and active:
        parser = _fc(tool, sg_tools, tokenizer, True)
        if parser.has_tool_call(text):
            text, items = parser.parse_non_stream(text)
            calls = [(i.name, i.parameters) for i in items]
    return normal(r_text, text, calls)


def _rest(parser: Any) -> tuple[int, str] | None:
    """What the server sends of the last call's arguments when the stream finishes."""
    det = parser.detector
    prev, sent = getattr(det, "prev_tool_call_arr", None), getattr(det, "streamed_args_for_tool", None)
    if not prev or not sent or len(prev) - 1 >= len(sent):
        return None
    i = len(prev) - 1
    args = prev[i].get("arguments", {})
    if version() >= (0, 5, 23):
        full = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        rest = full[len(sent[i]) :] if full.startswith(sent[i]) else ""
    else:
        full = json.dumps(args, ensure_ascii=False)
        rest = full.replace(sent[i], "", 1) if sent[i] in full else ""
    return (i, rest) if rest else None


def stream(
    tool: str | None,
    reasoning: str | None,
    tools: Sequence[dict[str, Any]],
    chunks: Sequence[str],
    *,
    force: bool | None = None,
    tokenizer: Any = None,
) -> Normal:
    sg_tools = _tools(tools)
    active = _active(tool, sg_tools)
    rp = _rp(reasoning, True, force, sg_tools, tokenizer, active) if reasoning is not None else None
    fc = _fc(tool, sg_tools, tokenizer, False) if (tool is not None and active) else None
    r_parts: list[str] = []
    c_parts: list[str] = []
    calls: dict[int, list[str]] = {}
    for n, chunk in enumerate(chunks):
        last = n == len(chunks) - 1
        delta = chunk
        if rp is not None:
            r, delta = rp.parse_stream_chunk(delta)
            r_parts.append(r or "")
            if last and hasattr(rp, "parse_stream_end"):
                er, en = rp.parse_stream_end()
                r_parts.append(er or "")
                delta = (delta or "") + (en or "")
            delta = delta or ""
        if fc is None:
            c_parts.append(delta)
            continue
        text, items = fc.parse_stream_chunk(delta)
        if last and hasattr(fc, "parse_stream_end"):
            et, ei = fc.parse_stream_end()
            text, items = (text or "") + (et or ""), [*items, *ei]
        c_parts.append(text or "")
        for item in items:
            slot = calls.setdefault(item.tool_index, ["", ""])
            if item.name:
                slot[0] = item.name
            slot[1] += item.parameters or ""
        if last:
            rest = _rest(fc)
            if rest is not None:
                calls.setdefault(rest[0], ["", ""])[1] += rest[1]
    return normal("".join(r_parts), "".join(c_parts), [(calls[i][0], calls[i][1]) for i in sorted(calls)])
