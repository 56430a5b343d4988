"""`parsebridge conformance`: its options, and its subcommands ``diff`` and ``support``.

With no subcommand the suite runs (`conformance_run`): the shared transcripts through every
backend, reported; ``diff`` compares two reports, ``support`` renders the support page.
"""

from __future__ import annotations

import argparse

from ..conformance import diff, support
from ..conformance.chunking import DEFAULT_CHUNKINGS
from .conformance_run import cmd_conformance
from .options import count

EPILOG = """\
exit status:
  0    the suite ran (whatever the results), or --strict and no result is fail/error
  1    --strict and at least one result is fail or error, or nothing was tested (no
       result, or every result unsupported)
  2    usage error: unknown backend, chunking, family or transcript id (the message names
       the ones it looks like); a --backend that
       is not installed (the message says how to install it); a transcript
       file that is missing, empty, not UTF-8 or malformed (the message names it), or a
       --transcripts directory without a transcript file
  130  interrupted (Ctrl-C): one line on stderr says how far the run got and, after the
       results table, which report files were written (each report file is replaced
       whole: the earlier one or the complete new one, never half of one)
  141  the output pipe closed early (e.g. `| head`)

statuses: pass = matches expected and every invariant holds;
diverge = a streaming invariant broke (stream differs from one-shot, …) or only
documented divergences remain; fail = wrong against expected; unsupported = the
backend has no parser for the family, is not installed, or the parser cannot run
without a model checkpoint (the reason is given); error = the backend raised.

chunkings: oneshot, whole, char[-K], random[-SEED] (characters); token[-K], special,
token-random-SEED (token boundaries: K tokens, one delta per special token and per run
between them, 1-8 tokens a delta); 'default' is the set --chunking names, 'all' adds
whole, token-2 and more seeds.
"""


DIFF_EPILOG = """\
exit status:
  0    the reports were compared (whatever changed), or --strict and nothing regressed
  1    --strict and at least one result regressed, or REPORT_B lacks results REPORT_A holds
  2    usage error: a report that is missing or is not a conformance report.json
  141  the output pipe closed early (e.g. `| head`)
"""

SUPPORT_EPILOG = """\
exit status:
  0    the page was written (to --out or standard output)
  2    usage error: no report and no --data, or a report that is missing or malformed
  141  the output pipe closed early (e.g. `| head`)
"""


def configure(p: argparse.ArgumentParser) -> None:
    """`parsebridge conformance` (the parser `cli.commands` made for it), with ``diff`` and ``support``."""
    p.description = (
        "Run the conformance transcripts through each backend's parser for their family, "
        "one-shot and streamed at several chunkings, and report pass/diverge/fail/unsupported/error."
    )
    p.epilog = EPILOG
    _add_selection_options(p)
    _add_run_options(p)
    p.set_defaults(func=cmd_conformance)
    _add_subcommands(p)


def _add_selection_options(p: argparse.ArgumentParser) -> None:
    """What runs: backends or explicit specs, families, kinds, chunkings, transcripts."""
    p.add_argument(
        "--backend",
        action="append",
        metavar="B",
        help="backend to run (repeatable or comma-separated; default: every available one of "
        "builtin, vllm, sglang, dynamo, smg, llamacpp; naming one that is not installed is a usage error)",
    )
    p.add_argument(
        "--tool-parser",
        metavar="SPEC",
        help="run this tool parser spec (e.g. python:pkg.mod:Class) instead of the backends' "
        "family parsers, on tool transcripts (with --reasoning-parser: also those starting "
        "with reasoning)",
    )
    p.add_argument(
        "--reasoning-parser",
        metavar="SPEC",
        help="run this reasoning parser spec on the reasoning transcripts",
    )
    p.add_argument(
        "--family", action="append", metavar="F", help="only these families (aliases ok; repeatable)"
    )
    p.add_argument("--kind", choices=("tool", "reasoning"), help="only tool or only reasoning transcripts")
    p.add_argument(
        "--chunking",
        action="append",
        metavar="C",
        help=f"chunkings to run (repeatable or comma-separated; default: {','.join(DEFAULT_CHUNKINGS)}; "
        "'all' for every one)",
    )
    p.add_argument(
        "--transcripts",
        action="append",
        metavar="FILE",
        help="transcript files or directories instead of the bundled fixtures: JSON Lines (.jsonl, "
        ".ndjson, gzipped .jsonl.gz), JSON, YAML, or any other file as one raw output; a directory is "
        "read as `compare` reads one: its subfolders too, files of other suffixes skipped with a warning; "
        "- for standard input",
    )
    p.add_argument("--transcript", action="append", metavar="ID", help="only these transcript ids")


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """How it runs and what is written: report, strictness, jobs, logs, round trip."""
    p.add_argument("--report", metavar="DIR", help="write report.json, report.md and report.html here")
    p.add_argument("--strict", action="store_true", help="exit 1 if any result is fail or error")
    p.add_argument(
        "--show",
        type=count,
        default=15,
        metavar="N",
        help="print up to N fail/error/diverge results after the table (default 15; 0: none)",
    )
    p.add_argument(
        "--jobs",
        "-j",
        default="auto",
        metavar="N",
        help="worker processes (default auto: one per core, at most 8; 1: run in this process)",
    )
    p.add_argument(
        "--framework-logs",
        "--verbose",
        "-v",
        dest="framework_logs",
        action="store_true",
        help="let vLLM, SGLang, Dynamo and smg log (silenced by default: the results say it all); --verbose/-v: "
        "the older name, kept as an alias",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument(
        "--roundtrip",
        type=count,
        default=None,
        metavar="N",
        help="round trip: N drawn examples per tool family rendered by its format and parsed back by "
        "each backend, tallied in the report (default 12; 0: off; a usage error with --tool-parser, "
        "--reasoning-parser, --transcripts or --kind reasoning, which run none)",
    )
    p.add_argument("--roundtrip-seed", default="0", metavar="S", help="seed of the round-trip draws")


def _add_subcommands(p: argparse.ArgumentParser) -> None:
    """``conformance diff`` and ``conformance support``."""
    sub = p.add_subparsers(dest="conformance_command", metavar="SUBCOMMAND")
    d = sub.add_parser(
        "diff",
        help="what changed between two report.json files (e.g. before and after a framework upgrade)",
        description="Match two conformance reports on (backend, family, transcript, chunking) and list "
        "what regressed, was fixed, changed, appeared or vanished. REPORT_A is before, REPORT_B after.",
        epilog=DIFF_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d.add_argument("report_a", metavar="REPORT_A", help="report.json (or its directory) before")
    d.add_argument("report_b", metavar="REPORT_B", help="report.json (or its directory) after")
    diff.configure(d)  # the diff's own options live next to its code
    d.set_defaults(func=diff.main)

    s = sub.add_parser(
        "support",
        help="the support table of every framework release the matrix ran (Markdown)",
        description="Read the matrix's report.json files (one per tox env) and render the support page: "
        "per release, the adapter's API shape, the parsers it registers and its results per family.",
        epilog=SUPPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    support.configure(s)
    s.set_defaults(func=support.main)
