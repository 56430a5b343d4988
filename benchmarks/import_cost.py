"""Section 1: what `import parsebridge` costs, and what lazy framework import saves.

Each figure is a fresh interpreter (`python -X importtime` is too noisy to
sum), measured alternately with a bare `python -c pass`.
"""

from __future__ import annotations

import subprocess
import sys

from ._timing import Row, Sample, ratio


def _run(code: str) -> float:
    import time

    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - start


def _framework_available(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def run(quick: bool) -> list[Row]:
    repeat = 3 if quick else 7
    cases = {
        "bare interpreter": "pass",
        "import parsebridge": "import parsebridge",
        "builtin:hermes first use": "import parsebridge as pb; pb.get_tool_parser('builtin:hermes').parse('x')",
    }
    first_use = {
        "vllm": "import parsebridge as pb; pb.get_tool_parser('vllm:hermes').parse('x')",
        "sglang": "import parsebridge as pb; pb.get_tool_parser('sglang:qwen25').parse('x')",
    }
    for fw, code in first_use.items():
        if _framework_available(fw):
            cases[f"{fw} backend first use"] = code
    samples = {label: Sample(label) for label in cases}
    for _ in range(repeat if not quick else 2):
        for label, code in cases.items():
            samples[label].runs.append(_run(code))
    base = samples["bare interpreter"]
    rows = [Row("import", "bare interpreter start", base.min * 1000, "ms", detail=base.as_dict())]
    for label, sample in samples.items():
        if label == "bare interpreter":
            continue
        extra = (sample.min - base.min) * 1000
        rows.append(
            Row(
                "import",
                f"{label} (over bare start)",
                extra,
                "ms",
                detail={**sample.as_dict(), "ratio_to_bare": ratio(sample, base)},
            )
        )
    return rows
