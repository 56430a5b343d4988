"""The `parsebridge` command.

Subcommands: `list` (backends, parsers, families), `parse` (one output
through a reasoning and/or tool parser), and, from the conformance package,
`conformance` and `compare`. Exit status: 0 on success, 2 on a usage or spec
error (unknown backend/parser, missing framework), 1 on other failures.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._version import __version__
from .adapters import get_pipeline, list_backends
from .adapters.base import BackendInfo
from .protocol import ParsebridgeError, ParseResult, StreamDelta, family_table

#: Subcommands contributed by other modules: (module, register function).
_PLUGINS: tuple[tuple[str, str], ...] = (
    ("parsebridge.conformance.cli", "register"),
    ("parsebridge.compare.cli", "register"),
)


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


# ---------------------------------------------------------------- list


def _cmd_list(ns: argparse.Namespace) -> int:
    infos = list_backends(with_parsers=not ns.brief)
    if ns.backend:
        infos = [i for i in infos if i.name in ns.backend]
    table = family_table()
    if ns.json:
        out = {
            "parsebridge": __version__,
            "backends": [vars(i) for i in infos],
            "families": [
                {"kind": f.kind, "name": f.name, "aliases": list(f.aliases), "parsers": f.parsers}
                for f in table
            ],
        }
        print(json.dumps(out, indent=2))
        return 0
    from rich.table import Table

    console = _console()
    t = Table(title="Backends", title_justify="left")
    for col in ("backend", "status", "version", "tool parsers", "reasoning parsers"):
        t.add_column(col)
    for i in infos:
        status = "[green]available[/]" if i.available else f"[red]unavailable[/]: {i.reason or ''}"
        if not i.available and i.install:
            status += f"\n[dim]install: {i.install}[/]"
        t.add_row(
            i.name,
            status,
            i.version or "",
            _count(i.tool_parsers, i, ns.brief),
            _count(i.reasoning_parsers, i, ns.brief),
        )
    console.print(t)
    if not ns.brief:
        for i in infos:
            if i.available and (i.tool_parsers or i.reasoning_parsers):
                console.print(f"\n[bold]{i.name}[/] tool parsers: {', '.join(i.tool_parsers)}")
                console.print(f"[bold]{i.name}[/] reasoning parsers: {', '.join(i.reasoning_parsers)}")
    for kind in ("tool", "reasoning"):
        ft = Table(title=f"\n{kind} families (family → each backend's parser name)", title_justify="left")
        backends = [i.name for i in infos if i.name != "python"]
        ft.add_column("family")
        for b in backends:
            ft.add_column(b)
        ft.add_column("aliases", style="dim")
        for fam in table.of_kind(kind):  # type: ignore[arg-type]
            ft.add_row(fam.name, *(fam.parser_for(b) or "-" for b in backends), ", ".join(fam.aliases))
        console.print(ft)
    return 0


def _count(names: list[str], info: BackendInfo, brief: bool) -> str:
    if info.name == "python":
        return "any module:Class"
    if not info.available:
        return "-"
    return "(not listed with --brief)" if brief else str(len(names))


# ---------------------------------------------------------------- parse


def _read_input(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    return Path(path).read_text(encoding="utf-8")


def _load_tools(path: str | None) -> list[dict[str, Any]] | None:
    if not path:
        return None
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, list):
        raise ParsebridgeError(f"{path}: expected a JSON list of OpenAI tool definitions")
    return data


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _cmd_parse(ns: argparse.Namespace) -> int:
    if not (ns.tool_parser or ns.reasoning_parser):
        raise ParsebridgeError("give --tool-parser SPEC and/or --reasoning-parser SPEC")
    text = _read_input(ns.input)
    pipe = get_pipeline(
        ns.reasoning_parser,
        ns.tool_parser,
        tools=_load_tools(ns.tools),
        reasoning_started=True if ns.reasoning_started else None,
        on_error=ns.on_error,
    )
    deltas: list[StreamDelta] = []
    if ns.stream:
        stream = pipe.stream()
        for chunk in _chunks(text, ns.chunk_size):
            d = stream.feed(chunk)
            if d:
                deltas.append(d)
        d = stream.flush()
        if d:
            deltas.append(d)
        result = stream.finish()
    else:
        result = pipe.parse(text)
    if ns.json:
        out: dict[str, Any] = {
            "result": result.model_dump(mode="json"),
            "message": result.to_openai_message(),
        }
        if ns.stream:
            out["deltas"] = [d.to_openai() for d in deltas]
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        _show_result(result, deltas if ns.stream else None)
    return 0


def _show_result(result: ParseResult, deltas: list[StreamDelta] | None) -> None:
    from rich.panel import Panel
    from rich.table import Table

    console = _console()
    if result.reasoning is not None:
        console.print(Panel(result.reasoning, title="reasoning", title_align="left", border_style="magenta"))
    console.print(
        Panel(
            result.content if result.content is not None else "[dim](none)[/]",
            title="content",
            title_align="left",
        )
    )
    if result.tool_calls:
        t = Table(title="tool calls", title_justify="left")
        for col in ("#", "id", "name", "arguments"):
            t.add_column(col)
        for i, call in enumerate(result.tool_calls):
            args = call.arguments_json if call.valid else f"[red]invalid:[/] {call.invalid_arguments}"
            t.add_row(str(i), call.id, call.name, args)
        console.print(t)
    else:
        console.print("[dim]no tool calls[/]")
    if deltas is not None:
        console.print(f"[dim]{len(deltas)} non-empty deltas streamed[/]")


# ---------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="parsebridge",
        description="One protocol over vLLM's, SGLang's and builtin reasoning and tool-call parsers.",
    )
    p.add_argument("--version", action="version", version=f"parsebridge {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    lp = sub.add_parser("list", help="backends, their parsers, and the family table")
    lp.add_argument("--backend", action="append", help="only this backend (repeatable)")
    lp.add_argument("--brief", action="store_true", help="do not import frameworks to list parser names")
    lp.add_argument("--json", action="store_true", help="machine-readable output")
    lp.set_defaults(func=_cmd_list)

    pp = sub.add_parser("parse", help="parse one model output")
    pp.add_argument("input", help="a text file with the raw model output, or - for stdin")
    pp.add_argument("--tool-parser", metavar="SPEC", help="e.g. builtin:hermes, vllm:llama3_json")
    pp.add_argument("--reasoning-parser", metavar="SPEC", help="e.g. builtin:qwen3, sglang:deepseek-r1")
    pp.add_argument("--tools", metavar="FILE", help="JSON list of OpenAI tool definitions")
    pp.add_argument("--reasoning-started", action="store_true", help="the prompt already opened reasoning")
    pp.add_argument("--stream", action="store_true", help="feed the output in chunks through a stream")
    pp.add_argument("--chunk-size", type=int, default=4, help="characters per chunk with --stream")
    pp.add_argument("--on-error", choices=("raise", "fallback"), default="raise")
    pp.add_argument("--json", action="store_true", help="machine-readable output")
    pp.set_defaults(func=_cmd_parse)

    for module, func in _PLUGINS:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        getattr(mod, func)(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    try:
        return int(ns.func(ns) or 0)
    except ParsebridgeError as exc:
        _console(stderr=True).print(f"[red]error:[/] {exc}")
        return 2
    except (OSError, ValueError) as exc:
        _console(stderr=True).print(f"[red]error:[/] {exc}")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
