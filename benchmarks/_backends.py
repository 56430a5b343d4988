"""Which backends this process measures, how to build their parsers, and how to drive them.

One interpreter rarely holds every framework (vLLM and SGLang pin different
transformers), so `python -m benchmarks` measures what is importable here
and can delegate a framework to another interpreter (`--python
vllm=/path/to/python`); `SETTINGS.backends` says which backends *this*
process measures. A backend that cannot be measured yields rows that say
why (not installed, no parser for the family, parser failed to build),
never an exception.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._corpus import Format
from ._direct_base import Chunk, DirectUnavailable
from ._timing import Row

BACKENDS = ("builtin", "vllm", "sglang")
FRAMEWORKS = ("vllm", "sglang")


@dataclass
class Settings:
    """What this process measures (set by `__main__` from the command line)."""

    backends: tuple[str, ...] = BACKENDS
    #: Interpreters that hold a framework, for sections that run subprocesses (suite_cost).
    pythons: dict[str, str] = field(default_factory=dict)
    #: Label of this interpreter in results (``core``, ``vllm``…).
    interpreter: str = "this"
    #: Per-backend limit on a conformance suite run (None: the section's default).
    suite_timeout: float | None = None


SETTINGS = Settings()


def installed(backend: str) -> bool:
    """Whether the backend's framework can be imported here (without importing it)."""
    if backend not in FRAMEWORKS:
        return True
    return importlib.util.find_spec(backend) is not None


def framework_version(backend: str) -> str | None:
    import importlib.metadata as md

    try:
        return md.version(backend if backend in FRAMEWORKS else "parsebridge")
    except md.PackageNotFoundError:
        return None


def measured_frameworks() -> list[str]:
    """Frameworks this process is asked to measure (installed or not: absent ones get a row)."""
    return [b for b in FRAMEWORKS if b in SETTINGS.backends]


def installed_frameworks(section: str) -> tuple[list[str], list[Row]]:
    """The frameworks this process measures that are installed, and a row for each that is not."""
    measured = measured_frameworks()
    absent = [skip_row(section, f"{b}: all formats", "not installed") for b in measured if not installed(b)]
    return [b for b in measured if installed(b)], absent


def skip_row(section: str, name: str, reason: str) -> Row:
    """A row that records why a figure is missing (value NaN, reason in `raw`)."""
    return Row(section, name, float("nan"), "", raw=reason, detail={"skipped": reason})


# ---------------------------------------------------------------------- parsers


def spec_for(backend: str, fmt: Format) -> str | None:
    """`backend:NAME` for the format's family, from the family table (None: no such parser)."""
    from parsebridge.protocol import family_table

    family = family_table().get(fmt.kind, fmt.family)
    return family.spec_for(backend) if family is not None else None


def make_parser(backend: str, fmt: Format) -> tuple[Any, str]:
    """(parser, spec) through parsebridge's public API, or (None, why not)."""
    if not installed(backend):
        return None, "not installed"
    spec = spec_for(backend, fmt)
    if spec is None:
        return None, f"{backend} has no parser for family {fmt.family!r}"
    import parsebridge as pb

    try:
        if fmt.kind == "tool":
            return pb.get_tool_parser(spec, tools=fmt.tools), spec
        return pb.get_reasoning_parser(spec), spec
    except Exception as exc:  # not written yet, or the framework refuses: report, don't crash
        return None, f"{spec}: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"


_TOKEN_RE = re.compile(r"<[^<>\s]{1,40}>|<｜[^｜]{1,40}｜>|\w{1,4}|\s+|[^\w\s]")


def approx_tokens(text: str) -> list[Chunk]:
    """A framework-free stand-in for engine tokens: markers whole, words in ≤4-char pieces."""
    return [(m.group(), None) for m in _TOKEN_RE.finditer(text)]


def chunks_for(parser: Any, text: str) -> list[Chunk]:
    """`text` cut where an engine would cut it: the adapter's tokenizer if it has one."""
    chunker = getattr(parser, "chunks", None) if parser is not None else None
    if callable(chunker):
        try:
            return [(c.text, tuple(c.token_ids)) for c in chunker(text, 1)]
        except Exception:
            pass
    return approx_tokens(text)


def bridge_oneshot(parser: Any, fmt: Format) -> Callable[[str], object]:
    """One-shot parse of one transcript through parsebridge."""
    if fmt.kind == "tool":
        return parser.parse  # type: ignore[no-any-return]
    started = fmt.reasoning_started
    if started is None:
        return parser.parse  # type: ignore[no-any-return]
    return lambda text: parser.parse(text, reasoning_started=started)


def bridge_stream(parser: Any, fmt: Format) -> Callable[[Sequence[Chunk]], object]:
    """A full stream (feed every chunk, then finish) of one transcript through parsebridge."""
    kwargs: dict[str, Any] = {}
    if fmt.kind == "reasoning" and fmt.reasoning_started is not None:
        kwargs["reasoning_started"] = fmt.reasoning_started

    def run(chunks: Sequence[Chunk]) -> object:
        stream = parser.stream(**kwargs)
        feed = stream.feed
        for text, ids in chunks:
            feed(text, ids)
        return stream.finish()

    return run


# ---------------------------------------------------------------------- direct (no adapter)


def direct_driver(backend: str, parser: Any, fmt: Format) -> Any:
    """The framework parser called the way the adapter calls it, written here without the adapter."""
    if backend == "vllm":
        from ._direct_vllm import VllmDirect

        return VllmDirect(parser, fmt)
    if backend == "sglang":
        from ._direct_sglang import SglangDirect

        return SglangDirect(parser, fmt)
    raise DirectUnavailable(f"{backend} has no framework to call directly")
