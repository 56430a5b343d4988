"""Config strings (`BACKEND:NAME`) and the seed design's config objects.

Parsing a spec is pure string work and never imports a backend; resolving
it to a parser happens in `parsebridge.adapters.registry`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from .errors import InvalidSpecError, UnknownOptionError
from .family_rows import normalize_name as normalize_name

DEFAULT_BACKEND = "builtin"
_BACKEND_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ParserBackend(StrEnum):
    """The backends parsebridge ships (third-party ones come by entry point)."""

    BUILTIN = "builtin"
    PYTHON = "python"
    SGLANG = "sglang"
    VLLM = "vllm"
    DYNAMO = "dynamo"
    #: The seed design's name for Dynamo's Rust parsers: read as DYNAMO everywhere (`BACKEND_ALIASES`).
    NATIVE = "native"


#: Backend names read as another backend's: the design's ``native`` is ``dynamo``.
BACKEND_ALIASES: dict[str, str] = {ParserBackend.NATIVE.value: ParserBackend.DYNAMO.value}


def _check_one_spec(spec: str, text: str) -> None:
    """Refuse a string that holds a pipeline or several specs (no parser name has a ``+``, a space
    or a comma): it was "no tool parser named 'qwen3 + hermes'", with names like it to try."""
    if "+" in text:
        reasoning, _, tool = (part.strip() for part in text.partition("+"))
        raise InvalidSpecError(
            f"{spec!r} is a pipeline (REASONING + TOOL), and a parser spec names one parser: give the "
            f"two apart, get_pipeline({reasoning!r}, {tool!r}) or --reasoning-parser {reasoning} "
            f"--tool-parser {tool} (compare takes 'R + T' as one spec)"
        )
    several = text.replace(",", " ").split()
    if len(several) > 1:
        raise InvalidSpecError(f"{spec!r} holds {len(several)} specs, {several!r}: a parser spec names one")


@dataclass(frozen=True)
class ParserSpec:
    """A parsed config string.

    ``builtin:hermes`` → backend "builtin", name "hermes";
    ``python:pkg.mod:Class`` → backend "python", name "pkg.mod:Class",
    module "pkg.mod", class_name "Class"; a bare ``hermes`` → builtin.
    """

    backend: str
    name: str
    module: str | None = None
    class_name: str | None = None

    @classmethod
    def parse(cls, spec: str | ParserSpec) -> ParserSpec:
        if isinstance(spec, ParserSpec):
            return spec
        if not isinstance(spec, str):
            raise InvalidSpecError(f"a parser spec is a string like 'vllm:hermes', not {type(spec).__name__}")
        text = spec.strip()
        if not text:
            raise InvalidSpecError("empty parser spec; expected BACKEND:NAME, e.g. 'builtin:hermes'")
        _check_one_spec(spec, text)
        if ":" not in text:
            return cls(DEFAULT_BACKEND, text)
        backend, _, rest = text.partition(":")
        backend = backend.strip().lower()
        rest = rest.strip()
        if not _BACKEND_RE.match(backend):
            raise InvalidSpecError(f"invalid backend {backend!r} in spec {spec!r}")
        backend = BACKEND_ALIASES.get(backend, backend)
        if not rest:
            raise InvalidSpecError(f"spec {spec!r} names a backend but no parser; expected {backend}:NAME")
        if backend == ParserBackend.PYTHON.value:
            return cls.python(*_split_python_target(rest, spec))
        return cls(backend, rest)

    @classmethod
    def python(cls, module: str, class_name: str) -> ParserSpec:
        for part in module.split("."):
            if not _IDENT_RE.match(part):
                raise InvalidSpecError(f"invalid module path {module!r} in a python: spec")
        if not _IDENT_RE.match(class_name):
            raise InvalidSpecError(f"invalid class name {class_name!r} in a python: spec")
        return cls("python", f"{module}:{class_name}", module, class_name)

    def __str__(self) -> str:
        return f"{self.backend}:{self.name}"


def _split_python_target(rest: str, spec: str) -> tuple[str, str]:
    if ":" in rest:
        module, _, class_name = rest.rpartition(":")
    elif "." in rest:
        module, _, class_name = rest.rpartition(".")
    else:
        raise InvalidSpecError(f"spec {spec!r}: the python backend takes 'python:package.module:ClassName'")
    return module.strip(), class_name.strip()


class _ParserConfig(BaseModel):
    """The seed design's four fields; `to_spec()` turns them into a config string."""

    model_config = ConfigDict(extra="forbid", use_enum_values=True, defer_build=True)

    backend: ParserBackend | str = ParserBackend.BUILTIN
    parser_name: str | None = None
    python_module: str | None = None
    python_class: str | None = None

    def __init__(self, **data: Any) -> None:
        # Surface bad configs as our typed error, not pydantic's: a field it does not have is
        # `UnknownOptionError` naming the nearest (``name=`` for ``parser_name=``), and the rest
        # one line a problem, without pydantic's banner and links.
        fields = type(self).model_fields
        unknown = [key for key in data if key not in fields]
        if unknown:
            raise UnknownOptionError(type(self).__name__, unknown, fields)
        try:
            super().__init__(**data)
        except ValidationError as exc:
            said = "; ".join(
                f"{e['loc'][0] if e['loc'] else 'config'}: {e['msg'].removeprefix('Value error, ')}"
                for e in exc.errors()
            )
            raise InvalidSpecError(f"invalid {type(self).__name__}: {said}") from exc

    @model_validator(mode="after")
    def _check(self) -> _ParserConfig:
        if str(self.backend) == ParserBackend.PYTHON.value:
            if not (self.python_module and self.python_class):
                raise InvalidSpecError("backend 'python' needs both python_module and python_class")
        elif not self.parser_name:
            raise InvalidSpecError(f"backend {str(self.backend)!r} needs a parser_name")
        return self

    def to_spec(self) -> ParserSpec:
        if str(self.backend) == ParserBackend.PYTHON.value:
            assert self.python_module and self.python_class
            return ParserSpec.python(self.python_module, self.python_class)
        assert self.parser_name is not None
        return ParserSpec(str(self.backend).lower(), self.parser_name)

    @classmethod
    def from_spec(cls, spec: str | ParserSpec) -> _ParserConfig:
        parsed = ParserSpec.parse(spec)
        if parsed.backend == ParserBackend.PYTHON.value:
            return cls(backend=parsed.backend, python_module=parsed.module, python_class=parsed.class_name)
        return cls(backend=parsed.backend, parser_name=parsed.name)


class ReasoningParserConfig(_ParserConfig):
    """Which reasoning parser to use (backend, parser_name, python_module, python_class)."""


class ToolCallParserConfig(_ParserConfig):
    """Which tool-call parser to use (backend, parser_name, python_module, python_class)."""
