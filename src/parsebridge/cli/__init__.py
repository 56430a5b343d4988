"""The `parsebridge` command: its entry point and subcommands.

``main`` (the console script) runs ``cli.commands``: a table of subcommands, each a module
of this package (``parse_command``, ``list_command``, ``compare_command``,
``conformance_command``, ``install_command``) imported only when its subcommand runs.
``stream_output`` keeps ``parse --stream`` in bounded memory; the terminal helpers the
commands and the rooms' renderers share are `parsebridge.terminal`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .commands import main as _run


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `parsebridge` command (the console script's entry point)."""
    return _run(argv)
