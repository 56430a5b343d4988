"""The family grammars of the adversarial corpus: each family's calls (or reasoning) with text arguments.

Taken from `parsebridge.formats` (each format's `TextGrammar` and reasoning
renderer), never written here: a family's markers live in its format module.
Also the request's tools and the marker-free text the cases are made of.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...formats import REASONING_FORMATS, TOOL_FORMATS, gpt_oss, qwen3_coder, reasoning_format, tool_format
from ...protocol import family_table
from ...protocol.families import Kind
from ..checks import family_markers


def _tool(name: str, props: dict[str, str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {k: {"type": t} for k, t in props.items()}},
        },
    }


#: The request's tools in every adversarial transcript (``no_such_tool`` is deliberately absent).
TOOLS: list[dict[str, Any]] = [
    _tool("get_weather", {"location": "string", "unit": "string", "days": "integer"}),
    _tool("search_web", {"query": "string", "max_results": "integer"}),
    _tool("nest", {"a": "object"}),
]

#: Characters no format uses as structure: the text-accounting property counts exactly these.
SENTINELS = "λжß漢字😀éΩ"
_WORDS = ("the", "weather", "λόγος", "жук", "漢字", "😀", "Straße", "café", "Ω", "tool", "call", "think", "x")
#: Marker fragments of many families, for every family ("marker fragments everywhere").
FOREIGN_FRAGMENTS = (
    "<tool_",
    "</tool_",
    "</thi",
    "<thin",
    "<｜tool▁",
    "<｜tool▁calls",
    "<|tool_call",
    "<|python_",
    "[TOOL_",
    "[THI",
    qwen3_coder.FN[:-1],  # "<function"
    qwen3_coder.PARAM,
    "<arg_",
    "<|channel|",
    gpt_oss.START + "assi",
    "◁thi",
    "<minimax:tool",
    "<seed:tool",
    "<steptml:",
    "functo",
    "Here is my thought",
)
#: Characters that break naive code: NUL, ESC, DEL, NEL, line/paragraph separators, BOM, a noncharacter.
CONTROLS = "\x00\x01\x08\x0b\x1b\x7f\x85\u2028\u2029\ufeff\ufffe"
#: Lone surrogates: legal in a Python str, not encodable as UTF-8 (a tokenizer's encode may refuse them).
SURROGATES = "\ud800\udfff\udbff"


def prose(size: int, seed: int = 0) -> str:
    """About `size` characters of marker-free text with unicode (sentences, newlines)."""
    rng = random.Random(seed)
    out: list[str] = []
    n = 0
    while n < size:
        w = _WORDS[rng.getrandbits(4) % len(_WORDS)]
        sep = ". " if rng.getrandbits(4) == 0 else ("\n" if rng.getrandbits(6) == 0 else " ")
        out.append(w + sep)
        n += len(w) + len(sep)
    return "".join(out)[:size]


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------- grammars


CallFn = Callable[[str, str, int], str]


@dataclass(frozen=True)
class Grammar:
    """How one family writes its output.

    Tool families: `call(name, arguments_text, index)` renders one call (the
    arguments text is JSON; XML formats expand an object into parameters and
    put anything else verbatim as the body), `wrap(calls)` the section that
    holds them. Reasoning families: `reason(reasoning, content)`.
    """

    kind: Kind
    family: str
    markers: tuple[str, ...]
    call: CallFn | None = None
    wrap: Callable[[list[str]], str] | None = None
    reason: Callable[[str, str], str] | None = None
    started: bool = False  # the chat template opens reasoning in the prompt
    json_args: bool = True  # arguments travel as JSON text (not per-parameter XML)
    multi: bool = True  # several calls in one output are part of the format
    reasoning_family: str | None = None

    def calls(self, items: Sequence[tuple[str, str]]) -> str:
        """One output section holding these (name, arguments JSON text) calls."""
        assert self.call is not None and self.wrap is not None
        return self.wrap([self.call(n, a, i) for i, (n, a) in enumerate(items)])

    @property
    def start(self) -> str:
        return self.markers[0]

    @property
    def end(self) -> str:
        return self.markers[1] if len(self.markers) > 1 else self.markers[0]


def _tool_grammars() -> list[Grammar]:
    out = []
    for family in TOOL_FORMATS:
        fmt = tool_format(family)
        tg = fmt.grammar
        if tg is None:
            continue
        for name in (family, *fmt.aliases):
            out.append(
                Grammar(
                    "tool",
                    name,
                    tg.markers,
                    tg.call,
                    tg.wrap,
                    json_args=tg.json_args,
                    multi=fmt.multi,
                    reasoning_family=fmt.reasoning_family,
                )
            )
    return out


def _reasoning_grammars() -> list[Grammar]:
    out = []
    for family in REASONING_FORMATS:
        fmt = reasoning_format(family)
        if not fmt.splits_reasoning:
            continue  # its expected reading is not reasoning + content
        out.append(
            Grammar(
                "reasoning",
                family,
                fmt.markers,
                reason=lambda r, c, fmt=fmt: fmt.render_text(r, c),  # type: ignore[misc]
                started=fmt.needs_started,
            )
        )
    return out


GRAMMARS: dict[tuple[str, str], Grammar] = {
    (g.kind, g.family): g for g in _tool_grammars() + _reasoning_grammars()
}


def grammar(kind: str, family: str) -> Grammar:
    """The grammar of a family-table family (canonical name or alias)."""
    fam = family_table().get(kind, family)  # type: ignore[arg-type]
    key = (kind, fam.name if fam else family)
    if key not in GRAMMARS:
        raise KeyError(f"no adversarial grammar for {kind} family {family!r}")
    return GRAMMARS[key]


def all_markers(g: Grammar) -> tuple[str, ...]:
    """The grammar's markers plus the conformance suite's known markers of its (reasoning) family."""
    found = [*g.markers, *family_markers(g.kind, g.family)]
    if g.reasoning_family:
        found += family_markers("reasoning", g.reasoning_family)
    return tuple(dict.fromkeys(found))
