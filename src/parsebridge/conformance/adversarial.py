"""Adversarial outputs: the corpus, the family grammars behind it, and the probe that judges a parser on them.

On a server one bad model output must not take down a request stream, let
alone the process. This module builds the outputs that try to (documented
case by case in ``fixtures/adversarial.md``) and checks what parsers do with
them. Everything is generated deterministically, never stored: the large
cases are megabytes.

* `GRAMMARS` / `grammar(kind, family)` — how each family in the family table
  writes calls (or reasoning), plus its markers. Written from the formats
  documented in ``fixtures/README.md``; shared by the corpus, the fuzz tests
  (hypothesis strategies over `fuzz_pieces`) and the benchmark.
* `CASES`, `build_case(kind, family, case, size)` — one case at a chosen size
  (the benchmark's time-vs-length series); `adversarial_transcripts(families,
  scale)` yields every case of every family as `Transcript`s at nominal size ×
  `scale` (1 MB outputs, 10k calls, 500-deep arguments at ``scale=1``).
  ``expected`` is set only where the reading is unambiguous.
* `random_output(rng, grammar)` — a random output from the family's grammar
  plus noise, for fuzzing without hypothesis (the benchmark uses it).
* `probe(subject, text, chunkings)` — one output through one parser, one-shot
  and streamed at each chunking. Never raises: it returns the exceptions that
  escaped untyped (must be none), the typed errors, the differences between
  stream and one-shot (conformance `DivergenceClass`es) and, with
  ``account=True`` (builtin), text that was lost or duplicated.
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..protocol import DeltaAccumulator, ParsebridgeError, StreamDelta, family_table
from ..protocol.families import Kind
from .checks import Difference, check_invariants, compare_observations, family_markers
from .chunking import Chunk, approximate_tokens, find_chunker
from .classes import DivergenceClass
from .observation import Observation, normalize_call
from .transcripts import Expected, ExpectedCall, Transcript

# ---------------------------------------------------------------- tools and text


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
    "<function",
    "<parameter=",
    "<arg_",
    "<|channel|",
    "<|start|>assi",
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


def _xml_params(args: str, fmt: Callable[[str, str], str]) -> str | None:
    try:
        value = json.loads(args)
    except RecursionError:  # only the deep-nesting case is this deep: {"a": <the rest>}
        key, _, rest = args.partition(": ")
        return fmt(json.loads(key[1:]), rest[:-1])
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    return "".join(fmt(k, v if isinstance(v, str) else _j(v)) for k, v in value.items())


def _xml(head: Callable[[str], str], tail: str, param: Callable[[str, str], str]) -> CallFn:
    def call(name: str, args: str, index: int) -> str:
        params = _xml_params(args, param)
        return head(name) + (params if params is not None else args) + tail

    return call


def _obj(key: str = "arguments") -> CallFn:
    return lambda n, a, i: '{"name": ' + _j(n) + f', "{key}": ' + a + "}"


def _joined(sep: str, before: str = "", after: str = "") -> Callable[[list[str]], str]:
    return lambda calls: before + sep.join(calls) + after


def _pythonic_call(name: str, args: str, index: int) -> str:
    kwargs = _py_kwargs(args)
    return f"{name}({args if kwargs is None else kwargs})"


_PY_WORDS = {"true": "True", "false": "False", "null": "None"}


def _py_kwargs(args: str) -> str | None:
    """A JSON object's text as Python keyword arguments (iterative: arguments may nest 10k deep)."""
    try:
        value = json.loads(args)
    except RecursionError:  # deeper than json can read: only our own deep-nesting object
        value = {}
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    text = args.strip()[1:-1]
    out: list[str] = []
    i, depth, n = 0, 0, len(text)
    expect_key = True
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            literal = text[i : j + 1]
            i = j + 1
            if depth == 0 and expect_key:
                k = i
                while text[k] in " \t\r\n":
                    k += 1
                k += 1  # past the colon
                while k < n and text[k] in " \t\r\n":
                    k += 1
                out.append(json.loads(literal) + "=")
                i = k
                expect_key = False
            else:
                out.append(literal)
            continue
        if c.isalpha():
            j = i
            while j < n and text[j].isalpha():
                j += 1
            out.append(_PY_WORDS.get(text[i:j], text[i:j]))
            i = j
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c == "," and depth == 0:
            expect_key = True
        out.append(c)
        i += 1
    return "".join(out).strip()


