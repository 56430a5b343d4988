"""`parsebridge probe`'s command line: exit statuses, the key's rules, bounded requests.

The key tests run a small standard-library HTTP server on 127.0.0.1 that records what it was
sent: the key goes to --base-url only, a redirect is an error (never followed), and the key
never appears in what the probe prints, even when the server echoes it back."""

from __future__ import annotations

import contextlib
import http.server
import io
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from _probe_servers import (
    WEATHER_ANSWERS,
    WEATHER_CALL,
    free_port,
    json_reply,
    recording_server,
    run_probe,
    sse_reply,
    trickling_server,
    url_of,
)

from parsebridge.probe.http import Endpoint, EndpointUnreachable, ProbeUsageError, endpoint_from, is_loopback

KEY = "sk-probe-secret-0123456789"


def test_an_unreachable_endpoint_is_exit_2_in_one_line() -> None:
    code, report, err = run_probe("--base-url", f"http://127.0.0.1:{free_port()}/v1", "--model", "m")
    assert (code, report) == (2, None)
    assert err.count("\n") == 1 and "connection refused" in err and "Traceback" not in err


def test_usage_errors_are_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROBE_TEST_KEY", raising=False)
    assert run_probe("--base-url", "ftp://x/v1", "--model", "m")[0] == 2
    assert run_probe("--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--scenario", "nope")[0] == 2
    code, _, err = run_probe(
        "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--api-key-env", "PROBE_TEST_KEY"
    )
    assert code == 2 and "PROBE_TEST_KEY" in err


