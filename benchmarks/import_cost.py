"""Section 1: what `import parsebridge` costs, and what lazy framework import saves.

Each figure is a fresh interpreter (`python -X importtime` is too noisy to
sum), measured round-robin with a bare `python -c pass`, and reported as
time over the bare start. Framework rows (in the interpreter that has the
framework): importing the framework's parser modules alone — what
`import parsebridge` does *not* pay, thanks to lazy adapters — and the first
parse through `vllm:hermes` / `sglang:qwen25`, which adds building the
adapter's tokenizer. A last row checks that `import parsebridge` imports no
framework at all.
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
import time
from pathlib import Path

from ._backends import SETTINGS, installed, measured_frameworks, skip_row
from ._timing import Row, Sample, describe, ratio

SECTION = "import"
TIMEOUT_S = 600

FRAMEWORK_IMPORT = {
    "vllm": "from vllm.tool_parsers import ToolParserManager; from vllm.reasoning import ReasoningParserManager",
    "sglang": (
        "from sglang.srt.function_call.function_call_parser import FunctionCallParser; "
        "from sglang.srt.parser.reasoning_parser import ReasoningParser"
    ),
}
FIRST_USE = {
    "vllm": "import parsebridge as pb; pb.get_tool_parser('vllm:hermes').parse('x')",
    "sglang": "import parsebridge as pb; pb.get_tool_parser('sglang:qwen25').parse('x')",
}
NO_FRAMEWORK = (
    "import sys, parsebridge; "
    "bad = sorted(m for m in ('vllm', 'sglang', 'torch', 'transformers') if m in sys.modules); "
    "print(','.join(bad))"
)


@functools.cache
def _env() -> dict[str, str]:
    """Byte-code caching on, as in a normal install, but outside the source tree.

    With PYTHONDONTWRITEBYTECODE (set on this project's sandboxes) every run
    would recompile the editable source, which no installed user pays; the
    caches go to a prefix directory under the user cache instead, warmed by
    one untimed run per case.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(Path.home() / ".cache" / "parsebridge-bench" / "pycache")
    return env


def _run(code: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, timeout=TIMEOUT_S, env=_env()
    )
    return time.perf_counter() - start


def run(quick: bool) -> list[Row]:
    repeat, fw_repeat = (3, 1) if quick else (9, 3)
    cases = {"bare interpreter": "pass", "import parsebridge": "import parsebridge"}
    if "builtin" in SETTINGS.backends:
        cases["builtin first use"] = (
            "import parsebridge as pb; pb.get_tool_parser('builtin:hermes').parse('x'); "
            "pb.get_reasoning_parser('builtin:qwen3').parse('x')"
        )
    rows: list[Row] = []
    heavy: dict[str, str] = {}
    for fw in measured_frameworks():
        if not installed(fw):
            rows.append(skip_row(SECTION, f"{fw} first use", "not installed"))
            continue
        heavy[f"import {fw} parser modules"] = FRAMEWORK_IMPORT[fw]
        heavy[f"{fw} backend first parse"] = FIRST_USE[fw]

    samples = {label: Sample(label) for label in [*cases, *heavy]}
    failed: dict[str, str] = {}
    for code in {**cases, **heavy}.values():  # warm the byte-code caches (untimed); failures show below
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            _run(code)
    for i in range(repeat):
        todo = {**cases, **(heavy if i < fw_repeat else {})}
        for label, code in todo.items():
            if label in failed:
                continue
            try:
                samples[label].runs.append(_run(code))
            except subprocess.CalledProcessError as exc:
                failed[label] = (
                    (exc.stderr or b"").decode(errors="replace").strip().splitlines()[-1:][0][:160]
                )
            except subprocess.TimeoutExpired:
                failed[label] = f"timed out after {TIMEOUT_S}s"
    base = samples["bare interpreter"]
    where = SETTINGS.interpreter
    rows.insert(
        0, Row(SECTION, f"bare interpreter start [{where}]", base.min * 1000, "ms", raw=describe(base))
    )
    for label, sample in samples.items():
        if label == "bare interpreter":
            continue
        if label in failed:
            rows.append(skip_row(SECTION, f"{label} [{where}]", f"failed: {failed[label]}"))
            continue
        rows.append(
            Row(
                SECTION,
                f"{label} (over bare start) [{where}]",
                (sample.min - base.min) * 1000,
                "ms",
                raw=describe(sample, base),
                detail={**sample.as_dict(), "bare": base.as_dict(), "ratio_to_bare": ratio(sample, base)},
            )
        )
    leaked = subprocess.run([sys.executable, "-c", NO_FRAMEWORK], capture_output=True, text=True, timeout=120)
    names = leaked.stdout.strip()
    rows.append(
        Row(
            SECTION,
            f"heavy modules imported by `import parsebridge` [{where}]",
            float(len(names.split(",")) if names else 0),
            "modules",
            target="0",
            met=not names if leaked.returncode == 0 else False,
            raw=names
            or (
                "none of vllm, sglang, torch, transformers"
                if leaked.returncode == 0
                else leaked.stderr[-160:]
            ),
        )
    )
    return rows
