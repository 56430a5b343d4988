"""The team's design notes are not shipped: code and docs must say the thing itself."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_reference_to_unshipped_design_notes() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("src", "docs")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in {".py", ".md", ".toml", ".yaml", ".html", ".txt"}
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "design §" in line
    ]
    assert not offenders, f"references to the unshipped design notes: {offenders}"
