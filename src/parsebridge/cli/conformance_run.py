"""`parsebridge conformance` runs: the transcripts selected, each backend's parser, the report.

The options are `conformance_command`'s; this is what runs with them: which transcripts
(bundled or files, by family, kind and id), which backends or explicit specs, the units run
(in worker processes with a progress bar), the round trip, and the summary and report.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..adapters import get_backend
from ..adapters.registry import check_spec
from ..comparison.inputs import directory_inputs, named_errors, stream_transcripts, strict_stdin_transcripts
from ..conformance.chunking import parse_chunkings
from ..conformance.log_files import iter_log
from ..conformance.parallel import default_jobs, run_units
from ..conformance.record_use import RecordWarnings, misspelt_keys, prompt_warning, unused_token_ids
from ..conformance.report import REPORT_FILES
from ..conformance.roundtrip import run_roundtrip, summary_lines
from ..conformance.run_output import RunBackends, print_summary, write_run_report
from ..conformance.runner import Runner, plan_explicit, target_for
from ..conformance.transcripts import bundled_transcripts, select, split_names, validate_transcripts
from ..protocol import InvalidSpecError, ParsebridgeError, family_table
from ..protocol.errors import with_hints
from ..terminal import (
    EXIT_INTERRUPTED,
    InputFileError,
    Interrupted,
    UsageError,
    check_output_path,
    console,
    counted,
    exists_or_fail,
    styled,
)


def _process_start() -> float:
    """`perf_counter` time of the process start (Linux), else of this import: wall time counts imports."""
    try:
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


def _unknown_ids(unknown: Sequence[str], have: set[str], filtered: bool) -> str:
    where = " among the selected transcripts" if filtered else ""
    return f"no transcript with id {with_hints(unknown, sorted(have))}{where}"


def load_transcript_files(paths: Sequence[str]) -> list[Any]:
    """Transcripts of the given files/directories; a missing, empty or non-UTF-8 file is a usage error.

    A directory is read as `compare` reads one (`comparison.inputs.directory_inputs`): its
    JSON Lines, JSON, YAML and gzipped JSON Lines files, subfolders too, and a warning naming
    the files of any other suffix; a file named on its own of any other suffix is one raw output.
    A pipe given by path (``<(zcat log.jsonl.gz)``) is read once, as `compare` reads one, and
    ``-`` is standard input, read as `compare -` reads it.
    """
    out: list[Any] = []
    for path in paths:
        if path == "-":
            got = list(strict_stdin_transcripts(raw_ok=True))
            if not got:
                raise InputFileError("<stdin>: no transcripts in it (empty input)")
            out.extend(got)
            continue
        p = exists_or_fail(path)
        if not p.is_dir() and not p.is_file():  # a pipe or a device: no size, no second read
            out.extend(stream_transcripts(p))
            continue
        files = directory_inputs(p) if p.is_dir() else [p]
        got = [t for f in files for t in named_errors(str(f), iter_log(f))]
        if not got or (p.is_file() and p.stat().st_size == 0):
            raise InputFileError(
                f"{p}: no transcripts in it (empty file or directory; expected JSON Lines, YAML, "
                "or a text file holding one raw output)"
            )
        out.extend(got)
    return out


def cmd_conformance(ns: argparse.Namespace) -> int:
    """Run the selected transcripts on the selected backends; print (and write) the report."""
    out, err = console(), console(stderr=True)
    if ns.report:
        check_output_path(ns.report, f"--report {ns.report}", directory=True)
    _check_roundtrip(ns)
    chunkings = parse_chunkings(split_names(ns.chunking, "--chunking") or None)
    families = split_names(ns.family, "--family")
    for f in families:
        family_table().check(f)
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
    run = _Run(runner, transcripts, results, backends, chunkings, jobs, time.perf_counter() - t_run)
    stage = _Stage(ns.report)
    try:
        _after_run(ns, out, run, families, pairs is not None, stage)
    except KeyboardInterrupt:
        err.print(styled(stage.interrupted()), soft_wrap=True)
        return EXIT_INTERRUPTED
    return _exit_status(ns.strict, transcripts, results, err)


@dataclass
class _Run:
    """What the run of the units gave, for the stages after it (summary, round trip, report)."""

    runner: Any
    transcripts: list[Any]
    results: list[Any]
    backends: RunBackends
    chunkings: list[Any]
    jobs: int
    run_s: float
    wall_s: float = field(default_factory=lambda: time.perf_counter() - _T0)


class _Stage:
    """Where a run is after its units ran, and which report files are in place: what Ctrl-C says."""

    def __init__(self, report: str | None) -> None:
        self.report = report
        self.now = "describing the backends (before the results table)"
        self.written: list[Path] = []

    def interrupted(self) -> str:
        """One line: interrupted while doing what, and what was (or was not) written."""
        head = f"interrupted while {self.now}"
        if not self.report:
            return f"{head}; no report was asked for (--report DIR), so no file was written"
        done = [p.name for p in self.written]
        left = [name for name in REPORT_FILES if name not in done]
        if not left:
            return f"{head}; the report in {self.report} was written whole"
        kept = "any from an earlier run are left as they were"
        if not done:
            return f"{head}; no report file was written to {self.report} ({kept})"
        return f"{head}; wrote {', '.join(done)} to {self.report}; not {', '.join(left)} ({kept})"


def _after_run(
    ns: argparse.Namespace, out: Any, run: _Run, families: list[str], explicit: bool, stage: _Stage
) -> None:
    """The backends described, the summary table, the round trip, the timing line and the report;
    `stage` says which is under way."""
    run.backends.describe()  # after the run: it imports the frameworks, which the run's stages did
    stage.now = "printing the results"
    running = run.backends.running
    print_summary(out, run.results, running, run.backends.versions, ns.show, ns.report)
    roundtrip = None
    if ns.roundtrip > 0 and not explicit and not ns.transcripts and ns.kind != "reasoning":
        stage.now = "running the round trip (after the results table)"
        roundtrip = _roundtrip(ns, out, run.backends, families, run.jobs)
    out.print(
        styled(
            f"{counted(len(run.transcripts), 'transcript')} × {counted(len(running), 'backend')} × "
            f"{counted(len(run.chunkings), 'chunking')}: {counted(len(run.results), 'result')} in ",
            (f"{run.wall_s:.1f} s", "bold"),
            f" wall (run {run.run_s:.1f} s, framework imports included)",
        )
    )
    if not ns.report:
        return
    stage.now = "writing the report (after the results table)"
    timing = {
        "jobs": run.jobs,
        "wall_s": round(run.wall_s, 3),
        "run_s": round(run.run_s, 3),
        "setup_s": {b: round(s, 3) for b, s in run.runner.setup_seconds.items()},
    }
    paths = write_run_report(
        ns.report, run.results, run.transcripts, run.backends, run.chunkings, timing, roundtrip, stage.written
    )
    out.print(styled(f"report: {paths['json']} · {paths['md'].name} · {paths['html'].name}"))


def _exit_status(strict: bool, transcripts: list[Any], results: list[Any], err: Any) -> int:
    """1 under --strict when a result failed or raised, or when nothing was tested (no result, or
    every one unsupported: e.g. transcripts without a family); the reason is said on stderr."""
    tested = [r for r in results if r.status != "unsupported"]
    if not transcripts:
        err.print(styled(("warning:", "yellow"), " no transcripts selected"))
    elif not tested:
        err.print(
            styled(
                ("warning:", "yellow"),
                f" nothing was tested: all {counted(len(results), 'result')} unsupported "
                "(no backend has a parser for these transcripts' family, or they name none)",
            )
        )
    bad = sum(1 for r in tested if r.status in ("fail", "error"))
    return 1 if strict and (bad or not tested) else 0


def _select_transcripts(ns: argparse.Namespace, families: list[str], err: Any) -> list[Any]:
    """--transcripts files (problems warned about) or the bundled ones, by family, kind and --transcript id."""
    kinds = [ns.kind] if ns.kind else None
    if ns.transcripts:
        loaded = load_transcript_files(ns.transcripts)
        for problem in validate_transcripts(loaded, strict=False):  # token_texts not used too
            _warn(err, problem)
        transcripts = list(select(loaded, families=families or None, kinds=kinds))
        _warn_unread_ids(transcripts, err)
    else:
        transcripts = bundled_transcripts(families or None, kinds)
    if not ns.transcript:
        return transcripts
    wanted = split_names(ns.transcript, "--transcript")
    have = {t.id for t in transcripts}
    unknown = [w for w in wanted if w not in have]
    if unknown:
        raise InvalidSpecError(_unknown_ids(unknown, have, bool(families or kinds)))
    return [t for t in transcripts if t.id in set(wanted)]


def _warn(err: Any, message: str) -> None:
    err.print(styled(("warning:", "yellow"), " " + message))


def _warn_unread_ids(transcripts: Sequence[Any], err: Any) -> None:
    """A record's `token_ids` or `prompt_token_ids` the run leaves out (out of the vocabulary,
    another text than its `output` or `prompt`, a tokenizer not here), or a key that looks like a
    misspelt field, warned about as `compare` does (`record_use`; `token_texts` are
    `validate_transcripts`')."""
    prompts = RecordWarnings(
        lambda said: _warn(err, said), checks=(misspelt_keys, unused_token_ids, prompt_warning)
    )
    for t in transcripts:
        prompts.see(t)
    prompts.close()


def _named_backends(ns: argparse.Namespace) -> list[str]:
    """--backend names, canonical (``VLLM`` → ``vllm``); a typo or a framework not installed is a usage error."""
    if ns.backend and (ns.tool_parser or ns.reasoning_parser):
        raise ParsebridgeError("--backend and --tool-parser/--reasoning-parser exclude each other")
    named = list(
        dict.fromkeys(get_backend(b).name for b in split_names(ns.backend, "--backend"))
    )  # typo: suggestions
    for b in named:
        get_backend(b).require()  # named but not installed: says how to install it
    return named


#: Round-trip examples per family when --roundtrip is not given.
DEFAULT_ROUNDTRIP = 12


def _check_roundtrip(ns: argparse.Namespace) -> None:
    """--roundtrip given with what runs no round trip is a usage error (it was ignored unsaid);
    not given, it is `DEFAULT_ROUNDTRIP` where a round trip runs."""
    if ns.roundtrip is None:
        ns.roundtrip = DEFAULT_ROUNDTRIP
        return
    others = [
        name
        for name, given in (
            ("--tool-parser", ns.tool_parser),
            ("--reasoning-parser", ns.reasoning_parser),
            ("--transcripts", ns.transcripts),
            ("--kind reasoning", ns.kind == "reasoning"),
        )
        if given
    ]
    if ns.roundtrip > 0 and others:
        raise UsageError(
            f"--roundtrip draws examples of the bundled tool families for the backends' own parsers: "
            f"it does not run with {', '.join(others)}"
        )


def _explicit_pairs(ns: argparse.Namespace, transcripts: list[Any]) -> list[Any] | None:
    """(target, transcript) for --tool-parser/--reasoning-parser; None when the backends' parsers run."""
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
    if pairs is not None:
        index = {t.id: i for i, t in enumerate(transcripts)}
        return [(target, index[t.id], True) for target, t in pairs]
    return [(target_for(t, b, runner.table), i, False) for i, t in enumerate(transcripts) for b in backends]


def _jobs(value: Any) -> int:
    if value in (None, "auto"):
        return default_jobs()
    if str(value).isdigit() and int(value) >= 1:
        return int(value)
    raise ParsebridgeError(f"--jobs takes a positive number or 'auto', not {value!r}")


def _execute(
    runner: Any, units: list[Any], transcripts: list[Any], jobs: int, total: int, err: Any, quiet: bool
) -> list[Any]:
    """Every unit's results, with a progress bar on stderr unless `quiet`; Ctrl-C says how far it got
    (and the command exits 130: nothing is reported, no further server starts)."""
    columns = (TextColumn("[bold]conformance[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    # Off a terminal the transient bar shows nothing, yet its stop printed an empty line there
    # (Rich's rule for a non-interactive console): no bar then.
    bar = Progress(
        *columns, console=err, transient=True, disable=quiet or total == 0 or not err.is_interactive
    )
    task, done = bar.add_task("run", total=total), [0]

    def progress(n: int) -> None:
        done[0] += n
        bar.advance(task, n)

    try:
        with bar:
            return list(run_units(runner, units, transcripts, jobs=jobs, progress=progress))
    except KeyboardInterrupt:  # (`main` prints the line: it exits 130)
        raise Interrupted(
            f"interrupted after {done[0]} of {counted(total, 'result')}; nothing reported"
        ) from None


def _roundtrip(
    ns: argparse.Namespace, out: Any, backends: RunBackends, families: list[str], jobs: int
) -> Any:
    """Run and print the round trip (drawn calls rendered by each format, parsed back by each backend)."""
    roundtrip = run_roundtrip(
        [b for b in backends.running if b not in backends.unavailable],
        families=families or None,
        examples=ns.roundtrip,
        seed=ns.roundtrip_seed,
        jobs=jobs,
    )
    out.print(
        styled(
            ("round trip", "bold"),
            f" ({counted(ns.roundtrip, 'example')} per family, {roundtrip['elapsed_s']:.1f} s):",
        )
    )
    for line in summary_lines(roundtrip):
        out.print(styled("  " + line))
    return roundtrip


#: Loggers silenced during a run: frameworks log a traceback per malformed output, which
#: the report already records as a result; --framework-logs keeps them.
QUIET_LOGGERS = ("vllm", "sglang", "transformers", "parsebridge")


def _quiet_frameworks() -> None:
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)
