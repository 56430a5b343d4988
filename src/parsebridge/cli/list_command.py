"""`parsebridge list`: the backends, their parsers and config-string names, the family table.

Plain tables on a terminal (through `terminal`), or ``--json`` for machines; ``--brief``
lists without importing a framework.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .. import terminal as io
from .._version import __version__
from ..adapters import list_backends
from ..adapters.base import BackendInfo
from ..adapters.builtin.engines.conventions import CONVENTIONS, DEFAULT, REASONING_CONVENTIONS, servers_rules
from ..conformance.transcripts import split_names
from ..protocol import UnknownBackendError, family_table
from ..protocol.spec import BACKEND_ALIASES, normalize_name


def configure(lp: argparse.ArgumentParser) -> None:
    """`parsebridge list` (the parser `cli.commands` made for it)."""
    lp.add_argument(
        "--backend", action="append", metavar="B", help="only these backends (repeatable or comma-separated)"
    )
    lp.add_argument("--brief", action="store_true", help="do not import frameworks to list parser names")
    lp.add_argument("--json", action="store_true", help="machine-readable output")
    lp.set_defaults(func=_cmd_list)


def family_aliases(info: BackendInfo, kind: str) -> dict[str, str]:
    """Names that reach one of this backend's parsers only through the family table: name → parser.

    A spec's name is looked up among the backend's own parsers first, then
    among family names and aliases, so these are accepted too (and show up
    in "did you mean" lists) without being parsers of their own.
    """

    own = info.tool_parsers if kind == "tool" else info.reasoning_parsers
    by_norm = {normalize_name(n): n for n in own}
    out: dict[str, str] = {}
    for fam in family_table().of_kind(kind):  # type: ignore[arg-type]
        target = fam.parser_for(info.name)
        if target is None or normalize_name(target) not in by_norm:
            continue
        for alias in (fam.name, *fam.aliases):
            if normalize_name(alias) not in by_norm:
                out.setdefault(alias, by_norm[normalize_name(target)])
    return dict(sorted(out.items()))


def _cmd_list(ns: argparse.Namespace) -> int:
    infos = list_backends(with_parsers=not ns.brief)
    # comma-separated too, as conformance's --backend ('builtin,vllm' was "unknown parser backend")
    wanted = [BACKEND_ALIASES.get(b.lower(), b.lower()) for b in split_names(ns.backend, "--backend")]
    if wanted:
        known = [i.name for i in infos]
        for b in wanted:
            if b not in known:
                raise UnknownBackendError(b, known)
        infos = [i for i in infos if i.name in wanted]
    if ns.json:
        print(json.dumps(_list_json(infos, ns.brief), indent=2))
        return 0
    console = io.console()
    console.print(_backends_table(infos, ns.brief))
    for i in infos:
        if not i.available and i.install:
            console.print(io.plain(f"install {i.name}: {i.install}"), style="dim", soft_wrap=True)
    if not ns.brief:
        _print_parser_names(console, infos)
    for kind in ("tool", "reasoning"):
        console.print(_families_table(kind, [i.name for i in infos if i.name != "python"]))
    if any(i.name == "builtin" for i in infos):
        console.print(_conventions_table())
    return 0


def _list_json(infos: list[BackendInfo], brief: bool = False) -> dict[str, Any]:
    """What `list` shows, for machines. With `brief` the parser names were not looked up: those
    fields are null ("not listed", as the table says), never ``[]``, which reads as "no parsers"."""
    backends = []
    for i in infos:
        entry = vars(i).copy()
        entry["tool_aliases"] = family_aliases(i, "tool")
        entry["reasoning_aliases"] = family_aliases(i, "reasoning")
        if brief and i.name != "python":
            for field in ("tool_parsers", "reasoning_parsers", "tool_aliases", "reasoning_aliases"):
                entry[field] = None
        backends.append(entry)

    return {
        "parsebridge": __version__,
        "backends": backends,
        "families": [
            {"kind": f.kind, "name": f.name, "aliases": list(f.aliases), "parsers": f.parsers}
            for f in family_table()
        ],
        "builtin_conventions": {
            "tool": CONVENTIONS,
            "reasoning": REASONING_CONVENTIONS,
            "servers": [{"kind": k, "rule": r, "parsers": p} for k, r, p in servers_rules()],
        },
    }


def _backends_table(infos: list[BackendInfo], brief: bool) -> Any:
    from rich.table import Table

    t = Table(title="Backends", title_justify="left")
    for col in ("backend", "status", "version", "tool parsers", "reasoning parsers"):
        t.add_column(col, overflow="fold")
    for i in infos:
        status = io.plain("available") if i.available else io.plain(f"unavailable: {i.reason or ''}")
        status.stylize("green" if i.available else "red", 0, 9 if i.available else 11)
        t.add_row(
            io.plain(i.name),
            status,
            io.plain(i.version or ""),
            _count(i.tool_parsers, i, brief, "tool"),
            _count(i.reasoning_parsers, i, brief, "reasoning"),
        )
    return t


def _print_parser_names(console: Any, infos: list[BackendInfo]) -> None:
    """Each available backend's parser names, and the family names it also accepts."""
    for i in infos:
        if not (i.available and (i.tool_parsers or i.reasoning_parsers)):
            continue
        for kind, names in (("tool", i.tool_parsers), ("reasoning", i.reasoning_parsers)):
            console.print(
                io.plain(f"\n{i.name} {kind} parsers ({len(names)}): {', '.join(names)}"), soft_wrap=True
            )
            aliases = family_aliases(i, kind)
            if aliases:
                listed = ", ".join(f"{a} → {p}" for a, p in aliases.items())
                console.print(
                    io.plain(f"  also accepted (family names): {listed}"), style="dim", soft_wrap=True
                )


def _families_table(kind: str, backends: list[str]) -> Any:
    """Family → each backend's parser name, with the family's aliases."""
    from rich.table import Table

    ft = Table(title=f"\n{kind} families (family → each backend's parser name)", title_justify="left")
    ft.add_column("family", overflow="fold")
    for b in backends:
        ft.add_column(b, overflow="fold")
    ft.add_column("aliases", style="dim", overflow="fold")
    for fam in family_table().of_kind(kind):  # type: ignore[arg-type]
        ft.add_row(
            io.plain(fam.name),
            *(io.plain(fam.parser_for(b) or "-") for b in backends),
            io.plain(", ".join(fam.aliases)),
        )
    return ft


def _conventions_table() -> Any:
    """Builtin's `conventions=`: what each does, then what "servers" does for which parsers."""
    from rich.table import Table

    t = Table(title="\nbuiltin conventions (conventions=, parse --conventions)", title_justify="left")
    for col in ("convention", "kind", "what it does", "builtin parsers"):
        t.add_column(col, overflow="fold")
    for name in CONVENTIONS:
        label = io.plain(name + (" (default)" if name == DEFAULT else ""))
        t.add_row(label, io.plain("tool"), io.plain(CONVENTIONS[name]), io.plain(""))
        t.add_row(io.plain(""), io.plain("reasoning"), io.plain(REASONING_CONVENTIONS[name]), io.plain(""))
    for kind, rule, names in servers_rules():
        t.add_row(io.plain("servers"), io.plain(kind), io.plain(rule), io.plain(", ".join(names) or "-"))
    return t


def _count(names: list[str], info: BackendInfo, brief: bool, kind: str) -> str:
    if info.name == "python":
        return "any module:Class"
    if not info.available:
        return "-"
    if brief:
        return "(not listed with --brief)"
    aliases = family_aliases(info, kind)
    return f"{len(names)}" + (f" (+{len(aliases)} family names)" if aliases else "")
