"""Token ids → the text vLLM's server streams for them: vLLM's own incremental detokenizer.

vLLM's engine detokenizes each request's output ids incrementally
(`IncrementalDetokenizer.from_new_request`: the fast `DecodeStream` path for
transformers tokenizers, the slow one otherwise) with the request's
``skip_special_tokens`` and ``spaces_between_special_tokens``, after the
server's parsers adjusted the request (``adjust_request``: hermes, for
instance, keeps special tokens when tools are offered). A byte-level token
that ends inside a multi-byte character shows no text until the character
completes. `token_texts` gives, per id, the text that token adds, so that any
grouping of the ids is fed the text vLLM's server would stream for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from . import _mistral


def request_settings(engine: Any) -> tuple[bool, bool]:
    """(skip_special_tokens, spaces_between_special_tokens) of the engine's request as the server
    leaves it after its parsers' ``adjust_request``."""
    request = engine.request()
    try:
        copy = request.model_copy(deep=True)
        session = engine.session([])
        parser = next(
            (
                p
                for p in (getattr(session, n, None) for n in ("parser", "tool", "reasoning"))
                if p is not None
            ),
            None,
        )
        if parser is not None and hasattr(parser, "adjust_request"):
            copy = parser.adjust_request(copy) or copy
    except Exception:  # a parser whose adjust_request needs what no offline request has
        copy = request
    skip = getattr(copy, "skip_special_tokens", None)
    if skip is None:  # unset (the field's default from vLLM 0.33 on): see `_unset_skip`
        skip = _unset_skip(engine.tokenizer)
    spaces = getattr(copy, "spaces_between_special_tokens", None)
    return bool(skip), True if spaces is None else bool(spaces)


def _unset_skip(tokenizer: Any) -> bool:
    """``skip_special_tokens`` for a request that leaves it unset. The server's default is True.
    vLLM's Mistral tokenizer is always the real Tekken vocabulary, whose control tokens vLLM keeps
    when skipping: True, as served (read as False, vLLM's slow detokenizer streamed every byte
    token of a character split across tokens as '�'). Other tokenizers keep False: the synthetic
    vocabulary declares every marker a special token, where the real vocabularies mostly do not
    (a served model's markers stay in its text), and skipping would strip them."""
    return _mistral.is_mistral(tokenizer)


def _detokenizer(tokenizer: Any, settings: tuple[bool, bool], prompt_ids: Sequence[int]) -> Any:
    # vLLM's own class (imported with the engine: this runs only where vLLM is installed).
    from vllm.v1.engine.detokenizer import IncrementalDetokenizer

    skip, spaces = settings
    params = SimpleNamespace(
        skip_special_tokens=skip,
        spaces_between_special_tokens=spaces,
        stop=None,
        min_tokens=0,
        include_stop_str_in_output=False,
    )
    request = SimpleNamespace(
        request_id="parsebridge",
        sampling_params=params,
        prompt_token_ids=list(prompt_ids),
        prompt_embeds=None,
    )
    return IncrementalDetokenizer.from_new_request(tokenizer, request)


def token_texts(
    tokenizer: Any,
    ids: Sequence[int],
    settings: tuple[bool, bool],
    prompt_ids: Sequence[int] = (),
    stop_terminated: bool = False,
) -> list[str]:
    """The text vLLM's detokenizer adds for each of `ids` (empty while a character is incomplete).

    `stop_terminated`: the last id is the stop token that ended generation (an EOS such as
    ``<|im_end|>``): vLLM's engine says so with the last step and its detokenizer leaves that
    token's text out (``include_stop_str_in_output`` is off), so it adds nothing."""
    det = _detokenizer(tokenizer, settings, prompt_ids)
    out: list[str] = []
    last = len(ids) - 1
    for i, tid in enumerate(ids):
        det.update([int(tid)], stop_terminated and i == last)
        out.append(det.get_next_output_text(False, True))
    tail = det.get_next_output_text(True, True)
    if tail and out:
        out[-1] += tail
    return out


def special_ids(tokenizer: Any) -> set[int]:
    """Ids of the tokenizer's special / added tokens (markers), for the `special` grouping."""
    if _mistral.is_mistral(tokenizer):
        return set(_mistral.control_ids(tokenizer))
    try:
        return {int(i) for i in getattr(tokenizer, "all_special_ids", [])} | {
            int(i) for i in tokenizer.get_added_vocab().values()
        }
    except Exception:
        return set()
