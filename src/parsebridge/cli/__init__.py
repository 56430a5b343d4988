"""The `parsebridge` command: its entry point, subcommands and terminal input/output.

``main`` (the console script) builds the command from ``cli.commands`` (``parse``,
``install-framework``) and ``cli.list_command`` (``list``); ``compare`` and ``conformance``
contribute their own subcommands from their rooms. ``terminal`` is the
one leaf the rooms' renderers print through (plain text, never markup), and
``stream_output`` keeps ``parse --stream`` in bounded memory. Nothing is imported here
until the command runs, so ``import parsebridge.cli.terminal`` stays light.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `parsebridge` command (the console script's entry point)."""
    from .commands import main as run

    return run(argv)
