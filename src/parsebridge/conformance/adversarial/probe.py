"""The probe: one output through one parser, one-shot and streamed, judged without raising.

`probe(subject, text, chunkings)` returns the exceptions that escaped
untyped (must be none), the typed errors, the differences between stream
and one-shot (conformance `DivergenceClass`es) and, with
``check_accounting=True`` (builtin), text that was lost or duplicated.
`subject_for` / `families_for` build the parser of a family on a backend;
`cpu_budget` bounds a runaway one.
"""

from __future__ import annotations

import contextlib
import signal
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...protocol import DeltaAccumulator, ParsebridgeError, StreamDelta, family_table
from ..checks import Difference, check_invariants, compare_observations
from ..chunking import Chunk
from ..classes import DivergenceClass
from ..observation import Observation, normalize_call
from ..observe import fed, open_stream, parse_with
from ..runner import Runner, target_for
from ..transcripts import Transcript
from .grammars import GRAMMARS, SENTINELS, TOOLS, grammar


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
        reasoning, content, calls = parse_with(subject, text, started, "adversarial")
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
        stream = open_stream(subject, started, "adversarial")
        call = "stream.feed"
        pairs = [(c, None) if isinstance(c, str) else (c.text, c.token_ids) for c in chunks]
        for delta in fed(stream, pairs):
            take(delta)
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
