"""The conformance table's title stays on one line when the table is narrow (Rich wraps a table
title to the table's width: one builtin column made it "conformance:" / "family ×" / "backend")."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from parsebridge.conformance.run_output import print_summary


def test_the_title_does_not_wrap_over_a_narrow_table() -> None:
    out = io.StringIO()
    console = Console(file=out, width=60, color_system=None)
    result = SimpleNamespace(
        kind="tool",
        family="x",
        backend="builtin",
        status="pass",
        transcript="t",
        chunking="oneshot",
        known=False,
    )
    print_summary(console, [result], ["builtin"], {"builtin": None}, show=0)
    lines = out.getvalue().splitlines()
    assert lines[0].strip() == "conformance: family × backend", lines[:4]
    assert max(len(line) for line in lines[1:]) < len("conformance: family × backend"), lines
