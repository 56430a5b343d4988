"""`families.toml` is the only list of families, backend names and aliases.

`parsebridge.formats` (which format each family writes), the builtin
backend's parser names and reasoning presets, and the registry all answer
from it; the tables that remain in code (where a format or a parser class
lives) are keyed by names that must agree with it. Each test here fails on
one kind of disagreement.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

import pytest

import parsebridge
from parsebridge import formats
from parsebridge.adapters import registry
from parsebridge.adapters.base import Backend
from parsebridge.adapters.builtin import (
    GENERIC_REASONING,
    REASONING_CLASSES,
    TOOL_PARSERS,
    builtin_names,
    reasoning_parsers,
)
from parsebridge.adapters.builtin.reasoning_presets import presets
from parsebridge.protocol.family_rows import KINDS, Row, normalize_name, parse_rows, rows, rows_of

PKG = Path(parsebridge.__file__).resolve().parent
FORMAT_TABLES = {"tool": formats.TOOL_FORMATS, "reasoning": formats.REASONING_FORMATS}
LOOKUP = {"tool": formats.tool_format, "reasoning": formats.reasoning_format}


def _has_format(row: Row) -> bool:
    return row.format_family in FORMAT_TABLES[row.kind]


def _all_names() -> list[tuple[str, str, str]]:
    """(kind, family, name) for every family name and alias in the table."""
    return [(r.kind, r.name, n) for r in rows() for n in r.names]


# ---------------------------------------------------------------- the table itself


@pytest.mark.parametrize("kind", KINDS)
def test_no_spelling_names_two_families_of_one_kind(kind):
    seen: dict[str, str] = {}
    clashes = []
    for row in rows_of(kind):
        for name in row.names:
            owner = seen.setdefault(normalize_name(name), row.name)
            if owner != row.name:
                clashes.append(f"{name!r}: {owner} and {row.name}")
    assert clashes == []


def test_format_key_names_a_format_the_family_lacks():
    """`format = X` only on a family without a format of its own, and X has one."""
    wrong = [
        f"{r.kind}.{r.name}: format = {r.format!r}"
        for r in rows()
        if r.format is not None
        and (r.format not in FORMAT_TABLES[r.kind] or r.name in FORMAT_TABLES[r.kind] or r.format == r.name)
    ]
    assert wrong == []


def test_a_row_parses_its_reserved_keys_apart_from_backends():
    (row,) = parse_rows('[tool.x]\naliases = ["y"]\nformat = "hermes"\nbuiltin = "hermes"\n')
    assert row == Row("tool", "x", {"builtin": "hermes"}, ("y",), "hermes")
    assert parsebridge.load_table('[tool.x]\nformat = "hermes"\nfw = "x"\n').backends() == ["fw"]


# ---------------------------------------------------------------- formats


@pytest.mark.parametrize("kind", KINDS)
def test_every_format_family_is_a_family_of_the_table(kind):
    canonical = {r.name for r in rows_of(kind)}
    assert [f for f in FORMAT_TABLES[kind] if f not in canonical] == []


@pytest.mark.parametrize("kind", KINDS)
def test_format_modules_name_their_family_and_list_no_aliases(kind):
    """Aliases live in the table: a format module that lists its own is a second list."""
    for family, target in FORMAT_TABLES[kind].items():
        fmt = formats._load(target)
        assert (fmt.family, fmt.aliases) == (family, ()), target


@pytest.mark.parametrize(("kind", "family", "name"), _all_names(), ids=lambda v: str(v))
def test_every_family_and_alias_finds_its_format(kind, family, name):
    row = next(r for r in rows_of(kind) if r.name == family)
    if not _has_format(row):
        with pytest.raises(formats.UnknownFormatError):
            LOOKUP[kind](name)
        return
    fmt = LOOKUP[kind](name)
    assert fmt.family == row.format_family
    assert LOOKUP[kind](name.upper().replace("_", "-")) is fmt  # spelled as users type it


def test_the_reported_aliases_find_their_format():
    """The bug that started this: the registry took these, `formats` did not."""
    assert formats.tool_format("qwen25").family == "hermes"
    assert formats.tool_format("kimi").family == "kimi_k2"
    assert formats.tool_format("deepseekv3").family == "deepseek_v3"
    assert formats.tool_format("granite4").family == "hermes"
    assert formats.reasoning_format("r1").family == "deepseek_r1"


def test_a_format_lists_the_families_that_write_it():
    assert formats.tool_format("qwen3_coder").aliases == ("qwen3_xml", "nanbeige", "mimo", "step3p5", "step5")
    assert formats.reasoning_format("mimo").aliases == ("ling3", "dots", "interns1", "nanbeige")
    assert formats.tool_format("mistral").aliases == ()


def test_a_family_with_a_builtin_parser_has_a_format():
    missing = [f"{r.kind}.{r.name}" for r in rows() if r.parsers.get("builtin") and not _has_format(r)]
    assert missing == []


def test_an_unknown_format_is_a_parsebridge_error_that_reads_plainly_and_suggests():
    """It was a bare KeyError, whose message printed quoted ("\"no tool format …\"") with no hint."""
    import parsebridge as pb

    with pytest.raises(pb.ParsebridgeError) as exc:
        formats.tool_format("hermse")
    assert isinstance(exc.value, KeyError)
    assert str(exc.value).startswith("no tool format for family 'hermse'. Did you mean 'hermes'")


def test_unknown_names_are_refused_with_the_known_formats():
    with pytest.raises(formats.UnknownFormatError, match="hermes"):
        formats.tool_format("no_such_family")
    with pytest.raises(formats.UnknownFormatError):
        formats.reasoning_format("muse")  # a family of the table that no format module describes


# ---------------------------------------------------------------- the builtin backend


def test_builtin_tool_parsers_are_the_tables_builtin_column():
    assert sorted(TOOL_PARSERS) == sorted(builtin_names("tool"))


def test_builtin_reasoning_parsers_are_the_tables_builtin_column():
    named = builtin_names("reasoning")
    assert list(reasoning_parsers()) == [*named, *GENERIC_REASONING]
    assert set(REASONING_CLASSES) <= set(named)
    assert set(presets()) == set(named) - set(REASONING_CLASSES)
    assert not set(GENERIC_REASONING) & {normalize_name(n) for _, _, n in _all_names()}


def test_each_preset_reads_the_format_its_family_writes():
    for name, family in presets().items():
        assert family == formats.reasoning_format(name).family
    assert presets()["ling3"] == "mimo"


@pytest.mark.parametrize(("kind", "family", "name"), _all_names(), ids=lambda v: str(v))
def test_every_name_reaches_the_builtin_parser_of_its_family(kind, family, name):
    row = next(r for r in rows_of(kind) if r.name == family)
    own = row.parsers.get("builtin")
    if own is None:
        with pytest.raises(parsebridge.UnknownParserError):
            registry.resolve(kind, name)
        return
    assert registry.resolve(kind, name)[1] == own
    assert registry.resolve(kind, f"builtin:{name}")[1] == own


def test_get_tool_parser_and_formats_agree_on_qwen25():
    parser = parsebridge.get_tool_parser("qwen25")
    assert (parser.backend, parser.name) == ("builtin", "hermes")
    assert formats.tool_format("qwen25") is formats.tool_format(parser.name)


# ---------------------------------------------------------------- each backend column


class _Column(Backend):
    """A backend that registers exactly the parser names its column of the table gives."""

    def __init__(self, name: str, table: tuple[Row, ...]) -> None:
        self.name, self._rows = name, table

    def _names(self, kind: str) -> list[str]:
        return sorted({p for r in self._rows if r.kind == kind and (p := r.parsers.get(self.name))})

    def tool_parser_names(self) -> list[str]:
        return self._names("tool")

    def reasoning_parser_names(self) -> list[str]:
        return self._names("reasoning")

    def create_tool_parser(self, name: str, *, tools: Any, **options: Any) -> Any:
        raise NotImplementedError

    def create_reasoning_parser(self, name: str, **options: Any) -> Any:
        raise NotImplementedError


def _columns() -> list[str]:
    return sorted({b for r in rows() for b in r.parsers} - {"builtin"})


def _misses(backend: str, table: tuple[Row, ...], registered: set[str] | None = None) -> list[str]:
    """Names in `table` that do not reach their family's parser on `backend`.

    With `registered` (a real release's names), a family the release lacks is
    skipped, and so is a name the release registers itself: the backend's own
    names come first by design (SGLang 0.5.23 registers a `hermes` parser of its
    own beside `qwen25`, the hermes family's).
    """
    out = []
    for row in table:
        own = row.parsers.get(backend)
        if own is None or (registered is not None and normalize_name(own) not in registered):
            continue
        for name in row.names:
            if registered is not None and normalize_name(name) in registered:
                continue
            got = registry.resolve(row.kind, f"{backend}:{name}")[1]
            if normalize_name(got) != normalize_name(own):
                out.append(f"{backend}:{name} ({row.kind}) -> {got}, its family {row.name} says {own}")
    return out


@pytest.fixture
def fresh_registry():
    registry._reset_caches()
    yield
    registry._reset_caches()


def test_every_name_reaches_each_backend_columns_parser(monkeypatch, fresh_registry):
    """With a backend registering exactly its column, every family name and alias finds its parser."""
    assert len(_columns()) >= 2  # vllm and sglang at least
    for column in _columns():
        monkeypatch.setitem(registry._instances, column, _Column(column, rows()))
    assert [m for c in _columns() for m in _misses(c, rows())] == []


def test_the_column_check_catches_an_alias_that_is_another_parsers_name(monkeypatch, fresh_registry):
    """The check can fail: an alias a backend registers as another family's parser is reported."""
    text = '[tool.a]\naliases = ["b"]\nfw = "a"\n[tool.b]\nfw = "b"\n'
    monkeypatch.setattr(registry, "family_table", lambda: parsebridge.load_table(text))
    monkeypatch.setitem(registry._instances, "fw", _Column("fw", parse_rows(text)))
    assert _misses("fw", parse_rows(text)) == ["fw:b (tool) -> b, its family a says a"]


@pytest.mark.parametrize("backend", ["vllm", "sglang", "smg"])
def test_every_name_reaches_the_installed_frameworks_parser(backend):
    """The real release: each family it registers is reached by all the family's names."""
    if importlib.util.find_spec(backend) is None:
        pytest.skip(f"{backend} is not installed")
    for kind in KINDS:
        registered = {normalize_name(n) for n in registry.parser_names(backend, kind)}
        assert _misses(backend, rows_of(kind), registered) == []


# ---------------------------------------------------------------- no other list


#: Tables in code keyed by family names; the tests above check each against the table.
CHECKED_TABLES = {"TOOL_FORMATS", "REASONING_FORMATS", "TOOL_PARSERS", "REASONING_CLASSES"}
#: The framework adapters name one release's own parsers (facts about that release, not families).
FRAMEWORK_ADAPTERS = ("adapters/vllm/", "adapters/sglang/")


def _spelled_lists(path: Path, spellings: set[str]) -> list[str]:
    """Literal dicts/lists/tuples/sets in `path` holding three or more family names or aliases."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checked = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name) and target.id in CHECKED_TABLES
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in checked:
            continue
        items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if not isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)) or not items:
            continue
        hits = [
            e.value
            for e in items
            if isinstance(e, ast.Constant)
            and isinstance(e.value, str)
            and normalize_name(e.value) in spellings
        ]
        if len(hits) >= 3:
            where = path.relative_to(PKG) if path.is_relative_to(PKG) else path.name
            found.append(f"{where}:{node.lineno}: {hits}")
    return found


def _spellings() -> set[str]:
    return {normalize_name(n) for _, _, n in _all_names()}


def test_no_list_of_families_outside_the_table():
    files = [p for p in PKG.rglob("*.py") if not p.relative_to(PKG).as_posix().startswith(FRAMEWORK_ADAPTERS)]
    found = [hit for p in files for hit in _spelled_lists(p, _spellings())]
    assert found == [], "derive these from protocol/families.toml:\n" + "\n".join(found)


def test_the_list_scan_finds_a_hand_written_list(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        'ALIASES = {"qwen25": 1, "kimi": 2, "deepseekv3": 3}\nTOOL_FORMATS = ["hermes", "json", "xlam"]\n'
    )
    assert _spelled_lists(sample, _spellings()) == ["sample.py:1: ['qwen25', 'kimi', 'deepseekv3']"]
