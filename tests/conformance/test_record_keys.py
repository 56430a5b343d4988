"""A record key that is no field but looks like one (``expectd``) is warned about, not kept unsaid.

Unknown keys are a log line's own metadata and stay allowed; a typo of ``expected`` used to leave
the record unscored, so ``conformance --transcripts`` counted every reading of it "pass".
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import parsebridge as pb
from parsebridge.cli import main

RECORD = {
    "id": "r1",
    "family": "hermes",
    "output": "hi",
    "expectd": {"content": "bye"},
    "model": "m",
    "timestamp": 5,
}


def _log(tmp_path: Path) -> str:
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(RECORD) + "\n")
    return str(path)


def test_conformance_and_compare_name_the_misspelt_key_and_leave_metadata_alone(tmp_path, capsys) -> None:
    log = _log(tmp_path)
    assert main(["conformance", "--backend", "builtin", "--transcripts", log, "--jobs", "1", "-q"]) == 0
    assert main(["compare", log, "--backends", "builtin"]) == 0
    err = capsys.readouterr().err
    said = "r1: key 'expectd' (did you mean 'expected'?) not read"
    assert err.count(said) == 2, err
    assert "'model'" not in err and "'timestamp'" not in err


def test_the_api_warns_too(tmp_path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pb.compare(_log(tmp_path), "builtin:hermes")
    assert any("'expectd' (did you mean 'expected'?)" in str(w.message) for w in caught)
