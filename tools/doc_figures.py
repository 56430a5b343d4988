#!/usr/bin/env python3
"""The docs' conformance and install figures, written from measured data (never typed).

Each figure sits between two marker comments in one or more of the pages (README.md and
docs/*.md),
``<!-- figures:NAME:begin (tools/doc_figures.py) -->`` … ``<!-- figures:NAME:end -->``,
and is rendered from data committed under ``docs/data/`` (written by a
measuring run) or computed from the package itself:

- ``fixtures``: the bundled transcripts and their families (from the package);
- ``bundled``: how many transcripts are bundled, in a sentence of docs/compare.md (from the package);
- ``chunkings``: how many chunkings conformance runs by default (from the package);
- ``conformance``: every backend's results in the side-by-side run
  (``docs/data/conformance-all.json``, from a ``report.json``);
- ``command1``: what the README's command 1 shows for vLLM
  (``docs/data/compare-hermes.json``, from ``compare --format json``);
- ``install``: what the side-by-side parsers-only install weighs
  (``docs/data/install-weight.json``, measured with ``du``).

Measuring (in the env with vLLM and SGLang installed, `tox -e all` or
``parsebridge install-framework all``)::

    parsebridge conformance --report reports/all
    python tools/doc_figures.py --from-report reports/all/report.json
    parsebridge compare --bundled --family hermes --format json -o /tmp/hermes.jsonl
    python tools/doc_figures.py --from-compare /tmp/hermes.jsonl
    python tools/doc_figures.py --measure-install

Rendering and checking (any env)::

    python tools/doc_figures.py            # rewrites the figures in every page
    python tools/doc_figures.py --check    # fails when one is stale
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

README = ROOT / "README.md"
#: Every page a figure may sit in: the README and the documentation site's pages.
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
DATA = ROOT / "docs" / "data"
CONFORMANCE = DATA / "conformance-all.json"
COMPARE = DATA / "compare-hermes.json"
INSTALL = DATA / "install-weight.json"
SUPPORT = DATA / "support.json"
#: Which run docs/img/conformance-report.png shows (written by tools/screenshot_report.py).
SCREENSHOT = ROOT / "docs" / "img" / "conformance-report.json"
#: What the adapter does differently per release, in a few words (prose; the figures come from SUPPORT).
SHAPES = {
    ("vllm", "0.11.0"): "`vllm.entrypoints.openai.tool_parsers`, `extract_reasoning_content`, serving loop "
    "(tools start on the next chunk)",
    ("vllm", "0.13.0"): "`vllm.tool_parsers`, `extract_reasoning`, serving loop (same-chunk tool start)",
    ("vllm", "0.15.1"): "same, end-of-stream flush keeps the call's id and name",
    ("vllm", "0.33.0"): "`vllm.parser` per-request driver + `ChatStreamProcessor`",
    ("sglang", "0.4.10.post2"): "`sglang.srt.reasoning_parser`, no `force_reasoning`",
    ("sglang", "0.5.1.post3"): "`force_reasoning`",
    ("sglang", "0.5.10.post1"): "`sglang.srt.parser.reasoning_parser`, `request=`",
    ("sglang", "0.5.23"): "`tokenizer=`, `tool_choice`, `parse_stream_end()`",
    ("dynamo", "1.4.2"): "in-process frontend, scripted engine, fenced steps (`WorkerType` required)",
    ("dynamo", "1.5.1"): "same",
    ("dynamo", "1.6.1"): "same (36 / 35 names with aliases)",
    ("smg", "1.9.0"): "a gateway process per parser configuration, fed by a scripted gRPC worker",
    ("smg", "1.11.0"): "same",
    ("smg", "1.13.0"): "same",
    ("llamacpp", "0.3.30"): "a native harness over `chat.h` (llama-cpp-python's vendored llama.cpp), "
    "run as a subprocess, one token a step with `is_partial`",
    ("llamacpp", "0.3.36"): "same",
}
STATUSES = ("pass", "diverge", "fail", "error", "unsupported")
NAMES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "dynamo": "Dynamo",
    "smg": "smg",
    "llamacpp": "llama.cpp",
    "builtin": "builtin",
}


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")


# ---------------------------------------------------------------- measuring


def from_report(report_path: Path) -> dict[str, Any]:
    """The compact summary of a conformance report that the README's figures need."""
    report = json.loads(report_path.read_text(encoding="utf-8"))
    status: dict[str, Counter[str]] = {}
    families: dict[str, dict[str, int]] = {}
    for key, by_backend in report["summary"]["by_family"].items():
        kind = key.split(":", 1)[0]
        for backend, counts in by_backend.items():
            status.setdefault(backend, Counter()).update(counts)
            if set(counts) - {"unsupported"}:
                fams = families.setdefault(backend, {"tool": 0, "reasoning": 0})
                fams[kind] = fams.get(kind, 0) + 1
    timing = report.get("timing") or {}
    return {
        "generated": report.get("generated"),
        "versions": report["backends"],
        "transcripts": len(report["transcripts"]),
        "chunkings": report["chunkings"],
        "results": report["summary"]["total"],
        "wall_s": timing.get("wall_s"),
        "jobs": timing.get("jobs"),
        "status": {b: {s: c[s] for s in STATUSES if c[s]} for b, c in sorted(status.items())},
        "families": families,
    }


