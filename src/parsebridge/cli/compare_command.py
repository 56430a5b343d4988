"""`parsebridge compare`: backends side by side on the same transcripts.

The options and the help are `cli.compare_options`; the output files and the progress bar live
here; what is read is `comparison.inputs` (the inputs) and `comparison.resume` (the previous
output for ``--resume``), the comparing itself `comparison.engine`, the output models
`comparison.models`, the table/HTML views `comparison.render`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..comparison import render
from ..comparison.engine import ComparePlan, SummaryBuilder, run_comparisons
from ..comparison.inputs import (
    Source,
    check_outputs,
    check_raw_outputs,
    pending_transcripts,
    sources,
    usage_error,
)
from ..comparison.models import CompareRun, compare_json_schema, dump_line
from ..comparison.ray_executor import RayUnavailableError, require_ray
from ..comparison.resume import read_previous, run_settings
from ..conformance.transcripts import split_names
from ..protocol import family_table
from ..terminal import console, counted, load_tools, print_error, write_whole
from .compare_options import EPILOG, add_input_options, add_output_options, add_run_options


def configure(p: argparse.ArgumentParser) -> None:
    """`parsebridge compare` (the parser `cli.commands` made for it)."""
    p.description = (
        "Run model outputs through several parsers (any backends), one-shot and streamed, "
        "and show where what clients would see differs, classified with the conformance classes."
    )
    p.epilog = EPILOG
    add_input_options(p)
    add_run_options(p)
    add_output_options(p)
    p.set_defaults(func=cmd_compare)


def _progress(enabled: bool, total: int | None) -> Any:
    if not enabled:
        return None
    columns: list[Any] = [TextColumn("compare"), BarColumn(), MofNCompleteColumn()]
    if total:
        columns += [TaskProgressColumn(), TextColumn("ETA"), TimeRemainingColumn()]
    columns += [TextColumn("{task.fields[rate]}/s"), TimeElapsedColumn()]
    return Progress(*columns, console=console(stderr=True), transient=False, refresh_per_second=4)


# ---------------------------------------------------------------- the command


def cmd_compare(ns: argparse.Namespace) -> int:
    if ns.schema:
        print(json.dumps(compare_json_schema(), indent=2))
        return 0
    if ns.framework_logs:
        os.environ["PARSEBRIDGE_FRAMEWORK_LOGS"] = "1"  # workers inherit it; adapters then leave logs alone
    else:
        _quiet_frameworks()
    jobs = _check_options(ns)
    if ns.executor == "ray" and not _ray_ready():
        return 2
    srcs = sources(ns)
    check_raw_outputs(ns, srcs)
    check_outputs(ns, srcs)  # before --resume rewrites, or _run truncates, an output file
    # With specs, --family only picks the bundled transcripts (it names no parsers then).
    picks_bundled = ns.bundled and bool(ns.tool_parser or ns.reasoning_parser)
    plan = ComparePlan.build(
        ns.tool_parser,
        reasoning_parsers=ns.reasoning_parser,
        family=None if picks_bundled else split_names(ns.family) or None,
        backends=split_names(ns.backends, "--backends") or None,
        chunkings=split_names(ns.chunking, "--chunking") or None,
        conventions=ns.conventions or ("lossless" if ns.bundled else "servers"),
    )
    if not plan.targets and not plan.backends:
        raise usage_error("no backend is available to compare")
    tools = load_tools(ns.tools)
    if ns.show is None:
        ns.show = 300 if ns.format == "html" else 20
    keep = ns.show if ns.format != "json" else 0
    builder = SummaryBuilder(plan.modes, top=ns.top, keep=keep, conventions=plan.conventions)
    done, header = _previous(ns, plan, tools, builder)
    need_family = not (ns.tool_parser or ns.reasoning_parser or ns.family)
    pending = pending_transcripts(srcs, tools, ns.reasoning_started, done, need_family)
    new, total, summary = _run(ns, plan, srcs, pending, builder, jobs, header)
    written: list[str] = []
    try:
        return _finish(ns, summary, builder, new, total, written)
    except KeyboardInterrupt:
        # (--summary and a table or page -o are written whole, `write_whole`: one not yet written
        # is as it was before)
        whole = [ns.summary] if ns.summary else []
        whole += [ns.output] if ns.output and ns.format != "json" else []
        left = [f for f in whole if f not in written]
        n = builder.transcripts
        print(
            f"interrupted while showing the results of {n} transcript{'' if n == 1 else 's'}"
            + (f"; wrote {', '.join(written)}" if written else "")
            + (f"; {', '.join(left)} left as before" if left else ""),
            file=sys.stderr,
        )
        return 130


def _finish(
    ns: argparse.Namespace, summary: Any, builder: Any, new: int, total: int | None, written: list[str]
) -> int:
    """After the comparisons: the summary file, then what an interrupted or empty run says, or the
    results; the exit status. The files it has written whole go into `written`."""
    if ns.summary:  # any format: a table or page to read, the summary for a script
        write_whole(ns.summary, dump_line(summary) + "\n")
        written.append(ns.summary)
    if not summary.complete:
        of = f" of {total}" if total is not None else ""
        print(
            f"interrupted after {new}{of} transcript{'' if new == 1 and not of else 's'}" + _left_by(ns),
            file=sys.stderr,
        )
        return 130
    if builder.transcripts == 0:
        named = ", ".join(getattr(ns, "inputs", None) or []) or "the inputs"  # (an empty folder: named too)
        raise usage_error(
            f"{named}: no transcripts to compare (empty files, or only blank or comment lines?)"
        )
    _show(ns, summary, builder, new)
    return 1 if ns.fail_on_diff and summary.differing else 0


def _left_by(ns: argparse.Namespace) -> str:
    """What an interrupted run leaves: a json -o file continues with --resume; a table or page -o
    is not written (it is written whole, at the end); a --summary file holds the summary so far."""
    said = ""
    if ns.output and ns.format == "json":
        said = f"; run the same command with --resume to continue {ns.output}"
    elif ns.output:
        said = f"; {ns.output} not written (left as it was)"
    if ns.summary:
        said += f"; wrote the summary of those to {ns.summary}"
    return said


def _check_options(ns: argparse.Namespace) -> int:
    """Options that contradict each other (usage errors); returns the number of jobs asked for."""
    for fam in split_names(ns.family, "--family"):
        family_table().check(fam)
    if ns.output == "-":  # as an input `-` is standard input; a file named "-" is ./-
        ns.output = None
    if ns.summary == "-":
        raise usage_error(
            "--summary takes a file (the summary is the last line of --format json's standard output)"
        )
    if ns.resume and (not ns.output or ns.format != "json"):
        raise usage_error("--resume needs --format json and --output FILE (the file it continues)")
    if ns.jobs is not None and ns.jobs < 0:
        raise usage_error("--jobs must be 0 (one per CPU) or more")
    if ns.address and ns.executor != "ray":
        raise usage_error("--address is for --executor ray")
    if ns.unordered and ns.executor != "ray" and ns.jobs in (None, 1):
        raise usage_error("--unordered is for --jobs N (N > 1, or 0: one per CPU) or --executor ray")
    return int(ns.jobs if ns.jobs is not None else (0 if ns.executor == "ray" else 1))


def _previous(
    ns: argparse.Namespace, plan: ComparePlan, tools: list[dict[str, Any]] | None, builder: SummaryBuilder
) -> tuple[Counter[str], CompareRun | None]:
    """json: the ids --resume finds compared already in --output (folded into `builder`), and the
    settings line the output still needs (None when the resumed file has it)."""
    if ns.format != "json":
        return Counter(), None
    settings = run_settings(plan, tools, ns.reasoning_started)
    if not ns.resume:
        return Counter(), settings
    done, fresh = read_previous(Path(ns.output), builder, settings)
    builder.skipped = done.total()
    return done, settings if fresh else None


def _ray_ready() -> bool:
    """Ray importable (checked before any output file is opened); else says how to install it."""
    try:
        require_ray()
    except RayUnavailableError as exc:
        print_error(exc)  # verbatim: "parsebridge[ray]" is text, not markup
        return False
    return True


def _run(
    ns: argparse.Namespace,
    plan: Any,
    srcs: Sequence[Source],
    pending: Iterator[Any],
    builder: Any,
    jobs: int,
    header: CompareRun | None = None,
) -> tuple[int, int | None, Any]:
    """Compare the pending transcripts into `builder` (and the json output, after its `header`
    line): (new records, how many there were to compare where the inputs say, summary)."""
    counts = [s.count for s in srcs]
    total = None if any(c is None for c in counts) else max(0, sum(c or 0 for c in counts) - builder.skipped)
    show_progress = ns.progress if ns.progress is not None else sys.stderr.isatty()
    start = time.perf_counter()
    complete = True
    with ExitStack() as stack:
        out = _json_output(ns, stack, header)
        bar = _Bar(stack, show_progress, total, start)
        try:
            runs = run_comparisons(
                pending,
                plan,
                jobs=jobs,
                ordered=not ns.unordered,
                executor=ns.executor,
                address=ns.address,
                quiet=not ns.framework_logs,
            )
            for rec in runs:
                builder.add(rec)
                if out is not None:
                    out.write(dump_line(rec) + "\n")
                bar.advance()
        except KeyboardInterrupt:
            complete = False
        bar.finish(complete)
        summary = builder.summary(elapsed=time.perf_counter() - start, complete=complete)
        if out is not None and complete and not ns.summary:  # (--summary: written by `_finish`)
            out.write(dump_line(summary) + "\n")
        if out is not None:
            out.flush()
    return bar.n, total, summary


def _json_output(ns: argparse.Namespace, stack: ExitStack, header: CompareRun | None) -> _Headed | None:
    """Where json records go (--output, appended with --resume, else stdout), `header` first; None
    for table/html."""
    if ns.format != "json":
        return None
    first = dump_line(header) + "\n" if header is not None else ""
    if ns.output:
        Path(ns.output).parent.mkdir(parents=True, exist_ok=True)  # as --report makes its folder
        return _Headed(
            stack.enter_context(Path(ns.output).open("a" if ns.resume else "w", encoding="utf-8")), first
        )
    return _Headed(sys.stdout, first)


class _Headed:
    """An output whose first line (the run's settings) is written with its first record: an input
    found bad before any comparison leaves stdout empty, one error line on stderr."""

    def __init__(self, out: IO[str], first: str) -> None:
        self.out, self.first = out, first

    def write(self, text: str) -> int:
        if self.first:
            self.out.write(self.first)
            self.first = ""
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


class _Bar:
    """The progress bar on stderr, started with the first result (after the pool forked / Ray started)."""

    def __init__(self, stack: ExitStack, enabled: bool, total: int | None, start: float) -> None:
        self.stack, self.total, self.start, self.n = stack, total, start, 0
        self.bar = _progress(enabled, total)
        self.task: Any = None

    def advance(self) -> None:
        self.n += 1
        if self.bar is None:
            return
        if self.task is None:
            self.bar.start()
            self.stack.callback(self.bar.stop)
            self.task = self.bar.add_task("compare", total=self.total, rate="…")
        elapsed = time.perf_counter() - self.start
        self.bar.update(self.task, advance=1, rate=f"{self.n / elapsed:,.0f}" if elapsed else "…")

    def finish(self, complete: bool) -> None:
        """A complete run's bar ends full; an interrupted one stays where it stopped (never 100 %)."""
        if self.task is not None and complete:
            self.bar.update(self.task, total=self.n)


def _show(ns: argparse.Namespace, summary: Any, builder: Any, new: int) -> None:
    """The finished run: a one-line brief (json to a file), the table, or the HTML page."""
    if ns.format == "json":
        if ns.output:
            _brief(summary, ns.output, new)
        return

    all_shown = builder.transcripts <= ns.show
    shown = builder.first if all_shown else builder.most_different()
    if ns.format == "table":
        render.print_table(summary, shown, path=ns.output, all_shown=all_shown)
        return
    html = render.render_html(summary, shown, all_shown=all_shown)
    if ns.output:
        write_whole(ns.output, html)
        print(f"wrote {ns.output}", file=sys.stderr)
    else:
        sys.stdout.write(html)


def _quiet_frameworks() -> None:
    """Frameworks log a traceback for every output their parser cannot read; compare reports those itself."""
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "CRITICAL")  # vLLM configures its logger from this at import
    for name in ("vllm", "sglang"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _brief(summary: Any, path: str, new: int) -> None:
    """One line on stderr: what this run wrote (new records; with --resume, how many were reused)."""
    rates = ", ".join(f"{p.a} vs {p.b}: {p.rate:.1%}" for p in (summary.backend_pairs or summary.pairs)[:6])
    if summary.skipped and not new:
        head = f"nothing new to compare: all {counted(summary.skipped, 'transcript')} were already in {path}"
    elif summary.skipped:
        head = f"wrote {new} new comparisons to {path} ({summary.skipped} reused from the previous run)"
    else:
        head = f"wrote {counted(new, 'comparison')} to {path}"
    print(
        f"{head}; {summary.transcripts} in all, {summary.differing} with differences"
        + (f"; agreement {rates}" if rates else "")
        + f" ({summary.elapsed_s:.1f}s)",
        file=sys.stderr,
    )
