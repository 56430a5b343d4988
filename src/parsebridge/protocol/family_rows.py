"""The rows of `families.toml`, read with the standard library only.

`families.toml` is the one list of families, their aliases and each
backend's parser name. Two layers read it: `protocol.families` (the
`FamilyTable` the registry and `compare` use) and `parsebridge.formats`
(which family writes which format), and the builtin backend derives its
reasoning presets from it. This module imports nothing of ours, so
`formats` can use it without loading the protocol's pydantic models; the
file is parsed on first use, once.

A row's keys: ``aliases`` (other spellings users type), ``format`` (the
family in `parsebridge.formats` whose format this family's output is written
in, when it has none of its own: e.g. ``granite4`` writes ``hermes``),
``servers_started`` (reasoning rows: both servers' parsers read the text
before an end marker as reasoning though no start marker opened it, so builtin
starts inside reasoning under ``conventions="servers"``), ``vocabulary`` (the
family's real vocabulary on PyPI) and ``single_tokens`` (the tokens its markers
are made of that are one token in the model's vocabulary), and otherwise
backend name → that backend's parser name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Literal

Kind = Literal["tool", "reasoning"]
KINDS: tuple[Kind, Kind] = ("tool", "reasoning")

#: Row keys that are not backend names.
RESERVED = frozenset({"aliases", "format", "servers_started", "vocabulary", "single_tokens"})


def normalize_name(name: str) -> str:
    """The form names are compared in: case-folded, `-` and `_` the same."""
    return name.strip().lower().replace("-", "_")


@dataclass(frozen=True)
class Columns:
    """What a family says of itself: the fields a `Row` and the protocol's `Family` share, declared once."""

    kind: Kind
    name: str
    parsers: dict[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    #: The family in `parsebridge.formats` whose format module describes this family's output
    #: (the format it writes; None: its own name).
    format: str | None = None
    #: The family's real vocabulary on PyPI (a package name), None when there is none.
    vocabulary: str | None = None
    #: The tokens the format's markers are made of that are one token in the model's vocabulary.
    single_tokens: tuple[str, ...] = ()


@dataclass(frozen=True)
class Row(Columns):
    """One family of one kind, as the table writes it."""

    #: Both servers start this family's output inside reasoning (see the module docstring).
    servers_started: bool = False

    @property
    def format_family(self) -> str:
        return self.format or self.name

    @property
    def names(self) -> tuple[str, ...]:
        """The family's name, then its aliases."""
        return (self.name, *self.aliases)


def parse_rows(text: str) -> tuple[Row, ...]:
    """The rows of a TOML family table (tool rows first, in the file's order)."""
    import tomllib  # lazy: read once, on first use of the table

    data = tomllib.loads(text)
    rows: list[Row] = []
    for kind in KINDS:
        for name, raw in data.get(kind, {}).items():
            parsers = {k: str(v) for k, v in raw.items() if k not in RESERVED}
            fmt = raw.get("format")
            aliases, started = tuple(raw.get("aliases", ())), raw.get("servers_started") is True
            vocab, single = raw.get("vocabulary"), tuple(str(t) for t in raw.get("single_tokens", ()))
            rows.append(
                Row(
                    kind,
                    name,
                    parsers,
                    aliases,
                    str(fmt) if fmt else None,
                    str(vocab) if vocab else None,
                    single,
                    servers_started=started,
                )
            )
    return tuple(rows)


def table_text() -> str:
    """The text of the `families.toml` shipped with parsebridge."""
    from importlib import resources

    # Through the top package (already imported): reading the file imports nothing else of ours.
    return resources.files("parsebridge").joinpath("protocol", "families.toml").read_text(encoding="utf-8")


@cache
def rows() -> tuple[Row, ...]:
    """The shipped table's rows (parsed on first call, then cached)."""
    return parse_rows(table_text())


def rows_of(kind: Kind) -> tuple[Row, ...]:
    return tuple(r for r in rows() if r.kind == kind)
