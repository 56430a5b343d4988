"""The `parsebridge` command: its subcommands, the command line, and the exit statuses.

Each subcommand lives in a module of its own that imports its rooms at its top and
defines ``configure(parser)``: its description, options and ``set_defaults(func=...)``.
`SUBCOMMANDS` names that module; only the one for the subcommand that runs is imported,
so ``parsebridge --help`` and ``parsebridge list --brief`` load no more than they use.
Exit statuses are the same for every subcommand and listed in ``parsebridge --help``
(`terminal.EXIT_STATUS_HELP`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NamedTuple

from .. import terminal as io
from .._version import __version__
from ..protocol import BackendError, ParsebridgeError
from .options import check_options


class Subcommand(NamedTuple):
    """One `parsebridge` subcommand: the module that configures it, and its line in ``--help``."""

    module: str
    help: str


#: Every subcommand, in the order ``parsebridge --help`` lists them. A new subcommand is a
#: module with ``configure(parser)`` and a row here.
SUBCOMMANDS: dict[str, Subcommand] = {
    "list": Subcommand("parsebridge.cli.list_command", "backends, their parsers, and the family table"),
    "parse": Subcommand("parsebridge.cli.parse_command", "parse one model output"),
    "install-framework": Subcommand(
        "parsebridge.cli.install_command",
        "install vLLM, SGLang, Dynamo, smg or llama.cpp parsers-only (no GPU) into this environment",
    ),
    "conformance": Subcommand(
        "parsebridge.cli.conformance_command", "run the shared transcripts through every backend and report"
    ),
    "compare": Subcommand(
        "parsebridge.cli.compare_command",
        "backends side by side on the same transcripts (one output or a whole log)",
    ),
    "probe": Subcommand(
        "parsebridge.cli.probe_command",
        "check a live OpenAI-compatible server's tool calls the way a client sees them",
    ),
}


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand the command line names (its first word that is no option), if any."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in SUBCOMMANDS else None
    return None


def build_parser(argv: Sequence[str] = (), *, every: bool = False) -> argparse.ArgumentParser:
    """The command line's parser: every subcommand listed, the one `argv` names configured
    (`every`: all of them, for documentation and tests)."""
    p = argparse.ArgumentParser(
        prog="parsebridge",
        description="One protocol over the reasoning and tool-call parsers of vLLM, SGLang, Dynamo, smg, "
        "llama.cpp, builtin and your own (python:).",
        epilog=io.EXIT_STATUS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"parsebridge {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = _chosen(argv)
    for name, command in SUBCOMMANDS.items():
        sp = sub.add_parser(
            name,
            help=command.help,
            epilog=io.EXIT_STATUS_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if every or name == chosen:
            importlib.import_module(command.module).configure(sp)
    return p


def _pipe_closed() -> int:
    """Stdout's reader went away (`| head`): stop quietly, and keep Python's exit flush quiet too."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return io.EXIT_PIPE_CLOSED


def importable_here() -> None:
    """Let ``python:`` specs import modules from the current folder, as ``python -m parsebridge``
    does: the installed `parsebridge` script's path starts at its own folder instead. Appended,
    so a file here never shadows an installed module."""
    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.append(here)


class ClosedOutput:
    """Standard output for a process started with it closed (``>&-``), where the first print
    failed with "'NoneType' object has no attribute 'flush'" (exit 1): nothing written is nothing
    said; writing says why it cannot (a usage error, exit 2)."""

    def write(self, text: str) -> int:
        if not text:
            return 0
        raise io.UsageError(
            "standard output is closed: redirect it (> FILE), or give the command's output file"
        )

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def interrupted(exc: KeyboardInterrupt) -> int:
    """Ctrl-C that reached the top: one line on stderr (the command's own, `io.Interrupted`, or
    ``interrupted (Ctrl-C)``: it stopped before it had anything to say), then status 130."""
    said = str(exc) if isinstance(exc, io.Interrupted) and str(exc) else "interrupted (Ctrl-C)"
    with contextlib.suppress(OSError, ValueError):  # stderr closed: the status says it
        print(said, file=sys.stderr, flush=True)
    return io.EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    importable_here()
    args = list(sys.argv[1:] if argv is None else argv)
    try:  # (configuring the subcommand imports its module: half a second for probe)
        parser = build_parser(args)
    except KeyboardInterrupt as exc:
        return interrupted(exc)
    check_options(parser, args)
    ns = parser.parse_args(args)  # (--help and --version go to stderr when stdout is closed)
    if sys.stdout is None:
        sys.stdout = ClosedOutput()  # type: ignore[assignment]
    try:
        code = int(ns.func(ns) or 0)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        return _pipe_closed()
    except KeyboardInterrupt as exc:
        return interrupted(exc)
    except BackendError as exc:
        io.print_error(exc)
        return io.EXIT_FAILED
    except ParsebridgeError as exc:
        io.print_error(exc)
        return io.EXIT_USAGE
    except (
        FileNotFoundError,
        FileExistsError,
        IsADirectoryError,
        NotADirectoryError,
        PermissionError,
    ) as exc:
        io.print_error(f"{exc.filename}: {exc.strerror}" if exc.filename else exc)
        return io.EXIT_USAGE
    except Exception as exc:  # never a bare traceback; PARSEBRIDGE_DEBUG=1 shows it
        if os.environ.get("PARSEBRIDGE_DEBUG"):
            raise
        io.print_error(f"{type(exc).__name__}: {exc} (set PARSEBRIDGE_DEBUG=1 for the traceback)")
        return io.EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
