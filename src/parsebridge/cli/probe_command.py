"""`parsebridge probe`: check a live OpenAI-compatible deployment's parsing from outside.

The options and the run; the probing itself is `parsebridge.probe`.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .. import terminal as io
from ..adapters.registry import backend_names, check_spec
from ..probe.checks import CHECKS
from ..probe.http import Endpoint, ProbeUsageError, endpoint_from
from ..probe.render import json_text, render
from ..probe.reread import load_decoder, reread
from ..probe.run import MODES, ProbeReport, probe
from ..probe.scenarios import SCENARIOS, select
from ..protocol.errors import UnknownBackendError


def _epilog() -> str:
    checks = "\n".join(f"  {name:<11} {text}" for name, text in CHECKS.items())
    scenarios = "\n".join(f"  {s.name:<20} {s.description}" for s in SCENARIOS)
    return f"""\
every scenario is sent non-streamed, then streamed (temperature 0, a fixed seed).

checks (each scenario and mode):
{checks}

scenarios:
{scenarios}

exit status:
  0    every check passes
  1    a check fails (or, with --parser, the server's answer differs from that parser's
       reading of the model's raw output)
  2    usage error (a misspelt --parser, --reasoning-parser or --backends, a --save path
       in no directory, a --tokenizer that does not load: checked before any request), or
       the endpoint cannot be used on the first request: unreachable, a redirect, the key
       refused (401/403), no such route or model (404); a later request with no answer (a
       timeout, a dropped connection) fails its row instead
  130  interrupted (Ctrl-C); the answers checked so far are still shown

on a terminal, stderr shows which scenario runs (not with --json, nor into a pipe or file).
a request answered 429 (rate limited) is sent again after its Retry-After (at most 3 times,
within the request's deadline); the report notes each row that was.

the API key is read only from the environment variable --api-key-env names, sent only to
--base-url (redirects are not followed), never printed or saved, and refused over plain http
to a host other than this machine unless --allow-insecure-key is given."""


def configure(p: argparse.ArgumentParser) -> None:
    """`parsebridge probe` (the parser `cli.commands` made for it)."""
    p.description = (
        "Send scripted tool-use requests to an OpenAI-compatible server and check "
        "what comes back against the invariants clients rely on."
    )
    p.epilog = _epilog()
    p.add_argument("--base-url", required=True, metavar="URL", help="e.g. http://localhost:8000/v1")
    p.add_argument("--model", required=True, metavar="M", help="the model name the server serves")
    p.add_argument("--api-key-env", metavar="NAME", help="the environment variable holding the API key")
    p.add_argument(
        "--allow-insecure-key",
        action="store_true",
        help="send the key over plain http to a host other than this machine",
    )
    p.add_argument(
        "--scenario",
        action="append",
        metavar="NAME",
        help="run only this scenario (repeatable, or NAME,NAME; each runs once, in the order first "
        "named; default: all)",
    )
    p.add_argument(
        "--max-tokens",
        type=io.whole_number(1),
        default=512,
        metavar="N",
        help="max_tokens of each request (512)",
    )
    p.add_argument("--seed", type=int, default=1234, help="the seed of each request (1234)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds per read (60)")
    p.add_argument(
        "--parser",
        metavar="SPEC",
        help="the tool parser the server runs (e.g. dynamo:hermes, vllm:hermes): its raw output is "
        "re-read through it and every installed backend's parser of the same family",
    )
    p.add_argument(
        "--reasoning-parser", metavar="SPEC", help="the reasoning parser the server runs (e.g. vllm:qwen3)"
    )
    p.add_argument(
        "--backends",
        metavar="B,...",
        help="with --parser: the other backends to re-read with (default: every installed one; "
        "none: only the named spec)",
    )
    p.add_argument(
        "--save",
        metavar="FILE",
        type=Path,
        help="save the raw outputs as transcripts (JSON Lines) for parsebridge compare/conformance",
    )
    p.add_argument(
        "--tokenizer",
        metavar="PATH",
        help="the model's tokenizer (a local folder or tokenizer.json): the server's token ids are "
        "decoded with it and recorded with it in the saved transcripts",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def _reread_options(ns: argparse.Namespace) -> tuple[list[str] | None, Any]:
    """The re-read's options checked before any request: a misspelt spec or backend, a --save path
    that cannot be written or a --tokenizer that does not load would otherwise surface only after
    every scenario was asked (the report lost), or never, when the server gives no raw output.
    Returns the --backends list and the loaded tokenizer."""
    if ns.parser:
        check_spec("tool", ns.parser)
    if ns.reasoning_parser:
        check_spec("reasoning", ns.reasoning_parser)
    backends = None
    if ns.backends is not None:
        if not (ns.parser or ns.reasoning_parser):
            raise ProbeUsageError(
                "--backends is for re-reading with --parser or --reasoning-parser; give one"
            )
        backends = [b.strip() for b in ns.backends.split(",") if b.strip() and b.strip() != "none"]
        known = backend_names()
        for name in backends:
            if name not in known:
                raise UnknownBackendError(name, known)
    if ns.save is not None:
        if ns.save.is_dir():
            raise ProbeUsageError(f"--save {ns.save}: is a directory, not a file")
        if not ns.save.parent.is_dir():
            raise ProbeUsageError(f"--save {ns.save}: no such directory {ns.save.parent}")
    return backends, load_decoder(ns.tokenizer) if ns.tokenizer else None


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # (a replaced or closed stderr)
        return False


@contextlib.contextmanager
def _progress(shown: bool, requests: int) -> Iterator[Callable[[str], None] | None]:
    """What runs now, on one line of stderr that goes when the probe ends (a Rich status): only on
    a terminal, and never with --json, so no pipe or file ever gets it. None when not shown."""
    if not shown:
        yield None
        return
    console = io.console(stderr=True)
    sent = 0

    with console.status("probe: starting") as status:

        def show(what: str) -> None:
            nonlocal sent
            sent += 1
            total = f"/{requests}" if sent <= requests else ""
            status.update(io.plain(f"probe: {what}, request {sent}{total}"))

        yield show


def run(ns: argparse.Namespace) -> int:
    try:
        scenarios = select(ns.scenario)
    except KeyError as exc:
        raise ProbeUsageError(exc.args[0]) from None
    if not 0 < ns.timeout < math.inf:  # nan too: no socket takes it
        raise ProbeUsageError(f"--timeout must be a finite number of seconds above 0, not {ns.timeout}")
    if not ns.model.strip():
        raise ProbeUsageError("--model is empty: give the model name the server serves")
    endpoint = endpoint_from(ns.base_url, ns.model, ns.api_key_env, ns.allow_insecure_key, ns.timeout)
    backends, decoder = _reread_options(ns)
    rereads = bool(ns.parser or ns.reasoning_parser or ns.save or ns.tokenizer)
    requests = len(scenarios) * (len(MODES) + rereads)
    with _progress(not ns.json and _stderr_is_terminal(), requests) as progress:
        report = probe(endpoint, scenarios, max_tokens=ns.max_tokens, seed=ns.seed, progress=progress)
        if rereads and not report.interrupted:
            report.reread = _reread_unless_interrupted(
                endpoint,
                report,
                parser=ns.parser,
                reasoning_parser=ns.reasoning_parser,
                save=ns.save,
                max_tokens=ns.max_tokens,
                seed=ns.seed,
                tokenizer=ns.tokenizer,
                backends=backends,
                decoder=decoder,
                progress=progress,
            )
    if ns.json:
        sys.stdout.write(json_text(report, endpoint.redact_data) + "\n")
    else:
        render(report, redact=endpoint.redact)
    if report.interrupted:
        return io.EXIT_INTERRUPTED
    return io.EXIT_FAILED if report.failures or report.reread_differs else io.EXIT_OK


def _reread_unless_interrupted(
    endpoint: Endpoint, report: ProbeReport, **options: Any
) -> dict[str, Any] | None:
    """`reread`, or None when Ctrl-C stops it: the probe's rows are still shown (the run marked
    interrupted), and no --save file is left half written (it is written after every request)."""
    try:
        return reread(endpoint, report, **options)
    except KeyboardInterrupt:
        report.interrupted = True
        return None