DS = (
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
)
KIMI = (
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
)
STEP = (
    "<｜tool_calls_begin｜>",
    "<｜tool_calls_end｜>",
    "<｜tool_call_begin｜>",
    "<｜tool_sep｜>",
    "<｜tool_call_end｜>",
)
HARMONY_NEXT = "<|start|>assistant"


def _tool_grammars() -> list[Grammar]:
    qparam = lambda k, v: f"<parameter={k}>\n{v}\n</parameter>\n"  # noqa: E731
    xml_markers = ("<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>")
    t = "tool"
    return [
        Grammar(
            t,
            "hermes",
            ("<tool_call>", "</tool_call>"),
            lambda n, a, i: "<tool_call>\n" + _obj()(n, a, i) + "\n</tool_call>",
            _joined("\n"),
        ),
        Grammar(t, "llama3_json", ("<|python_tag|>",), _obj("parameters"), _joined("; ")),
        Grammar(t, "mistral", ("[TOOL_CALLS]",), _obj(), _joined(", ", "[TOOL_CALLS] [", "]")),
        Grammar(
            t, "pythonic", ("<|python_start|>", "<|python_end|>"), _pythonic_call, _joined(", ", "[", "]")
        ),
        Grammar(
            t,
            "deepseek_v3",
            DS,
            lambda n, a, i: f"{DS[1]}function{DS[2]}{n}\n```json\n{a}\n```{DS[3]}",
            _joined("\n", DS[0], DS[4]),
        ),
        Grammar(
            t, "deepseek_v31", DS, lambda n, a, i: f"{DS[1]}{n}{DS[2]}{a}{DS[3]}", _joined("", DS[0], DS[4])
        ),
        Grammar(
            t,
            "qwen3_coder",
            xml_markers,
            _xml(lambda n: f"<tool_call>\n<function={n}>\n", "</function>\n</tool_call>", qparam),
            _joined("\n"),
            json_args=False,
        ),
        Grammar(
            t,
            "qwen3_xml",
            xml_markers,
            _xml(lambda n: f"<tool_call>\n<function={n}>\n", "</function>\n</tool_call>", qparam),
            _joined("\n"),
            json_args=False,
        ),
        Grammar(
            t,
            "kimi_k2",
            KIMI,
            lambda n, a, i: f"{KIMI[2]}functions.{n}:{i}{KIMI[3]}{a}{KIMI[4]}",
            _joined("", KIMI[0], KIMI[1]),
        ),
        Grammar(
            t,
            "glm45",
            ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
            _xml(
                lambda n: f"<tool_call>{n}\n",
                "</tool_call>",
                lambda k, v: f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n",
            ),
            _joined("\n"),
            json_args=False,
        ),
        Grammar(t, "granite", ("<|tool_call|>",), _obj(), _joined(", ", "<|tool_call|>[", "]")),
        Grammar(
            t,
            "internlm",
            ("<|action_start|>", "<|action_end|>", "<|plugin|>"),
            lambda n, a, i: "<|action_start|><|plugin|>\n" + _obj("parameters")(n, a, i) + "<|action_end|>",
            _joined("\n"),
            multi=False,
        ),
        Grammar(t, "xlam", ("```json",), _obj(), _joined(", ", "[", "]")),
        Grammar(
            t,
            "step3",
            (STEP[0], STEP[1], STEP[2], STEP[3], STEP[4], "<steptml:invoke", "</steptml:invoke>"),
            _xml(
                lambda n: f'{STEP[2]}function{STEP[3]}<steptml:invoke name="{n}">',
                f"</steptml:invoke>{STEP[4]}",
                lambda k, v: f'<steptml:parameter name="{k}">{v}</steptml:parameter>',
            ),
            _joined("", STEP[0], STEP[1]),
            json_args=False,
        ),
        Grammar(
            t,
            "minimax_m2",
            ("<minimax:tool_call>", "</minimax:tool_call>", "<invoke name=", "</invoke>"),
            _xml(
                lambda n: f'<invoke name="{n}">\n',
                "</invoke>\n",
                lambda k, v: f'<parameter name="{k}">{v}</parameter>\n',
            ),
            _joined("", "<minimax:tool_call>\n", "</minimax:tool_call>"),
            json_args=False,
        ),
        Grammar(
            t,
            "gpt_oss",
            ("<|channel|>", "<|call|>", "<|message|>", "<|constrain|>", HARMONY_NEXT),
            lambda n, a, i: f"<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{a}<|call|>",
            _joined(HARMONY_NEXT),
            reasoning_family="gpt_oss",
        ),
        Grammar(
            t,
            "jamba",
            ("<tool_calls>", "</tool_calls>"),
            _obj(),
            _joined(", ", "<tool_calls>[", "]</tool_calls>"),
        ),
        Grammar(
            t,
            "hunyuan_a13b",
            ("<tool_calls>", "</tool_calls>"),
            _obj(),
            _joined(", ", "<tool_calls>[", "]</tool_calls>"),
        ),
        Grammar(t, "phi4_mini", ("functools",), _obj(), _joined(", ", "functools[", "]")),
        Grammar(
            t,
            "seed_oss",
            ("<seed:tool_call>", "</seed:tool_call>", "<function=", "</function>"),
            _xml(
                lambda n: f"<seed:tool_call>\n<function={n}>\n",
                "</function>\n</seed:tool_call>",
                lambda k, v: f"<parameter={k}>{v}</parameter>\n",
            ),
            _joined("\n"),
            json_args=False,
        ),
    ]


