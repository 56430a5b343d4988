"""Watching a built parser read one transcript: what it returned, as `Observation`s.

`observe` parses the output once and streams it at every chunking (a token chunking
groups the pieces `token_pieces.source_for` cut); what a parser raised becomes the
observation's error (`error_text`), a parser that could not be built gives every
chunking that error (`failed`). Nothing here judges: that is `checks`.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Iterable, Sequence
from typing import Any

from ..protocol import BackendError, DeltaAccumulator, StreamDelta
from ..protocol.prompt_rule import start_options
from .chunking import Chunk, Chunking
from .observation import Observation, normalize_call
from .record_use import read_prompt
from .subject import Subject, Target
from .token_pieces import TRANSCRIPT_IDS, TokenSource, source_for
from .transcripts import Transcript


def error_text(exc: BaseException, target: Target, call: str, tid: str) -> str:
    if isinstance(exc, BackendError) and exc.transcript:
        return str(exc)
    if isinstance(exc, BackendError):
        return str(BackendError(exc.backend, exc.parser, exc.call, str(exc).split(": ", 1)[-1], tid))
    parser = (
        " + ".join(s.split(":", 1)[1] for s in (target.reasoning_spec, target.tool_spec) if s) or target.spec
    )
    return str(BackendError(target.backend, parser, call, f"{type(exc).__name__}: {exc}", tid))


# ---------------------------------------------------------------- observing


def parse_with(
    subject: Subject,
    text: str,
    started: bool | None,
    tid: str,
    prompt: dict[str, Any] | None = None,
    token_ids: Sequence[int] | None = None,
) -> tuple[str | None, str | None, list[Any]]:
    """One `parse` of the subject's pipeline, tool or reasoning parser: (reasoning, content, calls).
    `prompt`: the request's prompt options for the parser that reads reasoning (`request_start`);
    `token_ids`: the model's own ids, for a parser whose engine steps them (`ONESHOT_IDS_BACKENDS`)."""
    ids = {"token_ids": token_ids} if token_ids is not None else {}
    if subject.pipeline is not None:
        r = subject.pipeline.parse(text, reasoning_started=started, **(prompt or {}), **ids)
        return r.reasoning, r.content, r.tool_calls
    if subject.tool is not None:
        # reasoning: a tool parser that reads some (llamacpp)
        t = subject.tool.parse(text, transcript=tid, **ids)
        return getattr(t, "reasoning", None), t.content, t.tool_calls
    rr = subject.reasoning.parse(text, reasoning_started=started, transcript=tid, **(prompt or {}), **ids)
    return rr.reasoning, rr.content, []


def fed(stream: Any, chunks: Sequence[tuple[str, Sequence[int] | None]]) -> Iterable[StreamDelta]:
    """Each chunk's delta, fed in order: in one call where the stream takes all its chunks at once
    (`feed_many`: llamacpp's, one exchange with its harness for the whole stream; the same deltas)."""
    feed_many = getattr(stream, "feed_many", None)
    if feed_many is not None:
        return feed_many([text for text, _ in chunks])  # type: ignore[no-any-return]
    return (stream.feed(text, ids) for text, ids in chunks)


def open_stream(
    subject: Subject, started: bool | None, tid: str, prompt: dict[str, Any] | None = None
) -> Any:
    """A new stream of the subject's pipeline, tool or reasoning parser (`prompt`: as `parse_with`)."""
    if subject.pipeline is not None:
        return subject.pipeline.stream(reasoning_started=started, **(prompt or {}))
    if subject.tool is not None:
        return subject.tool.stream(transcript=tid)
    return subject.reasoning.stream(reasoning_started=started, transcript=tid, **(prompt or {}))


def request_start(subject: Subject, t: Transcript) -> tuple[bool | None, dict[str, Any]]:
    """(start state, prompt options) of the transcript's request for the subject's parsers.

    ``reasoning_started_in_prompt: true`` says it; False means "the parser's default", which for
    some parsers is "started", so it forces nothing. Else the record's generation prompt, as
    `record_use.read_prompt` reads it (``prompt`` wins; ``prompt_token_ids`` checked against it
    with the record's tokenizer, else its family's vocabulary, and decoded for parsers that read
    text), goes to the parser that reads reasoning the way its backend's server reads one
    (`protocol.prompt_rule.start_options`); the ids themselves go only to a parser built with the
    record's tokenizer. Every backend so reads the same prompt."""
    if t.reasoning_started_in_prompt:
        return True, {}
    reader = subject.reasoning
    if subject.pipeline is not None:  # a framework's native chain (vLLM's, Dynamo's) is one object
        reader = getattr(subject.pipeline, "reasoning", None) or subject.pipeline
    if reader is None or (t.prompt is None and not t.prompt_token_ids):
        return None, {}
    read = read_prompt(t)
    ids = read.ids if read.ids_of is not None and subject.tokenizer_ref == read.ids_of else None
    if read.text is None and ids is None:
        return None, {}
    return start_options(reader, None, None, read.text, ids)


