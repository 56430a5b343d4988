"""The parser under test: what to run a transcript through, the parsers built for it, what they do.

A `Target` is a backend and its reasoning and/or tool spec, resolved from a transcript's
family through the family table (`target_for`) or given explicitly (`Target.explicit`).
A `Subject` is the parser(s) built for one target and tools list; `observe_oneshot` and
`observe_stream` run one transcript through it and record what it returned as an
`Observation` (a raise becomes the observation's error). The `runner` judges them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..adapters import get_backend, get_pipeline, get_reasoning_parser, get_tool_parser
from ..protocol import (
    BackendError,
    BackendNotInstalledError,
    DeltaAccumulator,
    ParserSpec,
    ParserUnsupportedError,
    StreamDelta,
    UnknownBackendError,
    UnknownParserError,
    family_table,
)
from ..protocol.families import Family, FamilyTable
from .checks import parser_markers
from .chunking import Chunk, Chunking
from .observation import Observation, normalize_call
from .token_pieces import TokenSource, find_attribute, source_for, tokenizer_label
from .transcripts import Transcript


@dataclass(frozen=True)
class Target:
    """What to run a transcript through: a backend and its reasoning and/or tool spec.

    `unsupported` holds the reason when this backend cannot run the
    transcript at all (no parser for the family); such targets produce
    `unsupported` results without building anything.
    """

    backend: str
    tool_spec: str | None = None
    reasoning_spec: str | None = None
    unsupported: str | None = None

    @property
    def spec(self) -> str:
        """The primary spec (the tool parser's, else the reasoning parser's)."""
        return self.tool_spec or self.reasoning_spec or f"{self.backend}:?"

    @property
    def label(self) -> str:
        """Both specs, ``reasoning + tool``, for display and compare keys."""
        return " + ".join(s for s in (self.reasoning_spec, self.tool_spec) if s) or self.spec

    @classmethod
    def explicit(cls, tool: str | None = None, reasoning: str | None = None) -> Target:
        """A target from specs (e.g. ``Target.explicit(tool="vllm:hermes")``); backend from the spec."""
        first = tool or reasoning
        if first is None:
            raise ValueError("a target needs a tool spec, a reasoning spec, or both")
        return cls(ParserSpec.parse(first).backend, tool, reasoning)


def _by_family(backend: str) -> bool:
    """Whether the backend's targets are named by the family, not by its name in the table
    (llamacpp's names there are chat templates: ``llamacpp:hermes``, not the template's name)."""
    try:
        return get_backend(backend).labels_by_family
    except Exception:  # a third-party backend whose module is broken: the table's name, as given
        return False


def _spec(fam: Family | None, backend: str, by_family: bool) -> str | None:
    if fam is None or fam.parser_for(backend) is None:
        return None
    return f"{backend}:{fam.name}" if by_family else fam.spec_for(backend)


def target_for(transcript: Transcript, backend: str, table: FamilyTable | None = None) -> Target:
    """The backend's parser(s) for the transcript's family (and reasoning family), via the family table."""
    table = table or family_table()
    fam = transcript.resolve_family(table)
    if fam is None:
        return Target(
            backend, unsupported=f"{transcript.kind} family {transcript.family!r} is not in the table"
        )
    by_family = _by_family(backend)
    spec = _spec(fam, backend, by_family)
    if spec is None:
        return Target(backend, unsupported=f"{backend} has no {fam.kind} parser for family {fam.name!r}")
    if transcript.kind == "reasoning":
        return Target(backend, reasoning_spec=spec)
    rspec = None
    if transcript.reasoning_family:
        rspec = _spec(transcript.resolve_reasoning_family(table), backend, by_family)
        if rspec is None:
            return Target(
                backend,
                tool_spec=spec,
                unsupported=f"{backend} has no reasoning parser for family {transcript.reasoning_family!r}",
            )
    return Target(backend, tool_spec=spec, reasoning_spec=rspec)


class Subject:
    """Built parser(s) for one target and one tools list, reusable across transcripts."""

    def __init__(self, target: Target, tools: Sequence[dict[str, Any]], **options: Any) -> None:
        self.target = target
        self.reasoning: Any = None
        self.tool: Any = None
        self.pipeline: Any = None
        if target.reasoning_spec and target.tool_spec:
            self.pipeline = get_pipeline(
                target.reasoning_spec, target.tool_spec, tools=tools or None, **options
            )
        elif target.tool_spec:
            self.tool = get_tool_parser(target.tool_spec, tools or None, **options)
        elif target.reasoning_spec:
            self.reasoning = get_reasoning_parser(target.reasoning_spec, **options)
        else:
            raise ValueError("empty target")
        self.parser = self.pipeline or self.tool or self.reasoning
        self.markers = parser_markers(self.parser)
        tokenizer = find_attribute(self.parser, "tokenizer")
        #: Which tokenizer (and Mistral mode) the parser reads with; "none" for text-only parsers.
        self.mistral = "mistral" in target.label
        self.tokenizer_label = tokenizer_label(tokenizer, self.mistral) if tokenizer is not None else "none"

    def parse(self, text: str, started: bool | None, tid: str) -> tuple[str | None, str | None, list[Any]]:
        if self.pipeline is not None:
            r = self.pipeline.parse(text, reasoning_started=started)
            return r.reasoning, r.content, r.tool_calls
        if self.tool is not None:
            t = self.tool.parse(text, transcript=tid)  # reasoning: a tool parser that reads some (llamacpp)
            return getattr(t, "reasoning", None), t.content, t.tool_calls
        rr = self.reasoning.parse(text, reasoning_started=started, transcript=tid)
        return rr.reasoning, rr.content, []

    def stream(self, started: bool | None, tid: str) -> Any:
        if self.pipeline is not None:
            return self.pipeline.stream(reasoning_started=started)
        if self.tool is not None:
            return self.tool.stream(transcript=tid)
        return self.reasoning.stream(reasoning_started=started, transcript=tid)


_UNSUPPORTED_ERRORS = (
    BackendNotInstalledError,
    UnknownParserError,
    UnknownBackendError,
    ParserUnsupportedError,
)


def unsupported_reason(exc: BaseException) -> str | None:
    """Why a construction error means "cannot run here" (not "the backend is broken"), else None.

    Framework not installed, no such parser in this release, a parser that
    cannot run without a model, a parser module absent: these are reasons to
    report `unsupported` (or, in tests, to skip); anything else is a fault.
    """
    if isinstance(exc, _UNSUPPORTED_ERRORS):
        return str(exc)
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").startswith("parsebridge."):
        return f"parser module {exc.name} is not present in this parsebridge"
    return None


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


def _started(t: Transcript) -> bool | None:
    # False means "the parser's default", which for some parsers is "started": don't force it.
    return True if t.reasoning_started_in_prompt else None


def observe_oneshot(subject: Subject, t: Transcript) -> Observation:
    """`parse` once; a raise becomes the observation's `error`."""
    obs = Observation("oneshot", "oneshot", tokenizer=subject.tokenizer_label)
    t0 = time.perf_counter()
    try:
        reasoning, content, calls = subject.parse(t.output, _started(t), t.id)
    except Exception as exc:
        obs.error, obs.error_type = error_text(exc, subject.target, "parse", t.id), type(exc).__name__
    else:
        obs.reasoning, obs.content = reasoning, content
        obs.tool_calls = [normalize_call(c) for c in calls]
        obs.call_ids = [c.id for c in calls]
    obs.elapsed = time.perf_counter() - t0
    return obs


