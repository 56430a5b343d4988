"""The llamacpp backend without a built harness: names, paths, templates, install recipe, errors.

These need no compiler and no harness; what the harness reads is tested in
test_llamacpp_backend.py and test_llamacpp_reference.py (marked `framework`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _llamacpp_cases import cases, user_message

import parsebridge as pb
from parsebridge._frameworks import install
from parsebridge.adapters.llamacpp import _templates
from parsebridge.adapters.registry import get_backend
from parsebridge.conformance.subject import target_for
from parsebridge.conformance.transcripts import Transcript
from parsebridge.protocol import BackendNotInstalledError, InvalidSpecError, family_table


def test_releases_come_from_the_requirement_files() -> None:
    versions = install.available()["llamacpp"]
    assert len(versions) >= 2
    assert install.resolve("llamacpp-latest") == [("llamacpp", versions[-1])]
    assert install.resolve("llamacpp-oldest") == [("llamacpp", versions[0])]
    assert "llamacpp" not in install.ALL  # a native build: its envs ask for it by name
    assert "install-framework llamacpp-latest" in install.install_hint("llamacpp")


def test_no_harness_is_a_typed_error_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARSEBRIDGE_LLAMACPP_HOME", str(tmp_path))
    backend = get_backend("llamacpp")
    assert not backend.is_available()
    assert "no llama.cpp harness" in (backend.unavailable_reason() or "")
    with pytest.raises(BackendNotInstalledError) as info:
        pb.get_tool_parser("llamacpp:hermes")
    message = str(info.value)
    assert "install-framework llamacpp-latest" in message
    # The harness is built from the sdist: the llama-cpp-python package would not give it.
    assert "needs the 'llama-cpp-python' package" not in message
    assert "needs its native harness, built by parsebridge from llama-cpp-python's sdist" in message
    assert "no llama.cpp harness is built in this environment" in message


def _fake_snapshot(root: Path, templates: list[str]) -> None:
    (root / "0.3.36" / "templates").mkdir(parents=True)
    (root / "0.3.36" / "manifest.json").write_text("{}")
    for name in templates:
        (root / "0.3.36" / "templates" / f"{name}.jinja").write_text("{{ messages }}")


def test_a_family_target_is_named_by_the_family_and_says_its_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hermes = family_table().get("tool", "hermes")
    assert hermes is not None
    template = hermes.parser_for("llamacpp")
    assert template is not None
    _fake_snapshot(tmp_path, [template])
    monkeypatch.setenv("PARSEBRIDGE_LLAMACPP_HOME", str(tmp_path))
    probe = Transcript(id="t", output="", family="hermes", kind="tool")
    assert target_for(probe, "llamacpp").tool_spec == "llamacpp:hermes"
    assert target_for(probe, "vllm").tool_spec == "vllm:hermes"  # a parser's own name, as before
    backend = get_backend("llamacpp")
    assert (
        backend.describe("hermes") == f"the chat template {template} of llama-cpp-python 0.3.36's llama.cpp"
    )
    assert backend.describe(template) is None  # the name says it already
    assert backend.describe("./mine.jinja") is None
    assert backend.describe("surely-no-family") is None


def test_a_family_with_two_templates_names_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = family_table()
    tool, reasoning = table.get("tool", "mistral"), table.get("reasoning", "mistral")
    assert tool is not None and reasoning is not None
    both = [tool.parser_for("llamacpp"), reasoning.parser_for("llamacpp")]
    assert both[0] != both[1]
    _fake_snapshot(tmp_path, [str(t) for t in both])
    monkeypatch.setenv("PARSEBRIDGE_LLAMACPP_HOME", str(tmp_path))
    detail = get_backend("llamacpp").describe("mistral") or ""
    assert f"{both[0]} (as a tool parser), {both[1]} (as a reasoning parser)" in detail


def test_a_snapshot_that_is_not_built_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "0.3.36").mkdir()
    (tmp_path / "0.3.36" / "manifest.json").write_text("{}")
    monkeypatch.setenv("PARSEBRIDGE_LLAMACPP_HOME", str(tmp_path))
    monkeypatch.setenv(_templates.SNAPSHOT_ENV, "0.3.1")
    assert "0.3.36" in (_templates.unavailable_reason() or "")
    monkeypatch.setenv(_templates.SNAPSHOT_ENV, "0.3.36")
    snap = _templates.snapshot()
    assert snap is not None and snap.version == "0.3.36"
    assert "missing or not executable" in (_templates.unavailable_reason() or "")


@pytest.mark.parametrize(
    ("name", "is_path"),
    [
        ("hermes", False),
        ("Qwen3.5-4B", False),
        ("./my.jinja", True),
        ("tmpl.jinja", True),
        ("/models/qwen", True),
        ("~/m", True),
    ],
)
def test_a_name_is_a_path_when_it_looks_like_one(name: str, is_path: bool) -> None:
    assert _templates.is_path(name) is is_path
    assert get_backend("llamacpp").passthrough_name(name) is is_path


def test_a_tokenizer_folder_gives_its_template_and_special_tokens(tmp_path: Path) -> None:
    config = {
        "chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}",
        "bos_token": {"content": "<s>", "lstrip": False},
        "eos_token": "</s>",
    }
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    t = _templates.load(str(tmp_path))
    assert (t.source, t.bos, t.eos) == (config["chat_template"], "<s>", "</s>")


def test_a_folder_template_is_chosen_as_llamacpps_converter_chooses_it(tmp_path: Path) -> None:
    """llama-server renders with the template its GGUF carries, and llama.cpp's converter takes
    tokenizer_config.json's ``chat_template`` before the template files (transformers the other
    way round): a folder with both rendered with the file, which the deployment never sees."""
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": "C", "eos_token": "</s>"}))
    (tmp_path / "chat_template.jinja").write_text("F")
    (tmp_path / "chat_template.json").write_text(json.dumps({"chat_template": "J"}))
    assert _templates.load(str(tmp_path)).source == "C"
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": "</s>"}))
    assert _templates.load(str(tmp_path)).source == "F"
    (tmp_path / "chat_template.jinja").unlink()
    t = _templates.load(str(tmp_path))
    assert (t.source, t.eos) == ("J", "</s>")
    named = [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}]
    (tmp_path / "chat_template.json").write_text(json.dumps({"chat_template": named}))
    assert _templates.load(str(tmp_path)).for_tools(True) == "T"


def test_a_template_file_edited_between_two_parsers_is_read_again(tmp_path: Path) -> None:
    """A user's file (a notebook's template being worked on) is read anew for each parser: a
    cached first reading would render and parse the second parser with the old template."""
    path = tmp_path / "mine.jinja"
    path.write_text("{{ messages }}")
    assert _templates.load(str(path)).source == "{{ messages }}"
    path.write_text("{{ bos_token }}{{ messages }}")
    assert _templates.load(str(path)).source == "{{ bos_token }}{{ messages }}"
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": "A", "eos_token": "</s>"}))
    assert _templates.load(str(tmp_path)).eos == "</s>"
    config.write_text(json.dumps({"chat_template": "A", "eos_token": "<|im_end|>"}))
    assert _templates.load(str(tmp_path)).eos == "<|im_end|>"


def test_named_templates_use_the_default_one(tmp_path: Path) -> None:
    named = [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": named}))
    assert _templates.load(str(tmp_path)).source == "D"


def test_a_tool_use_template_renders_the_requests_with_tools(tmp_path: Path) -> None:
    """Hermes 2 Pro / Hermes 3 ship ``default`` and ``tool_use`` templates: llama-server renders a
    request with tools through ``tool_use`` (the GGUF converted from the folder carries both)."""
    named = [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}]
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": named}))
    t = _templates.load(str(tmp_path))
    assert (t.for_tools(True), t.for_tools(False)) == ("T", "D")
    only = tmp_path / "only"
    only.mkdir()
    (only / "tokenizer_config.json").write_text(json.dumps({"chat_template": named[1:]}))
    assert _templates.load(str(only)).for_tools(False) == "T"  # no default: llama.cpp's fallback
    files = tmp_path / "files"
    (files / "additional_chat_templates").mkdir(parents=True)
    (files / "chat_template.jinja").write_text("D")
    (files / "additional_chat_templates" / "tool_use.jinja").write_text("T")
    t = _templates.load(str(files))
    assert (t.for_tools(True), t.for_tools(False)) == ("T", "D")


def test_a_folder_without_a_template_says_so(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no chat_template"):
        _templates.load(str(tmp_path / ""))  # "/" makes it a path


@pytest.mark.parametrize(
    ("file", "data", "message"),
    [
        ("t.jinja", b"", "is empty"),
        ("t.jinja", b"  \n", "is empty"),
        ("t.jinja", b"\x00\xff\xfe{{ x }}", "is not UTF-8 text"),
        ("chat_template.jinja", b"\xff", "is not UTF-8 text"),
        ("tokenizer_config.json", b"{not json", "is not valid JSON: Expecting property name"),
        ("tokenizer_config.json", b"[1, 2]", "is not a JSON object (it is a list)"),
        ("tokenizer_config.json", b'{"chat_template": ""}', "is empty"),
    ],
)
def test_a_template_that_cannot_be_read_is_a_usage_error_naming_the_file(
    tmp_path: Path, file: str, data: bytes, message: str
) -> None:
    """Refused before the harness sees it (an empty template aborted the harness, in llama.cpp's
    'needs a model' assertion), typed as the caller's input: the CLI exits 2, not 1."""
    (tmp_path / file).write_bytes(data)
    name = (
        str(tmp_path / file) if file.endswith(".jinja") and file != "chat_template.jinja" else str(tmp_path)
    )
    with pytest.raises(_templates.TemplateFileError, match=re.escape(message)) as info:
        _templates.load(name)
    assert isinstance(info.value, InvalidSpecError)
    assert str(tmp_path) in str(info.value)


