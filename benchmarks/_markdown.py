"""Results JSON → a Markdown table, so docs/benchmarks.md is generated, not retyped.

``python -m benchmarks._markdown results.json`` prints it; `__main__` writes
it with ``--markdown FILE``.
"""

from __future__ import annotations

import math
from typing import Any


def _value(row: dict[str, Any]) -> str:
    value = row.get("value")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    unit = row.get("unit", "")
    text = f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.3g}"
    return f"{text} {unit}".strip()


def _met(row: dict[str, Any]) -> str:
    met = row.get("met")
    return "" if met is None else ("yes" if met else "**no**")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def versions_line(data: dict[str, Any]) -> str:
    """One line per interpreter: python, parsebridge, vLLM / SGLang, torch, transformers."""
    lines = []
    versions = data.get("versions", {})
    for label, v in versions.items():
        if not isinstance(v, dict):
            continue
        parts = [
            f"{k} {v[k]}"
            for k in ("python", "parsebridge", "vllm", "sglang", "torch", "transformers")
            if v.get(k)
        ]
        lines.append(f"- `{label}` interpreter: " + ", ".join(parts))
    return "\n".join(lines)


def to_markdown(data: dict[str, Any]) -> str:
    head = [
        f"Run: {data.get('date', '?')} ({'quick' if data.get('quick') else 'full'}), "
        f"machine {data.get('machine', {})}",
        "",
        versions_line(data),
        "",
        f"Command: `{data.get('command', 'python -m benchmarks')}`",
        "",
        "| section | figure | value | target | met | raw: min/median (or why missing) | interpreter |",
        "|---|---|---:|---|---|---|---|",
    ]
    for row in data.get("rows", []):
        detail = row.get("detail", {})
        head.append(
            "| "
            + " | ".join(
                _cell(x)
                for x in (
                    row.get("section", ""),
                    row.get("name", ""),
                    _value(row),
                    row.get("target", ""),
                    _met(row),
                    row.get("raw", ""),
                    str(detail.get("interpreter", "")),
                )
            )
            + " |"
        )
    return "\n".join(head) + "\n"


if __name__ == "__main__":
    import json
    import sys
    from pathlib import Path

    source = Path(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results.json")
    print(to_markdown(json.loads(source.read_text())))
