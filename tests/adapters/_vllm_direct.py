"""Reference drivers for the vLLM tests: vLLM called directly, the server's way.

Written independently of `parsebridge.adapters.vllm` (no import from it), so
the faithfulness tests compare two separate code paths. Results are
normalised to plain tuples: (reasoning, content, [(name, arguments)]), with
arguments parsed as JSON where they parse and kept as text where not, and
``""`` content read as None.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from typing import Any

Normal = tuple[str | None, str | None, list[tuple[str, Any]]]


def vllm_version() -> tuple[int, ...]:
    import vllm

    return tuple(int(x) for x in vllm.__version__.split("+")[0].split(".")[:2])


def _module(*names: str) -> Any:
    for name in names:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    raise ModuleNotFoundError(names[-1])


def request(tools: Sequence[dict[str, Any]]) -> Any:
    proto = _module("vllm.entrypoints.openai.chat_completion.protocol", "vllm.entrypoints.openai.protocol")
    if not tools:
        return proto.ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}])
    return proto.ChatCompletionRequest(
        model="m", messages=[{"role": "user", "content": "hi"}], tools=list(tools), tool_choice="auto"
    )


def _args(text: Any) -> Any:
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text or "")
    except ValueError:
        return text or ""
    return value if isinstance(value, dict) else text


def normal(reasoning: str | None, content: str | None, calls: list[tuple[str, str | None]]) -> Normal:
    return (reasoning or None, content or None, [(name, _args(args)) for name, args in calls])


def has_driver() -> bool:
    try:
        importlib.import_module("vllm.entrypoints.openai.chat_completion.stream_processor")
        importlib.import_module("vllm.parser")
    except ModuleNotFoundError:
        return False
    return True


def _assemble(deltas: list[Any]) -> Normal:
    content, reasoning = [], []
    calls: dict[int, list[Any]] = {}
    for d in deltas:
        if d is None:
            continue
        content.append(d.content or "")
        reasoning.append(getattr(d, "reasoning", None) or getattr(d, "reasoning_content", None) or "")
        for tc in d.tool_calls or []:
            fn = tc.function
            if isinstance(fn, dict):
                name, args = fn.get("name"), fn.get("arguments")
            else:
                name, args = (fn.name, fn.arguments) if fn is not None else (None, None)
            slot = calls.setdefault(tc.index, [None, ""])
            if name:
                slot[0] = name
            slot[1] += args or ""
    return normal(
        "".join(reasoning), "".join(content), [(calls[i][0] or "", calls[i][1]) for i in sorted(calls)]
    )


# ---------------------------------------------------------------- 0.33+: vllm.parser


def _native(tool: str | None, reasoning: str | None, tokenizer: Any, tools: Sequence[dict[str, Any]]) -> Any:
    from vllm.parser import ParserManager

    cls = ParserManager.get_parser(
        tool_parser_name=tool, reasoning_parser_name=reasoning, enable_auto_tools=True, tokenizer=tokenizer
    )
    req = request(tools)
    return cls, cls(tokenizer, req.tools, chat_template_kwargs={}, model_config=None), req


def native_oneshot(tool: str | None, reasoning: str | None, tokenizer: Any, tools: Any, text: str) -> Normal:
    _cls, parser, req = _native(tool, reasoning, tokenizer, tools)
    parser.set_prompt_token_ids([])
    ids = tokenizer.encode(text, add_special_tokens=False)
    r, c, calls = parser.parse(text, req, enable_auto_tools=True, model_output_token_ids=ids)
    return normal(r, c, [(tc.name, tc.arguments) for tc in calls or []])


def native_stream(
    tool: str | None, reasoning: str | None, tokenizer: Any, tools: Any, chunks: list[tuple[str, list[int]]]
) -> Normal:
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor

    cls, parser, req = _native(tool, reasoning, tokenizer, tools)
    proc = ChatStreamProcessor(req, parser, enable_auto_tools=True, parser_cls=cls)
    deltas = []
    for i, (text, ids) in enumerate(chunks):
        last = i == len(chunks) - 1
        deltas.append(proc.step(text, ids, "stop" if last else None, []).delta)
    return _assemble(deltas)


# ---------------------------------------------------------------- older: the serving loop


def _classes() -> tuple[Any, Any]:
    tp = _module("vllm.tool_parsers", "vllm.entrypoints.openai.tool_parsers")
    from vllm.reasoning import ReasoningParserManager

    return tp.ToolParserManager, ReasoningParserManager


def _tool(name: str, tokenizer: Any, req: Any) -> Any:
    import inspect

    cls = _classes()[0].get_tool_parser(name)
    if "tools" in inspect.signature(cls.__init__).parameters:
        return cls(tokenizer, req.tools)
    return cls(tokenizer)


def _reasoning(name: str, tokenizer: Any) -> Any:
    return _classes()[1].get_reasoning_parser(name)(tokenizer)


def loop_tool_oneshot(name: str, tokenizer: Any, tools: Any, text: str) -> Normal:
    req = request(tools)
    info = _tool(name, tokenizer, req).extract_tool_calls(text, request=req)
    calls = [(tc.function.name, tc.function.arguments) for tc in info.tool_calls] if info.tools_called else []
    if vllm_version() >= (0, 13):
        content = info.content if info.tools_called else text
        if info.tools_called and content is not None and not content.strip():
            content = None
    else:
        content = info.content if info.tools_called else (info.content or text)
    return normal(None, content, calls)


def loop_tool_stream(name: str, tokenizer: Any, tools: Any, chunks: list[tuple[str, list[int]]]) -> Normal:
    """Tool-only "auto" streaming as serving_chat does it, with the final-chunk argument flush."""
    req = request(tools)
    parser = _tool(name, tokenizer, req)
    prev_text, prev_ids = "", []
    deltas = []
    for i, (text, ids) in enumerate(chunks):
        cur_text, cur_ids = prev_text + text, prev_ids + list(ids)
        delta = parser.extract_tool_calls_streaming(
            previous_text=prev_text,
            current_text=cur_text,
            delta_text=text,
            previous_token_ids=prev_ids,
            current_token_ids=cur_ids,
            delta_token_ids=list(ids),
            request=req,
        )
        prev_text, prev_ids = cur_text, cur_ids
        if i == len(chunks) - 1 and delta is not None and delta.tool_calls:
            first = delta.tool_calls[0]
            fn = first.function
            args = fn.get("arguments") if isinstance(fn, dict) else (fn.arguments if fn else None)
            if args is not None:
                index = max(len(parser.prev_tool_call_arr) - 1, 0)
                expected = json.dumps(parser.prev_tool_call_arr[index].get("arguments", {}), ensure_ascii=False)
                sent = parser.streamed_args_for_tool[index]
                if args:
                    sent = sent[: -len(args)]
                rest = expected.replace(sent, "", 1)
                keep_header = vllm_version() >= (0, 15)
                name_ = (fn.get("name") if isinstance(fn, dict) else fn.name) if keep_header else None
                # rebuild the final delta as the server does
                delta = _FakeDelta(None, [_FakeCall(index, name_, rest)])
        deltas.append(delta)
    return _assemble(deltas)


def loop_reasoning_oneshot(name: str, tokenizer: Any, text: str) -> Normal:
    req = request([])
    rp = _reasoning(name, tokenizer)
    method = getattr(rp, "extract_reasoning", None) or rp.extract_reasoning_content
    r, c = method(text, request=req)
    return normal(r, c, [])


def loop_reasoning_stream(name: str, tokenizer: Any, chunks: list[tuple[str, list[int]]]) -> Normal:
    rp = _reasoning(name, tokenizer)
    method = getattr(rp, "extract_reasoning_streaming", None) or rp.extract_reasoning_content_streaming
    prev_text, prev_ids = "", []
    deltas = []
    for text, ids in chunks:
        cur_text, cur_ids = prev_text + text, prev_ids + list(ids)
        deltas.append(method(prev_text, cur_text, text, prev_ids, cur_ids, list(ids)))
        prev_text, prev_ids = cur_text, cur_ids
    return _assemble(deltas)


class _FakeFn:
    def __init__(self, name: str | None, arguments: str) -> None:
        self.name, self.arguments = name, arguments


class _FakeCall:
    def __init__(self, index: int, name: str | None, arguments: str) -> None:
        self.index, self.function = index, _FakeFn(name, arguments)


class _FakeDelta:
    def __init__(self, content: str | None, calls: list[_FakeCall]) -> None:
        self.content, self.tool_calls = content, calls


# ---------------------------------------------------------------- entry points


def oneshot(tool: str | None, reasoning: str | None, tokenizer: Any, tools: Any, text: str) -> Normal:
    if has_driver():
        return native_oneshot(tool, reasoning, tokenizer, tools, text)
    if tool is not None:
        return loop_tool_oneshot(tool, tokenizer, tools, text)
    assert reasoning is not None
    return loop_reasoning_oneshot(reasoning, tokenizer, text)


def stream(
    tool: str | None, reasoning: str | None, tokenizer: Any, tools: Any, chunks: list[tuple[str, list[int]]]
) -> Normal:
    if has_driver():
        return native_stream(tool, reasoning, tokenizer, tools, chunks)
    if tool is not None:
        return loop_tool_stream(tool, tokenizer, tools, chunks)
    assert reasoning is not None
    return loop_reasoning_stream(reasoning, tokenizer, chunks)
