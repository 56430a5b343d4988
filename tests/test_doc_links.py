"""Issue 40, item 12: every link from README.md and docs/*.md to a file or heading of this
repository resolves, anchors included (GitHub's heading slugs)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks (a link inside code is an example, not a link)."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return "\n".join(out)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: links and code marks dropped, lower case, punctuation
    other than ``-`` and ``_`` removed, spaces to ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in _prose(page.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line))
    return found


def broken_links(page: Path) -> list[str]:
    out = []
    for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            out.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            out.append(f"{page.relative_to(ROOT)}: {target} (no heading #{anchor} in {dest.name})")
    return out


def test_every_intra_doc_link_and_anchor_resolves() -> None:
    broken = [b for page in PAGES for b in broken_links(page)]
    assert not broken, "\n".join(broken)


def test_the_checker_finds_a_broken_anchor_and_file(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Compare `at` scale!\n\n## Same\n\n## Same\n")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#compare-at-scale) [dup](a.md#same-1) [bad](a.md#compare-at-scale-1) "
        "[gone](missing.md) [web](https://example.com/x#y)\n```\n[code](nowhere.md)\n```\n"
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert broken_links(page) == [
            "b.md: a.md#compare-at-scale-1 (no heading #compare-at-scale-1 in a.md)",
            "b.md: missing.md (no such file)",
        ]
    finally:
        ROOT = saved


def test_the_site_opens_with_the_readme_s_first_paragraph() -> None:
    """The site's front page left llama.cpp out of the engines the README's opening names."""

    def opening(page: Path) -> str:
        text = page.read_text(encoding="utf-8").split("\n\n")[1]  # after the "# parsebridge" title
        return " ".join(text.split())

    assert opening(ROOT / "docs" / "index.md") == opening(ROOT / "README.md")
