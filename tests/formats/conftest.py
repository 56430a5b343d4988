"""Print the round-trip tallies (framework divergences are data, not failures) at the end of the session."""

from __future__ import annotations

from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    import sys

    mod = sys.modules.get("test_roundtrip") or next(
        (m for name, m in sys.modules.items() if name.endswith("test_roundtrip")), None
    )
    tallies = getattr(mod, "TALLIES", None)
    if not tallies:
        return
    from parsebridge.conformance.roundtrip import summary_lines

    section = {"backends": {b: {f: t.as_dict() for f, t in per.items()} for b, per in tallies.items()}}
    terminalreporter.section("parsebridge round trip (calls → renderer → parser)")
    for line in summary_lines(section):
        terminalreporter.write_line(line)
