"""The probe tests' helper modules (`_probe_servers`, `_probe_model`) import from this folder;
`recorders` collects the recording servers a test starts and shuts them down after it."""

import http.server
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


@pytest.fixture
def recorders() -> Iterator[list[http.server.HTTPServer]]:
    made: list[http.server.HTTPServer] = []
    yield made
    for server in made:
        server.shutdown()
        server.server_close()
