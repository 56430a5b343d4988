"""vLLM parsers called directly, exactly as parsebridge's adapter calls them, minus the adapter.

The baseline of the overhead section: same tokenizer object (taken from the
parsebridge parser at setup), same request fields, same parser class, same
per-request construction, same chunks and token ids (one-shot: the output
encoded the adapter's way), same end-of-stream flag on the last chunk. What
remains in the parsebridge timing is what the bridge adds: building the
request and session, translating vLLM objects into parsebridge models, the
failure guard and delta accumulation.

Only the vLLM ≥ 0.33 shape (`vllm.parser` + `ChatStreamProcessor`, what the
adapter uses there) is written; older releases raise `DirectUnavailable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from parsebridge.adapters._tokenizers import encode_ids

from ._corpus import Format
from ._direct_base import Chunk, DirectUnavailable


class VllmDirect:
    """Per-transcript one-shot and streamed parsing with vLLM's own per-request driver."""

    def __init__(self, bridge_parser: Any, fmt: Format) -> None:
        try:
            from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
            from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
            from vllm.entrypoints.serve.utils.tool_calls_utils import maybe_filter_parallel_tool_calls
            from vllm.parser import ParserManager
        except ImportError as exc:
            raise DirectUnavailable(f"vLLM without the vllm.parser driver ({exc})") from exc
        try:
            from vllm.renderers.chat_utils import make_tool_call_id
        except ImportError:
            from vllm.entrypoints.chat_utils import make_tool_call_id
        self._processor_cls = ChatStreamProcessor
        self._filter = maybe_filter_parallel_tool_calls
        self._make_id = make_tool_call_id
        self.tokenizer = bridge_parser.tokenizer
        name = bridge_parser.name
        tool_name, reasoning_name = (name, None) if fmt.kind == "tool" else (None, name)
        self.parser_cls = ParserManager.get_parser(
            tool_parser_name=tool_name,
            reasoning_parser_name=reasoning_name,
            enable_auto_tools=True,
            tokenizer=self.tokenizer,
        )
        fields: dict[str, Any] = {
            "model": "parsebridge",
            "messages": [{"role": "user", "content": "parsebridge"}],
        }
        if fmt.tools:
            fields["tools"] = [dict(t) for t in fmt.tools]
            fields["tool_choice"] = "auto"
        # A server has its request already: built once, reused by every parse.
        self.request = ChatCompletionRequest(**fields)
        if not fmt.tools:
            self.request.tool_choice = "auto"
        self.prompt_ids: list[int] = []

    def _parser(self) -> Any:
        return self.parser_cls(self.tokenizer, self.request.tools, chat_template_kwargs={}, model_config=None)

    def oneshot(self, text: str) -> object:
        parser = self._parser()
        parser.set_prompt_token_ids(self.prompt_ids)
        # The output's ids, which a server has from its engine, encoded here as the adapter encodes
        # them (`encode_ids`: through the tokenizers backend), so that encoding costs both sides alike.
        ids = encode_ids(self.tokenizer, text)
        reasoning, content, calls = parser.parse(
            text, self.request, enable_auto_tools=True, model_output_token_ids=ids
        )
        kept = self._filter(list(calls or []), self.request)
        call_ids = [getattr(c, "id", None) or self._make_id() for c in kept]
        return reasoning, content, kept, call_ids

    def stream(self, chunks: Sequence[Chunk]) -> object:
        parser = self._parser()
        processor = self._processor_cls(
            self.request, parser, enable_auto_tools=True, parser_cls=self.parser_cls
        )
        processor.keep_tool_calls = True
        last = len(chunks) - 1
        deltas = []
        for i, (text, ids) in enumerate(chunks):
            step = processor.step(text, list(ids or ()), "stop" if i == last else None, self.prompt_ids)
            deltas.append(step.delta)
        return deltas
