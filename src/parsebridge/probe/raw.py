"""The model's raw output, asked of the server itself: each scenario again, with log probabilities.

OpenAI-compatible servers return, with ``logprobs: true``, one entry per generated token with
its text and its UTF-8 ``bytes`` (vLLM, SGLang, Dynamo, llama-server); Dynamo adds each
token's ``token_id``. Those entries cover every generated token — reasoning, markers and
special tokens included, before any parser ran — so joined they are the raw output. The probe
sends each scenario's non-streamed request once more, the same (temperature 0, the same seed)
but for ``logprobs: true, top_logprobs: 0``, and keeps the raw output only where that request's
parsed answer is the one the probe checked (the same model output, read again).

`recorded` turns one such answer into a transcript record (the format `compare` and
`conformance` read), with the server's parsed answers beside it (``served``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .assemble import LONE_SURROGATE, Reading, first_choice, from_message
from .checks import shape
from .http import Answer, Endpoint, EndpointUnreachable
from .run import ROUTE, Row


@dataclass
class RawOutput:
    """The raw output of one scenario's non-streamed request, or why there is none."""

    scenario: str
    text: str | None = None
    token_texts: list[str] | None = None
    token_ids: list[int] | None = None
    reading: Reading | None = None
    why_not: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: The request got no answer at all (a timeout, a dropped connection).
    no_answer: bool = False


def _token_id(entry: dict[str, Any]) -> int | None:
    value = entry.get("token_id")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    token = entry.get("token")
    if isinstance(token, str) and token.startswith("token_id:") and token[9:].isdigit():
        return int(token[9:])  # vLLM/Dynamo with return_tokens_as_token_ids
    return None


def from_logprobs(content: list[Any]) -> tuple[str, list[str] | None, list[int] | None]:
    """(raw text, each token's text when every token is whole characters, token ids when given)."""
    data = bytearray()
    texts: list[str] | None = []
    ids: list[int] | None = []
    for entry in content:
        if not isinstance(entry, dict):
            raise ValueError("a logprobs entry that is not an object")
        raw = entry.get("bytes")
        piece = bytes(raw) if isinstance(raw, list) else str(entry.get("token", "")).encode()
        data += piece
        try:
            if texts is not None:
                texts.append(piece.decode("utf-8"))
        except UnicodeDecodeError:  # a token ending inside a character: no per-token texts
            texts = None
        tid = _token_id(entry)
        if ids is not None and tid is not None:
            ids.append(tid)
        elif tid is None:
            ids = None  # ids only when every token has one
    return data.decode("utf-8", "replace"), texts, ids or None


def fetch(endpoint: Endpoint, row: Row, *, max_tokens: int, seed: int, tokenizer: Any = None) -> RawOutput:
    """Ask again for `row`'s scenario (non-streamed) with log probabilities; its raw output.

    With the model's `tokenizer` (a transformers tokenizer) and token ids in the answer, the
    text is the ids decoded (exact where a token ends inside a character, which the servers'
    per-token bytes cannot show: Dynamo gives such a token's bytes as U+FFFD's)."""
    out = RawOutput(row.scenario.name)
    body = row.scenario.body(endpoint.model, stream=False, max_tokens=max_tokens, seed=seed)
    body.update(logprobs=True, top_logprobs=0)
    try:
        answer = _asked(endpoint, body, with_ids=tokenizer is not None)
    except EndpointUnreachable as exc:  # (the server hung or died on this one: the others still count)
        out.why_not = endpoint.redact(f"asked with logprobs, no answer: {exc}")
        out.no_answer = True
        return out
    if answer.status != 200:
        out.why_not = endpoint.redact(f"HTTP {answer.status} with logprobs: {answer.error_text()}")
        return out
    choice, why = first_choice(answer.body)
    if choice is None:
        out.why_not = endpoint.redact(f"asked with logprobs: {why}")
        return out
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content:
        out.why_not = "the server returned no logprobs"
        return out
    try:
        out.text, out.token_texts, out.token_ids = from_logprobs(content)
    except (TypeError, ValueError) as exc:  # (bytes that are not 0..255, entries that are not objects)
        out.why_not = f"logprobs not readable: {exc}"
        return out
    if tokenizer is not None and out.token_ids:
        out.text = tokenizer.decode(out.token_ids, skip_special_tokens=False)
        out.token_texts = None
        prompt_ids = _prompt_ids(answer.body, choice)
        if prompt_ids:
            out.extra["prompt_token_ids"] = prompt_ids
            out.extra["prompt"] = tokenizer.decode(prompt_ids, skip_special_tokens=False)
    elif "\ufffd" in (out.text or ""):
        out.extra["warning"] = (
            "a token ends inside a character (U+FFFD in its bytes): --tokenizer decodes the ids"
        )
    out.reading = from_message(answer.body)
    if shape(out.reading) != shape(row.reading):
        out.why_not = "asked again, the server answered differently (not deterministic at temperature 0)"
        out.text = None
    return out