def from_compare(jsonl: Path) -> dict[str, Any]:
    """Per backend: each class of wrong answer (against the transcript's expected one), and at
    which of its modes (one-shot, streamed per token, at 5 and 20 tokens) it was seen."""
    classes: dict[str, dict[str, set[str]]] = {}
    summary: dict[str, Any] = {}
    for line in jsonl.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("type") == "summary":
            summary = rec
            continue
        for diff in rec.get("against_expected") or ():
            spec, _, mode = diff["a"].rpartition("/")
            backend = spec.split(":", 1)[0]
            classes.setdefault(backend, {}).setdefault(diff["class"], set()).add(mode)
    modes = summary.get("modes", {})
    return {
        "fixtures_sha256": hermes_fixtures_digest(),
        "versions": summary.get("backends", {}),
        "chunkings": list(modes.values()),
        "classes": {
            b: {c: [modes.get(m, m) for m in modes if m in got] for c, got in sorted(v.items())}
            for b, v in sorted(classes.items())
        },
    }


def hermes_fixtures_digest() -> str:
    """What command 1 compares, as the package bundles it now: the hermes transcripts with their
    expected readings. A changed expected reading changes the wrong answers the figure names
    (the 2026-11-29 rule that a cut-off call is no call added vLLM's `extra_call` unseen)."""
    from parsebridge.conformance.transcripts import bundled_transcripts  # the package of this clone

    digest = hashlib.sha256()
    for transcript in bundled_transcripts(families=["hermes"]):
        record = json.dumps(transcript.model_dump(mode="json"), sort_keys=True)  # not pydantic's writer
        digest.update(record.encode("utf-8"))
    return digest.hexdigest()


