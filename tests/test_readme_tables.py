"""The README's builtin-parsers table is generated from the formats' summaries (tools/readme_tables.py)."""

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
    for name in TOOL_PARSERS:
        assert f"| tool | `{name}` | {tool_format(name).summary.replace('|', chr(92) + '|')} |" in table
    for name in REASONING_PARSERS:
        assert f"| reasoning | `{name}` |" in table