def _asked(endpoint: Endpoint, body: dict[str, Any], *, with_ids: bool) -> Answer:
    """The logprobs request (`with_ids`: asking for token ids too, for the model's tokenizer)."""
    if not with_ids:
        return endpoint.post(ROUTE, body)
    # vLLM and Dynamo give each token as its id (token_id:N); vLLM and SGLang add the prompt's
    # ids (return_token_ids / return_prompt_token_ids). A server that refuses a field it does
    # not know is asked again with logprobs only.
    extras = {
        "return_tokens_as_token_ids": True,
        "return_token_ids": True,
        "return_prompt_token_ids": True,
    }
    answer = endpoint.post(ROUTE, {**body, **extras})
    if answer.status == 400:
        answer = endpoint.post(ROUTE, {**body, "return_tokens_as_token_ids": True})
    return answer


def _prompt_ids(body: Any, choice: Any) -> list[int] | None:
    """The prompt's token ids where the server gave them (vLLM: top level; SGLang: the choice)."""
    for where in (body, choice):
        ids = where.get("prompt_token_ids") if isinstance(where, dict) else None
        if isinstance(ids, list) and ids and all(isinstance(i, int) for i in ids):
            return ids
    return None


def answer_json(reading: Reading) -> dict[str, Any]:
    """A served answer as a transcript's expected-like object (arguments parsed where they parse)."""
    calls = []
    for call in reading.calls:
        try:
            args: Any = call.parsed()
        except ValueError:
            args = call.arguments
        calls.append({"name": call.name, "arguments": args})
    return {
        "reasoning": reading.reasoning or None,
        "content": reading.content or None,
        "tool_calls": calls,
        "finish_reason": reading.finish_reason,
    }


def recorded(
    raw: RawOutput,
    rows: dict[tuple[str, str], Row],
    *,
    family: str | None,
    reasoning_family: str | None,
    source: dict[str, Any],
    tokenizer_path: str | None = None,
) -> dict[str, Any]:
    """The transcript record of one raw output, with what the server answered beside it."""
    oneshot = rows[(raw.scenario, "oneshot")]
    record: dict[str, Any] = {
        "id": f"probe-{raw.scenario}",
        "output": raw.text,
        "tools": [dict(t) for t in oneshot.scenario.tools],
        "finish_reason": oneshot.reading.finish_reason
        if oneshot.reading.finish_reason in ("stop", "length")
        else "stop",
    }
    if family:
        record["family"] = family
    if reasoning_family:
        record["reasoning_family" if family else "family"] = reasoning_family
        if not family:
            record["kind"] = "reasoning"
    if raw.token_texts is not None and "".join(raw.token_texts) == raw.text:
        record["token_texts"] = raw.token_texts
    if tokenizer_path and raw.token_ids:  # the ids and the vocabulary they belong to
        record["token_ids"] = raw.token_ids
        record["tokenizer"] = {"path": tokenizer_path}
        if raw.extra.get("prompt_token_ids"):  # the generation prompt: where reasoning starts
            record["prompt_token_ids"] = raw.extra["prompt_token_ids"]
            record["prompt"] = raw.extra["prompt"]
    served = {
        mode: answer_json(rows[(raw.scenario, mode)].reading)
        for mode in ("oneshot", "stream")
        if (raw.scenario, mode) in rows
    }
    # The server's token ids are kept as data, not as `token_ids`: without the server's tokenizer
    # no backend could read them (a backend would decode them with its own vocabulary).
    record["served"] = {**served, "token_ids": raw.token_ids, **source}
    record["tags"] = ["probe"]
    return record


def dump_jsonl(records: list[dict[str, Any]]) -> str:
    """The records as JSON Lines. A lone surrogate in what the server answered (the answer check
    names it) is saved as U+FFFD: UTF-8 cannot hold it, and `compare` refuses a record with one."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return LONE_SURROGATE.sub("\ufffd", text)
