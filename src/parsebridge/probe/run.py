"""Run the scenarios against an endpoint: every scenario non-streamed, then every one streamed.

`probe` returns a `ProbeReport`: one `Row` per scenario and mode with each check's outcome and
the answer the client assembled. The endpoint not answering at all, refusing the key (401/403)
or not knowing the route or model (404) on the first request stops the run with
`EndpointUnreachable`/`ProbeUsageError` (exit 2): nothing after it could pass. A later request
that gets no answer (a timeout, a dropped connection: the server hung or died on that scenario)
is that row's failure, and the run goes on: the server answered before, so it is the server's
fault there, and the other rows are still worth having.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._version import __version__
from ..terminal import counted
from .assemble import Reading, from_events, from_message
from .checks import CHECKS, FAIL, Outcome, evaluate
from .http import Answer, Endpoint, EndpointUnreachable, ProbeUsageError
from .retry import Retries
from .scenarios import Scenario

MODES = ("oneshot", "stream")
ROUTE = "/chat/completions"
#: After this many requests in a row with no answer the rest are not sent: the server is gone.
MAX_SILENT = 3


@dataclass
class Row:
    """One scenario in one mode: the checks' outcomes and what the client assembled."""

    scenario: Scenario
    mode: str
    outcomes: dict[str, Outcome]
    reading: Reading
    seconds: float = 0.0
    #: The 429s (rate limited) waited out before the answer: one wait (seconds) each.
    retries: Retries = field(default_factory=Retries)

    @property
    def failed(self) -> list[str]:
        return [name for name, o in self.outcomes.items() if o.status == FAIL]

    def expectation(self) -> str:
        """Whether the model did what the scenario asked (a note: a model's choice, not a server fault)."""
        n = len(self.reading.calls)
        want = self.scenario.expect
        if self.reading.problem or want == "any":
            return ""
        if want == "none" and n:
            return f"the model called {counted(n, 'tool')} where none was needed"
        if want == "call" and not n:
            return "the model answered without a call"
        if want == "calls" and n < 2:
            return f"the model made {counted(n, 'call')} where two were asked for"
        return ""

    def retry_note(self) -> str:
        """That the request was rate limited and sent again (the answer is the last attempt's)."""
        waits = self.retries.waits
        if not waits:
            return ""
        times = "once" if len(waits) == 1 else f"{len(waits)} times"
        return f"rate limited (HTTP 429): sent again {times}, after waiting {sum(waits):g} s in all"

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.name,
            "mode": self.mode,
            "status": "fail" if self.failed else "pass",
            "checks": {k: {"status": o.status, "detail": o.detail} for k, o in self.outcomes.items()},
            "note": self.expectation(),
            "answer": self.reading.wire(),
            "events": self.reading.events if self.mode == "stream" else None,
            "seconds": round(self.seconds, 3),
            "retries": [round(w, 3) for w in self.retries.waits],
        }


@dataclass
class ProbeReport:
    base_url: str
    model: str
    rows: list[Row] = field(default_factory=list)
    #: What re-reading the raw output found (`reread.Reread.to_json`), when asked for.
    reread: dict[str, Any] | None = None
    #: Ctrl-C ended the run early: `rows` are the answers checked until then.
    interrupted: bool = False

    @property
    def failures(self) -> list[Row]:
        return [r for r in self.rows if r.failed]

    @property
    def reread_differs(self) -> bool:
        """Whether the server's answer differs from the named spec's reading of the raw output."""
        return any(d.get("named") for d in (self.reread or {}).get("differences", []))

    def to_json(self) -> dict[str, Any]:
        return {
            "parsebridge": __version__,
            "base_url": self.base_url,
            "model": self.model,
            "checks": dict(CHECKS),
            "results": [r.to_json() for r in self.rows],
            "summary": {
                "rows": len(self.rows),
                "failed": len(self.failures),
                "interrupted": self.interrupted,
            },
            "reread": self.reread,
        }


