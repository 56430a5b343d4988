"""`parsebridge install-framework`: its options and its run live with the installer."""

from __future__ import annotations

import argparse

from .._frameworks import install as fw_install


def configure(ip: argparse.ArgumentParser) -> None:
    """`parsebridge install-framework` (the parser `cli.commands` made for it)."""
    ip.description = fw_install.__doc__
    fw_install.add_arguments(ip)
    ip.set_defaults(func=fw_install.run)
