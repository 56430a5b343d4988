"""The builtin-parsers table (docs/builtin-parsers.md) is generated from the formats' summaries (tools/readme_tables.py)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_builtin_parsers_table_is_current():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "readme_tables.py"), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr + "\nrun: python tools/readme_tables.py"


def test_every_builtin_parser_has_a_row_with_its_format_summary():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import readme_tables
    finally:
        sys.path.remove(str(ROOT / "tools"))
    from parsebridge.adapters.builtin import REASONING_PARSERS, TOOL_PARSERS
    from parsebridge.formats import tool_format

    table = readme_tables.builtin_table()
    rows = {line.split(" | ")[1]: line for line in table.splitlines() if line.startswith("| tool | `")}
    for name in TOOL_PARSERS:  # (a parser of another family's format: "the `fmt` format: <summary>")
        assert f"{tool_format(name).summary.replace('|', chr(92) + '|')} |" in rows[f"`{name}`"], name
    for name in REASONING_PARSERS:
        assert f"| reasoning | `{name}` |" in table


def test_a_stray_copy_of_table_rows_after_the_end_marker_is_stale():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import readme_tables
    finally:
        sys.path.remove(str(ROOT / "tools"))
    current = (ROOT / "docs" / "builtin-parsers.md").read_text(encoding="utf-8")
    stray = current.replace(readme_tables.END, readme_tables.END + "\n| tool | `hermes` | old text |", 1)
    assert readme_tables.render(stray) == current


def test_an_alias_row_names_the_format_it_shares():
    """`ling3` parses with MiMo's format: its row says so instead of reading "MiMo: …"."""
    readme = (ROOT / "docs" / "builtin-parsers.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| reasoning | `ling3` |"))
    assert "the `mimo` format" in row