def _think(start: str, end: str) -> Callable[[str, str], str]:
    return lambda r, c: f"{start}{r}{end}{c}"


def _reasoning_grammars() -> list[Grammar]:
    r = "reasoning"
    tt = ("<think>", "</think>")
    gran = ("Here is my thought process:", "Here is my response:")
    harmony = ("<|channel|>analysis<|message|>", "<|end|>", "<|channel|>final<|message|>", HARMONY_NEXT)
    return [
        Grammar(r, "deepseek_r1", tt, reason=_think("", tt[1])),
        Grammar(r, "qwen3", tt, reason=_think(*tt)),
        Grammar(r, "qwen3_thinking", tt, reason=_think("", tt[1]), started=True),
        Grammar(r, "glm45", tt, reason=_think(*tt)),
        Grammar(r, "granite", gran, reason=lambda a, c: f"{gran[0]}\n{a}\n{gran[1]}\n{c}"),
        Grammar(r, "mistral", ("[THINK]", "[/THINK]"), reason=_think("[THINK]", "[/THINK]")),
        Grammar(r, "minimax_m2", tt, reason=_think("", tt[1]), started=True),
        Grammar(r, "step3", tt, reason=_think("", tt[1])),
        Grammar(r, "kimi_k2", (*tt, "◁think▷", "◁/think▷"), reason=_think(*tt)),
        Grammar(
            r,
            "gpt_oss",
            harmony,
            reason=lambda a, c: f"{harmony[0]}{a}{harmony[1]}{HARMONY_NEXT}{harmony[2]}{c}",
        ),
    ]


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


# ---------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """One adversarial case: `build(grammar, size)` gives (output, expected or None)."""

    name: str
    kinds: tuple[str, ...]
    nominal: int  # size at scale 1 (characters; calls for many-calls; depth for deep-nesting)
    build: Callable[[Grammar, int], tuple[str, Expected | None]]
    doc: str


def _weather(loc: str) -> str:
    return _j({"location": loc, "days": 3})


def _huge_content(g: Grammar, size: int) -> tuple[str, Expected | None]:
    text = prose(size, seed=1)
    if g.kind == "reasoning":
        out = g.reason("short.", text) if g.reason else text  # type: ignore[misc]
        return out, Expected(reasoning="short.", content=text)
    # harmony (gpt_oss) text outside any channel has no obvious reading
    return text, (None if g.reasoning_family else Expected(content=text))


