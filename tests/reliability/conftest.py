"""Print (and, on request, write) what the fuzz/corpus tests recorded about each backend."""

from __future__ import annotations

from typing import Any

import _fuzzlog


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    """Rewrite the tally after every test, so an interrupted run still leaves its data."""
    path = _fuzzlog.report_path()
    if path is not None and _fuzzlog.LOG:
        _fuzzlog.write_report(path)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _fuzzlog.LOG:
        return
    terminalreporter.section("parsebridge fuzz / adversarial corpus")
    for line in _fuzzlog.summary_lines():
        terminalreporter.write_line(line)
    path = _fuzzlog.report_path()
    if path is not None:
        _fuzzlog.write_report(path)
        terminalreporter.write_line(f"written to {path}")
