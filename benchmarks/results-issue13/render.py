"""Regenerate the results part of docs/benchmarks.md from the issue-13 runs' JSON.

Run from the repository root: ``python benchmarks/results-issue13/render.py``.
The narrative is `narrative.md` beside this file; every table (before/after
summary and the full tables) comes from the JSON files here and
benchmarks/results-{full,sglang}.json (the previous runs), never retyped.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, ".")
from benchmarks._markdown import to_markdown


def rows(path):
    p = Path(path)
    return {r["name"]: r for r in json.loads(p.read_text())["rows"]} if p.exists() else {}


def fmt(r, key="value"):
    if not r or r.get("value") is None:
        return "—"
    v = r["value"]
    return f"{v:,.1f}" if abs(v) < 1000 else f"{v:,.0f}"


before = {**rows("benchmarks/results-full.json"), **rows("benchmarks/results-sglang.json")}
r1 = rows("benchmarks/results-issue13/overhead-import-run1.json")
r2 = rows("benchmarks/results-issue13/overhead-import-run2.json")
thr = rows("benchmarks/results-issue13/throughput.json")
before_thr = before
out = [
    "| overhead figure (%, min ratio) | before | run 1 | run 2 | run 1 medians' ratio − 1 | target |",
    "|---|---:|---:|---:|---:|---|",
]
for name, r in r1.items():
    if r["section"] != "overhead":
        continue
    med = r.get("detail", {}).get("ratio_median")
    b = before.get(name)
    out.append(
        f"| {name} | {fmt(b)} | {fmt(r)} | {fmt(r2.get(name))} | {(med - 1) * 100:.1f} | {r.get('target', '')} |"
        if med
        else f"| {name} | {fmt(b)} | {fmt(r)} | {fmt(r2.get(name))} | — | {r.get('target', '')} |"
    )
out += ["", "| import figure (ms over a bare start) | before | run 1 | run 2 |", "|---|---:|---:|---:|"]
for name, r in r1.items():
    if r["section"] == "import" and "over bare" in name:
        bname = name.replace("[main]", "[vllm]")
        out.append(
            f"| {name} | {fmt(before.get(name) or before.get(bname))} | {fmt(r)} | {fmt(r2.get(name))} |"
        )
out += ["", "| throughput figure (×) | before | now | target |", "|---|---:|---:|---|"]
for name, r in thr.items():
    if (
        ("speed" in name and "streamed" in name)
        or ("floor" in name and "streamed" in name)
        or "fastest" in name
    ):
        out.append(f"| {name} | {fmt(before_thr.get(name))} | {fmt(r)} | {r.get('target', '')} |")
SUMMARY = "\n".join(out)


doc = Path("docs/benchmarks.md")
text = doc.read_text()
head = text[: text.index("## Results on this machine")]
narrative = Path("benchmarks/results-issue13/narrative.md").read_text() + "\n" + SUMMARY + "\n"
runs = [
    ("Overhead and import, run 1", "benchmarks/results-issue13/overhead-import-run1.json"),
    (
        "Overhead and import, run 2 (the next run, same code)",
        "benchmarks/results-issue13/overhead-import-run2.json",
    ),
    (
        "Throughput (builtin beside vLLM and SGLang, one process)",
        "benchmarks/results-issue13/throughput.json",
    ),
    (
        "Scaling, builtin (streamed 64k/8k, one-shot 8 MB/1 MB, per doubling)",
        "benchmarks/results-issue13/scaling-builtin.json",
    ),
]
parts = [head, narrative]
for title, path in runs:
    p = Path(path)
    if p.exists():
        parts.append(f"### {title}\n\n" + to_markdown(json.loads(p.read_text())) + "\n")
doc.write_text("\n".join(parts))
