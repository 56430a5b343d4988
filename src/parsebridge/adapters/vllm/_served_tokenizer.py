"""The tokenizer a vLLM parser is built with: the user's, or a hub-free default, as the server holds it.

Without a tokenizer from the user, the default is the family's synthetic
one (`_tokenizer`) holding every special token any registered vLLM parser
looks up (probed once per process); either way it is wrapped the way
vLLM's server wraps it (`as_served`).
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from typing import Any

from . import _tokenizer
from ._compat import get_api

_default_lock = threading.Lock()
_specials: list[str] | None = None


def probe_special_tokens() -> list[str]:
    """Every token string any registered vLLM parser looks up at construction (cached per process).

    Each parser class is built once against a tokenizer that answers every
    vocabulary lookup and records it; marker-like string constants on the
    classes are added as a static complement.
    """
    global _specials
    with _default_lock:
        if _specials is not None:
            return _specials
        api = get_api()
        base = _tokenizer.build_tokenizer((), None)
        seen: set[str] = set()
        request = api.make_request(None, "auto")
        for name in api.tool_parser_names():
            try:
                cls = api.tool_parser_class(name)
            except Exception:
                continue
            seen |= _tokenizer.marker_strings(cls)
            with contextlib.suppress(Exception):
                api.new_tool_parser(cls, _tokenizer.ProbeTokenizer(base, seen), request)
        for name in api.reasoning_parser_names():
            try:
                cls = api.reasoning_parser_class(name)
            except Exception:
                continue
            seen |= _tokenizer.marker_strings(cls)
            with contextlib.suppress(Exception):
                api.new_reasoning_parser(cls, _tokenizer.ProbeTokenizer(base, seen), {})
        # Only marker-shaped strings become atomic: a probe also sees lookups
        # of fragments ("</", ">") that would wreck tokenization if atomic.
        _specials = sorted(s for s in seen if _tokenizer.is_marker(s) or _tokenizer.is_vocab_internal(s))
        return _specials


def resolve_tokenizer(source: Any, parser_name: str) -> Any:
    """The user's tokenizer, or the default for `parser_name`'s family (see `_tokenizer`)."""
    if source is not None:
        return as_served(_tokenizer.load_tokenizer(source))
    return as_served(_tokenizer.build_tokenizer(probe_special_tokens(), _tokenizer.family_of(parser_name)))


_served: dict[int, tuple[Any, Any]] = {}


def as_served(tokenizer: Any) -> Any:
    """The tokenizer as vLLM's server holds it: behind vLLM's `get_cached_tokenizer`.

    Many vLLM parsers call `tokenizer.get_vocab()` in their constructor, and a
    parser is built per request. A bare transformers tokenizer rebuilds that
    dict on every call (about 1 s for a 150k vocabulary here: `vllm:qwen3`
    took over a second per parse); the server's wrapper memoises it. Parse
    results do not change. One wrapper per tokenizer object; non-transformers
    tokenizers (e.g. Mistral's) and already wrapped ones are returned as is.
    """
    try:
        from transformers import PreTrainedTokenizerBase
    except ImportError:
        return tokenizer
    if not isinstance(tokenizer, PreTrainedTokenizerBase) or type(tokenizer).__name__.startswith("Cached"):
        return tokenizer
    wrap = None
    for module in ("vllm.tokenizers.hf", "vllm.transformers_utils.tokenizer"):
        try:
            wrap = importlib.import_module(module).get_cached_tokenizer
            break
        except (ImportError, AttributeError):
            continue
    if wrap is None:
        return tokenizer
    with _default_lock:
        hit = _served.get(id(tokenizer))
        if hit is None or hit[0] is not tokenizer:
            hit = _served[id(tokenizer)] = (tokenizer, wrap(tokenizer))
        return hit[1]