#: A request's start (`request_start`), or what working it out raised (raised again where a reading
#: is made, so it becomes that reading's error).
Start = tuple[bool | None, dict[str, Any]] | Exception


def settled_start(subject: Subject, t: Transcript) -> Start:
    """`request_start` once for all of a transcript's readings (it may decode and encode a prompt)."""
    try:
        return request_start(subject, t)
    except Exception as exc:
        return exc


def _start_of(subject: Subject, t: Transcript, known: Start | None) -> tuple[bool | None, dict[str, Any]]:
    """`known` (`settled_start`), raising what it stored, or `request_start` when not given."""
    if known is None:
        return request_start(subject, t)
    if isinstance(known, Exception):
        raise known
    return known


#: Backends whose non-streamed request is built from the engine's steps (Dynamo's frontend, smg's
#: gateway): their one-shot reading steps the model's own ids where a transcript gives usable ones.
ONESHOT_IDS_BACKENDS = frozenset({"dynamo", "smg"})


def oneshot_ids(
    subject: Subject, t: Transcript, source: TokenSource | None
) -> tuple[list[int] | None, str | None]:
    """(ids, label) the one-shot request steps: the transcript's own where its pieces came from
    them and the engine was built with the tokenizer they belong to (`Runner._built`: an engine on
    its own vocabulary would read another model's ids as other text); else (None, None): the
    parser encodes the text itself."""
    if source is None or subject.target.backend not in ONESHOT_IDS_BACKENDS:
        return None, None
    if t.tokenizer is None or subject.tokenizer_ref != t.tokenizer:
        return None, None
    if not source.label.startswith(TRANSCRIPT_IDS):
        return None, None
    ids = [p.token_id for p in source.pieces if p.token_id is not None]
    return (ids, source.label) if len(ids) == len(source.pieces) else (None, None)


def observe_oneshot(
    subject: Subject,
    t: Transcript,
    token_ids: Sequence[int] | None = None,
    label: str | None = None,
    start: Start | None = None,
) -> Observation:
    """`parse` once (`token_ids`: see `oneshot_ids`, named by `label`; `start`: `settled_start`);
    a raise becomes the observation's `error`."""
    obs = Observation("oneshot", "oneshot", tokenizer=label or subject.tokenizer_label)
    t0 = time.perf_counter()
    try:
        started, prompt = _start_of(subject, t, start)
        reasoning, content, calls = parse_with(subject, t.output, started, t.id, prompt, token_ids)
    except Exception as exc:
        obs.error, obs.error_type = error_text(exc, subject.target, "parse", t.id), type(exc).__name__
    else:
        obs.reasoning, obs.content = reasoning, content
        obs.tool_calls = [normalize_call(c) for c in calls]
        obs.call_ids = [c.id for c in calls]
    obs.elapsed = time.perf_counter() - t0
    return obs


def observe(
    subject: Subject,
    t: Transcript,
    chunkings: Sequence[Chunking],
    feeds: Sequence[Sequence[Chunk]],
    token_label: str | None = None,
    source: TokenSource | None = None,
) -> tuple[Observation, list[Observation]]:
    """The one-shot observation of `t` (`parse` once: the reference of every stream) and every
    chunking's: a one-shot chunking's is that one, a streamed one's feeds its chunks (`feeds`, one
    list a chunking: `Chunking.to_feed`). `token_label` names what cut a token chunking's chunks.

    Chunkings that cut the output into the same chunks (a short one: ``token-20`` and ``special``,
    two random seeds) feed the parser once: the same chunks give the same reading, which the later
    chunking gets a copy of. `source`: the transcript's token pieces (`oneshot_ids`)."""
    start = settled_start(subject, t)
    oneshot = observe_oneshot(subject, t, *oneshot_ids(subject, t, source), start=start)
    out: list[Observation] = []
    seen: dict[tuple[Any, ...], Observation] = {}
    for c, chunks in zip(chunkings, feeds, strict=True):
        if not c.streamed:
            out.append(oneshot)
            continue
        label = token_label if c.by_token and token_label else subject.tokenizer_label
        key = (label, *chunks)
        if key in seen:
            out.append(dataclasses.replace(copy.deepcopy(seen[key]), chunking=c.name))
        else:
            out.append(seen.setdefault(key, watch_stream(subject, t, c, list(chunks), label, start)))
    return oneshot, out


