"""Dynamo's OpenAI frontend in this process, with a scripted engine behind it.

One `DynamoFrontend` per process (`frontend()`), started on first use. Each
parser configuration — a (reasoning parser, tool parser) pair — is one model
registered on it (`model_for`), with its own endpoint and the same engine
handler; registration happens once per configuration, when first asked for.

The engine handler plays the script the request's prompt names
(`ScriptBoard`): one engine step per stream chunk. A streamed request asks
for two choices; choice 0 carries the steps, choice 1 only an empty step
after each — the fence (`read_to_fence`): Dynamo keeps per-choice parser
state, passes an empty step through as an empty delta, and emits in order,
so the events between two fences are what one step produced.

Dynamo writes each registered model's files under ``$HOME/.cache/dynamo/mdc``
(it does not read ``XDG_CACHE_HOME`` for this); `close` removes what this
frontend added there, and a start first removes what frontends of dead
processes left (a forked worker can end without running `close`): the model
folders named ``dynamo-PID-...`` whose PID no longer runs, and the blobs only
they linked to.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ...formats import reasoning_families, reasoning_format, tool_families, tool_format
from ...protocol.errors import ServerUnavailableError
from .._common import process_wide
from .._served import ModelFolder, ServedFrontend, get_json, model_folder, wait_until
from .._served.parsers import ParserPair
from .._served.steps import CANCELLED
from . import _quiet
from ._compat import DynamoApi, get_api

#: The endpoint namespace and component of the models this frontend registers.
NAMESPACE = "parsebridge"


def all_markers() -> list[str]:
    """Every marker of every format parsebridge knows: single tokens in the frontend's vocabulary."""
    out: set[str] = set()
    for family in tool_families():
        out.update(m for m in tool_format(family).markers if m)
    for family in reasoning_families():
        fmt = reasoning_format(family)
        out.update(m for m in fmt.markers if m)
    return sorted(out)


def _mdc_root() -> Path:
    return Path(os.path.expanduser("~")) / ".cache" / "dynamo" / "mdc"


class DynamoFrontend(ServedFrontend):
    """Dynamo's frontend and runtime in a thread of this process (see module doc)."""

    backend = "dynamo"
    start_timeout = 30.0
    #: A second Dynamo runtime in a forked copy of a process that ran one hangs while starting
    #: (measured, 1.6.1): the child refuses at once instead. A child of a process that never
    #: started one (the conformance workers) starts its own.
    fork_policy = "refuse"
    register_timeout = 30.0

    def __init__(self) -> None:
        super().__init__()
        self._models: dict[tuple[ParserPair, Path], str] = {}
        self._attempts = 0  # every registration gets a fresh name: a failed one is never reused
        self._register_lock = threading.Lock()
        self._runtime: Any = None
        self._server: asyncio.Future[Any] | None = None
        self._serving: list[asyncio.Future[Any]] = []
        self._mdc_before: set[str] = set()
        #: Dynamo's per-request log lines kept off standard error while the frontend runs (`_quiet`).
        self._quiet: _quiet.StderrFilter | None = None
        self.api: DynamoApi | None = None
        self.folder = model_folder(all_markers())

    # ------------------------------------------------------------------ start / stop

    async def _start(self, port: int) -> None:
        api = self.api = get_api()
        if self._quiet is None and _quiet.wanted():
            self._quiet = _quiet.StderrFilter()
        root = _mdc_root()
        _remove_slugs(root, [name for name in _listing(root / "by-slug") if _left_by_dead_process(name)])
        self._mdc_before = _snapshot(root)
        self._runtime = api.runtime(asyncio.get_running_loop())
        run = await api.serve_http(self._runtime, port)
        self._server = asyncio.ensure_future(run)

    def _is_ready(self) -> bool:
        server = self._server
        if server is not None and server.done():
            exc = server.exception() if not server.cancelled() else None
            raise ServerUnavailableError("dynamo", f"the HTTP frontend stopped while starting: {exc!r}")
        assert self.port is not None
        return isinstance(get_json(self.port, "/v1/models", 2.0), dict)

    async def _stop(self) -> None:
        runtime, self._runtime = self._runtime, None
        if self._quiet is not None:
            self._quiet.begin_close()
        if runtime is not None:
            runtime.shutdown()
        # Dynamo's HTTP server ends by itself once its runtime shuts down, after answering the
        # requests it took (at most 0.16 s measured, 1.6.1). The loop must run until then: a request
        # it hands to the engine after the loop closed is a "RuntimeError: Event loop is closed"
        # traceback on standard error (Dynamo's thread) and HTTP 500.
        server = self._server
        if server is not None and not server.done():
            await asyncio.wait([server], timeout=5.0)
        pending = [f for f in [*self._serving, self._server] if f is not None]
        for fut in pending:
            if not fut.done():
                fut.cancel()
        if pending:
            await asyncio.wait(pending, timeout=5.0)
        self._clean_mdc()

    def _reset(self) -> None:
        quiet, self._quiet = self._quiet, None
        if quiet is not None:  # after the frontend's thread has ended: its last lines are in the pipe
            quiet.close()
        self._models = {}
        self._runtime = None
        self._server = None
        self._serving = []

    def _clean_mdc(self) -> None:
        """Remove the model files Dynamo cached for this frontend's models (and nothing else)."""
        root = _mdc_root()
        _remove_slugs(root, [n for n in _listing(root / "by-slug") if n.startswith(self.board.prefix)])
        # Only the folders that held nothing but parsebridge's entries (`_snapshot`), once empty.
        for folder in (root / "blobs", root / "by-slug", root, root.parent):
            if str(folder) not in self._mdc_before and folder.is_dir() and not any(folder.iterdir()):
                with contextlib.suppress(OSError):  # another process wrote in it meanwhile
                    folder.rmdir()

    # ------------------------------------------------------------------ models

    def model_for(self, pair: ParserPair, user: Any = None, folder: ModelFolder | None = None) -> str:
        """The model name serving this parser pair with `folder`'s tokenizer (None: the frontend's
        approximate vocabulary), registered on first use; starts the frontend (`user`, if given, is
        counted among its users: `ServedFrontend.use`)."""
        port = self.ensure() if user is None else self.use(user)
        folder = folder or self.folder
        key = (pair, folder.path)
        reasoning, tool = pair
        name = self._models.get(key)
        if name is not None:
            return name
        with self._register_lock:
            name = self._models.get(key)
            if name is not None:
                return name
            name = f"{self.board.prefix}-m{self._attempts}"
            self._attempts += 1
            try:
                self.run(self._register(name, reasoning, tool, folder), self.register_timeout)
                wait_until(lambda: _listed(port, name), self.register_timeout, f"dynamo model {name}")
            except ServerUnavailableError:
                raise
            except Exception as exc:
                raise ServerUnavailableError(
                    "dynamo", f"registering reasoning={reasoning!r} tool={tool!r} failed: {exc}"
                ) from exc
            self._models[key] = name
            return name

    async def _register(
        self, name: str, reasoning: str | None, tool: str | None, folder: ModelFolder
    ) -> None:
        api = self.api
        assert api is not None
        endpoint = api.endpoint(self._runtime, NAMESPACE, name, "generate")

        async def generate(request: Any, context: Any = None) -> AsyncIterator[dict[str, Any]]:
            async for out in self._generate(request, folder):
                yield out

        self._serving.append(asyncio.ensure_future(endpoint.serve_endpoint(generate)))
        await api.register_model(endpoint, str(folder.path), name, api.runtime_config(reasoning, tool))

    # ------------------------------------------------------------------ the scripted engine

    async def _generate(self, request: Any, folder: ModelFolder) -> AsyncIterator[dict[str, Any]]:
        """The engine: the steps of the script the prompt names; fences on choice 1 when n=2.
        The prompt's ids are read with the model's tokenizer (`folder`) to find the key."""
        prompt = folder.decode(request.get("token_ids") or [])
        script = self.board.take(prompt)
        fenced = (request.get("sampling_options") or {}).get("n") == 2
        if script is None:  # not a request of ours (or already abandoned): end at once
            yield {"token_ids": [], "finish_reason": "stop", "index": 0}
            return
        async for item in script.steps():
            if isinstance(item, str):
                if item == CANCELLED:
                    return
                yield {"token_ids": [], "finish_reason": item, "index": 0}
                if fenced:
                    yield {"token_ids": [], "finish_reason": item, "index": 1}
                return
            yield {"token_ids": item, "index": 0}
            if fenced:
                yield {"token_ids": [], "index": 1}