def measure_install() -> dict[str, Any]:
    """`du` of this environment's site-packages: the total and the biggest folders (MB)."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])

    def size(path: Path) -> int:
        if path.is_file():
            return path.stat().st_blocks * 512
        return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file() and not p.is_symlink())

    sizes = {p.name: size(p) for p in site.iterdir()}
    top = sorted(sizes.items(), key=lambda kv: -kv[1])[:4]
    versions = {}
    for fw in ("vllm", "sglang", "torch"):
        try:
            from importlib.metadata import version

            versions[fw] = version(fw)
        except Exception:
            versions[fw] = None
    return {
        "total_mb": round(sum(sizes.values()) / 2**20),
        "top_mb": {name: round(n / 2**20) for name, n in top},
        "versions": versions,
    }


# ---------------------------------------------------------------- rendering


def _gb(mb: float) -> str:
    return f"{mb / 1024:.1f} GB"


def _counts(counts: dict[str, int], skip: tuple[str, ...] = ()) -> str:
    return ", ".join(f"{counts.get(s, 0):,} {s}" for s in STATUSES if s not in skip)


def fixtures_figure() -> str:
    from parsebridge.conformance.transcripts import bundled_transcripts

    ts = bundled_transcripts()
    tool = {f.name for t in ts if (f := t.resolve_family()) is not None and t.kind != "reasoning"}
    reasoning = {f.name for t in ts if (f := t.resolve_reasoning_family()) is not None}
    return f"{len(ts):,} transcripts over {len(tool)} tool-call and {len(reasoning)} reasoning families"


def bundled_figure() -> str:
    from parsebridge.conformance.transcripts import bundled_transcripts

    return f"{len(bundled_transcripts()):,} bundled transcripts"


def chunkings_figure() -> str:
    from parsebridge.conformance.chunking import DEFAULT_CHUNKINGS

    return f"{len(DEFAULT_CHUNKINGS)} chunkings"


def conformance_figure(data: dict[str, Any]) -> str:
    status, versions = data["status"], data["versions"]
    builtin = status.get("builtin", {})
    fams = data["families"].get("builtin", {})
    ran = sum(n for s, n in builtin.items() if s != "unsupported")
    if builtin.get("pass", 0) == ran:
        head = "The builtin backend passes every fixture of its families at every chunking"
    else:
        head = f"The builtin backend: {_counts(builtin)}"
    frameworks = [f"{NAMES[b]} {versions[b]} {_counts(status[b])}" for b in ("vllm", "sglang") if b in status]
    wall = f" in {data['wall_s']:.0f} s wall ({data['jobs']} worker processes, framework imports included)"
    return (
        f"{head} ({ran:,} results over {fams.get('tool', 0)} tool and {fams.get('reasoning', 0)} "
        "reasoning families). With both frameworks installed side by side (tox env `all`), the same "
        f"run shows their real divergences: {'; '.join(frameworks)} ({data['results']:,} results over "
        f"{data['transcripts']:,} transcripts × {len(data['chunkings'])} chunkings"
        f"{wall if data.get('wall_s') else ''}, run {str(data['generated'])[:10]}; `unsupported`: no parser "
        "for that family in that release)."
    )


def command1_figure(data: dict[str, Any]) -> str:
    version = data["versions"].get("vllm", "?")
    every = data["chunkings"]
    parts = [
        f"`{c}` ({'every chunking' if chunkings == every else ', '.join(chunkings)})"
        for c, chunkings in data["classes"].get("vllm", {}).items()
        if c != "whitespace_only"
    ]
    return f"for vLLM {version} on these transcripts, its wrong answers: {'; '.join(parts) or 'none'}"


def install_figure(data: dict[str, Any]) -> str:
    top = ", ".join(f"{name} {_gb(mb)}" for name, mb in data["top_mb"].items())
    v = data["versions"]
    return (
        f"the side-by-side `all` environment here (vLLM {v.get('vllm')} and SGLang {v.get('sglang')}) "
        f"weighs {_gb(data['total_mb'])} (`du` of its site-packages), the biggest folders {top}"
    )


def support_figure(rows: list[dict[str, Any]]) -> str:
    """The README's excerpt of docs/support.md: one row per release."""
    out = [
        "| framework | release | adapter API shape | tool / reasoning parsers | pass | diverge | fail | error "
        "| measured |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        st = r["status"]
        out.append(
            f"| {NAMES[r['framework']]} | {r['version']} | {SHAPES.get((r['framework'], r['version']), '')} | "
            f"{r['tool_parsers']} / {r['reasoning_parsers']} | "
            + " | ".join(str(st.get(s, 0)) for s in ("pass", "diverge", "fail", "error"))
            + f" | {r.get('measured') or '?'} |"
        )
    return "\n" + "\n".join(out) + "\n"


def figures() -> dict[str, str]:
    return {
        "support": support_figure(json.loads(SUPPORT.read_text(encoding="utf-8"))),
        "fixtures": fixtures_figure(),
        "bundled": bundled_figure(),
        "chunkings": chunkings_figure(),
        "conformance": conformance_figure(_load(CONFORMANCE)),
        "command1": command1_figure(_load(COMPARE)),
        "install": install_figure(_load(INSTALL)),
    }


def _region(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- figures:{name}:begin \(tools/doc_figures.py\) -->)(.*?)(<!-- figures:{name}:end -->)", re.S
    )


