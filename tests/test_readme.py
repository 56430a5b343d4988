"""Every Python example in the README and the docs pages runs (documentation users copy).

Blocks that need a framework (they name ``vllm:``, ``sglang:`` or ``dynamo:`` specs in
code that runs) are skipped unless that framework is installed; a block
preceded by ``<!-- readme: no-test -->`` is illustration only.

A ``print(...)`` whose line ends in a comment states what it prints: the
comment is compared with the printed text (``# 'Let me check.'`` is the string
printed; anything else, ``# get_weather {'city': 'Paris'}``, is the printed
text itself). A print in a loop is judged by its last output. The few comments
that describe a print rather than quote it are listed in `DESCRIPTIONS`.

A backend swap the README advertises on a line, ``"builtin:hermes" ...  # or
"vllm:hermes", "sglang:hermes"``, is run too: the block once more with the
line's first spec replaced by each alternative, for every installed backend.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import io
import os
import re
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: The README and every page of the documentation site: their examples are tested alike.
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"(<!-- readme: no-test -->\s*)?```python\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, str]]:
    """("PAGE:LINE", code) of every tested Python block of every page."""
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in _BLOCK.finditer(text):
            if m.group(1):
                continue
            where = f"{page.relative_to(ROOT).as_posix()}:{text[: m.start()].count(chr(10)) + 1}"
            out.append((where, m.group(2)))
    return out


#: Print comments that describe the output instead of quoting it (each must still be in a page).
DESCRIPTIONS = (
    "the content, the call (id, name, arguments) as it comes; {} while text is held",
    "deltas serialise like the results",
)


def _claims(code: str) -> dict[int, str]:
    """Line (in the block) of each ``print(...)`` statement → the output its trailing comment states."""
    comments = {
        tok.start[0]: tok.string[1:].strip()
        for tok in tokenize.generate_tokens(io.StringIO(code).readline)
        if tok.type == tokenize.COMMENT
    }
    out: dict[int, str] = {}
    for node in ast.walk(ast.parse(code)):
        if not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "print"
        ):
            continue
        comment = comments.get(node.end_lineno or node.lineno)
        if not comment or comment in DESCRIPTIONS:
            continue
        try:
            value = ast.literal_eval(comment)
        except (ValueError, SyntaxError):
            value = None
        out[node.lineno] = value if isinstance(value, str) else comment
    return out


def run_checking_prints(code: str, filename: str) -> list[str]:
    """Execute `code`; return one line per print whose output differs from its comment."""
    printed: dict[int, str] = {}

    def recording_print(
        *args: Any, sep: str | None = " ", end: str | None = "\n", file: Any = None, flush: bool = False
    ) -> None:
        if file is not None:
            print(*args, sep=sep, end=end, file=file, flush=flush)
            return
        frame = sys._getframe(1)
        text = (" " if sep is None else sep).join(map(str, args))
        if frame.f_code.co_filename == filename:
            printed[frame.f_lineno] = text  # a loop: the last output stands
        sys.stdout.write(text + ("\n" if end is None else end))

    exec(compile(code, filename, "exec"), {"__name__": "__readme__", "print": recording_print})
    wrong = []
    for lineno, claim in _claims(code).items():
        got = printed.get(lineno)
        if got != claim:
            wrong.append(f"{filename} (+{lineno - 1}): prints {got!r}, its comment says {claim!r}")
    return wrong


_SPEC = re.compile(r"""["'](\w+:[\w.:-]+)["']""")


def _swaps(code: str) -> list[tuple[str, str]]:
    """(spec, alternative) for each ``# or "A", "B"`` comment after a quoted spec."""
    out = []
    for line in code.splitlines():
        live, sep, comment = line.partition("#")
        if not sep or not comment.strip().startswith("or "):
            continue
        first = _SPEC.search(live)
        alternatives = _SPEC.findall(comment)
        if first and alternatives:
            out.extend((first.group(1), alt) for alt in alternatives)
    return out


def _cases() -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = []
    for line, code in _blocks():
        out.append((line, code, None))
        for spec, alt in _swaps(code):
            out.append((line, code.replace(f'"{spec}"', f'"{alt}"', 1), alt))
    return out


def _needs(code: str) -> list[str]:
    live = "\n".join(line.split("#", 1)[0] for line in code.splitlines())
    return [fw for fw in ("vllm", "sglang", "dynamo", "smg") if f'"{fw}:' in live or f"'{fw}:" in live]


#: The package index name of a framework whose name differs.
_DISTRIBUTION = {"dynamo": "ai-dynamo-runtime"}


def _id(value: object) -> str:
    """A case is named by its "PAGE:LINE" or its swapped spec, never by its code."""
    return value if isinstance(value, str) and ":" in value and "\n" not in value else ""


def test_readme_advertised_swaps_are_found():
    """The swap comments are really picked up (a regex that matched nothing would test nothing)."""
    swaps = [alt for _, _, alt in _cases() if alt]
    assert "vllm:hermes" in swaps and "sglang:hermes" in swaps


def _documented_release(fw: str) -> str:
    """The release the README's swaps describe: the newest supported one (requirements/FW-X.txt)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    from install_framework import available

    return available()[fw][-1]


@pytest.mark.parametrize(("line", "code", "swap"), _cases(), ids=_id)
def test_readme_python_example_runs(line, code, swap, tmp_path, monkeypatch):
    for fw in _needs(code):
        if importlib.util.find_spec(fw) is None:
            pytest.skip(f"the example at {line} needs {fw}, which is not installed")
        installed = importlib.metadata.version(_DISTRIBUTION.get(fw, fw))
        documented = _documented_release(fw)
        if installed != documented:
            # Older releases parse differently (the matrix shows how); the README speaks of the newest.
            pytest.skip(f"the example at {line} is written for {fw} {documented}, not {installed}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    # A block may define a module (a "# my_parsers.py" first line): write it, then import works.
    first = code.splitlines()[0] if code else ""
    m = re.match(r"#\s*([\w/]+\.py)\s*$", first)
    if m:
        (tmp_path / m.group(1)).write_text(code, encoding="utf-8")
    wrong = run_checking_prints(code, line)
    os.chdir(tmp_path)  # the example must not have changed directory for good
    assert not wrong, "\n".join(wrong)


def test_readme_print_comments_are_checked():
    """The comments are really picked up, descriptions excepted (and those still exist)."""
    text = "".join(page.read_text(encoding="utf-8") for page in PAGES)
    assert all(d in text for d in DESCRIPTIONS), "a listed description is no longer in the docs"
    claims = [c for _, code in _blocks() for c in _claims(code).values()]
    assert "Let me check." in claims and "get_weather {'city': 'Paris'}" in claims
    assert len(claims) >= 8, claims


def test_a_wrong_print_comment_fails():
    code = "print('Let me check.')   # 'Let me check.'\nprint(1, [])   # 1 [2]\nfor i in range(3):\n    print(i)   # 2\n"
    assert run_checking_prints(code, "block") == ["block (+1): prints '1 []', its comment says '1 [2]'"]
