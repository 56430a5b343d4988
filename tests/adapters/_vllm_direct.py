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
    if not (text or "").strip():
        return {}  # no arguments text: an empty object, as parsebridge's ToolCall reads it
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


def native_oneshot(
    tool: str | None, reasoning: str | None, tokenizer: Any, tools: Any, text: str, prompt: list[int]
) -> Normal:
    _cls, parser, req = _native(tool, reasoning, tokenizer, tools)
    parser.set_prompt_token_ids(prompt)
    ids = tokenizer.encode(text, add_special_tokens=False)
    r, c, calls = parser.parse(text, req, enable_auto_tools=True, model_output_token_ids=ids)
    return normal(r, c, [(tc.name, tc.arguments) for tc in calls or []])


def native_stream(
    tool: str | None,
    reasoning: str | None,
    tokenizer: Any,
    tools: Any,
    chunks: list[tuple[str, list[int]]],
    prompt: list[int],
) -> Normal:
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor

    cls, parser, req = _native(tool, reasoning, tokenizer, tools)
    proc = ChatStreamProcessor(req, parser, enable_auto_tools=True, parser_cls=cls)
    deltas = []
    for i, (text, ids) in enumerate(chunks):
        last = i == len(chunks) - 1
        deltas.append(proc.step(text, ids, "stop" if last else None, prompt).delta)
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
    cls = _classes()[1].get_reasoning_parser(name)
    if vllm_version() >= (0, 15):  # the request's chat-template kwargs merged with server defaults
        return cls(tokenizer, chat_template_kwargs={})
    if vllm_version() >= (0, 13):  # the request's own field, None when unset
        return cls(tokenizer, chat_template_kwargs=None)
    return cls(tokenizer)


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


def _final_flush(parser: Any, delta: Any) -> Any:
    """serving_chat on the finished chunk: send the arguments the parser parsed but never streamed.

    The server indexes the parser's prev_tool_call_arr / streamed_args_for_tool
    without a guard, so a parser that leaves them empty fails the stream there.
    0.15+ keeps the final delta's id/type/name; earlier releases send only the
    index and the remaining arguments.
    """
    if delta is None or not delta.tool_calls:
        return delta
    first = delta.tool_calls[0]
    fn = first.function
    args = fn.get("arguments") if isinstance(fn, dict) else (fn.arguments if fn else None)
    if args is None:
        return delta
    index = max(len(parser.prev_tool_call_arr) - 1, 0)
    expected = json.dumps(parser.prev_tool_call_arr[index].get("arguments", {}), ensure_ascii=False)
    sent = parser.streamed_args_for_tool[index]
    if isinstance(args, str) and args:
        sent = sent[: -len(args)]
    rest = expected.replace(sent, "", 1)
    name_ = None
    if vllm_version() >= (0, 15):
        original = next((tc for tc in delta.tool_calls if tc.index == index), None)
        ofn = original.function if original is not None else None
        name_ = (ofn.get("name") if isinstance(ofn, dict) else ofn.name) if ofn is not None else None
    return _FakeDelta(None, [_FakeCall(index, name_, rest)])


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
        if i == len(chunks) - 1:
            delta = _final_flush(parser, delta)
        deltas.append(delta)
    return _assemble(deltas)


def _reasoning_streaming(rp: Any) -> Any:
    return getattr(rp, "extract_reasoning_streaming", None) or rp.extract_reasoning_content_streaming


def loop_chain_oneshot(tool: str, reasoning: str, tokenizer: Any, tools: Any, text: str) -> Normal:
    """Non-streaming with both parsers: reasoning split first, tool calls from its content only."""
    req = request(tools)
    rp = _reasoning(reasoning, tokenizer)
    method = getattr(rp, "extract_reasoning", None) or rp.extract_reasoning_content
    r, content = method(text, request=req)
    tail = loop_tool_oneshot(tool, tokenizer, tools, content if content is not None else "")
    if not tail[2]:
        # No call: 0.13+ keep the reasoning parser's content; 0.11 prefers the tool parser's.
        tail_content = content if vllm_version() >= (0, 13) else (tail[1] or content)
        return normal(r, tail_content, [])
    return (r or None, tail[1], tail[2])


