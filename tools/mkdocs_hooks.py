"""mkdocs hooks for the documentation site (mkdocs.yml `hooks:`).

The pages link to files of the repository outside `docs/` (`../src/parsebridge/protocol/families.toml`,
`../examples/openai_server.py`), which read well on GitHub but are no pages of the site. Such a
link is checked here (a missing file is an error, so `mkdocs build --strict` fails on it) and
rendered as the file's path in code, not as a link the site could not serve.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.plugins.parsebridge")

_LINK = re.compile(r"(?<!!)\[((?:[^\]\[]|\[[^\]]*\])*)\]\((\.\./[^()\s#]+)(#[^()\s]*)?\)")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _outside(text: str, target: str, page_dir: Path, root: Path) -> str:
    path = (page_dir / target).resolve()
    if not path.exists():
        log.warning("link to %s, which does not exist", target)
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else target
    label = text.strip("`")
    return text if rel.endswith(label) or label.endswith(Path(rel).name) else f"{text} (`{rel}`)"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Links leaving `docs/` become checked file paths; fenced code is left as it is."""
    docs = Path(config["docs_dir"]).resolve()
    root = docs.parent
    page_dir = (docs / page.file.src_path).parent
    out, fenced = [], False
    for line in markdown.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced:
            line = _LINK.sub(lambda m: _outside(m.group(1), m.group(2), page_dir, root), line)
        out.append(line)
    return "".join(out)