def _huge_reasoning(g: Grammar, size: int) -> tuple[str, Expected | None]:
    text = prose(size, seed=2)
    assert g.reason is not None
    return g.reason(text, "Done."), Expected(reasoning=text, content="Done.")


def _huge_arguments(g: Grammar, size: int) -> tuple[str, Expected | None]:
    value = prose(size, seed=3).replace("\n", " ")
    out = g.calls([("search_web", _j({"query": value}))])
    return out, _expect(g, [("search_web", {"query": value})])


def _many_calls(g: Grammar, count: int) -> tuple[str, Expected | None]:
    count = max(2, count)
    items = [("get_weather", {"location": f"City {i} 漢", "days": i % 7}) for i in range(count)]
    out = g.calls([(n, _j(a)) for n, a in items])
    return out, (_expect(g, items) if g.multi else None)


def _nested(depth: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(depth - 1):
        value = {"a": value}
    return {"a": value}


def _deep_nesting(g: Grammar, depth: int) -> tuple[str, Expected | None]:
    depth = max(2, depth)
    # built as text: json.dumps of a 10k-deep dict would itself recurse too deep
    text = '{"a": ' * depth + "1" + "}" * depth
    out = g.calls([("nest", text)])
    # pythonic arguments are Python literals, and Python's own parser stops at 200 levels
    readable = depth <= (150 if g.family == "pythonic" else 500)
    expected = _expect(g, [("nest", _nested(depth))]) if readable else None
    return out, expected


def _fragments(g: Grammar, size: int) -> tuple[str, Expected | None]:
    rng = random.Random(4)
    own = [m[: max(1, len(m) - 1)] for m in g.markers] + [m[: len(m) // 2] for m in g.markers if len(m) > 3]
    pool = [f for f in (*own, *FOREIGN_FRAGMENTS) if f not in _blocked(g)]
    parts: list[str] = ["Text "]
    n = 5
    while n < size:
        piece = (
            pool[rng.getrandbits(16) % len(pool)] if rng.getrandbits(1) else _WORDS[rng.getrandbits(3)] + " "
        )
        parts.append(piece)
        n += len(piece)
    out = "".join(parts)
    # a fragment glued to the next can complete a marker ("<tool_" + "call>"): no expected then
    complete = any(m in out for m in all_markers(g)) or any(m in out for m in _blocked(g))
    if g.kind == "reasoning" or g.reasoning_family:
        return out, None
    return out, (None if complete else Expected(content=out))


def _blocked(g: Grammar) -> tuple[str, ...]:
    """Fragments that are themselves a complete start of this format (not fragments for it)."""
    return {"phi4_mini": ("functools",), "granite": ("<|tool_call|>",)}.get(g.family, ())


def _marker_in_string(g: Grammar, size: int) -> tuple[str, Expected | None]:
    inside = " ".join((*all_markers(g), "</think>", "<think>", "[TOOL_CALLS]", "<tool_call>", "</tool_call>"))
    args = {"query": f"why does {inside} appear", "max_results": 2}
    out = g.calls([("search_web", _j(args))])
    if not g.json_args:  # a marker inside an XML parameter value: no reading is the obvious one
        return out, None
    return out, _expect(g, [("search_web", args)])


def _surrogates(g: Grammar, size: int) -> tuple[str, Expected | None]:
    noise = f"bad {SURROGATES} ctl {CONTROLS} end"
    if g.kind == "reasoning":
        assert g.reason is not None
        return g.reason(noise, noise), None
    # inside the call: a JSON escape of a lone surrogate, and raw controls in a string
    call = g.calls([("get_weather", '{"location": "\\ud800 ' + CONTROLS + '", "days": 1}')])
    return noise + "\n" + call + "\n" + noise, None


def _only_start(g: Grammar, size: int) -> tuple[str, Expected | None]:
    return g.start, None


def _start_repeated(g: Grammar, count: int) -> tuple[str, Expected | None]:
    return g.start * max(2, count), None


def _end_repeated(g: Grammar, count: int) -> tuple[str, Expected | None]:
    count = max(2, count)
    if g.kind == "reasoning":
        assert g.reason is not None
        return g.reason("think.", g.end * (count - 1)), None
    return g.calls([("get_weather", _weather("Oslo"))]) + g.end * count, None


def _unknown_tool(g: Grammar, size: int) -> tuple[str, Expected | None]:
    return g.calls([("no_such_tool", _j({"x": 1}))]), None


def _non_object(g: Grammar, size: int) -> tuple[str, Expected | None]:
    bad = ["[1, 2]", '"a string"', "42", "null", "true", "{broken", '{"a": 1}}']
    return g.calls([("get_weather", b) for b in bad]), None


def _unterminated(g: Grammar, size: int) -> tuple[str, Expected | None]:
    """An unterminated string swallows the rest: a stream must not hold all of it back forever."""
    if g.kind == "reasoning":
        return g.markers[0] + prose(size, seed=5), None
    tail = prose(size, seed=5) + " " + " ".join(all_markers(g))
    full = g.calls([("get_weather", '{"location": "' + tail)])
    return full, None


CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case(
            "huge-content",
            ("tool", "reasoning"),
            1_000_000,
            _huge_content,
            "1 MB of marker-free prose (unicode, newlines): all content.",
        ),
        Case(
            "huge-reasoning", ("reasoning",), 1_000_000, _huge_reasoning, "1 MB of reasoning, a short answer."
        ),
        Case(
            "huge-arguments", ("tool",), 1_000_000, _huge_arguments, "One call whose string argument is 1 MB."
        ),
        Case("many-calls", ("tool",), 10_000, _many_calls, "10k calls in one output."),
        Case("deep-nesting", ("tool",), 500, _deep_nesting, "Arguments nested 500 objects deep."),
        Case(
            "marker-fragments",
            ("tool", "reasoning"),
            100_000,
            _fragments,
            "Prefixes of this and other families' markers everywhere, never a whole marker.",
        ),
        Case(
            "marker-in-string",
            ("tool",),
            0,
            _marker_in_string,
            "Every marker of the family inside a JSON string argument.",
        ),
        Case(
            "surrogates-controls",
            ("tool", "reasoning"),
            0,
            _surrogates,
            "Lone surrogates and control characters in text and inside a call's arguments.",
        ),
        Case(
            "only-start-marker", ("tool", "reasoning"), 0, _only_start, "The output is only the start marker."
        ),
        Case(
            "start-markers-repeated",
            ("tool", "reasoning"),
            10_000,
            _start_repeated,
            "The start marker 10k times in a row.",
        ),
        Case(
            "end-markers-repeated",
            ("tool", "reasoning"),
            10_000,
            _end_repeated,
            "A complete call (or reasoning) then its end marker 10k times.",
        ),
        Case("unknown-tool", ("tool",), 0, _unknown_tool, "A call to a tool the request does not declare."),
        Case(
            "non-object-arguments",
            ("tool",),
            0,
            _non_object,
            "Arguments that are a list, a string, a number, null, true, broken JSON, an extra brace.",
        ),
        Case(
            "unterminated",
            ("tool", "reasoning"),
            100_000,
            _unterminated,
            "An argument string (or reasoning) opened and never closed, followed by 100 KB.",
        ),
    )
}


def _expect(
    g: Grammar, calls: Sequence[tuple[str, dict[str, Any]]], content: str | None = None
) -> Expected | None:
    if g.kind != "tool" or g.family == "gpt_oss":
        return None
    return Expected(content=content, tool_calls=[ExpectedCall(name=n, arguments=a) for n, a in calls])


def build_case(kind: str, family: str, case: str, size: int | None = None) -> Transcript:
    """One case for one family at `size` (case units; None: nominal). Raises KeyError for unknown ones."""
    g = grammar(kind, family)
    c = CASES[case]
    if kind not in c.kinds:
        raise KeyError(f"case {case!r} is not for {kind} families")
    n = c.nominal if size is None else size
    output, expected = c.build(g, n)
    return Transcript(
        id=f"adversarial-{kind}-{g.family}-{case}" + ("" if size is None else f"-{n}"),
        family=g.family,
        kind=g.kind,
        reasoning_family=g.reasoning_family,
        output=output,
        tools=TOOLS if kind == "tool" else [],
        reasoning_started_in_prompt=g.started,
        expected=expected,
        tags=["adversarial", case],
        notes=c.doc,
    )


def size_for(case: str, chars: int) -> int:
    """The case's size argument that gives an output of about `chars` characters."""
    c = CASES[case]
    if c.nominal == 0:
        return 0
    if case == "many-calls":
        return max(2, chars // 60)
    if case == "deep-nesting":
        return max(2, chars // 7)
    if case in ("start-markers-repeated", "end-markers-repeated"):
        return max(2, chars // 12)
    return chars


def adversarial_transcripts(
    families: Sequence[str] | None = None, scale: float = 1.0, *, kinds: Sequence[str] = ("tool", "reasoning")
) -> Iterator[Transcript]:
    """Every case of every family (or those named), sizes = nominal × `scale`, generated lazily.

    Deep nesting stays 500 deep at any scale ≥ 0.01 (its point is depth, not size).
    """
    wanted = None
    if families:
        wanted = set()
        for name in families:
            for kind in ("tool", "reasoning"):
                fam = family_table().get(kind, name)  # type: ignore[arg-type]
                wanted.add((kind, fam.name if fam else name))
    for (kind, family), _g in GRAMMARS.items():
        if kind not in kinds or (wanted is not None and (kind, family) not in wanted):
            continue
        for case in CASES.values():
            if kind not in case.kinds:
                continue
            if case.name == "deep-nesting":
                size = case.nominal if scale >= 0.01 else max(2, int(case.nominal * scale * 100))
            else:
                size = max(2, int(case.nominal * scale)) if case.nominal else 0
            yield build_case(kind, family, case.name, size)


# ---------------------------------------------------------------- fuzzing


def fuzz_pieces(g: Grammar) -> list[str]:
    """Building blocks of random outputs: the family's markers and calls, fragments, JSON, unicode, whitespace.

    Lone surrogates are left to the corpus: a detokenizer never produces them,
    and in every example they would only ever show one (tokenizer) failure.
    """
    markers = list(all_markers(g))
    pieces = markers + [m[: len(m) // 2] for m in markers if len(m) > 2]
    pieces += ["<tool_", "</thi", "<｜tool▁", "<think>", "</think>", "<tool_call>", "</tool_call>"]
    pieces += [
        "{",
        "}",
        "[",
        "]",
        '"',
        "\\",
        ":",
        ", ",
        '{"name": "',
        '"arguments": ',
        '"parameters": ',
        '{"name": "get_weather", "arguments": {"location": "',
        "null",
        "true",
        "1e5",
        '"\\u00e9"',
    ]
    pieces += [" ", "\n", "\t", "\r\n", "\n\n", "\x00", "\u2028", "\ufeff", "😀", "漢字", "λ"]
    if g.kind == "tool":
        pieces += [
            g.calls([("get_weather", _j({"location": "Ωslo λ", "days": 2}))]),
            g.calls([("search_web", _j({"query": "жук " + g.end, "max_results": 1}))]),
            g.calls([("nest", _j({"a": {"b": ["漢", {"c": None}]}}))]),
            g.calls([("get_weather", "{}"), ("no_such_tool", _j({"x": "é"}))]),
            g.calls([("get_weather", "[1, 2]")]),
        ]
    else:
        assert g.reason is not None
        pieces += [g.reason("λ thought", "ж answer"), g.reason("", "Ω"), g.start, g.end]
    return pieces


def noise_word(rng: random.Random) -> str:
    """A short run of sentinel and ASCII characters."""
    alphabet = SENTINELS + "abcxyz019 .,!?-_=()<>/|"
    return "".join(alphabet[rng.getrandbits(6) % len(alphabet)] for _ in range(1 + rng.getrandbits(3)))


def random_output(
    rng: random.Random, g: Grammar, max_pieces: int = 16, pieces: Sequence[str] | None = None
) -> str:
    """A random output from the grammar's pieces and noise (the hypothesis-free twin of the fuzz strategy)."""
    pool = list(pieces if pieces is not None else fuzz_pieces(g))
    out = []
    for _ in range(rng.randint(0, max_pieces)):
        out.append(pool[rng.randrange(len(pool))] if rng.random() < 0.7 else noise_word(rng))
    return "".join(out)


def random_chunks(rng: random.Random, text: str, max_size: int = 8) -> list[str]:
    """Seeded random chunk sizes 1..`max_size`."""
    out, i = [], 0
    while i < len(text):
        n = rng.randint(1, max_size)
        out.append(text[i : i + n])
        i += n
    return out


def token_chunks(parser: Any, text: str, per: int = 1) -> list[Chunk]:
    """The parser's own tokenizer chunking when it has one (vLLM), else the approximate tokenizer's."""
    fn = find_chunker(parser)
    if fn is not None:
        return [Chunk(c.text, tuple(c.token_ids)) for c in fn(text, per)]
    toks = approximate_tokens(text)
    return [Chunk("".join(toks[i : i + per])) for i in range(0, len(toks), per)]


# ---------------------------------------------------------------- the probe


@dataclass
class ProbeResult:
    """What one output did to one parser (see `probe`)."""

    escaped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    accounting: list[str] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def classes(self) -> list[str]:
        return list(dict.fromkeys(d.cls.value for d in self.differences))

    @property
    def clean(self) -> bool:
        return not (self.escaped or self.errors or self.differences or self.accounting)


def _typed(exc: BaseException) -> bool:
    return isinstance(exc, ParsebridgeError)


def _describe(exc: BaseException, call: str) -> str:
    return f"{call}: {type(exc).__name__}: {str(exc)[:300]}"


def _oneshot(subject: Any, text: str, started: bool | None, res: ProbeResult) -> Observation:
    obs = Observation("oneshot", "oneshot")
    try:
        reasoning, content, calls = subject.parse(text, started, "adversarial")
        obs.reasoning, obs.content = reasoning, content
        obs.tool_calls = [normalize_call(c) for c in calls]
        probe_has = (
            subject.tool.has_tool_calls
            if subject.tool is not None
            else (subject.reasoning.has_reasoning if subject.reasoning is not None else None)
        )
        if probe_has is not None:
            probe_has(text)
    except Exception as exc:
        obs.error, obs.error_type = _describe(exc, "parse"), type(exc).__name__
        (res.errors if _typed(exc) else res.escaped).append(obs.error)
    return obs


def _stream(
    subject: Any, chunks: Sequence[Chunk | str], name: str, started: bool | None, res: ProbeResult
) -> tuple[Observation, DeltaAccumulator]:
    obs = Observation("stream", name, chunks=len(chunks))
    acc = DeltaAccumulator()
    fragments: dict[int, list[str]] = {}

    def take(delta: StreamDelta) -> None:
        acc.add(delta)
        for d in delta.tool_calls:
            fragments.setdefault(d.index, []).append(d.arguments)

    call = "stream"
    try:
        stream = subject.stream(started, "adversarial")
        call = "stream.feed"
        for chunk in chunks:
            text, ids = (chunk, None) if isinstance(chunk, str) else (chunk.text, chunk.token_ids)
            take(stream.feed(text, ids))
        call = "stream.finish"
        take(stream.flush())
        stream.finish()
    except Exception as exc:
        obs.error, obs.error_type = _describe(exc, call), type(exc).__name__
        (res.errors if _typed(exc) else res.escaped).append(f"[{name}] {obs.error}")
        return obs, acc
    calls = acc.tool_calls()
    obs.reasoning, obs.content = acc.reasoning, acc.content
    obs.tool_calls = [normalize_call(c) for c in calls]
    obs.anomalies = list(acc.anomalies)
    obs.fragments = ["".join(fragments[i]) for i in sorted(fragments)]
    return obs, acc


def kept_text(obs: Observation) -> str:
    """Everything a client was shown: content, reasoning, call names and argument fragments."""
    names = "".join(str(c.get("name", "")) for c in obs.tool_calls)
    return (obs.content or "") + (obs.reasoning or "") + names + "".join(obs.fragments)


def account(text: str, obs: Observation) -> list[str]:
    """Sentinel characters lost or duplicated between the output and what the stream showed.

    Sentinels are used by no format as structure, so each one in the output
    must show up exactly once in content, reasoning, a name or arguments.
    """
    want = Counter(c for c in text if c in SENTINELS)
    got = Counter(c for c in kept_text(obs) if c in SENTINELS)
    if want == got:
        return []
    lost = want - got
    dup = got - want
    out = []
    if lost:
        out.append(f"lost {''.join(sorted(lost.elements()))!r}")
    if dup:
        out.append(f"duplicated {''.join(sorted(dup.elements()))!r}")
    return out


def probe(
    subject: Any,
    text: str,
    chunkings: Sequence[tuple[str, Sequence[Chunk | str]]],
    *,
    started: bool | None = None,
    markers: Sequence[str] = (),
    check_accounting: bool = False,
) -> ProbeResult:
    """One output through one parser (a conformance `Subject`): one-shot, then each named chunking.

    Never raises. `escaped` lists exceptions that were not `ParsebridgeError`
    (the guard's promise); `errors` typed ones; `differences` each stream
    against the one-shot reading plus protocol invariants (one entry per
    class and chunking); `accounting` sentinel text lost or duplicated.
    """
    import time

    res = ProbeResult()
    t0 = time.perf_counter()
    one = _oneshot(subject, text, started, res)
    for name, chunks in chunkings:
        obs, _acc = _stream(subject, chunks, name, started, res)
        diffs = compare_observations(one, obs, markers=markers) + check_invariants(obs, markers=markers)
        for d in diffs:
            d.detail = f"[{name}] {d.detail}"
        res.differences.extend(diffs)
        if check_accounting and obs.error is None:
            res.accounting.extend(f"[{name}] {a}" for a in account(text, obs))
    if one.error is not None and not chunkings:
        res.differences.append(Difference(DivergenceClass.BACKEND_ERROR, one.error, "backend"))
    res.elapsed = time.perf_counter() - t0
    return res


def subject_for(backend: str, kind: str, family: str, runner: Any = None) -> Any:
    """A conformance `Subject` (parser or reasoning→tool pipeline) for a family on a backend, or raises.

    Unsupported families raise `LookupError`; construction errors propagate.
    """
    from .runner import Runner, target_for

    g = grammar(kind, family)
    t = Transcript(id="probe", family=g.family, kind=g.kind, reasoning_family=g.reasoning_family, output="")
    target = target_for(t, backend)
    if target.unsupported:
        raise LookupError(target.unsupported)
    runner = runner or Runner(["oneshot"])
    return runner.subject(target, TOOLS if kind == "tool" else [])


def families_for(backend: str) -> list[tuple[str, str]]:
    """(kind, family) pairs that have a grammar and a parser on `backend` in the family table."""
    out = []
    for (kind, family), g in GRAMMARS.items():
        fam = family_table().get(kind, family)  # type: ignore[arg-type]
        if fam is None or fam.parser_for(backend) is None:
            continue
        if g.reasoning_family:
            rfam = family_table().get("reasoning", g.reasoning_family)
            if rfam is None or rfam.parser_for(backend) is None:
                continue
        out.append((kind, family))
    return out


# ---------------------------------------------------------------- a CPU-time budget


class OverBudget(BaseException):
    """Raised by `cpu_budget`; a BaseException so that no parser's ``except Exception`` swallows it."""


@contextlib.contextmanager
def cpu_budget(seconds: float | None) -> Iterator[None]:
    """Interrupt the block after `seconds` of process CPU time (SIGPROF; main thread, POSIX).

    For measuring and testing, not serving (serve with ``timeout=``): CPU time
    rather than wall time, because on a shared machine a process is
    descheduled for long stretches and wall time measures the neighbours. C
    code (a regex, a tokenizer) is interrupted when it returns to Python.
    None or a platform without SIGPROF: no budget.
    """
    if not seconds or not hasattr(signal, "SIGPROF"):
        yield
        return

    def fire(signum: int, frame: Any) -> None:
        raise OverBudget(f"over the {seconds:g} CPU-second budget")

    old = signal.signal(signal.SIGPROF, fire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
