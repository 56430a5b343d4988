"""What every builtin parser hands out today, recorded so a restructuring can prove it changed nothing.

For each builtin tool and reasoning parser this runs the bundled fixtures of its
family and generated marker soups (pieces cut from those fixtures' outputs, the
markers whole, cut and doubled, with JSON punctuation and escapes between) one-shot
and streamed at several chunkings. A case's observation is everything a client
or the guard can see: the one-shot result (content, calls with arguments,
`invalid_arguments` and `raw_text`), every streamed delta as OpenAI JSON (call ids
dropped: they are fresh per stream), the held-back text after each chunk, the
finished result and the calls' spans. Each observation is stored as a digest in
``golden/outputs.json``; `test_golden_outputs.py` recomputes and compares them.

Regenerate (only when a change is MEANT to change outputs, and say so in the commit):

    PYTHONPATH=src python tests/builtin/_golden.py [tool:NAME reasoning:NAME …]   (default: all)
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

import parsebridge as pb
from parsebridge.adapters.builtin import REASONING_PARSERS, TOOL_PARSERS
from parsebridge.conformance.transcripts import bundled_transcripts

GOLDEN = Path(__file__).resolve().parent / "golden" / "outputs.json"
#: Soups per tool parser; reasoning parsers take a quarter as many (their machines are small).
SOUPS_PER_FAMILY = 300
#: The ``dev`` profile (``tox -e core``) checks every fixture case and one soup in this many;
#: ``thorough`` (``tox -e thorough``, CI) checks every case.
DEV_SOUP_STRIDE = 5

#: Tokens of a fixture output: special tokens and tags whole, words, runs of space, one character.
_TOKEN = re.compile(r"<[^<>\s]{1,40}>|<｜[^｜]{0,40}｜>|\[[A-Z_]{2,30}\]|\w+|\s+|.", re.S)
_NOISE = [
    '"',
    "'",
    " x ",
    "\\",
    '\\"',
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    " ",
    "\n",
    "<",
    ">",
    "=",
    "x",
    '{"',
    '"}',
    "```",
]


def _chunkings(text: str) -> list[list[str]]:
    rng = random.Random(len(text))
    out = [[text[i : i + n] for i in range(0, len(text), n)] for n in (1, 3, 7)]
    for _ in range(2):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 12))) if len(text) > 1 else []
        out.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)])
    return out


def _pieces(outputs: list[str]) -> list[str]:
    pieces: list[str] = []
    for out in outputs:
        pieces.extend(_TOKEN.findall(out))
    markers = sorted({p for p in pieces if len(p) > 2 and not p.isalnum() and not p.isspace()})
    cut = [m[: len(m) // 2] for m in markers] + [m[len(m) // 2 :] for m in markers]
    return sorted(set(pieces)) + markers * 3 + cut + _NOISE


def soups(outputs: list[str], seed: str, count: int = SOUPS_PER_FAMILY) -> list[list[str]]:
    """Marker soups as chunk lists (whole pieces: markers arrive as one chunk, as tokenizers
    send them): most are fixture outputs, one or two joined, damaged a few times (a piece
    dropped, doubled, cut, inserted or wedged into) and maybe cut off; some are pieces drawn at random."""
    pieces = _pieces(outputs)
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if not outputs or i % 4 == 3:
            out.append([rng.choice(pieces) for _ in range(rng.randint(1, 40))])
            continue
        tokens = _TOKEN.findall(rng.choice(outputs))
        if rng.random() < 0.3:
            tokens += _TOKEN.findall(rng.choice(outputs))
        for _ in range(rng.randint(0, 4)):
            at = rng.randrange(len(tokens) + 1)
            how = rng.choice(("drop", "double", "cut", "insert", "insert", "wedge"))
            if how == "insert" or at == len(tokens):
                tokens.insert(at, rng.choice(pieces))
            elif how == "wedge":  # noise inside a piece (a tag's name, a marker), as three chunks
                k = rng.randrange(len(tokens[at]) + 1)
                tokens[at : at + 1] = [tokens[at][:k], rng.choice(_NOISE), tokens[at][k:]]
            elif how == "drop":
                del tokens[at]
            elif how == "double":
                tokens.insert(at, tokens[at])
            else:
                tokens[at] = tokens[at][: len(tokens[at]) // 2]
        if rng.random() < 0.35:  # cut off by the end of output, maybe inside a piece
            at = rng.randrange(len(tokens) + 1)
            tokens = tokens[:at] + (
                [tokens[at][: rng.randrange(len(tokens[at]) + 1)]] if at < len(tokens) else []
            )
        out.append([t for t in tokens if t])
    return out


def _inner(stream: Any) -> Any:
    return getattr(stream, "_inner", stream)


def _pending(stream: Any) -> str | None:
    getter = getattr(_inner(stream), "pending_text", None)
    return getter() if callable(getter) else None


def _no_ids(delta: dict[str, Any]) -> dict[str, Any]:
    for call in delta.get("tool_calls", ()):
        call.pop("id", None)
    return delta


def _calls(result: Any) -> list[Any]:
    return [(c.name, c.arguments, c.invalid_arguments, c.raw_text) for c in result.tool_calls]


#: The recorded outputs are the "lossless" convention's (nothing dropped anywhere: the policy
#: builtin had before conventions existed); "servers" is checked against the frameworks
#: (the consensus check) and against "lossless" (tests/builtin/test_conventions.py).
CONVENTIONS = "lossless"


def observe_tool(spec: str, tools: list[dict[str, Any]], chunkings: list[list[str]]) -> Any:
    parser = pb.get_tool_parser(spec, tools=tools or None, conventions=CONVENTIONS)
    text = "".join(chunkings[0])
    one = parser.parse(text)
    seen: list[Any] = [one.content, _calls(one)]
    for chunks in chunkings:
        stream = parser.stream()
        steps = [(_no_ids(stream.feed(c).to_openai()), _pending(stream)) for c in chunks]
        steps.append(_no_ids(stream.flush().to_openai()))
        result = stream.finish()
        seen.append((steps, result.content, _calls(result), getattr(_inner(stream), "call_spans", None)))
    return seen


def observe_reasoning(spec: str, chunkings: list[list[str]]) -> Any:
    parser = pb.get_reasoning_parser(spec, conventions=CONVENTIONS)
    text = "".join(chunkings[0])
    seen: list[Any] = []
    for started in (None, True):
        one = parser.parse(text, reasoning_started=started)
        seen.append((one.reasoning, one.content, one.block and one.block.model_dump()))
        for chunks in chunkings:
            stream = parser.stream(reasoning_started=started)
            steps = [(stream.feed(c).to_openai(), _pending(stream)) for c in chunks]
            steps.append(stream.flush().to_openai())
            result = stream.finish()
            seen.append((steps, result.reasoning, result.content, result.block and result.block.model_dump()))
    return seen


def digest(observation: Any) -> str:
    blob = json.dumps(observation, ensure_ascii=False, sort_keys=True, default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def cases(kind: str, name: str) -> list[tuple[str, list[dict[str, Any]], list[list[str]]]]:
    """(label, tools, chunkings) of one parser: its family's fixtures, then soups."""
    try:
        transcripts = bundled_transcripts(families=[name], kinds=[kind])
    except Exception:  # a name the family table does not know: soups of nothing but noise
        transcripts = []
    out = []
    for t in transcripts:
        if t.output:
            out.append((f"fixture:{t.id}", t.tools, _chunkings(t.output)))
    tools = transcripts[0].tools if transcripts else []
    count = SOUPS_PER_FAMILY if kind == "tool" else SOUPS_PER_FAMILY // 4
    for i, pieces in enumerate(soups([t.output for t in transcripts], f"{kind}:{name}", count)):
        text = "".join(pieces)
        if text:
            out.append((f"soup:{i}", tools, [pieces, [text[i : i + 1] for i in range(len(text))]]))
    return out


