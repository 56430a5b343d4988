#!/usr/bin/env python3
"""Regenerate the builtin-parsers table of docs/builtin-parsers.md from the formats' `summary` lines (and the
conventions table from `conventions.servers_rules`: the formats' `servers_content` and
`servers_markup`, and `families.toml`'s `servers_started`, the rows `parsebridge list` shows too).

The table lists every parser the builtin backend registers (kind | name |
format); the format column is the `summary` of the family's format in
`parsebridge.formats`, so a new family shows up here when its parser and
format are registered. The table sits between two marker comments in
docs/builtin-parsers.md.

Run:  python tools/readme_tables.py            (rewrites the table)
      python tools/readme_tables.py --check    (fails if the table is stale)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from parsebridge.adapters.builtin import REASONING_PARSERS, TOOL_PARSERS  # noqa: E402
from parsebridge.formats import UnknownFormatError, mistral, reasoning_format, tool_format  # noqa: E402

#: The page that holds both tables (the README links to it).
PAGE = ROOT / "docs" / "builtin-parsers.md"
BEGIN, END = "<!-- builtin-parsers:begin (tools/readme_tables.py) -->", "<!-- builtin-parsers:end -->"
CONV_BEGIN, CONV_END = "<!-- conventions:begin (tools/readme_tables.py) -->", "<!-- conventions:end -->"

#: Builtin parsers that are not one family's format (so no format module holds their summary).
GENERIC = {
    (
        "reasoning",
        "think",
    ): f'any markers: `get_reasoning_parser("builtin:think", start="{mistral.THINK}", end="{mistral.THINK_END}")`',
}


def _summary(kind: str, name: str) -> str:
    if (kind, name) in GENERIC:
        return GENERIC[(kind, name)]
    try:
        fmt = tool_format(name) if kind == "tool" else reasoning_format(name)
    except UnknownFormatError:
        raise SystemExit(
            f"builtin {kind} parser {name!r} has no format in parsebridge.formats (add one)"
        ) from None
    if fmt.family != name:  # a parser registered under an alias of another family's format
        label, sep, rest = fmt.summary.partition(": ")
        plain_label = sep and "`" not in label
        return f"the `{fmt.family}` format" + (f" ({label}): {rest}" if plain_label else f": {fmt.summary}")
    return fmt.summary


def builtin_table() -> str:
    """The markdown table, one row per builtin parser (tools first, registry order)."""
    rows = ["| kind | name | format |", "|---|---|---|"]
    for kind, names in (("tool", TOOL_PARSERS), ("reasoning", REASONING_PARSERS)):
        for name in names:
            rows.append(f"| {kind} | `{name}` | {_summary(kind, name).replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"


def conventions_table() -> str:
    """What "servers" does and for which builtin parsers (docs/consensus.md and `parsebridge list`
    show the same rows)."""
    from parsebridge.conformance.consensus.page import conventions_table as table

    return table()


def _between(text: str, begin: str, end: str, body: str) -> str:
    head, sep, rest = text.partition(begin)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise SystemExit(f"docs/builtin-parsers.md lacks the markers {begin!r} … {end!r}")
    return f"{head}{begin}\n{body}{end}{tail}"


def _is_row(line: str) -> bool:
    return line.startswith(("| tool | `", "| reasoning | `"))


def render(readme: str) -> str:
    """The page's text with the table between the markers replaced (and any stray copy of its rows
    right after the end marker dropped: the table exists once)."""
    head, sep, rest = readme.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"docs/builtin-parsers.md lacks the markers {BEGIN!r} … {END!r}")
    lines = tail.split("\n")
    while len(lines) > 1 and _is_row(lines[1]):
        del lines[1]
    text = f"{head}{BEGIN}\n{builtin_table()}{END}" + "\n".join(lines)
    return _between(text, CONV_BEGIN, CONV_END, conventions_table())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the page's tables are stale")
    args = ap.parse_args(argv)
    text = PAGE.read_text(encoding="utf-8")
    new = render(text)
    if args.check:
        if new != text:
            print(
                "docs/builtin-parsers.md builtin-parsers table is stale: run python tools/readme_tables.py",
                file=sys.stderr,
            )
            return 1
        print("docs/builtin-parsers.md builtin-parsers table up to date")
        return 0
    PAGE.write_text(new, encoding="utf-8")
    print("docs/builtin-parsers.md builtin-parsers table written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
