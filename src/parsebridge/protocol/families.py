"""The family table: one output format, each backend's own name for its parser.

The table is data (`families.toml` beside this module) so that a new
framework release that renames a parser is a one-line change. Frameworks
name the same format differently (`llama3_json` vs `llama3`, `deepseek_r1`
vs `deepseek-r1`); `compare --family` uses this table to run "the same
format" on every backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .errors import InvalidSpecError, closest, did_you_mean
from .family_rows import KINDS, Columns, Kind, Row, normalize_name, parse_rows, rows

__all__ = ["KINDS", "Family", "FamilyTable", "Kind", "family_table", "load_table"]


@dataclass(frozen=True)
class Family(Columns):
    """One row of the table (its fields: `family_rows.Columns`, those `families.toml` gives each row)."""

    def parser_for(self, backend: str) -> str | None:
        """This backend's parser name for the family, or None when it has none."""
        return self.parsers.get(backend)

    def spec_for(self, backend: str) -> str | None:
        name = self.parser_for(backend)
        return f"{backend}:{name}" if name else None

    @property
    def spellings(self) -> set[str]:
        return {normalize_name(n) for n in (self.name, *self.aliases)}


class FamilyTable:
    """Lookups over the family rows of one kind or both."""

    def __init__(self, families: list[Family]) -> None:
        self._families = families

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._families)

    def of_kind(self, kind: Kind) -> list[Family]:
        return [f for f in self._families if f.kind == kind]

    def get(self, kind: Kind, name: str) -> Family | None:
        """The family named (or aliased) `name`, or None."""
        wanted = normalize_name(name)
        for fam in self._families:
            if fam.kind == kind and wanted in fam.spellings:
                return fam
        return None

    def for_parser(self, kind: Kind, backend: str, parser: str) -> Family | None:
        """Which family a backend's parser implements (reverse lookup)."""
        wanted = normalize_name(parser)
        for fam in self._families:
            name = fam.parsers.get(backend)
            if fam.kind == kind and name is not None and normalize_name(name) == wanted:
                return fam
        return None

    def check(self, name: str) -> None:
        """`InvalidSpecError`, with the closest names, when `name` is no family or alias of either kind."""
        if self.get("tool", name) is not None or self.get("reasoning", name) is not None:
            return
        did = did_you_mean(closest(name, sorted({n for f in self._families for n in (f.name, *f.aliases)})))
        raise InvalidSpecError(
            f"unknown family {name!r}.{did} Families: {', '.join(sorted({f.name for f in self._families}))}."
        )

    def names(self, kind: Kind) -> list[str]:
        return [f.name for f in self.of_kind(kind)]

    def backends(self) -> list[str]:
        seen: list[str] = []
        for fam in self._families:
            for b in fam.parsers:
                if b not in seen:
                    seen.append(b)
        return seen


def _table(rows: tuple[Row, ...]) -> FamilyTable:
    return FamilyTable(
        [
            Family(r.kind, r.name, dict(r.parsers), r.aliases, r.format, r.vocabulary, r.single_tokens)
            for r in rows
        ]
    )


def load_table(text: str) -> FamilyTable:
    """Parse a TOML table (exposed so tests and users can load their own)."""
    return _table(parse_rows(text))


@cache
def family_table() -> FamilyTable:
    """The table shipped with parsebridge (`families.toml`, read once by `family_rows`)."""
    return _table(rows())