@pytest.mark.parametrize(
    ("args", "said", "not_said"),
    [
        (["--timeout", "0"], "--timeout must be a finite number of seconds above 0", "--max-tokens"),
        (["--max-tokens", "0"], "argument --max-tokens: must be 1 or more, not 0", "--timeout"),
        (["--max-tokens", "ten"], "argument --max-tokens: expected a whole number, not 'ten'", "--timeout"),
    ],
)
def test_a_bad_count_names_the_option_that_is_wrong(
    args: list[str], said: str, not_said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--timeout 0` said '--max-tokens and --timeout must be positive', naming an option that was
    right, and `--max-tokens ten` a bare 'invalid int value'."""
    from parsebridge.cli.commands import main

    try:
        code = main(["probe", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", *args])
    except SystemExit as exc:  # (an argparse usage error exits from the parser)
        code = exc.code
    out, err = capsys.readouterr()
    error = err.strip().splitlines()[-1]  # (after argparse's usage lines, which name every option)
    assert (code, out) == (2, "")
    assert said in error and not_said not in error


@pytest.mark.parametrize("timeout", ["nan", "inf", "0", "-1"])
def test_a_timeout_that_is_no_finite_positive_number_is_a_usage_error(timeout: str) -> None:
    """nan and inf passed the check and failed in the socket: exit 1, `ValueError: Invalid value
    NaN` / `OverflowError: timestamp out of range`."""
    code, report, err = run_probe("--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--timeout", timeout)
    assert (code, report) == (2, None)
    assert "--timeout" in err and "finite" in err and "Error" not in err


def test_the_key_is_refused_over_plain_http_to_another_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBE_TEST_KEY", KEY)
    with pytest.raises(ProbeUsageError, match="plain http"):
        endpoint_from("http://203.0.113.7:8000/v1", "m", "PROBE_TEST_KEY", allow_insecure_key=False)
    allowed = endpoint_from("http://203.0.113.7:8000/v1", "m", "PROBE_TEST_KEY", allow_insecure_key=True)
    assert allowed.api_key == KEY and KEY not in repr(allowed)
    assert endpoint_from("https://203.0.113.7/v1", "m", "PROBE_TEST_KEY", False).api_key == KEY
    assert all(map(is_loopback, ["localhost", "127.0.0.1", "127.8.0.1", "::1"]))
    assert not any(map(is_loopback, ["203.0.113.7", "example.com", "10.0.0.1"]))


def test_the_key_goes_to_the_endpoint_only_and_is_never_printed(
    monkeypatch: pytest.MonkeyPatch, recorders: list[http.server.HTTPServer]
) -> None:
    monkeypatch.setenv("PROBE_TEST_KEY", KEY)
    echo, seen = recording_server()
    recorders.append(echo)
    code, report, err = run_probe(
        "--base-url",
        url_of(echo),
        "--model",
        "m",
        "--api-key-env",
        "PROBE_TEST_KEY",
        "--scenario",
        "single-call",
    )
    assert code == 1 and seen.seen == [("/v1/chat/completions", f"Bearer {KEY}")] * 2
    assert KEY not in json.dumps(report) + err
    assert report["results"][0]["checks"]["answer"]["detail"] == "HTTP 500: bad key Bearer ***"


CALL, RIGHT = WEATHER_CALL, WEATHER_ANSWERS


def test_a_server_that_dies_after_the_first_answer_fails_those_rows_and_the_report_stays(
    tmp_path: Path, recorders: list[http.server.HTTPServer]
) -> None:
    """Only the first request's silence means an unusable endpoint; before, a later timeout or
    dropped connection (a server that hangs or dies on one scenario) ended the run with exit 2 and
    no report, as if the endpoint could not be used at all."""
    server, _ = recording_server(replies=RIGHT, answers=1)
    recorders.append(server)
    args = ["--base-url", url_of(server), "--model", "m", "--save", str(tmp_path / "out.jsonl")]
    code, report, err = run_probe(*args, "--scenario", "single-call", "--scenario", "parallel-calls")
    assert code == 1 and report is not None, err
    status = {(r["scenario"], r["mode"]): r["checks"]["answer"] for r in report["results"]}
    assert status.pop(("single-call", "oneshot"))["status"] == "pass"
    assert len(status) == 3 and all(s["status"] == "fail" for s in status.values())
    assert all(s["detail"].startswith("no answer: ") for s in status.values())
    assert report["reread"]["unavailable"][0].startswith("single-call: asked with logprobs, no answer: ")


def test_after_three_requests_with_no_answer_the_rest_are_not_sent(
    tmp_path: Path, recorders: list[http.server.HTTPServer]
) -> None:
    """A server that hung holds every request for the whole timeout: once three in a row got no
    answer, the probe and the re-read send no more (here: 4 answered, 3 + 3 hung up, 2 not sent;
    before, all 12 were sent)."""
    server, seen = recording_server(replies=RIGHT, answers=4)
    recorders.append(server)
    names = ["single-call", "no-call", "empty-arguments", "follow-up"]
    args = ["--base-url", url_of(server), "--model", "m", "--save", str(tmp_path / "out.jsonl")]
    code, report, err = run_probe(*args, *(a for n in names for a in ("--scenario", n)))
    assert code == 1 and report is not None, err
    assert len(seen.seen) == 4 + 3 + 3
    said = [r["checks"]["answer"]["detail"] for r in report["results"] if r["mode"] == "stream"]
    assert [d.split(":")[0] for d in said] == ["no answer"] * 3 + ["not asked"]
    assert said[3] == "not asked: the last 3 requests got no answer"
    assert report["reread"]["unavailable"][3] == "follow-up: not asked: the last 3 requests got no answer"


@pytest.mark.parametrize("mode", ["oneshot", "stream"])
def test_a_server_that_trickles_is_cut_at_the_deadline(mode: str) -> None:
    """Each read got a byte in time, so the per-read timeout never fired: a non-streamed answer
    waited as long as the server trickled, and so did a stream whose line never ended (a stream
    of Connection: close took its socket out of reach of any check), past the documented deadline."""
    head = "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nConnection: close\r\n{}\r\n"
    if mode == "stream":
        server = trickling_server(head.format("text/event-stream", "").encode() + b"data: {")
    else:
        server = trickling_server(head.format("application/json", "Content-Length: 1000\r\n").encode())
    try:
        endpoint = Endpoint(f"http://127.0.0.1:{server.server_address[1]}/v1", "m", timeout=1, deadline=1.5)
        began = time.monotonic()
        if mode == "stream":
            said = endpoint.stream("/chat/completions", {"stream": True}).problem
        else:
            with pytest.raises(EndpointUnreachable) as raised:
                endpoint.post("/chat/completions", {})
            said = str(raised.value)
        assert time.monotonic() - began < 4
        assert "no whole answer within 1.5 s (the deadline for a whole answer)" in said
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (404, {"detail": "Not Found"}, "answered 404 (Not Found): check --base-url"),
        (
            404,
            {"detail": [{"loc": ["body"], "msg": "field required"}]},
            '([{"loc": ["body"], "msg": "field required"}])',
        ),
        (404, {"error": {"message": "no model m"}}, "answered 404 (no model m)"),
        (
            403,
            {"error": {"message": "blocked by the proxy's rules"}},
            "answered 403 (blocked by the proxy's rules)",
        ),
        (401, {"error": {"message": "invalid key"}}, "answered 401 (invalid key): the key was refused"),
        (
            404,
            {"message": "1 validation error\nmodel\n  no model named m"},
            "answered 404 (1 validation error model no model named m)",
        ),
    ],
)
def test_a_servers_error_is_quoted_as_it_came(
    status: int, body: dict[str, object], said: str, recorders: list[http.server.HTTPServer]
) -> None:
    """FastAPI's {"detail": ...} (what a FastAPI server answers for a route it lacks) was shown as
    a Python dict ("answered 404 ({'detail': 'Not Found'})"), and a 401/403 said only that the key
    was refused: a proxy's 403 is not always about a key, and the server's words say which."""
    server, _ = recording_server(replies={"oneshot": json_reply(body, status)})
    recorders.append(server)
    code, _, err = run_probe("--base-url", url_of(server), "--model", "m")
    assert code == 2 and said in err, err


def test_the_table_never_prints_the_key(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    recorders: list[http.server.HTTPServer],
) -> None:
    """A failure's detail quotes what the server sent (here arguments that echo the request's
    Authorization header): --json blanked the key out, the table printed it."""
    from parsebridge.cli.commands import main

    monkeypatch.setenv("PROBE_TEST_KEY", KEY)
    echoed = {**CALL, "function": {"name": "get_weather", "arguments": f"auth was Bearer {KEY}"}}
    message = {"index": 0, "message": {"tool_calls": [echoed]}, "finish_reason": "tool_calls"}
    server, _ = recording_server(
        replies={"oneshot": json_reply({"choices": [message]}), "stream": RIGHT["stream"]}
    )
    recorders.append(server)
    args = ["--base-url", url_of(server), "--model", "m", "--api-key-env", "PROBE_TEST_KEY"]
    code = main(["probe", *args, "--scenario", "single-call"])
    out, err = capsys.readouterr()
    assert code == 1 and "'auth was Bearer ***'" in out
    assert KEY not in out + err


def test_redirects_are_not_followed(
    monkeypatch: pytest.MonkeyPatch, recorders: list[http.server.HTTPServer]
) -> None:
    monkeypatch.setenv("PROBE_TEST_KEY", KEY)
    target, target_seen = recording_server()
    origin, origin_seen = recording_server(redirect_to=f"http://127.0.0.1:{target.server_address[1]}")
    recorders += [target, origin]
    code, _, err = run_probe("--base-url", url_of(origin), "--model", "m", "--api-key-env", "PROBE_TEST_KEY")
    assert code == 2 and "redirect" in err and "not followed" in err
    assert len(origin_seen.seen) == 1 and target_seen.seen == []


def test_the_urls_query_goes_with_every_request(recorders: list[http.server.HTTPServer]) -> None:
    """A gateway that wants ?api-version=... got requests without it: the query was dropped."""
    server, seen = recording_server(replies=RIGHT)
    recorders.append(server)
    code, _, err = run_probe(
        "--base-url", url_of(server) + "?api-version=2024-10-21", "--model", "m", "--scenario", "single-call"
    )
    assert code == 0, err
    assert [path for path, _ in seen.seen] == ["/v1/chat/completions?api-version=2024-10-21"] * 2


def test_a_bare_host_means_its_v1_routes() -> None:
    assert Endpoint("http://127.0.0.1:8000", "m").path == "/v1"
    assert Endpoint("http://127.0.0.1:8000/v1/", "m").path == "/v1"
    assert Endpoint("https://host/openai/v1", "m").port == 443


def test_a_tokenizer_that_cannot_be_loaded_is_a_usage_error(tmp_path: Path) -> None:
    from parsebridge.probe.reread import load_decoder

    with pytest.raises(ProbeUsageError, match="--tokenizer"):
        load_decoder(str(tmp_path / "missing"))


@pytest.mark.parametrize("url", ["http://[::1/v1", "http://127.0.0.1:99999/v1", "http://127.0.0.1:port/v1"])
def test_a_url_python_cannot_split_is_a_usage_error_in_one_line(url: str) -> None:
    code, report, err = run_probe("--base-url", url, "--model", "m")
    assert (code, report) == (2, None)
    assert err.count("\n") == 1 and url in err and "PARSEBRIDGE_DEBUG" not in err


def test_an_ipv6_origin_is_written_with_brackets() -> None:
    assert Endpoint("http://[::1]:8000/v1", "m").origin == "http://[::1]:8000"


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--parser", "builtin:hermse"], "'hermse'"),
        (["--parser", "builtin:qwen3"], "no tool parser named 'qwen3'"),
        (["--reasoning-parser", "builtin:hermes"], "no reasoning parser named 'hermes'"),
        (["--parser", "builtin:hermes", "--backends", "vlm"], "'vlm'"),
        (["--backends", "vllm"], "--backends is for re-reading"),
        (["--save", "{tmp}/no/such/dir/out.jsonl"], "no such directory"),
        (["--save", "{tmp}"], "is a directory"),
        (["--parser", "builtin:hermes", "--tokenizer", "{tmp}/missing"], "--tokenizer"),
        (["--model", " "], "--model is empty"),
    ],
)
def test_the_rereads_options_are_checked_before_any_request(
    extra: list[str], said: str, tmp_path: Path, recorders: list[http.server.HTTPServer]
) -> None:
    """A typo there used to show only after every scenario was asked (the report lost), or never,
    when the server gives no raw output (exit 0)."""
    server, seen = recording_server()
    recorders.append(server)
    args = ["--base-url", url_of(server), "--model", "m", *(a.format(tmp=tmp_path) for a in extra)]
    code, report, err = run_probe(*args)
    assert (code, report) == (2, None), err
    assert said in err and seen.seen == []


def test_ctrl_c_while_the_command_loads_is_exit_130(monkeypatch: pytest.MonkeyPatch) -> None:
    """Configuring `probe` imports its module (about half a second): a Ctrl-C then printed a
    traceback instead of the documented exit 130."""
    import importlib

    from parsebridge.cli.commands import main

    def interrupted(name: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib, "import_module", interrupted)
    try:
        code: int | str = main(["probe", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"])
    except KeyboardInterrupt:
        code = "KeyboardInterrupt escaped"
    assert code == 130


def test_a_scenario_named_twice_runs_once(recorders: list[http.server.HTTPServer]) -> None:
    """`--scenario single-call --scenario single-call` sent its requests twice and showed four rows."""
    server, seen = recording_server(replies=RIGHT)
    recorders.append(server)
    args = ["--base-url", url_of(server), "--model", "m", "--scenario", "single-call"]
    code, report, err = run_probe(*args, "--scenario", "single-call", "--scenario", "no-call,single-call")
    assert code in (0, 1) and report is not None, err
    rows = [(r["scenario"], r["mode"]) for r in report["results"]]
    assert rows == [(n, m) for m in ("oneshot", "stream") for n in ("single-call", "no-call")]
    assert len(seen.seen) == 4
    assert run_probe("--base-url", url_of(server), "--model", "m", "--scenario", ",")[0] == 2


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_on_a_terminal_stderr_shows_which_scenario_runs(recorders: list[http.server.HTTPServer]) -> None:
    """No progress was shown at all: a probe of a slow server sat silent for minutes. It goes to
    stderr on a terminal only, never with --json (nor to a pipe: other tests read stderr as a
    pipe and see one line)."""
    from parsebridge.cli.commands import main

    server, _ = recording_server(replies=RIGHT)
    recorders.append(server)
    args = ["probe", "--base-url", url_of(server), "--model", "m", "--scenario", "single-call"]
    for extra, shown in (([], "probe: single-call (stream), request 2/2"), (["--json"], None)):
        terminal, out = _Terminal(), io.StringIO()
        with contextlib.redirect_stderr(terminal), contextlib.redirect_stdout(out):
            assert main([*args, *extra]) == 0
        assert shown in terminal.getvalue() if shown else terminal.getvalue() == ""
        assert "probe: single-call" not in out.getvalue()


def test_ctrl_c_during_the_run_shows_the_answers_checked_so_far(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    recorders: list[http.server.HTTPServer],
) -> None:
    """Ctrl-C exited 130 with nothing shown: minutes of a slow server's answers were lost."""
    from parsebridge.cli.commands import main
    from parsebridge.probe import run as probe_run

    server, _ = recording_server(replies=RIGHT)
    recorders.append(server)
    asked = probe_run.ask
    calls: list[int] = []

    def interrupted_third(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) % 3 == 0:
            raise KeyboardInterrupt
        return asked(*args, **kwargs)

    monkeypatch.setattr(probe_run, "ask", interrupted_third)
    args = ["--base-url", url_of(server), "--model", "m", "--scenario", "single-call,no-call"]
    code, report, err = run_probe(*args)
    assert code == 130 and report is not None, err
    assert report["summary"] == {"rows": 2, "failed": 0, "interrupted": True}
    assert main(["probe", *args]) == 130
    assert "interrupted (Ctrl-C) after 2 answers; of those, all checks pass" in capsys.readouterr().out


HTML_404 = (
    b"<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n"
    b"<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)


def test_an_html_error_page_is_named_by_its_title_in_one_line(
    recorders: list[http.server.HTTPServer],
) -> None:
    """A web server's error page (a wrong port, a proxy) was quoted whole: the one-line error
    spread over eight lines of markup."""
    server, _ = recording_server(replies={"oneshot": (404, "text/html", HTML_404)})
    recorders.append(server)
    code, _, err = run_probe("--base-url", url_of(server), "--model", "m")
    assert code == 2 and err.count("\n") == 1, err
    assert "answered 404 (an HTML page: 404 Not Found): check --base-url" in err


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (
            "http://127.0.0.1:8000/v1/chat/completions",
            "ends with the route /chat/completions: give the base URL an OpenAI client takes, "
            "'http://127.0.0.1:8000/v1'",
        ),
        ("localhost:8000/v1", "(did you mean 'http://localhost:8000/v1'?)"),
    ],
)
def test_a_base_url_written_as_users_write_it_gets_the_url_to_give(url: str, said: str) -> None:
    """A --base-url copied from a curl command (the route included) asked for
    .../chat/completions/chat/completions and got a 404; one with no scheme was refused without
    the URL to write."""
    code, report, err = run_probe("--base-url", url, "--model", "m")
    assert (code, report) == (2, None) and said in err, err


def test_a_host_name_not_found_says_so() -> None:
    from parsebridge.probe.http import _reason

    said = _reason(socket.gaierror(-2, "Name or service not known"))
    assert said == "the host name was not found (Name or service not known): check --base-url"


@pytest.mark.parametrize("columns", [80, 40])
def test_the_table_on_a_narrow_terminal_cuts_no_verdict(
    columns: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    recorders: list[http.server.HTTPServer],
) -> None:
    """On an 80-column terminal the twelve columns were cut to `sce…`, `in…`, `F…`: which check
    failed could not be read. A narrow terminal gets one column naming the failed checks."""
    from parsebridge.cli.commands import main

    no_index = {"index": None, **CALL}
    broken = sse_reply(
        {"choices": [{"index": 0, "delta": {"tool_calls": [no_index]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )
    server, _ = recording_server(replies={"oneshot": RIGHT["oneshot"], "stream": broken})
    recorders.append(server)
    monkeypatch.setenv("COLUMNS", str(columns))
    args = ["probe", "--base-url", url_of(server), "--model", "m", "--scenario", "reasoning-then-call"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= columns
    assert "reasoning-then-call" in out.replace("\n", "").replace("│", "").replace(" ", "")
    assert "FAIL index" in out and "1 of 2 answers fail" in out
    monkeypatch.setenv("COLUMNS", "200")
    assert main(args) == 1
    wide = capsys.readouterr().out
    assert "name-first" in wide and "FAIL index" not in wide