def ask(
    endpoint: Endpoint, scenario: Scenario, mode: str, *, max_tokens: int, seed: int
) -> tuple[Answer, Reading]:
    """Send one scenario in one mode; what came back and what a client assembles of it."""
    body = scenario.body(endpoint.model, stream=mode == "stream", max_tokens=max_tokens, seed=seed)
    if mode == "stream":
        answer = endpoint.stream(ROUTE, body)
        reading = (
            from_events(answer.events, answer.problem, answer.done, answer.content_type)
            if answer.status == 200
            else Reading(mode)
        )
    else:
        answer = endpoint.post(ROUTE, body)
        reading = from_message(answer.body) if answer.status == 200 else Reading(mode)
    if answer.status != 200:
        reading.problem = f"HTTP {answer.status}: {answer.error_text() or 'no message'}"
        if answer.retries.gave_up:
            reading.problem += f" (rate limited: {answer.retries.gave_up})"
    reading.problem = endpoint.redact(reading.problem)
    return answer, reading


def _refused(endpoint: Endpoint, answer: Answer) -> None:
    """The first answer says the probe cannot work here at all: a usage error, not a check."""
    if answer.status in (401, 403):  # (with what the server said: a proxy's 403 may not be about a key)
        said = endpoint.redact(answer.error_text()) or "no message"
        raise ProbeUsageError(
            f"{endpoint.origin}{endpoint.path}{ROUTE} answered {answer.status} ({said}): the key was "
            "refused or is missing (--api-key-env NAME)"
        )
    if answer.status == 404:
        raise ProbeUsageError(
            f"{endpoint.origin}{endpoint.path}{ROUTE} answered 404 ({endpoint.redact(answer.error_text()) or 'not found'}): "
            "check --base-url (it ends with /v1) and --model"
        )


def probe(
    endpoint: Endpoint,
    scenarios: Sequence[Scenario],
    *,
    modes: Sequence[str] = MODES,
    max_tokens: int = 512,
    seed: int = 1234,
    progress: Callable[[str], None] | None = None,
) -> ProbeReport:
    """Every scenario in every mode (non-streamed first), checked. A Ctrl-C once some answers
    are checked ends the run with those (`ProbeReport.interrupted`): minutes of a slow server's
    answers are not thrown away; before the first, it is raised as it came."""
    report = ProbeReport(f"{endpoint.origin}{endpoint.path}", endpoint.model)
    try:
        _ask_all(report, endpoint, scenarios, modes, max_tokens=max_tokens, seed=seed, progress=progress)
    except KeyboardInterrupt:
        if not report.rows:
            raise
        report.interrupted = True
    return report


def _ask_all(
    report: ProbeReport,
    endpoint: Endpoint,
    scenarios: Sequence[Scenario],
    modes: Sequence[str],
    *,
    max_tokens: int,
    seed: int,
    progress: Callable[[str], None] | None,
) -> None:
    """`probe`'s requests, each row added to `report` as it is checked."""
    oneshots: dict[str, Reading] = {}
    first = True
    silent = 0  # requests in a row that got no answer
    for mode in modes:
        for scenario in scenarios:
            if progress is not None:
                progress(f"{scenario.name} ({mode})")
            if silent >= MAX_SILENT:  # (a server that hung would hold each request for --timeout)
                answer = Answer(0)
                reading = Reading(mode, problem=f"not asked: the last {silent} requests got no answer")
            else:
                try:
                    answer, reading = ask(endpoint, scenario, mode, max_tokens=max_tokens, seed=seed)
                    silent = 0
                except EndpointUnreachable as exc:
                    if first:
                        raise
                    silent += 1
                    answer, reading = Answer(0), Reading(mode, problem=endpoint.redact(f"no answer: {exc}"))
            if first:
                _refused(endpoint, answer)
                first = False
            if mode == "oneshot":
                oneshots[scenario.name] = reading
            outcomes = evaluate(scenario, reading, oneshots.get(scenario.name))
            report.rows.append(Row(scenario, mode, outcomes, reading, answer.seconds, answer.retries))
