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
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any


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

DEFAULT_BACKENDS: tuple[str, ...] = ("builtin", "vllm", "sglang")
STATUS_STYLE = {"pass": "green", "diverge": "yellow", "fail": "red", "unsupported": "dim", "error": "magenta"}

EPILOG = """\
exit status:
  0    the suite ran (whatever the results), or --strict and no result is fail/error
  1    --strict and at least one result is fail or error (or nothing was run)
  2    usage error: unknown backend, chunking, family or transcript id; a transcript
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
    p.add_argument(
        "--backend",
        action="append",
        metavar="B",
        help="backend to run (repeatable or comma-separated; default: every available one of "
        "builtin, vllm, sglang; an explicitly named unavailable backend is reported unsupported)",
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
        "--chunking", action="append", metavar="C", help="chunkings to run (repeatable; default: default)"
    )
    p.add_argument(
        "--transcripts",
        action="append",
        metavar="FILE",
        help="transcript files/directories (JSONL, YAML, text) instead of the bundled fixtures",
    )
    p.add_argument("--transcript", action="append", metavar="ID", help="only these transcript ids")
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
        "--verbose",
        "-v",
        action="store_true",
        help="keep the frameworks' own log output (silenced by default: results say it all)",
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
    p.set_defaults(func=cmd_conformance)
    sub = p.add_subparsers(dest="conformance_command", metavar="SUBCOMMAND")
    d = sub.add_parser(
        "diff",
        help="what changed between two report.json files (e.g. before and after a framework upgrade)",
        description="Match two conformance reports on (backend, family, transcript, chunking) and list "
        "what regressed, was fixed, changed, appeared or vanished. REPORT_A is before, REPORT_B after.",
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
    )
    configure_support(s)
    s.set_defaults(func=cmd_support)
    return p  # type: ignore[no-any-return]


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


def _plugin_probes(backends: list[str]) -> dict[str, Any]:
    """Per framework backend run: can this release serve parsebridge parsers (the support table's plugin column)."""
    from ..plugins.probe import probe

    return {b: probe(b) for b in backends if b in ("vllm", "sglang")}


def _backend_meta(
    names: Sequence[str],
) -> tuple[dict[str, Any], dict[str, str], dict[str, Any], dict[str, Any]]:
    """(versions, unavailable reasons, api shapes, parser lists) per backend."""
    from ..adapters import get_backend

    versions: dict[str, Any] = {}
    unavailable: dict[str, str] = {}
    shapes: dict[str, Any] = {}
    parsers: dict[str, Any] = {}
    for name in names:
        try:
            backend = get_backend(name)
            reason = backend.unavailable_reason()
        except Exception as exc:
            versions[name], unavailable[name] = None, str(exc)
            continue
        if reason is not None:
            versions[name], unavailable[name] = None, reason
            continue
        versions[name] = backend.version()
        try:
            shapes[name] = backend.api_shape()
            parsers[name] = {
                "tool": sorted(backend.tool_parser_names()),
                "reasoning": sorted(backend.reasoning_parser_names()),
            }
        except Exception as exc:  # imports, but cannot list: its parsers will error and say why
            unavailable[name] = f"{type(exc).__name__}: {exc}"
    return versions, unavailable, shapes, parsers


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
    from .._cli_io import InputFileError, exists_or_fail
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
    from rich.markup import escape

    from .._cli_io import console as term_console
    from ..adapters import get_backend
    from ..protocol import InvalidSpecError, ParsebridgeError
    from .chunking import parse_chunkings
    from .parallel import default_jobs, run_units
    from .report import build_report, write_report
    from .runner import Runner, plan_explicit, target_for
    from .transcripts import bundled_transcripts, select, validate_transcripts

    console = term_console()
    err = term_console(stderr=True)
    chunkings = parse_chunkings(_split(ns.chunking) or None)
    families = _split(ns.family)
    for f in families:
        check_family(f)
    kinds = [ns.kind] if ns.kind else None
    if ns.transcripts:
        loaded = load_transcript_files(ns.transcripts)
        for problem in validate_transcripts(loaded, strict=False):
            err.print(f"[yellow]warning:[/] {escape(problem)}")
        transcripts = list(select(loaded, families=families or None, kinds=kinds))
    else:
        transcripts = bundled_transcripts(families or None, kinds)
    if ns.transcript:
        wanted = _split(ns.transcript)
        have = {t.id for t in transcripts}
        unknown = [w for w in wanted if w not in have]
        if unknown:
            raise InvalidSpecError(_unknown_ids(unknown, have, bool(families or kinds)))
        transcripts = [t for t in transcripts if t.id in set(wanted)]
    for b in _split(ns.backend):
        get_backend(b)  # an unknown name is a usage error with suggestions; a missing framework is not

    runner = Runner(chunkings)
    pairs = None
    if ns.tool_parser or ns.reasoning_parser:
        if ns.backend:
            raise ParsebridgeError("--backend and --tool-parser/--reasoning-parser exclude each other")
        pairs = list(plan_explicit(transcripts, tool=ns.tool_parser, reasoning=ns.reasoning_parser))
        transcripts = list({t.id: t for _, t in pairs}.values())
        explicit = list(dict.fromkeys(t.backend for t, _ in pairs))
    else:
        explicit = _split(ns.backend)
    requested = explicit or list(DEFAULT_BACKENDS)
    versions, unavailable, shapes, parsers = _backend_meta(requested)
    backends = requested if explicit else [b for b in requested if b not in unavailable]
    if ns.verbose:
        os.environ["PARSEBRIDGE_FRAMEWORK_LOGS"] = "1"  # workers inherit it; adapters then leave logs alone
    else:
        _quiet_frameworks()
    for b in requested:
        if b in unavailable:
            err.print(f"[dim]backend {b} unavailable: {escape(unavailable[b])}[/]")

    if pairs is not None:
        index = {t.id: i for i, t in enumerate(transcripts)}
        units = [(target, index[t.id], True) for target, t in pairs]
    else:
        units = [
            (target_for(t, b, runner.table), i, False) for i, t in enumerate(transcripts) for b in backends
        ]
    if ns.jobs in (None, "auto"):
        jobs = default_jobs()
    elif str(ns.jobs).isdigit() and int(ns.jobs) >= 1:
        jobs = int(ns.jobs)
    else:
        raise ParsebridgeError(f"--jobs takes a positive number or 'auto', not {ns.jobs!r}")

    def execute(progress: Any = None) -> Any:
        return run_units(runner, units, transcripts, jobs=jobs, progress=progress)

    total = len(units) * len(chunkings)
    t_run = time.perf_counter()
    results = []
    if ns.quiet or total == 0:
        results = list(execute())
    else:
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
            for r in execute(lambda n: bar.advance(task, n)):
                results.append(r)
    run_s = time.perf_counter() - t_run
    wall_s = time.perf_counter() - _T0

    _print_summary(console, results, backends, versions, ns.show)
    roundtrip = None
    if ns.roundtrip > 0 and pairs is None and not ns.transcripts and ns.kind != "reasoning":
        from .roundtrip import run_roundtrip, summary_lines

        roundtrip = run_roundtrip(
            [b for b in backends if b not in unavailable],
            families=families or None,
            examples=ns.roundtrip,
            seed=ns.roundtrip_seed,
        )
        console.print(
            f"[bold]round trip[/] ({ns.roundtrip} examples per family, {roundtrip['elapsed_s']:.1f} s):"
        )
        for line in summary_lines(roundtrip):
            console.print("  " + escape(line))
    console.print(
        f"{len(transcripts)} transcripts × {len(backends)} backend(s) × {len(chunkings)} chunkings: "
        f"{len(results)} results in [bold]{wall_s:.1f} s[/] wall (run {run_s:.1f} s, framework imports included)"
    )
    if ns.report:
        report = build_report(
            results,
            transcripts,
            backends={b: versions.get(b) for b in (backends if explicit else requested)},
            unavailable=unavailable,
            api_shapes=shapes,
            chunkings=[c.name for c in chunkings],
            timing={
                "jobs": jobs,
                "wall_s": round(wall_s, 3),
                "run_s": round(run_s, 3),
                "setup_s": {b: round(s, 3) for b, s in runner.setup_seconds.items()},
            },
        )
        report["parsers"] = parsers
        report["plugins"] = _plugin_probes([b for b in backends if b not in unavailable])
        if roundtrip is not None:
            report["roundtrip"] = roundtrip
        paths = write_report(ns.report, report)
        console.print(f"report: {paths['json']} · {paths['md'].name} · {paths['html'].name}")
    if not transcripts:
        err.print("[yellow]warning:[/] no transcripts selected")
    bad = sum(1 for r in results if r.status in ("fail", "error"))
    if ns.strict and (bad or not results):
        return 1
    return 0


#: Loggers silenced during a run: frameworks log a traceback per malformed output, which
#: the report already records as a result; --verbose keeps them.
QUIET_LOGGERS = ("vllm", "sglang", "transformers", "parsebridge")


def _quiet_frameworks() -> None:
    import logging

    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _cell(counts: Counter[str]) -> str:
    parts = [f"[{STATUS_STYLE[s]}]{counts[s]} {s}[/]" for s in STATUS_STYLE if counts[s]]
    return " ".join(parts) or "[dim]–[/]"


def _print_summary(
    console: Any, results: Sequence[Any], backends: Sequence[str], versions: dict[str, Any], show: int
) -> None:
    from rich.markup import escape
    from rich.table import Table

    per: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        per[f"{r.kind}:{r.family}"][r.backend][r.status] += 1
        totals[r.backend][r.status] += 1
    table = Table(title="conformance: family × backend", title_justify="left")
    table.add_column("family", overflow="fold")
    for b in backends:
        table.add_column(escape(f"{b} {versions.get(b) or ''}".strip()), overflow="fold")
    for fam in sorted(per):
        table.add_row(escape(fam), *(_cell(per[fam][b]) for b in backends))
    table.add_section()
    table.add_row("[bold]total[/]", *(_cell(totals[b]) for b in backends))
    console.print(table)
    if show <= 0:
        return
    order = {"error": 0, "fail": 1, "diverge": 2}
    bad = sorted(
        (r for r in results if r.status in order and not r.known),
        key=lambda r: (order[r.status], r.backend, r.transcript, r.chunking),
    )

    for r in bad[:show]:
        detail = r.detail if len(r.detail) <= 200 else r.detail[:199] + "…"
        text = escape(f"{r.spec} {r.transcript} [{r.chunking}] {detail}")
        console.print(f"[{STATUS_STYLE[r.status]}]{r.status}[/] {text}", soft_wrap=True)
    if len(bad) > show:
        console.print(f"[dim]… {len(bad) - show} more not passing (undocumented); see the report[/]")
