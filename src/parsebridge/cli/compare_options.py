"""`parsebridge compare`'s command line: its options and its help epilog (what it reads, where it
runs, what it writes, its exit status). What the command does with them is `compare_command`.
"""

from __future__ import annotations

import argparse

from ..comparison.defaults import DEFAULT_COMPARE_CHUNKINGS
from .options import count

EPILOG = """\
inputs (any number, read in order):
  FILE        transcripts: JSON Lines (.jsonl/.ndjson/.json; .gz: gzipped JSON Lines), YAML,
              or any other file = one raw output
  DIR         every transcript file in it and its subfolders, in sorted order (.jsonl, .ndjson,
              .json, .yaml, .yml, .jsonl.gz); a file of another suffix is skipped, and counted on stderr
  'GLOB'      every file it matches, in sorted order (a log in parts: 'logs/chat-*.jsonl.gz')
  -           standard input: JSON Lines if it starts with '{', else one raw output (a pipe
              given by path, <(zcat log.jsonl.gz), is read the same way)
  --text TEXT the text itself is one raw output (repeatable); an argument that names no
              file is an error ("no such file")
  --bundled   the transcripts shipped with parsebridge (with --family: only that family's);
              this is also what runs when no input is given

what runs on each transcript:
  --tool-parser/--reasoning-parser SPEC   these specs (equal counts pair up in order; one of a
                                          kind combines with each of the other)
  --family NAME [--backends B,...]        each backend's parser for the family (family table)
  neither                                 each transcript's own family, on every available backend

where it runs:
  (default)                 this process, or --jobs N worker processes on this machine
  --executor ray            Ray workers (pip install 'parsebridge[ray]'): a local Ray runtime, or
    [--address ADDR]        the cluster at ADDR (`ray start --head` prints it); --jobs N workers
                            (default: one per CPU of the cluster). Same records and summary.

output (--format json): a run object (the settings that decide the readings: parsers,
  backends and versions, chunkings, conventions, --tools, --reasoning-started), one object per
  transcript, then a summary object. A transcript's object has `transcript` (its id),
  `results[SPEC][MODE]` (MODE: oneshot, stream, stream:token-5, …; each {status, reasoning,
  content, tool_calls, tokenizer: what cut the chunks}) and `differences[{class, a, b, detail}]`;
  `parsebridge compare --schema` prints the JSON schema.

exit status:
  0    done; a parser that raised is done too: its reading has status error, the
       difference class backend_error
  1    --fail-on-diff and some difference (a parser that raised is one)
  2    usage error: unknown spec, family or backend, framework not installed, a raw
       output with neither a spec nor --family, or an input file that is missing, empty
       (or only blank lines), holds no transcripts, is not UTF-8 or is malformed (the
       message names it); an output file (-o, --summary) that is one of the inputs; --resume
       of a file that is not compare output or was made with other options (or by a parsebridge
       that did not record them); --unordered without --jobs N (N > 1, or 0) or --executor
       ray; --address without --executor ray; --executor ray without Ray installed, with a
       Ray runtime or cluster that cannot be started or reached, or a Ray worker that dies
  130  interrupted (a json -o FILE continues with --resume); 141 the output pipe closed
       early (`| head`)
"""


def add_input_options(p: argparse.ArgumentParser) -> None:
    """What is compared: the inputs, the specs or families and backends, the chunkings, the defaults."""
    p.add_argument(
        "inputs", nargs="*", metavar="TRANSCRIPTS", help="files, directories, 'GLOB's, - for stdin"
    )
    p.add_argument(
        "--text", action="append", metavar="TEXT", help="one raw model output, given as text (repeatable)"
    )
    p.add_argument("--bundled", action="store_true", help="the bundled transcripts (filtered by --family)")
    p.add_argument(
        "--tool-parser",
        action="append",
        metavar="SPEC",
        help="e.g. builtin:hermes, dynamo:hermes, smg:qwen (repeatable)",
    )
    p.add_argument(
        "--reasoning-parser", action="append", metavar="SPEC", help="e.g. vllm:qwen3, smg:qwen3 (repeatable)"
    )
    p.add_argument(
        "--family",
        action="append",
        metavar="NAME",
        help="each backend's parser for this family (a tool and/or a reasoning family)",
    )
    p.add_argument(
        "--backends",
        action="append",
        metavar="B,...",
        help="backends for --family or per-transcript families (default: all installed)",
    )
    p.add_argument(
        "--chunking",
        action="append",
        metavar="C",
        help=f"streamed chunkings (comma-separated or repeated; default: "
        f"{','.join(DEFAULT_COMPARE_CHUNKINGS)}; oneshot is always run; `parsebridge conformance --help` "
        "describes every chunking)",
    )
    p.add_argument(
        "--tools",
        metavar="FILE",
        help="tool definitions (OpenAI or flat form) for transcripts that carry none",
    )
    p.add_argument(
        "--reasoning-started",
        action="store_true",
        help="the prompt opened reasoning (for transcripts that do not say: no reasoning_started_in_prompt, "
        "prompt or prompt_token_ids)",
    )
    p.add_argument(
        "--conventions",
        choices=("servers", "lossless"),
        default=None,
        help="builtin parsers' conventions= (default: servers, as builtin reads by default; with --bundled "
        "lossless, the reading the bundled transcripts' expected was written for)",
    )


def add_run_options(p: argparse.ArgumentParser) -> None:
    """Where and how it runs: jobs, executor, order, resume, progress, framework logs."""
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=None,
        metavar="N",
        help="worker processes (0: one per CPU; default 1); with --executor ray: Ray workers "
        "(default: one per CPU of the cluster)",
    )
    p.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where comparisons run: this machine (default) or Ray workers (parsebridge[ray])",
    )
    p.add_argument(
        "--address",
        metavar="ADDR",
        help="with --executor ray: an existing Ray cluster (host:port, or auto); default: a local runtime",
    )
    p.add_argument(
        "--unordered",
        action="store_true",
        help="write results as they finish (with --jobs or --executor ray)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="skip transcripts already in --output (json) and append the rest; the file must be this "
        "command's output, made with the same options (else exit 2, the file untouched)",
    )
    prog = p.add_mutually_exclusive_group()
    prog.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    prog.add_argument("--no-progress", "-q", dest="progress", action="store_false")
    p.add_argument(
        "--framework-logs",
        action="store_true",
        help="let vLLM, SGLang, Dynamo and smg log (by default their error logs are silenced: compare "
        "reports errors)",
    )


def add_output_options(p: argparse.ArgumentParser) -> None:
    """What is written where: format, files, how many transcripts are shown, the exit on differences."""
    p.add_argument("--format", choices=("table", "json", "html"), default="table")
    p.add_argument(
        "-o", "--output", metavar="FILE", help="write the output here instead of stdout (-: stdout)"
    )
    p.add_argument(
        "--summary",
        metavar="FILE",
        help="write the summary object (JSON) to this file, with any --format; with json it is then "
        "left out of the output",
    )
    p.add_argument(
        "--top", type=count, default=10, metavar="N", help="most-different transcripts listed (10)"
    )
    p.add_argument(
        "--show",
        type=count,
        default=None,
        metavar="N",
        help="show every transcript when there are at most N (table 20, html 300), else the --top",
    )
    p.add_argument(
        "--fail-on-diff", action="store_true", help="exit 1 when any transcript shows a difference"
    )
    p.add_argument("--schema", action="store_true", help="print the JSON schema of the json output and exit")


# ---------------------------------------------------------------- progress
