"""`report.html`: one self-contained file (inline CSS and JS, the data embedded, no network).

A CI artefact is opened from a zip on a laptop, often offline, so nothing
may be fetched. The page renders the families × backends matrix coloured
by status and, per transcript, the output, the expected value and each
backend's reading per chunking side by side.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

PLACEHOLDER = "__REPORT_JSON__"


def _embed(report: dict[str, Any]) -> str:
    # Inside <script>, "</script>" or "<!--" in model output would end the block:
    # escaping every "<" keeps the JSON valid and the HTML parser blind to it.
    text = json.dumps(report, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_html(report: dict[str, Any]) -> str:
    """The report page for a report dict (as `report.build_report` makes it)."""
    template = resources.files(__package__).joinpath("templates/report.html").read_text(encoding="utf-8")
    return template.replace(PLACEHOLDER, _embed(report), 1)
