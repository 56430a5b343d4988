"""probe: a live OpenAI-compatible deployment checked from outside, the way its clients see it.

``parsebridge probe --base-url URL --model M`` sends scripted tool-use requests
(`scenarios`), first non-streamed then streamed, assembles each answer as a client does
(`assemble`) and checks the invariants clients rely on (`checks`). `http` is the bounded
standard-library client that keeps the API key to the endpoint; `run` drives a probe;
`render` is the terminal table; the subcommand is `parsebridge.cli.probe_command`.

This room sits above `compare` in the one-way layering: re-reading the server's raw output
through other backends is a comparison.
"""

from __future__ import annotations

from .checks import CHECKS
from .http import Endpoint, EndpointUnreachable, ProbeUsageError, endpoint_from
from .run import ProbeReport, Row, probe
from .scenarios import SCENARIOS, Scenario

__all__ = [
    "CHECKS",
    "SCENARIOS",
    "Endpoint",
    "EndpointUnreachable",
    "ProbeReport",
    "ProbeUsageError",
    "Row",
    "Scenario",
    "endpoint_from",
    "probe",
]
