#!/usr/bin/env python3
"""Regenerate the README's screenshot of a conformance report (headless Chromium).

    parsebridge conformance --report reports/all          # in the env with vLLM and SGLang
    python tools/screenshot_report.py reports/all/report.html

writes docs/img/conformance-report.png (the top of the page: the header and the
families × backends matrix) and docs/img/conformance-report.json, which says
which run the picture shows; tools/doc_figures.py --check fails when that is not
the run the README's figures come from (docs/data/conformance-all.json).
Chromium: `apt-get install chromium` (CI installs it too).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img" / "conformance-report.png"
SIZE = (1300, 900)


def browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("no chromium on PATH (apt-get install chromium)")


def screenshot(html: Path, out: Path) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                browser(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={SIZE[0]},{SIZE[1]}",
                f"--screenshot={out}",
                html.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("report_html", type=Path, help="report.html written by parsebridge conformance --report")
    ap.add_argument("--out", type=Path, default=OUT)
    ns = ap.parse_args(argv)
    report = json.loads(ns.report_html.with_name("report.json").read_text(encoding="utf-8"))
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    screenshot(ns.report_html, ns.out)
    shows = {"generated": report.get("generated"), "backends": report.get("backends")}
    ns.out.with_suffix(".json").write_text(json.dumps(shows, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {ns.out} ({SIZE[0]}x{SIZE[1]}) of the run of {shows['generated']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
