"""A rate-limited endpoint (HTTP 429): the probe waits what Retry-After asks, a few times at most
and never past the request's time budget, and says so. Before, every 429 failed its row outright."""

from __future__ import annotations

import http.server
import time

import pytest
from _probe_servers import (
    WEATHER_ANSWERS,
    WEATHER_CALL,
    recording_server,
    run_probe,
    url_of,
)

from parsebridge.probe.http import Endpoint
from parsebridge.probe.retry import MAX_RETRIES, retry_after_seconds

CALL, RIGHT = WEATHER_CALL, WEATHER_ANSWERS


def test_a_429_is_waited_out_and_the_report_says_so(
    capsys: pytest.CaptureFixture[str], recorders: list[http.server.HTTPServer]
) -> None:
    from parsebridge.cli.commands import main

    server, seen = recording_server(replies=RIGHT, limited=1, retry_after="1")
    recorders.append(server)
    began = time.monotonic()
    code = main(["probe", "--base-url", url_of(server), "--model", "m", "--scenario", "single-call"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert time.monotonic() - began >= 1 and len(seen.seen) == 3
    assert "single-call (oneshot) note: rate limited (HTTP 429): sent again once, after waiting 1 s" in out

    server, _ = recording_server(replies=RIGHT, limited=1, retry_after="0")
    recorders.append(server)
    code, report, err = run_probe("--base-url", url_of(server), "--model", "m", "--scenario", "single-call")
    assert code == 0 and [r["retries"] for r in report["results"]] == [[0], []], err


def test_a_retry_after_past_the_budget_is_not_waited(recorders: list[http.server.HTTPServer]) -> None:
    server, seen = recording_server(replies=RIGHT, limited=100, retry_after="3600")
    recorders.append(server)
    began = time.monotonic()
    code, report, err = run_probe("--base-url", url_of(server), "--model", "m", "--scenario", "single-call")
    assert code == 1 and time.monotonic() - began < 10 and len(seen.seen) == 2, err
    detail = report["results"][0]["checks"]["answer"]["detail"]
    assert detail.startswith("HTTP 429: Rate limit reached (rate limited: Retry-After of 3600 s is more than")


def test_without_retry_after_it_backs_off_a_few_times(recorders: list[http.server.HTTPServer]) -> None:
    server, seen = recording_server(replies=RIGHT, limited=100)
    recorders.append(server)
    waited: list[float] = []
    endpoint = Endpoint(url_of(server), "m", sleep=waited.append, deadline=60)
    answer = endpoint.post("/chat/completions", {})
    assert answer.status == 429 and waited == [1.0, 2.0, 4.0] and len(seen.seen) == 1 + MAX_RETRIES
    assert answer.retries.gave_up == f"still rate limited after {MAX_RETRIES} retries"


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("5", 5.0), (" 2.5 ", 2.5), ("-3", 0.0), ("soon", None), ("nan", None), ("inf", None), (None, None)],
)
def test_retry_after_is_read_as_seconds(header: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(header) == seconds


def test_retry_after_is_read_as_a_date() -> None:
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:30 GMT", now=1445412480.0) == 30.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412510.0) == 0.0
