"""`parsebridge conformance`: run the shared transcripts through every backend and report.

Registered into the `parsebridge` command by `parsebridge.cli` (plugin
hook ``register(subparsers)``). Sub-subcommands live under
``parsebridge conformance SUBCOMMAND`` (``diff`` compares two reports);
with none, the suite runs.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from typing import Any

from .run_output import RunBackends, print_summary, write_run_report


def _process_start() -> float:
    """`perf_counter` time of the process start (Linux), else of this import: wall time counts imports."""
    try:
        import os

        with open(f"/proc/{os.getpid()}/stat") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        age = uptime - start_ticks / os.sysconf("SC_CLK_TCK")
        if 0 <= age < 3600:
            return time.perf_counter() - age
    except (OSError, ValueError, IndexError):
        pass
    return time.perf_counter()


_T0 = _process_start()  # so the reported wall time includes interpreter start and framework imports

EPILOG = """\
exit status:
  0    the suite ran (whatever the results), or --strict and no result is fail/error
  1    --strict and at least one result is fail or error (or nothing was run)
  2    usage error: unknown backend, chunking, family or transcript id; a --backend that
       is not installed (the message says how to install it); a transcript
       file that is missing, empty, not UTF-8 or malformed (the message names it)
  130  interrupted; 141 the output pipe closed early (e.g. `| head`)

statuses: pass = matches expected and every invariant holds;
diverge = a streaming invariant broke (stream differs from one-shot, …) or only
documented divergences remain; fail = wrong against expected; unsupported = the
backend has no parser for the family, is not installed, or the parser cannot run
without a model checkpoint (the reason is given); error = the backend raised.

chunkings: oneshot, whole, char[-K], token[-K], random[-SEED]; 'default' =
oneshot,char,token,token-5,token-20,random-0; 'all' adds whole, token-2, random-1..2.
"""


def _count(n: int, noun: str) -> str:
    """``1 transcript``, ``2 transcripts``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


DIFF_EPILOG = """\
exit status:
  0    the reports were compared (whatever changed), or --strict and nothing regressed
  1    --strict and at least one result regressed
  2    usage error: a report that is missing or is not a conformance report.json
  141  the output pipe closed early (e.g. `| head`)
"""

SUPPORT_EPILOG = """\
exit status:
  0    the page was written (to --out or standard output)
  2    usage error: no report and no --data, or a report that is missing or malformed
  141  the output pipe closed early (e.g. `| head`)
"""


