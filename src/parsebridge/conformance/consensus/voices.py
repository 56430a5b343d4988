"""Dynamo, smg and llama.cpp beside the vLLM + SGLang consensus: a third, fourth and fifth voice per family.

The consensus and builtin's verdicts stay what `check` makes of vLLM's and
SGLang's readings; the voices judge nothing there. `add_voices` reads every
consensus case one-shot with Dynamo's, smg's and llama.cpp's parsers as well (the family
table's names for them, where the installed release has the parser) and puts
those readings beside the others in each `Outcome`. `stances` then says, per
family and voice, how many cases it read, how often it agrees with a
consensus and how often it differs (and how: the divergence classes), how
often it agrees with builtin where builtin differs from the consensus, and,
where vLLM and SGLang disagree, which of them it agrees with. `render_section`
writes that part of docs/consensus.md; a voice that is not installed is named
as missing, so the page renders the same way without it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...adapters import get_backend
from ...terminal import counted
from ..runner import Result, Runner, target_for
from ..transcripts import Transcript
from .check import Outcome, differences

#: The extra voices, in the page's order, and how the page names them.
VOICES: tuple[str, ...] = ("dynamo", "smg", "llamacpp")
LABELS = {"dynamo": "Dynamo", "smg": "smg", "llamacpp": "llama.cpp"}


def voice_versions() -> dict[str, str | None]:
    """Voice → installed release, or None when it is not available here."""

    out: dict[str, str | None] = {}
    for name in VOICES:
        backend = get_backend(name)
        out[name] = (backend.version() or "?") if backend.is_available() else None
    return out


def add_voices(
    outcomes: Sequence[Outcome],
    transcripts: Sequence[Transcript],
    voices: Iterable[str] | None = None,
    runner: Runner | None = None,
) -> None:
    """Read each case one-shot with every available voice; add the readings to its `Outcome`.

    `transcripts` are the cases `outcomes` were made from, in the same order. A voice without a
    parser for the family (or the reasoning family a tool case pairs with) adds no reading; one that
    fails on a case adds ``None`` and the error, as the other backends do.
    """
    versions = voice_versions()
    names = [v for v in (voices if voices is not None else VOICES) if versions.get(v)]
    runner = runner or Runner(["oneshot"])
    oneshot = runner.chunkings[:1]
    for o, t in zip(outcomes, transcripts, strict=True):
        for voice in names:
            target = target_for(t, voice, runner.table)
            if target.unsupported is not None:
                continue
            row = runner.run_transcript(target, t, oneshot)[0]
            if _failed(row):  # a voice's server can fail a request under load: one more try
                row = runner.run_transcript(target, t, oneshot)[0]
            if row.status == "unsupported":
                continue
            obs = row.observation
            reading = None if obs is None or obs.error is not None else obs.reading()
            o.readings[voice] = reading
            if reading is None:
                o.errors[voice] = row.detail or row.status


def _failed(row: Result) -> bool:
    """The voice raised on the case. Dynamo and smg read inside their own servers, over HTTP; a
    request that times out on a loaded machine is not their reading (seen once in an `all` env run:
    one Dynamo error that a rerun of the same case did not repeat). A parser that fails for real
    fails twice and is recorded as an error."""
    return row.status != "unsupported" and (row.observation is None or row.observation.error is not None)


@dataclass
class Stance:
    """How one voice stands on one family's cases."""

    read: int = 0
    errors: int = 0
    consensus: int = 0  # cases with a consensus it read
    agrees: int = 0  # ... and agrees with
    differs: Counter[str] = field(default_factory=Counter)  # divergence class -> cases
    with_builtin: list[str] = field(default_factory=list)  # case ids: builtin's reading, not the consensus
    split: int = 0  # cases where vLLM and SGLang disagree, read by it
    split_vllm: int = 0
    split_sglang: int = 0

    @property
    def against(self) -> int:
        return self.consensus - self.agrees


def _stance(stance: Stance, o: Outcome, reading: dict[str, Any] | None) -> None:
    stance.read += 1
    if reading is None:
        stance.errors += 1
        return
    vllm, sglang, builtin = (o.readings.get(k) for k in ("vllm", "sglang", "builtin"))
    if o.consensus and vllm is not None:
        stance.consensus += 1
        diff = differences(vllm, reading)
        if not diff:
            stance.agrees += 1
            return
        stance.differs.update(dict.fromkeys(diff, 1))
        if o.disagrees and builtin is not None and not differences(builtin, reading):
            stance.with_builtin.append(o.id)
    elif vllm is not None and sglang is not None:
        stance.split += 1
        stance.split_vllm += not differences(vllm, reading)
        stance.split_sglang += not differences(sglang, reading)