def _listed(port: int, name: str) -> bool:
    models = get_json(port, "/v1/models", 2.0)
    return any(m.get("id") == name for m in models.get("data", ()))


#: The model folders this module's frontends register: ``dynamo-PID-RANDOM-mN`` (`ScriptBoard.prefix`).
_OURS = re.compile(r"dynamo-(\d+)-[0-9a-f]{6}-m\d+")


def _left_by_dead_process(name: str) -> bool:
    """Whether `name` is a model folder of a parsebridge frontend whose process no longer runs."""
    match = _OURS.fullmatch(name)
    if match is None:
        return False
    pid = int(match.group(1))
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, but another user's
        return False
    return False


def _links(folders: list[Path]) -> set[Path]:
    """The files the symlinks under `folders` point to."""
    out: set[Path] = set()
    for folder in folders:
        with contextlib.suppress(OSError):
            out.update(Path(os.path.realpath(p)) for p in folder.rglob("*") if p.is_symlink())
    return out


def _remove_slugs(root: Path, names: list[str]) -> None:
    """Remove the model folders `names` under ``by-slug`` and the blobs no remaining folder links to."""
    if not names:
        return
    slugs, blobs = root / "by-slug", root / "blobs"
    doomed = [slugs / name for name in names]
    targets = _links(doomed)
    for folder in doomed:
        shutil.rmtree(folder, ignore_errors=True)
    in_use = _links([slugs / name for name in _listing(slugs)])
    for blob in targets - in_use:
        if blob.parent == blobs:
            blob.unlink(missing_ok=True)


def _snapshot(root: Path) -> set[str]:
    """The cache folders that hold something besides parsebridge's entries before the frontend starts:
    `close` leaves them in place. The others are removed once empty, even if they existed: another
    process's frontend (a sibling pool worker) may have made them a moment ago."""
    slugs = _listing(root / "by-slug")
    foreign_slugs = any(_OURS.fullmatch(name) is None for name in slugs)
    foreign_root = foreign_slugs or bool(_listing(root) - {"by-slug", "blobs"})
    foreign_parent = foreign_root or bool(_listing(root.parent) - {root.name})
    kept = [(root / "blobs", foreign_slugs), (root / "by-slug", foreign_slugs)]
    kept += [(root, foreign_root), (root.parent, foreign_parent)]
    return {str(folder) for folder, foreign in kept if foreign}


def _listing(folder: Path) -> set[str]:
    try:
        return {p.name for p in folder.iterdir()}
    except OSError:
        return set()


@process_wide
def frontend() -> DynamoFrontend:
    """This process's frontend object (not started until a parser needs it)."""
    return DynamoFrontend()
