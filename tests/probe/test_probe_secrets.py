"""Secrets the probe holds never show: a URL's ``user:password@`` and an API key whatever
characters it has, in the table, ``--json``, ``--save`` and error messages alike."""

from __future__ import annotations

import base64
import http.server
import json
from pathlib import Path
from typing import Any

import pytest
from _probe_servers import json_reply, recording_server, run_probe, sse_reply

from parsebridge.probe.http import ProbeUsageError, endpoint_from
from parsebridge.probe.redact import Redactor

PASSWORD = "pw-7f3e9d21"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_a_urls_password_is_sent_as_basic_auth_and_never_shown(
    recorders: list[http.server.HTTPServer],
) -> None:
    """The user:password of --base-url was dropped (never sent), and error messages quoted the
    URL with the password in it."""
    server, seen = recording_server()  # answers 500 "bad key <the Authorization header>"
    recorders.append(server)
    url = f"http://alice:{PASSWORD}@127.0.0.1:{server.server_address[1]}/v1"
    code, report, err = run_probe("--base-url", url, "--model", "m", "--scenario", "single-call")
    basic = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert code == 1 and seen.seen[0] == ("/v1/chat/completions", f"Basic {basic}"), err
    shown = json.dumps(report) + err
    assert PASSWORD not in shown and basic not in shown
    assert report["results"][0]["checks"]["answer"]["detail"] == "HTTP 500: bad key Basic ***"
    for bad in (
        f"ftp://alice:{PASSWORD}@127.0.0.1:1/v1",
        f"http://alice:{PASSWORD}@[::1/v1",
        f"alice:{PASSWORD}@localhost:8000/v1",
    ):
        code, _, err = run_probe("--base-url", bad, "--model", "m")
        assert code == 2 and PASSWORD not in err and "alice" not in err and "***@" in err, err


def test_a_urls_password_keeps_the_keys_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProbeUsageError, match="password of --base-url over plain http"):
        endpoint_from(f"http://alice:{PASSWORD}@203.0.113.7/v1", "m", None, allow_insecure_key=False)
    monkeypatch.setenv("PROBE_TEST_KEY", "sk-1")
    with pytest.raises(ProbeUsageError, match="give one"):
        endpoint_from(f"https://alice:{PASSWORD}@203.0.113.7/v1", "m", "PROBE_TEST_KEY", False)


#: A key with what JSON and repr escape: a quote, a backslash, a non-ASCII letter.
ODD_KEY = 'sk-"odd\\key-ü-0123456789'


def _forms(secret: str) -> list[str]:
    return [
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
    ]


def test_a_key_json_escapes_is_blanked_out_of_json_and_save(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, recorders: list[http.server.HTTPServer]
) -> None:
    """--json replaced the key in the serialised text, where it was written escaped (\\" \\\\
    \\u00fc): a server echoing it in content had it printed (and saved) in full."""
    monkeypatch.setenv("PROBE_TEST_KEY", ODD_KEY)
    said = f"your key is {ODD_KEY}"
    message = {"index": 0, "message": {"content": said}, "finish_reason": "stop"}
    delta = {"choices": [{"index": 0, "delta": {"content": said}, "finish_reason": "stop"}]}
    server, _ = recording_server(
        replies={"oneshot": json_reply({"choices": [message]}), "stream": sse_reply(delta)}
    )
    recorders.append(server)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    save = tmp_path / "out.jsonl"
    args = ["--base-url", url, "--model", "m", "--api-key-env", "PROBE_TEST_KEY", "--save", str(save)]
    _, report, err = run_probe(*args, "--scenario", "no-call")
    assert report is not None, err
    assert report["results"][0]["answer"]["content"] == "your key is ***"
    texts = [*_strings(report), err, save.read_text()]
    assert not [f for f in _forms(ODD_KEY) for t in texts if f in t]


def test_a_key_quoted_by_a_detail_is_blanked_out_of_the_table(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    recorders: list[http.server.HTTPServer],
) -> None:
    """A failure's detail quotes what came with repr (a body that is not JSON), which doubles the
    key's backslash: the table showed it."""
    from parsebridge.cli.commands import main

    monkeypatch.setenv("PROBE_TEST_KEY", ODD_KEY)
    body = f"Authorization: Bearer {ODD_KEY}".encode()
    server, _ = recording_server(replies={"oneshot": (200, "text/plain", body)})
    recorders.append(server)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    code = main(
        [
            "probe",
            "--base-url",
            url,
            "--model",
            "m",
            "--api-key-env",
            "PROBE_TEST_KEY",
            "--scenario",
            "no-call",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1 and "Bearer ***" in out, out
    assert not [f for f in _forms(ODD_KEY) if f in out + err]


def test_the_redactor_knows_every_form() -> None:
    redactor = Redactor([ODD_KEY, None, ""])
    for form in _forms(ODD_KEY):
        assert redactor.text(f"<{form}>") == "<***>"
    assert redactor.data({"a": [ODD_KEY, 1, None], ODD_KEY: "x"}) == {"a": ["***", 1, None], "***": "x"}


def test_a_key_cut_by_a_quote_leaves_no_part_of_it(
    monkeypatch: pytest.MonkeyPatch, recorders: list[http.server.HTTPServer]
) -> None:
    """A detail quotes the first 200 characters of a body that is not JSON: a key cut there left
    its first part, which the redaction of the whole key no longer found."""
    key = "sk-probe-secret-0123456789"
    monkeypatch.setenv("PROBE_TEST_KEY", key)
    body = ("x" * 190 + key).encode()
    event = ("y" * 110 + key).encode()  # a stream's event that is not JSON is quoted to 120
    server, _ = recording_server(
        replies={"oneshot": (200, "text/plain", body), "stream": sse_reply(event, done=False)}
    )
    recorders.append(server)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    args = ["--base-url", url, "--model", "m", "--api-key-env", "PROBE_TEST_KEY", "--scenario", "no-call"]
    code, report, err = run_probe(*args)
    assert code == 1 and report is not None, err
    details = [r["checks"]["answer"]["detail"] for r in report["results"]]
    assert "x***" in details[0] and "y***" in details[1], details
    assert key[:8] not in json.dumps(report) + err


def test_a_key_given_where_its_variables_name_goes_is_not_echoed() -> None:
    """`--api-key-env sk-...` (the key itself) was echoed: "--api-key-env sk-...: that environment
    variable is not set or empty", into the terminal and any CI log."""
    key = "sk-proj-Abc123-def456"
    code, report, err = run_probe("--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--api-key-env", key)
    assert (code, report) == (2, None)
    assert key not in err and "not the key itself" in err