def render(readme: str, values: dict[str, str] | None = None, *, required: bool = True) -> str:
    """`readme` (a page's text) with every figure it holds rendered; with `required`, every
    figure must be in it (the pages as a whole are checked by `render_pages`)."""
    for name, text in (values or figures()).items():
        pattern = _region(name)
        if not pattern.search(readme):
            if required:
                raise SystemExit(f"the page lacks the figures:{name} markers")
            continue
        readme = pattern.sub(lambda m, t=text: m.group(1) + t + m.group(3), readme)
    return readme


def render_pages(values: dict[str, str] | None = None) -> dict[Path, tuple[str, str]]:
    """Each page holding a figure → (its text, its text rendered); every figure sits in some page."""
    values = values or figures()
    out = {}
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if "(tools/doc_figures.py) -->" in text:
            out[page] = (text, render(text, values, required=False))
    for name in values:
        if not any(_region(name).search(text) for text, _ in out.values()):
            raise SystemExit(f"no page holds the figures:{name} markers")
    return out


def stale_data() -> list[str]:
    """Data older than the package it describes (a fixture added since the run), data files that
    disagree (the support rows of the all run's releases), and a support page not rendered from them."""
    from parsebridge.conformance.support import load_rows, render_markdown
    from parsebridge.conformance.transcripts import bundled_transcripts

    problems = []
    data = _load(CONFORMANCE)
    n = len(bundled_transcripts())
    if data.get("transcripts") != n:
        problems.append(
            f"docs/data/{CONFORMANCE.name} counts {data.get('transcripts')} transcripts, the package "
            f"bundles {n}: re-run the conformance suite in the all env (see {Path(__file__).name})"
        )
    if _load(COMPARE).get("fixtures_sha256") != hermes_fixtures_digest():
        problems.append(
            f"docs/data/{COMPARE.name} comes from other hermes transcripts than the package bundles "
            f"(or their expected readings changed since): re-run command 1 (see {Path(__file__).name})"
        )
    rows = load_rows(SUPPORT)
    for row in rows:
        fw, version = row["framework"], row["version"]
        if data.get("versions", {}).get(fw) == version and dict(row["status"]) != data["status"][fw]:
            problems.append(f"{SUPPORT.name} and {CONFORMANCE.name} disagree on {fw} {version}")
    shot = _load(SCREENSHOT)
    if shot.get("generated") != data.get("generated"):
        problems.append(
            f"docs/img/conformance-report.png shows the run of {shot.get('generated')}, the figures come "
            f"from the run of {data.get('generated')}: python tools/screenshot_report.py REPORT.html"
        )
    page = ROOT / "docs" / "support.md"
    command = "parsebridge conformance support --data docs/data/support.json --out docs/support.md"
    if page.read_text(encoding="utf-8") != render_markdown(rows, command=command):
        problems.append(f"docs/support.md is not rendered from {SUPPORT.name}: run {command}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if a figure in a page is stale")
    ap.add_argument("--from-report", type=Path, metavar="REPORT_JSON", help=f"write {CONFORMANCE.name}")
    ap.add_argument("--from-compare", type=Path, metavar="JSONL", help=f"write {COMPARE.name}")
    ap.add_argument("--measure-install", action="store_true", help=f"write {INSTALL.name} (du)")
    ns = ap.parse_args(argv)
    if ns.from_report:
        _write(CONFORMANCE, from_report(ns.from_report))
    if ns.from_compare:
        _write(COMPARE, from_compare(ns.from_compare))
    if ns.measure_install:
        _write(INSTALL, measure_install())
    pages = render_pages()
    stale = [p.relative_to(ROOT).as_posix() for p, (text, new) in pages.items() if new != text]
    if ns.check:
        problems = stale_data() + [f"{s} figures are stale: run python tools/doc_figures.py" for s in stale]
        for p in problems:
            print(p, file=sys.stderr)
        if not problems:
            print("figures up to date in " + ", ".join(p.relative_to(ROOT).as_posix() for p in pages))
        return 1 if problems else 0
    for page, (text, new) in pages.items():
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"{page.relative_to(ROOT).as_posix()} figures written")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
