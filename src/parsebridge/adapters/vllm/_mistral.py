"""A hub-free vLLM `MistralTokenizer`, for the releases whose Mistral parsers require one.

vLLM ≤ 0.15's ``mistral`` reasoning parser refuses any tokenizer that is not
vLLM's `MistralTokenizer` (a wrapper of mistral_common's tokenizer) and looks
``[THINK]``/``[/THINK]`` up as *control* tokens. mistral_common ships a real
Tekken vocabulary (``data/tekken_240911.json``) but without those control
tokens, so the file is re-declared here as a v13 Tekken with every control
token mistral_common knows, then wrapped in vLLM's class. Token boundaries of
ordinary text are the real Tekken ones.

Tekken never turns control-token *text* into control ids (a model emits the
ids), so encoding and chunking split the text on control-token strings first;
that is how a Mistral model's output reaches vLLM's parsers: ids for the
markers, and text that shows them.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.resources
import json
import re
import threading
from typing import Any

from ...formats import mistral
from .. import _tokenizers as _shared

_CLASS_MODULES = ("vllm.tokenizers.mistral", "vllm.transformers_utils.tokenizers.mistral")


def vllm_mistral_class() -> type | None:
    """vLLM's MistralTokenizer class in this release (None if it has none)."""
    for name in _CLASS_MODULES:
        try:
            cls = getattr(importlib.import_module(name), "MistralTokenizer", None)
        except ModuleNotFoundError:
            continue
        if cls is not None:
            return cls  # type: ignore[no-any-return]
    return None


def is_mistral(tokenizer: Any) -> bool:
    cls = vllm_mistral_class()
    return cls is not None and isinstance(tokenizer, cls)


#: Control tokens a Tekken vocabulary has only from a tokenizer version on.
_SINCE = {mistral.ARGS: 11, mistral.CALL_ID: 11, mistral.THINK: 13, mistral.THINK_END: 13}


def _tekken_file(version: int = 13) -> str:
    """Folder holding the re-declared ``tekken.json`` of `version` (written once to parsebridge's cache)."""
    from mistral_common.tokens.tokenizers.base import SpecialTokens
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    raw = (importlib.resources.files("mistral_common") / "data" / "tekken_240911.json").read_text("utf-8")
    data = json.loads(raw)
    specials = [
        {
            "rank": t["rank"],
            "token_str": str(getattr(t["token_str"], "value", t["token_str"])),
            "is_control": True,
        }
        for t in Tekkenizer.DEPRECATED_SPECIAL_TOKENS
    ]
    known = {s["token_str"] for s in specials}
    for token in SpecialTokens:
        if token.value not in known and _SINCE.get(token.value, 0) <= version:
            specials.append({"rank": len(specials), "token_str": token.value, "is_control": True})
            known.add(token.value)
    data["special_tokens"] = specials
    data["config"]["version"] = f"v{version}"
    data.pop("image", None)
    text = json.dumps(data)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = _shared._cache_dir() / f"mistral-tekken-v{version}-{digest}"
    path = folder / "tekken.json"
    if not path.exists():
        _shared._atomic_write(path, text)
    return str(folder)


def mode_version(mode: str | None) -> int:
    """A Mistral mode (``v7``, ``v11``, ``13``) as the tokenizer version number (default 13)."""
    return int(mode.lower().lstrip("v")) if mode else 13


_built: dict[int, Any] = {}
_build_lock = threading.Lock()


def build_mistral_tokenizer(version: int = 13) -> Any:
    """vLLM's MistralTokenizer over the shipped Tekken vocabulary, declared as tokenizer `version` with
    the control tokens that version has (cached per version). vLLM's Mistral parser reads calls the
    pre-v11 way (``[TOOL_CALLS] [{…}]``) below version 11, and ``[THINK]`` as a token from 13."""
    cls = vllm_mistral_class()
    if cls is None:
        raise RuntimeError("this vLLM has no MistralTokenizer class")
    with _build_lock:
        if version not in _built:
            # from_pretrained on a local folder: each release wraps mistral_common its own
            # way (0.11 directly, 0.15 through transformers' MistralCommonBackend in test mode).
            _built[version] = cls.from_pretrained(_tekken_file(version))
        return _built[version]


def _controls(tokenizer: Any) -> dict[str, int]:
    inner = tokenizer.tokenizer
    specials = getattr(inner, "_all_special_tokens", None) or []
    out = {}
    for info in specials:
        text = str(getattr(info["token_str"], "value", info["token_str"]))
        if not text.startswith("<SPECIAL_"):
            out[text] = int(info["rank"])
    return out


def control_ids(tokenizer: Any) -> list[int]:
    """Ids of the Mistral tokenizer's control tokens ([TOOL_CALLS], [THINK], …)."""
    return list(_controls(tokenizer).values())


def _segments(tokenizer: Any, text: str) -> list[tuple[str, list[int]]]:
    """`text` as (piece, ids) segments: a control token's text with its id, or plain text."""
    controls = _controls(tokenizer)
    if not controls:
        return [(text, list(tokenizer.encode(text, add_special_tokens=False)))] if text else []
    pattern = re.compile("|".join(re.escape(c) for c in sorted(controls, key=len, reverse=True)))
    out: list[tuple[str, list[int]]] = []
    pos = 0
    for m in pattern.finditer(text):
        if m.start() > pos:
            piece = text[pos : m.start()]
            out.append((piece, list(tokenizer.encode(piece, add_special_tokens=False))))
        out.append((m.group(0), [controls[m.group(0)]]))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], list(tokenizer.encode(text[pos:], add_special_tokens=False))))
    return out


def encode(tokenizer: Any, text: str) -> list[int]:
    return [i for _piece, ids in _segments(tokenizer, text) for i in ids]


def chunks(tokenizer: Any, text: str, per: int) -> list[_shared.TokenChunk]:
    """Per-token (text, id) pieces grouped `per` at a time, as an engine streams them."""
    if per < 1:
        raise ValueError("per must be >= 1")
    tokens: list[tuple[str, int]] = []
    for piece, ids in _segments(tokenizer, text):
        if len(ids) == 1:
            tokens.append((piece, ids[0]))
            continue
        shown = ""
        for k in range(len(ids)):
            now = tokenizer.decode(ids[: k + 1]) if k + 1 < len(ids) else piece
            if now.endswith("\ufffd") and k + 1 < len(ids):
                tokens.append(("", ids[k]))  # a character split across tokens waits for its last byte
                continue
            tokens.append((now[len(shown) :], ids[k]))
            shown = now
    return [
        _shared.TokenChunk(
            "".join(t for t, _ in tokens[i : i + per]), tuple(i_ for _, i_ in tokens[i : i + per])
        )
        for i in range(0, len(tokens), per)
    ]