def fed(stream: Any, chunks: Sequence[tuple[str, Sequence[int] | None]]) -> Iterable[StreamDelta]:
    """Each chunk's delta, fed in order: in one call where the stream takes all its chunks at once
    (`feed_many`: llamacpp's, one exchange with its harness for the whole stream; the same deltas)."""
    feed_many = getattr(stream, "feed_many", None)
    if feed_many is not None:
        return feed_many([text for text, _ in chunks])  # type: ignore[no-any-return]
    return (stream.feed(text, ids) for text, ids in chunks)


def stream_chunks(
    subject: Subject, t: Transcript, chunking: Chunking, source: TokenSource | None = None
) -> tuple[list[Chunk], str | None]:
    """The chunks a chunking feeds and the tokenizer that cut them (or that the parser reads with).

    Token chunkings group `source`'s pieces (`token_pieces.source_for`, computed here when not given)."""
    if chunking.by_token:
        source = source or source_for(t, subject.parser, subject.mistral)
        return (chunking.group(source.pieces) if t.output else []), source.label
    return chunking.split(t.output, subject.parser, t.token_texts), subject.tokenizer_label


def observe_stream(
    subject: Subject,
    t: Transcript,
    chunking: Chunking,
    source: TokenSource | None = None,
    cut: tuple[list[Chunk], str | None] | None = None,
) -> Observation:
    """Feed the chunks, flush, finish; the reading is what the returned deltas assemble to.

    `cut` is `stream_chunks`' answer when the caller has it; the observation names the tokenizer."""
    obs = Observation("stream", chunking.name)
    chunks, obs.tokenizer = cut if cut is not None else stream_chunks(subject, t, chunking, source)
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
        stream = subject.stream(_started(t), t.id)
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
