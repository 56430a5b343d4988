"""A misspelt option of a subcommand is named as such, with the option it looks like, under the
subcommand's usage; the command line's other words are never blamed for it."""

from __future__ import annotations

import pytest

from parsebridge.cli import main
from parsebridge.cli.commands import SUBCOMMANDS, build_parser
from parsebridge.cli.options import check_options


def _usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    assert exit_.value.code == 2
    return capsys.readouterr().err


def test_parse_names_the_misspelt_option_and_suggests_the_right_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _usage_error(capsys, "parse", "--tool-parsr", "builtin:hermes", "out.txt")
    assert "parsebridge parse: error: unrecognized option --tool-parsr (did you mean --tool-parser?)" in err
    assert "usage: parsebridge parse" in err
    assert "out.txt" not in err.splitlines()[-1]


def test_conformance_typo_is_no_invalid_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(capsys, "conformance", "--backnd", "builtin")
    assert "unrecognized option --backnd (did you mean --backend?)" in err
    assert "invalid choice" not in err


def test_a_subcommand_of_a_subcommand_has_its_own_options(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(capsys, "conformance", "diff", "--limt", "3", "a.json", "b.json")
    assert "parsebridge conformance diff: error: unrecognized option --limt (did you mean --limit?)" in err


def test_a_misspelt_subcommand_is_named_with_the_one_it_looks_like(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _usage_error(capsys, "comapre", "log.jsonl")
    assert "parsebridge: error: unknown command 'comapre' (did you mean 'compare'?)" in err
    err = _usage_error(capsys, "conformance", "dif", "a", "b")
    assert "unknown command 'dif' (did you mean 'diff'?)" in err


@pytest.mark.parametrize(
    "argv",
    [
        ("parse", "--tool-parser=builtin:hermes", "-"),  # an option with its value attached
        ("parse", "--tool-pars", "builtin:hermes", "-"),  # argparse's unique abbreviation
        ("compare", "--text", "x", "-j2", "--tool-parser", "builtin:hermes"),  # a short option with its value
        ("compare", "--text", "-5", "--tool-parser", "builtin:hermes"),  # a value that looks like an option
        ("compare", "--text", "diff", "--tool-parser", "builtin:hermes"),  # a value named like a subcommand
    ],
)
def test_known_options_are_not_flagged(argv: tuple[str, ...]) -> None:
    args = list(argv)
    check_options(build_parser(args), args)  # no SystemExit


def test_help_lists_every_subcommand_without_importing_them(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert name in out


def test_every_subcommand_configures() -> None:
    parser = build_parser(every=True)
    ns = parser.parse_args(["list", "--brief"])
    assert callable(ns.func)


CONFORMANCE = ("conformance", "-q", "--backend", "builtin", "--family", "hermes")
COMPARE = ("compare", "--bundled", "--family", "hermes", "--backends", "builtin", "--no-progress")


@pytest.mark.parametrize(
    ("command", "typo", "near"),
    [
        (CONFORMANCE, "tokn-5", "'token-5'"),  # the number kept
        (CONFORMANCE, "randm", "'random'"),
        (CONFORMANCE, "defualt", "'default'"),  # the sets are names too
        (CONFORMANCE, "all,token_random-3", "'token-random-3'"),
        (COMPARE, "tokn-5", "'token-5'"),
        (COMPARE, "chars", "'char'"),
    ],
)
def test_a_misspelt_chunking_is_named_with_the_ones_it_looks_like(
    capsys: pytest.CaptureFixture[str], command: tuple[str, ...], typo: str, near: str
) -> None:
    assert main([*command, "--chunking", typo]) == 2
    err = capsys.readouterr().err
    bad = typo.split(",")[-1]
    assert f"unknown chunking {bad!r}. Did you mean {near}" in err
    assert "Chunkings: oneshot, whole, char[-K], token[-K], special, random[-SEED]" in err
    assert "`parsebridge conformance --help` describes each" in err  # where the forms are described


def test_a_misspelt_probe_scenario_is_named_with_the_ones_it_looks_like(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["probe", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--scenario", "singel-call"]
    assert main(argv) == 2  # refused before any request
    err = capsys.readouterr().err
    assert "unknown scenario 'singel-call' (did you mean 'single-call'" in err
    assert "; scenarios: single-call, parallel-calls" in err and "`parsebridge probe --help`" in err
