"""Re-check, on both frameworks, the server behaviour each reviewed exception states.

An exception (``consensus.yaml``) is allowed only where the servers contradict
themselves: their one-shot reading differs from what their own stream already
showed a client, and builtin (whose stream and one-shot reading are one) gives
what the streams showed. Each exception names a verifier here; the consensus
test runs it on every case the exception lists, with vLLM and SGLang, streamed
at `CHUNKING` (markers arrive whole, as special tokens do, words in one piece).
A verifier returns what does not hold (``[]`` when the reason holds).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from ..chunking import parse_chunking
from ..runner import Runner, target_for
from ..transcripts import Transcript
from .check import Entry, Reviewed
from .corpus import FRAMEWORKS

#: The chunking the servers' streams are read at.
CHUNKING = "token"

Reading = dict[str, Any]
#: (framework's one-shot reading, its streamed reading, builtin's one-shot reading) -> what does not hold.
Verifier = Callable[[Reading, Reading, Reading], str | None]


def _names(r: Reading) -> list[str]:
    return [c.get("name") for c in r.get("tool_calls") or []]


def _words(text: str | None) -> list[str]:
    return re.findall(r"\w+", text or "")


def streams_announce_calls(oneshot: Reading, streamed: Reading, builtin: Reading) -> str | None:
    """The stream announced the calls builtin reads (same names, in order); the one-shot reading has fewer."""
    if _names(streamed) != _names(builtin):
        return f"the stream announced {_names(streamed)}, builtin reads {_names(builtin)}"
    if len(_names(oneshot)) >= len(_names(streamed)):
        return f"the one-shot reading has the calls too ({_names(oneshot)}): no contradiction"
    return None


def streams_send_reasoning(oneshot: Reading, streamed: Reading, builtin: Reading) -> str | None:
    """The stream sent reasoning text the one-shot reading leaves out, and builtin keeps it as reasoning."""
    left_out = [w for w in _words(streamed.get("reasoning")) if w not in _words(oneshot.get("reasoning"))]
    if not left_out:
        return "the stream sent no reasoning the one-shot reading leaves out: no contradiction"
    missing = [w for w in left_out if w not in _words(builtin.get("reasoning"))]
    if missing:
        return f"builtin's reasoning lacks {missing}, which the stream sent"
    return None


def streams_show_call_once(oneshot: Reading, streamed: Reading, builtin: Reading) -> str | None:
    """The stream showed the calls builtin reads, and as content the words builtin's content holds;
    the one-shot reading reads the same calls and shows their text as content too (only words of the
    calls: their names, keys and values)."""
    if not _names(streamed) or not _names(oneshot) == _names(streamed) == _names(builtin):
        return f"calls: one-shot {_names(oneshot)}, stream {_names(streamed)}, builtin {_names(builtin)}"
    shown = _words(streamed.get("content"))
    if shown != _words(builtin.get("content")):
        return (
            f"the stream showed content {streamed.get('content')!r}, builtin's is {builtin.get('content')!r}"
        )
    again = list(_words(oneshot.get("content")))
    for w in shown:
        if w in again:
            again.remove(w)
    calls = set(_words(json.dumps(streamed.get("tool_calls"), ensure_ascii=False)))
    if not again or any(w not in calls for w in again):
        return (
            f"the one-shot content adds {again} to the stream's, not (only) the calls' text: no contradiction"
        )
    return None


def servers_return_a_call_not_whole(oneshot: Reading, streamed: Reading, builtin: Reading) -> str | None:
    """The server's one-shot reading returns calls builtin does not (builtin's are among them, in order):
    the calls builtin reads as not whole (`whole_calls`); and none of builtin's calls is missing there."""
    theirs, ours = _names(oneshot), _names(builtin)
    if len(theirs) <= len(ours):
        return f"the one-shot reading has no call builtin lacks ({theirs} vs builtin {ours}): no divergence"
    rest = iter(theirs)
    if not all(n in rest for n in ours):
        return f"builtin reads calls the one-shot reading does not ({ours} vs {theirs})"
    return None


VERIFIERS: dict[str, Verifier] = {
    "streams-announce-calls": streams_announce_calls,
    "streams-send-reasoning": streams_send_reasoning,
    "streams-show-call-once": streams_show_call_once,
    "servers-return-a-call-not-whole": servers_return_a_call_not_whole,
}


def readings(t: Transcript, runner: Runner, backend: str, streamed: bool) -> Reading | None:
    """`backend`'s reading of `t`: one-shot, or assembled from its stream at `CHUNKING`."""
    chunking = parse_chunking(CHUNKING if streamed else "oneshot")
    row = runner.run_transcript(target_for(t, backend, runner.table), t, [chunking])[0]
    obs = row.observation
    return None if obs is None or obs.error is not None else obs.reading()


def verify_case(entry: Entry, t: Transcript, runner: Runner) -> list[str]:
    """What does not hold of `entry`'s reason on case `t`, per framework (``[]``: it holds)."""
    verifier = VERIFIERS.get(entry.verify)
    if verifier is None:
        return [f"{t.id}: no verifier {entry.verify!r} (one of {', '.join(VERIFIERS)})"]
    builtin = readings(t, runner, "builtin", streamed=False)
    problems = []
    for fw in FRAMEWORKS:
        oneshot, streamed = readings(t, runner, fw, False), readings(t, runner, fw, True)
        if builtin is None or oneshot is None or streamed is None:
            problems.append(f"{t.id} ({fw}): a reading failed")
            continue
        wrong = verifier(oneshot, streamed, builtin)
        if wrong:
            problems.append(f"{t.id} ({fw}): {wrong}")
    return problems


def verify_exceptions(
    reviewed: Reviewed, corpus: Iterable[Transcript], runner: Runner | None = None
) -> list[str]:
    """Every exception's and divergence's reason re-checked on every case it lists (cases absent from
    `corpus` are a problem)."""
    runner = runner or Runner(["oneshot"], conventions="servers")
    by_id = {t.id: t for t in corpus}
    problems: list[str] = []
    for entry in (*reviewed.exceptions, *reviewed.divergences):
        for case in entry.cases:
            t = by_id.get(case)
            if t is None:
                problems.append(f"{case}: not in the consensus corpus")
                continue
            problems.extend(verify_case(entry, t, runner))
    return problems