def _split(values: Sequence[str] | None) -> list[str]:
    return [p.strip() for v in values or () for p in v.split(",") if p.strip()]


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add `conformance` to the `parsebridge` command's subparsers."""
    p = subparsers.add_parser(
        "conformance",
        help="run the shared transcripts through every backend and report",
        description="Run the conformance transcripts through each backend's parser for their family, "
        "one-shot and streamed at several chunkings, and report pass/diverge/fail/unsupported/error.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_selection_options(p)
    _add_run_options(p)
    p.set_defaults(func=cmd_conformance)
    _add_subcommands(p)
    return p  # type: ignore[no-any-return]


def _add_selection_options(p: argparse.ArgumentParser) -> None:
    """What runs: backends or explicit specs, families, kinds, chunkings, transcripts."""
    from .chunking import DEFAULT_CHUNKINGS

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
        help="transcript files/directories (JSONL, YAML, text) instead of the bundled fixtures",
    )
    p.add_argument("--transcript", action="append", metavar="ID", help="only these transcript ids")


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """How it runs and what is written: report, strictness, jobs, logs, round trip."""
    p.add_argument("--report", metavar="DIR", help="write report.json, report.md and report.html here")
    p.add_argument("--strict", action="store_true", help="exit 1 if any result is fail or error")
    p.add_argument(
        "--show",
        type=int,
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
        help="let vLLM/SGLang log (silenced by default: the results say it all); --verbose/-v: "
        "the older name, kept as an alias",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument(
        "--roundtrip",
        type=int,
        default=12,
        metavar="N",
        help="round trip: N drawn examples per tool family rendered by its format and parsed back by "
        "each backend, tallied in the report (default 12; 0: off; not with --tool-parser/--transcripts)",
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
    try:  # the diff's own options live next to its code (conformance.diff)
        from .diff import configure
    except ImportError:
        pass
    else:
        configure(d)
    d.set_defaults(func=cmd_diff)
    from .support import configure as configure_support

    s = sub.add_parser(
        "support",
        help="the support table of every framework release the matrix ran (Markdown)",
        description="Read the matrix's report.json files (one per tox env) and render the support page: "
        "per release, the adapter's API shape, the parsers it registers and its results per family.",
        epilog=SUPPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    configure_support(s)
    s.set_defaults(func=cmd_support)


def cmd_support(ns: argparse.Namespace) -> int:
    """`parsebridge conformance support REPORTS… [--out docs/support.md]`."""
    from .support import main

    return main(ns)


def cmd_diff(ns: argparse.Namespace) -> int:
    """Delegates to `conformance.diff` when present (built in a later issue)."""
    from ..protocol import ParsebridgeError

    try:
        from . import diff
    except ImportError as exc:
        raise ParsebridgeError("`parsebridge conformance diff` is not available in this build") from exc
    runner = getattr(diff, "main", None) or getattr(diff, "cmd_diff", None)
    if runner is None:
        raise ParsebridgeError("`parsebridge conformance diff` is not available in this build")
    return int(runner(ns) or 0)


# ---------------------------------------------------------------- running


def check_family(name: str) -> None:
    """A usage error with suggestions when `name` is no family or alias of the family table."""
    from ..protocol import InvalidSpecError, family_table
    from ..protocol.errors import closest

    table = family_table()
    if table.get("tool", name) is not None or table.get("reasoning", name) is not None:
        return
    names = sorted({n for f in table for n in (f.name, *f.aliases)})
    hint = closest(name, names)
    did = f" Did you mean {', '.join(map(repr, hint))}?" if hint else ""
    raise InvalidSpecError(
        f"unknown family {name!r}.{did} Families: {', '.join(sorted({f.name for f in table}))}."
    )


def _unknown_ids(unknown: Sequence[str], have: set[str], filtered: bool) -> str:
    from ..protocol.errors import closest

    parts = []
    for u in unknown:
        hint = closest(u, have)
        parts.append(f"{u!r}" + (f" (did you mean {', '.join(map(repr, hint))}?)" if hint else ""))
    where = " among the selected transcripts" if filtered else ""
    return f"no transcript with id {', '.join(parts)}{where}"


def load_transcript_files(paths: Sequence[str]) -> list[Any]:
    """Transcripts of the given files/directories; a missing, empty or non-UTF-8 file is a usage error."""
    from ..cli.terminal import InputFileError, exists_or_fail
    from .transcripts import load_transcripts

    out: list[Any] = []
    for path in paths:
        p = exists_or_fail(path)
        try:
            got = load_transcripts([p])
        except UnicodeDecodeError as exc:
            raise InputFileError(
                f"{p}: not UTF-8 text (byte 0x{exc.object[exc.start : exc.start + 1].hex()} "
                f"at offset {exc.start} of a block); transcripts are UTF-8"
            ) from None
        if not got or (not p.is_dir() and p.stat().st_size == 0):
            raise InputFileError(
                f"{p}: no transcripts in it (empty file or directory; expected JSON Lines, YAML, "
                "or a text file holding one raw output)"
            )
        out.extend(got)
    return out


def cmd_conformance(ns: argparse.Namespace) -> int:
    from ..cli.terminal import console as term_console
    from ..cli.terminal import styled
    from .chunking import parse_chunkings
    from .runner import Runner

    console, err = term_console(), term_console(stderr=True)
    chunkings = parse_chunkings(_split(ns.chunking) or None)
    families = _split(ns.family)
    for f in families:
        check_family(f)
    transcripts = _select_transcripts(ns, families, err)
    named = _named_backends(ns)
    runner = Runner(chunkings)
    pairs = _explicit_pairs(ns, transcripts)
    if pairs is not None:
        transcripts = list({t.id: t for _, t in pairs}.values())
    backends = RunBackends.of(
        list(dict.fromkeys(t.backend for t, _ in pairs)) if pairs is not None else named
    )
    _framework_logs(ns.framework_logs)
    for b in backends.requested:
        if b in backends.unavailable:
            err.print(styled(f"backend {b} unavailable: {backends.unavailable[b]}", style="dim"))
    units = _units(runner, transcripts, pairs, backends.running)
    jobs = _jobs(ns.jobs)
    t_run = time.perf_counter()
    results = _execute(runner, units, transcripts, jobs, len(units) * len(chunkings), err, ns.quiet)
    run_s = time.perf_counter() - t_run
    wall_s = time.perf_counter() - _T0

    print_summary(console, results, backends.running, backends.versions, ns.show, ns.report)
    roundtrip = None
    if ns.roundtrip > 0 and pairs is None and not ns.transcripts and ns.kind != "reasoning":
        roundtrip = _roundtrip(ns, console, backends, families, jobs)
    console.print(
        styled(
            f"{_count(len(transcripts), 'transcript')} × {_count(len(backends.running), 'backend')} × "
            f"{_count(len(chunkings), 'chunking')}: {_count(len(results), 'result')} in ",
            (f"{wall_s:.1f} s", "bold"),
            f" wall (run {run_s:.1f} s, framework imports included)",
        )
    )
    if ns.report:
        timing = {
            "jobs": jobs,
            "wall_s": round(wall_s, 3),
            "run_s": round(run_s, 3),
            "setup_s": {b: round(s, 3) for b, s in runner.setup_seconds.items()},
        }
        paths = write_run_report(ns.report, results, transcripts, backends, chunkings, timing, roundtrip)
        console.print(styled(f"report: {paths['json']} · {paths['md'].name} · {paths['html'].name}"))
    if not transcripts:
        err.print(styled(("warning:", "yellow"), " no transcripts selected"))
    bad = sum(1 for r in results if r.status in ("fail", "error"))
    return 1 if ns.strict and (bad or not results) else 0


def _select_transcripts(ns: argparse.Namespace, families: list[str], err: Any) -> list[Any]:
    """--transcripts files (problems warned about) or the bundled ones, by family, kind and --transcript id."""
    from ..cli.terminal import styled
    from ..protocol import InvalidSpecError
    from .transcripts import bundled_transcripts, select, validate_transcripts

    kinds = [ns.kind] if ns.kind else None
    if ns.transcripts:
        loaded = load_transcript_files(ns.transcripts)
        for problem in validate_transcripts(loaded, strict=False):
            err.print(styled(("warning:", "yellow"), " " + problem))
        transcripts = list(select(loaded, families=families or None, kinds=kinds))
    else:
        transcripts = bundled_transcripts(families or None, kinds)
    if not ns.transcript:
        return transcripts
    wanted = _split(ns.transcript)
    have = {t.id for t in transcripts}
    unknown = [w for w in wanted if w not in have]
    if unknown:
        raise InvalidSpecError(_unknown_ids(unknown, have, bool(families or kinds)))
    return [t for t in transcripts if t.id in set(wanted)]


def _named_backends(ns: argparse.Namespace) -> list[str]:
    """--backend names, canonical (``VLLM`` → ``vllm``); a typo or a framework not installed is a usage error."""
    from ..adapters import get_backend
    from ..protocol import ParsebridgeError

    if ns.backend and (ns.tool_parser or ns.reasoning_parser):
        raise ParsebridgeError("--backend and --tool-parser/--reasoning-parser exclude each other")
    named = list(dict.fromkeys(get_backend(b).name for b in _split(ns.backend)))  # typo: suggestions
    for b in named:
        get_backend(b).require()  # named but not installed: says how to install it
    return named


def _explicit_pairs(ns: argparse.Namespace, transcripts: list[Any]) -> list[Any] | None:
    """(target, transcript) for --tool-parser/--reasoning-parser; None when the backends' parsers run."""
    from ..adapters.registry import check_spec
    from .runner import plan_explicit

    if not (ns.tool_parser or ns.reasoning_parser):
        return None
    # A spec that cannot build is a usage error now, as in `compare`, not an error per transcript.
    for kind, spec in (("tool", ns.tool_parser), ("reasoning", ns.reasoning_parser)):
        if spec:
            check_spec(kind, spec)
    return list(plan_explicit(transcripts, tool=ns.tool_parser, reasoning=ns.reasoning_parser))


def _framework_logs(keep: bool) -> None:
    if keep:
        os.environ["PARSEBRIDGE_FRAMEWORK_LOGS"] = "1"  # workers inherit it; adapters then leave logs alone
    else:
        _quiet_frameworks()


def _units(runner: Any, transcripts: list[Any], pairs: list[Any] | None, backends: list[str]) -> list[Any]:
    """(target, transcript index, explicit) per run: each given pair, or each transcript × backend."""
    from .runner import target_for

    if pairs is not None:
        index = {t.id: i for i, t in enumerate(transcripts)}
        return [(target, index[t.id], True) for target, t in pairs]
    return [(target_for(t, b, runner.table), i, False) for i, t in enumerate(transcripts) for b in backends]


def _jobs(value: Any) -> int:
    from ..protocol import ParsebridgeError
    from .parallel import default_jobs

    if value in (None, "auto"):
        return default_jobs()
    if str(value).isdigit() and int(value) >= 1:
        return int(value)
    raise ParsebridgeError(f"--jobs takes a positive number or 'auto', not {value!r}")


def _execute(
    runner: Any, units: list[Any], transcripts: list[Any], jobs: int, total: int, err: Any, quiet: bool
) -> list[Any]:
    """Every unit's results, with a progress bar on stderr unless `quiet`."""
    from .parallel import run_units

    if quiet or total == 0:
        return list(run_units(runner, units, transcripts, jobs=jobs))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[bold]conformance[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task("run", total=total)
        return list(run_units(runner, units, transcripts, jobs=jobs, progress=lambda n: bar.advance(task, n)))


def _roundtrip(
    ns: argparse.Namespace, console: Any, backends: RunBackends, families: list[str], jobs: int
) -> Any:
    """Run and print the round trip (drawn calls rendered by each format, parsed back by each backend)."""
    from ..cli.terminal import styled
    from .roundtrip import run_roundtrip, summary_lines

    roundtrip = run_roundtrip(
        [b for b in backends.running if b not in backends.unavailable],
        families=families or None,
        examples=ns.roundtrip,
        seed=ns.roundtrip_seed,
        jobs=jobs,
    )
    console.print(
        styled(
            ("round trip", "bold"), f" ({ns.roundtrip} examples per family, {roundtrip['elapsed_s']:.1f} s):"
        )
    )
    for line in summary_lines(roundtrip):
        console.print(styled("  " + line))
    return roundtrip


#: Loggers silenced during a run: frameworks log a traceback per malformed output, which
#: the report already records as a result; --framework-logs keeps them.
QUIET_LOGGERS = ("vllm", "sglang", "transformers", "parsebridge")


def _quiet_frameworks() -> None:
    import logging

    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)