def failed(
    exc: BaseException, target: Target, t: Transcript, chunkings: Sequence[Chunking]
) -> list[Observation]:
    """What every chunking saw of a parser that could not be built: the construction error."""
    msg = error_text(exc, target, "create parser", t.id)
    return [Observation(c.mode, c.name, error=msg, error_type=type(exc).__name__) for c in chunkings]


def observe_stream(
    subject: Subject, t: Transcript, chunking: Chunking, source: TokenSource | None = None
) -> Observation:
    """Feed the chunks, flush, finish; the reading is what the returned deltas assemble to.

    Token chunkings group `source`'s pieces (`token_pieces.source_for`, computed here when not
    given); the observation names the tokenizer either way."""
    if chunking.by_token:
        source = source or source_for(t, subject)
        return watch_stream(subject, t, chunking, chunking.to_feed(t.output, source.pieces), source.label)
    return watch_stream(subject, t, chunking, chunking.cut(t.output), subject.tokenizer_label)


def watch_stream(
    subject: Subject,
    t: Transcript,
    chunking: Chunking,
    chunks: list[Chunk],
    tokenizer: str,
    start: Start | None = None,
) -> Observation:
    """Feed `chunks` to a new stream, flush, finish: the reading is what the deltas assemble to;
    `tokenizer` names what cut the chunks (or what the parser reads with); `start`: `settled_start`."""
    obs = Observation("stream", chunking.name, tokenizer=tokenizer)
    obs.chunks = len(chunks)
    acc = DeltaAccumulator()
    ids_seen: dict[int, int] = {}
    fragments: dict[int, list[str]] = {}

    def take(delta: StreamDelta) -> None:
        acc.add(delta)
        for d in delta.tool_calls:
            if d.index not in ids_seen:
                obs.call_order.append(d.index)
            if d.id is not None:
                ids_seen[d.index] = ids_seen.get(d.index, 0) + 1
            else:
                ids_seen.setdefault(d.index, 0)
            fragments.setdefault(d.index, []).append(d.arguments)

    t0 = time.perf_counter()
    call = "stream"
    try:
        started, prompt = _start_of(subject, t, start)
        stream = open_stream(subject, started, t.id, prompt)
        call = "stream.feed"
        for delta in fed(stream, [(chunk.text, chunk.token_ids) for chunk in chunks]):
            take(delta)
        call = "stream.flush"
        take(stream.flush())
        call = "stream.finish"
        final = stream.finish()
    except Exception as exc:
        obs.elapsed = time.perf_counter() - t0
        obs.error, obs.error_type = error_text(exc, subject.target, call, t.id), type(exc).__name__
        return obs
    obs.elapsed = time.perf_counter() - t0
    calls = acc.tool_calls()
    obs.reasoning, obs.content = acc.reasoning, acc.content
    obs.tool_calls = [normalize_call(c) for c in calls]
    obs.call_ids = [c.id for c in calls]
    obs.anomalies = list(acc.anomalies) + [
        f"call {i}: never given an id" for i, n in ids_seen.items() if n == 0
    ]
    obs.fragments = ["".join(fragments[i]) for i in sorted(fragments)]
    obs.finish_mismatch = _finish_mismatch(obs, final)
    return obs


def _finish_mismatch(obs: Observation, final: Any) -> str | None:
    f_reasoning = getattr(final, "reasoning", None)
    f_content = getattr(final, "content", None)
    f_calls = [normalize_call(c) for c in getattr(final, "tool_calls", [])]
    bad = []
    if (f_reasoning or None) != obs.reasoning:
        bad.append(f"reasoning {f_reasoning!r} vs streamed {obs.reasoning!r}")
    if (f_content or None) != obs.content:
        bad.append(f"content {f_content!r} vs streamed {obs.content!r}")
    if f_calls != obs.tool_calls:
        bad.append(f"calls {f_calls} vs streamed {obs.tool_calls}")
    return "; ".join(bad) or None
