"""What servers pass a plugin parser, in parsebridge's terms: tools as OpenAI dicts, the markers.

A server hands its own tool objects (pydantic models, Responses API tools)
and asks token-id questions about reasoning markers; these read both the
way parsebridge parsers declare them (`formats`, the family table).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..formats import UnknownFormatError, tool_format
from ..formats import think as _think
from ..protocol import ParserSpec, family_table
from .settings import _log


def tool_dicts(tools: Sequence[Any] | None) -> list[dict[str, Any]] | None:
    """A server's tool objects (pydantic models or dicts) as OpenAI tool dicts."""
    if not tools:
        return None
    out: list[dict[str, Any]] = []
    for tool in tools:
        if isinstance(tool, dict):
            data = tool
        elif hasattr(tool, "model_dump"):
            data = tool.model_dump(exclude_none=True)
        else:
            data = {k: v for k, v in vars(tool).items() if not k.startswith("_")}
        if "function" not in data and "name" in data:  # Responses API FunctionTool: flat
            fields = ("name", "description", "parameters", "strict")
            data = {"type": "function", "function": {k: data[k] for k in fields if k in data}}
        out.append(data)
    return out


def tool_indices(tools: Sequence[dict[str, Any]] | None) -> dict[str, int]:
    """Function name → its position in the request's tools (SGLang's one-shot `tool_index`)."""
    out: dict[str, int] = {}
    for i, tool in enumerate(tools or ()):
        fn = tool.get("function", tool)
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            out.setdefault(fn["name"], i)
    return out


def tool_start_marker(parser: Any, spec: str) -> str | None:
    """The marker that opens a tool parser's calls (None when its format has none).

    A builtin parser declares its markers; a framework's parser (``sglang:qwen25``)
    declares none, and its marker is the first of the format its family writes
    (`families.toml` says which family the backend's parser reads; `formats` holds the markers).
    """
    declared = [m for m in getattr(parser, "markers", ()) or () if isinstance(m, str) and m]
    if declared:
        return declared[0]
    parsed = ParserSpec.parse(spec)
    family = family_table().for_parser("tool", parsed.backend, parsed.name or "")
    if family is None:
        return None
    try:
        markers = tool_format(family.format or family.name).markers
    except UnknownFormatError:
        return None
    return next((m for m in markers if m), None)


_WARNED_MARKERS: set[str] = set()


def reasoning_markers(parser: Any) -> tuple[str, str]:
    """The start and end marker of a reasoning parser (its first two declared markers).

    A parser that declares fewer than two gets ``<think>``/``</think>`` for the missing ones — what
    the servers' token-id checks (`is_reasoning_end`) then look for — and a warning, once per spec,
    that says how to declare them (``markers = (START, END)`` on the class).
    """
    markers = tuple(m for m in getattr(parser, "markers", ()) if isinstance(m, str) and m)
    start = markers[0] if markers else _think.START
    end = markers[1] if len(markers) > 1 else _think.END
    if len(markers) < 2:
        spec = str(getattr(parser, "spec", None) or type(parser).__name__)
        if spec not in _WARNED_MARKERS:
            _WARNED_MARKERS.add(spec)
            _log.warning(
                "parsebridge plugin: %s declares %s; the server's reasoning-end checks use %r and %r "
                "(declare markers = (START, END) on the parser class to set them)",
                spec,
                f"only the marker {markers[0]!r}" if markers else "no reasoning markers",
                start,
                end,
            )
    return start, end


def reasoning_closed(text: str, start: str, end: str) -> bool:
    """Whether `text` ends reasoning: its last end marker comes after its last start marker."""
    closed = text.rfind(end)
    return closed != -1 and closed > text.rfind(start) if start != end else closed != -1


def reasoning_open(text: str, start: str, end: str) -> bool:
    """Whether `text` (a prompt) leaves the model inside an open reasoning block."""
    opened = text.rfind(start)
    return opened != -1 and opened > text.rfind(end)