def test_a_missing_template_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(_templates.TemplateNotFoundError, match="no chat template file at") as info:
        _templates.load(str(tmp_path / "nothing.jinja"))
    assert isinstance(info.value, InvalidSpecError) and isinstance(info.value, FileNotFoundError)


def test_every_llamacpp_row_names_a_template_file() -> None:
    rows = [f.parser_for("llamacpp") for f in family_table()]
    names = [r for r in rows if r]
    assert len(names) >= 40
    assert all(not _templates.is_path(n) for n in names)


_CPP = r"""
static common_chat_tool special_function_tool{
    /* .name = */ "special_function",
    /* .description = */ "I'm special",
    /* .parameters = */ R"({"type": "object"})",
};
const common_chat_msg message_user{
    "user",
    "Hey there!",
};
    {
        auto tst = peg_tester("models/templates/Qwen3.5-4B.jinja", detailed_debug);
        tst.test("I'm\nthinking\n</think>\n\n"
                 "Hello")
            .reasoning_format(COMMON_REASONING_FORMAT_AUTO)
            .enable_thinking(false)
            .tools({ special_function_tool })
            .expect(message_assist_thoughts)
            .run();
        tst.test(some_variable).run();
        tst.test("x").messages({ message_user }).run();
        tst.test("y").reasoning_format(COMMON_REASONING_FORMAT_DEEPSEEK_LEGACY).run();
    }
"""


def test_the_test_inputs_are_read_from_the_builder_chains() -> None:
    found = cases(_CPP)
    assert len(found) == 1  # a variable input, messages and a legacy reasoning format are left out
    case = found[0]
    assert case.template == "models/templates/Qwen3.5-4B.jinja"
    assert case.input == "I'm\nthinking\n</think>\n\nHello"
    assert (case.reasoning_format, case.enable_thinking, case.parallel_tool_calls) == ("auto", False, False)
    assert case.tools == [
        {"name": "special_function", "description": "I'm special", "parameters": '{"type": "object"}'}
    ]
    assert user_message(_CPP) == {"role": "user", "content": "Hey there!"}
