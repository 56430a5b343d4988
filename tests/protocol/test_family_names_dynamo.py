"""The family table's `dynamo` column against what the installed Dynamo release registers (issue 37).

Dynamo registers some parsers under several spellings (``gemma4``/``gemma-4``,
``kimi_k3``/``kimi-k3``): those are the family's aliases or normalise to its
name. A few Dynamo parsers write no format parsebridge has a family for; they
are listed here with the reason, so a new name in a new release fails this
test until it is placed.
"""

from __future__ import annotations

import pytest

from parsebridge.adapters import get_backend
from parsebridge.protocol import family_table, normalize_name

#: Dynamo parser names with no family in the table (kind, name): why.
OUTSIDE_TABLE: dict[tuple[str, str], str] = {
    ("tool", "default"): "Dynamo's catch-all configuration (several JSON shapes), no single format",
    ("tool", "qwen3"): "an alias configuration of Dynamo's; the Qwen3 tool format is the hermes family",
    ("tool", "minimax_m3_nom"): "a MiniMax-M3 variant with no parsebridge format",
    ("tool", "minimax-m3-nom"): "the same, spelled with dashes",
    ("tool", "nemotron_nano"): "Nemotron Nano's tool format: no parsebridge format",
    ("reasoning", "basic"): "Dynamo's generic <think> reader, no model family",
    ("reasoning", "deepseek_v3_1"): "Dynamo's DeepSeek V3.1 thinking switch: no family of its own here",
    ("reasoning", "deepseek_v3_2"): "Dynamo's DeepSeek V3.2 thinking switch: no family of its own here",
    ("reasoning", "nemotron_deci"): "Llama-Nemotron (Deci) thinking: no parsebridge reasoning family",
    ("reasoning", "nemotron_nano"): "Nemotron Nano thinking: no parsebridge reasoning family",
    ("reasoning", "qwen3_coder"): "a Dynamo configuration name, no reasoning format of its own",
}


def _backend():  # type: ignore[no-untyped-def]
    be = get_backend("dynamo")
    reason = be.unavailable_reason()
    if reason is not None:
        pytest.skip(f"dynamo is not installed: {reason}")
    return be


@pytest.mark.framework
def test_every_dynamo_parser_name_is_placed() -> None:
    be = _backend()
    table = family_table()
    unplaced = [
        f"{kind}:{name}"
        for kind, names in (("tool", be.tool_parser_names()), ("reasoning", be.reasoning_parser_names()))
        for name in names
        if table.get(kind, name) is None  # type: ignore[arg-type]
        and table.for_parser(kind, "dynamo", name) is None  # type: ignore[arg-type]
        and (kind, name) not in OUTSIDE_TABLE
    ]
    assert not unplaced, (
        f"add these Dynamo names to families.toml (column, alias) or OUTSIDE_TABLE: {unplaced}"
    )


@pytest.mark.framework
def test_the_dynamo_column_names_registered_parsers_of_the_same_family() -> None:
    be = _backend()
    table = family_table()
    for kind, names in (("tool", be.tool_parser_names()), ("reasoning", be.reasoning_parser_names())):
        registered = {normalize_name(n) for n in names}
        for fam in table.of_kind(kind):  # type: ignore[arg-type]
            own = fam.parser_for("dynamo")
            if own is None or normalize_name(own) not in registered:
                continue  # a family this release has no parser for (older releases have fewer)
            # The name resolves back to the same family, so `dynamo:FAMILY` and `dynamo:NAME` agree.
            back = table.get(kind, own) or table.for_parser(kind, "dynamo", own)  # type: ignore[arg-type]
            assert back is not None and back.name == fam.name, (kind, fam.name, own)


@pytest.mark.framework
def test_the_newest_release_registers_every_name_of_the_column() -> None:
    from parsebridge._frameworks.install import newest

    be = _backend()
    if be.version() != newest("dynamo"):
        pytest.skip(f"the column is written for Dynamo {newest('dynamo')}; installed: {be.version()}")
    table = family_table()
    for kind, names in (("tool", be.tool_parser_names()), ("reasoning", be.reasoning_parser_names())):
        registered = {normalize_name(n) for n in names}
        missing = [
            f.name
            for f in table.of_kind(kind)  # type: ignore[arg-type]
            if (own := f.parser_for("dynamo")) and normalize_name(own) not in registered
        ]
        assert not missing, (kind, missing)
