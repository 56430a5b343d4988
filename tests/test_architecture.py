"""The architecture paragraph (docs/development.md) names every room of the package, and only those."""

import re
from pathlib import Path

import parsebridge

PAGE = Path(__file__).resolve().parent.parent / "docs" / "development.md"
PKG = Path(parsebridge.__file__).parent


def _paragraph() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("Architecture: the package")
    return text[start : text.index("`.ci/run` runs", start)]


def test_readme_names_every_room():
    rooms = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    named = set(re.findall(r"^- `(\w+)/`", _paragraph(), re.M))
    assert named == rooms, f"in the tree, not the page: {rooms - named}; in the page only: {named - rooms}"


def test_readme_counts_the_rooms():
    words = {"nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
    count = re.search(r"has (\w+) rooms", _paragraph())
    assert count and words.get(count[1]) == len(re.findall(r"^- `\w+/`", _paragraph(), re.M))


def test_readme_names_the_adapters_and_engines():
    para = _paragraph()
    backends = {
        p.name
        for p in (PKG / "adapters").iterdir()
        if p.is_dir() and (p / "__init__.py").exists() and not p.name.startswith("_")
    }
    for name in backends:
        assert f"`{name}/`" in para, (
            f"adapters/{name}/ is not named in docs/development.md's architecture paragraph"
        )
    assert (PKG / "adapters" / "builtin" / "engines" / "__init__.py").exists()
