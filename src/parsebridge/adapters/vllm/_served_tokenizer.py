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
from collections.abc import Callable
from typing import Any

from ...protocol.errors import TokenizerUnavailable
from ...protocol.tokenizer_ref import TokenizerRef, names_a_reference
from .._tokenizers import load_reference, vocabulary_problem
from . import _mistral, _tokenizer
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
        _probe(
            api.tool_parser_names(),
            api.tool_parser_class,
            lambda cls, tokenizer: api.new_tool_parser(cls, tokenizer, request),
            base,
            seen,
        )
        _probe(
            api.reasoning_parser_names(),
            api.reasoning_parser_class,
            lambda cls, tokenizer: api.new_reasoning_parser(cls, tokenizer, {}),
            base,
            seen,
        )
        # Only marker-shaped strings become atomic: a probe also sees lookups
        # of fragments ("</", ">") that would wreck tokenization if atomic.
        _specials = sorted(s for s in seen if _tokenizer.is_marker(s) or _tokenizer.is_vocab_internal(s))
        return _specials


def _probe(
    names: list[str],
    class_of: Callable[[str], type],
    build: Callable[[type, Any], Any],
    base: Any,
    seen: set[str],
) -> None:
    """Build each named parser against a tokenizer that records its lookups into `seen`."""
    for name in names:
        try:
            cls = class_of(name)
        except Exception:
            continue
        seen |= _tokenizer.marker_strings(cls)
        probe = _tokenizer.ProbeTokenizer(base, seen)
        with contextlib.suppress(Exception):
            build(cls, probe)


def resolve_tokenizer(source: Any, parser_name: str) -> Any:
    """The user's tokenizer, or the default for `parser_name`'s family (see `_tokenizer`).

    `source` may be a transcript's tokenizer reference (`TokenizerRef`): a
    ``mistral-common`` vocabulary becomes vLLM's MistralTokenizer of the
    reference's ``mistral_mode`` (the version vLLM's Mistral parser reads), any
    other loads offline (`_tokenizers.load_reference`).
    """
    if names_a_reference(source):  # "pypi:mistral-common" too: vLLM's Mistral tokenizer, below
        source = TokenizerRef.model_validate(source)
    if source is not None and hasattr(source, "mistral_mode") and hasattr(source, "pypi"):
        if source.pypi == "mistral-common":
            problem = vocabulary_problem(source)  # another Tekken file: not read in its place
            if problem:
                raise TokenizerUnavailable(problem)
            return _mistral.build_mistral_tokenizer(_mistral.mode_version(source.mistral_mode))
        return as_served(load_reference(source))
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