def in_dev_sample(label: str) -> bool:
    """Whether the ``dev`` hypothesis profile checks this case: every fixture and every
    `DEV_SOUP_STRIDE`-th soup (the stride is coprime to 4, so random-piece soups are among them)."""
    return not label.startswith("soup:") or int(label[5:]) % DEV_SOUP_STRIDE == 0


def observe(kind: str, name: str, sample: bool = False) -> dict[str, str]:
    """Every case's digest; with `sample`, only the cases `in_dev_sample`."""
    spec = f"builtin:{name}"
    got = {}
    for label, tools, chunkings in cases(kind, name):
        if sample and not in_dev_sample(label):
            continue
        obs = observe_tool(spec, tools, chunkings) if kind == "tool" else observe_reasoning(spec, chunkings)
        got[label] = digest(obs)
    return got


def parsers() -> list[tuple[str, str]]:
    return [("tool", n) for n in TOOL_PARSERS] + [("reasoning", n) for n in REASONING_PARSERS]


def main(only: list[str]) -> None:
    """Record every parser, or only those named (``tool:sarashina``): the others keep their record."""
    table = json.loads(GOLDEN.read_text(encoding="utf-8")) if only else {}
    for kind, name in parsers():
        if not only or f"{kind}:{name}" in only:
            table[f"{kind}:{name}"] = observe(kind, name)
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN} ({sum(map(len, table.values()))} cases)", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