def stances(outcomes: Iterable[Outcome]) -> dict[str, dict[str, Stance]]:
    """Voice → family → its `Stance`, for the voices and families with a reading."""
    out: dict[str, dict[str, Stance]] = {}
    for o in outcomes:
        for voice in VOICES:
            if voice in o.readings:
                _stance(out.setdefault(voice, {}).setdefault(o.family, Stance()), o, o.readings[voice])
    return out


def _total(rows: Iterable[Stance]) -> Stance:
    total = Stance()
    for s in rows:
        total.read += s.read
        total.errors += s.errors
        total.consensus += s.consensus
        total.agrees += s.agrees
        total.differs.update(s.differs)
        total.with_builtin += s.with_builtin
        total.split += s.split
        total.split_vllm += s.split_vllm
        total.split_sglang += s.split_sglang
    return total


def _classes(counter: Counter[str]) -> str:
    return ", ".join(f"{cls} {n}" for cls, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def _voice_table(voice: str, rows: dict[str, Stance]) -> list[str]:
    label = LABELS[voice]
    out = [
        f"| family | {label} read | agrees with the consensus | differs | how it differs "
        "| with builtin against the consensus | no consensus: = vLLM / = SGLang |",
        "|---|---:|---:|---:|---|---:|---|",
    ]
    for fam, s in [*rows.items(), ("**total**", _total(rows.values()))]:
        name = fam if fam.startswith("**") else f"`{fam}`"
        split = f"{s.split_vllm} / {s.split_sglang} of {s.split}" if s.split else ""
        out.append(
            f"| {name} | {s.read} | {s.agrees} of {s.consensus} | {s.against} | {_classes(s.differs)} "
            f"| {len(s.with_builtin)} | {split} |"
        )
    return out


def _with_builtin_lines(voice: str, rows: dict[str, Stance]) -> list[str]:
    lines = []
    for fam, s in rows.items():
        if s.with_builtin:
            ids = ", ".join(f"`{i.split('/', 1)[1]}`" for i in s.with_builtin)
            lines.append(f"- `{fam}`: {ids}")
    if not lines:
        return [f"{LABELS[voice]} sides with builtin against the consensus on no case.", ""]
    return [f"Where {LABELS[voice]} reads a case as builtin does, against the consensus:", "", *lines, ""]


def render_section(outcomes: Sequence[Outcome], versions: dict[str, str | None]) -> list[str]:
    """The page's part on the voices (markdown lines), deterministic for one run."""
    parts = [
        "## Dynamo, smg and llama.cpp: a third, a fourth and a fifth voice",
        "",
        "The same cases, read one-shot by Dynamo's and smg's Rust parsers and llama.cpp's C++ ones too"
        " (the family table's names for them;",
        "a family without one is not listed). They judge nothing above: the consensus stays vLLM's and"
        " SGLang's.",
        "Here they say where they agree with it, where they differ (and how), where they read a case as"
        " builtin",
        "does against it, and, where vLLM and SGLang disagree, which of the two they agree with. An error"
        " counts as",
        "read but agrees with nothing.",
        "",
    ]
    by_voice = stances(outcomes)
    for voice in VOICES:
        label = LABELS[voice]
        version = versions.get(voice)
        if version is None:
            parts += [
                f"### {label}",
                "",
                f"{label} is not installed where this page was generated: no"
                f" {label} readings (`parsebridge install-framework {voice}-latest`).",
                "",
            ]
            continue
        rows = by_voice.get(voice, {})
        total = _total(rows.values())
        parts += [
            f"### {label} {version}",
            "",
            f"{counted(len(rows), 'family', 'families')}, {counted(total.read, 'case')} read ({total.errors} errors); of the"
            f" {total.consensus} with a consensus it agrees on {total.agrees} and differs on"
            f" {total.against}, siding with builtin on {len(total.with_builtin)} of those.",
            "",
            *_voice_table(voice, rows),
            "",
            *_with_builtin_lines(voice, rows),
        ]
    return parts