def loop_chain_stream(
    tool: str,
    reasoning: str,
    tokenizer: Any,
    tools: Any,
    chunks: list[tuple[str, list[int]]],
    prompt: list[int],
) -> Normal:
    """ "auto" streaming with both parsers, as serving_chat's loop before vllm.parser.

    Reasoning first; when it ends (in the prompt or in this chunk's ids) the
    chunk's content is handed to the tool parser as its first delta — on the
    same chunk from 0.13, on the next one in 0.11. 0.13+ test the prompt
    before running the reasoning parser; 0.11 after.
    """
    req = request(tools)
    tp, rp = _tool(tool, tokenizer, req), _reasoning(reasoning, tokenizer)
    stream_reasoning = _reasoning_streaming(rp)
    new_loop = vllm_version() >= (0, 13)
    prev_text, prev_ids = "", []
    ended = added = False
    deltas = []
    for i, (text, raw_ids) in enumerate(chunks):
        ids = list(raw_ids)
        cur_text = prev_text + text
        cur_ids = prev_ids + ids if prev_ids else ids
        p_text, p_ids, d_text = prev_text, prev_ids, text
        delta = None
        tool_turn = ended
        if not ended:
            prompt_ended = bool(prompt) and rp.is_reasoning_end(prompt)
            if new_loop and prompt_ended:
                ended, cur_ids = True, ids
            else:
                delta = stream_reasoning(p_text, cur_text, text, p_ids, cur_ids, ids)
                hits = ([prompt_ended] if not new_loop else []) + [rp.is_reasoning_end(ids)]
                for k, hit in enumerate(hits):
                    if not hit:
                        continue
                    ended = True
                    from_prompt = not new_loop and k == 0
                    cur_ids = ids if from_prompt else rp.extract_content_ids(ids)
                    if delta is not None and delta.content:
                        cur_text, delta.content = delta.content, None
                    else:
                        cur_text = ""
            tool_turn = ended and new_loop
        if tool_turn:
            d_ids = ids
            if not added:
                added = True
                p_text, p_ids, d_text, d_ids = "", [], cur_text, cur_ids
            delta = tp.extract_tool_calls_streaming(
                previous_text=p_text,
                current_text=cur_text,
                delta_text=d_text,
                previous_token_ids=p_ids,
                current_token_ids=cur_ids,
                delta_token_ids=d_ids,
                request=req,
            )
        prev_text, prev_ids = cur_text, cur_ids
        if i == len(chunks) - 1:
            delta = _final_flush(tp, delta)
        deltas.append(delta)
    return _assemble(deltas)


def loop_reasoning_oneshot(name: str, tokenizer: Any, text: str) -> Normal:
    req = request([])
    rp = _reasoning(name, tokenizer)
    method = getattr(rp, "extract_reasoning", None) or rp.extract_reasoning_content
    r, c = method(text, request=req)
    return normal(r, c, [])


def loop_reasoning_stream(
    name: str, tokenizer: Any, chunks: list[tuple[str, list[int]]], prompt: list[int]
) -> Normal:
    """Reasoning-only streaming: serving_chat's reasoning branch never looks at the prompt before 0.33."""
    rp = _reasoning(name, tokenizer)
    method = _reasoning_streaming(rp)
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


def oneshot(
    tool: str | None,
    reasoning: str | None,
    tokenizer: Any,
    tools: Any,
    text: str,
    prompt: list[int] | None = None,
) -> Normal:
    """The server's non-streaming message; `prompt`: the prompt's token ids (reasoning opened there)."""
    if has_driver():
        return native_oneshot(tool, reasoning, tokenizer, tools, text, list(prompt or []))
    if tool is not None and reasoning is not None:
        return loop_chain_oneshot(tool, reasoning, tokenizer, tools, text)
    if tool is not None:
        return loop_tool_oneshot(tool, tokenizer, tools, text)
    assert reasoning is not None
    return loop_reasoning_oneshot(reasoning, tokenizer, text)


def stream(
    tool: str | None,
    reasoning: str | None,
    tokenizer: Any,
    tools: Any,
    chunks: list[tuple[str, list[int]]],
    prompt: list[int] | None = None,
) -> Normal:
    """What a client assembles from the server's stream, the last chunk carrying the finish reason."""
    if has_driver():
        return native_stream(tool, reasoning, tokenizer, tools, chunks, list(prompt or []))
    if tool is not None and reasoning is not None:
        return loop_chain_stream(tool, reasoning, tokenizer, tools, chunks, list(prompt or []))
    if tool is not None:
        return loop_tool_stream(tool, tokenizer, tools, chunks)
    assert reasoning is not None
    return loop_reasoning_stream(reasoning, tokenizer, chunks, list(prompt or []))
