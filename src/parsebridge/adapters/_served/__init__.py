"""Shared machinery for a framework whose parsers run only inside its own server.

Some frameworks expose no parse function: their parsers live in the HTTP
server's response path (Dynamo's Rust frontend, smg's gateway). parsebridge
reaches them the way a client does: it starts the server once per process on
a free 127.0.0.1 port, plays the model itself through a *scripted engine*
(each engine step yields the token ids of one stream chunk), and reads the
server's OpenAI chat completion, one-shot or streamed. Nothing here imports a
framework.

The pieces, each usable alone:

* `model_folder` (`ModelFolder`) — a tokenizer model folder the server can
  load (``tokenizer.json``, ``tokenizer_config.json``, ``config.json``): one
  token per byte, plus the given marker strings as single added tokens, so an
  engine step carries exactly the text of one chunk and a marker that arrives
  whole is one token, as with a real vocabulary. Built once per marker set and
  cached under ``$PARSEBRIDGE_CACHE/served`` (see `_tokenizers.cache_root`).
  `ModelFolder.encode` gives a chunk's token ids; `ModelFolder.decode` reads a
  prompt's ids back (the scripted engine finds its script by the prompt).
* `ScriptBoard` / `Script` (`steps`) — the scripted-engine step plan: a
  request's prompt is a key; the engine side (`ScriptBoard.take`) gets the
  script for that key and takes its steps, in an event loop (Dynamo) or a
  thread (smg's gRPC worker), which the caller's thread puts (`Script.put`, `Script.end`) one per stream
  chunk — the conformance chunkings become engine steps. A one-shot parse puts
  every step before it sends the request.
* `SseReader`, `post_json`, `open_sse`, `get_json` (`http`) — a stdlib HTTP
  client for the server: a JSON request, or a streamed response read one
  server-sent event at a time.
* `read_to_fence` (`http`) — feed-to-delta attribution: after each step the
  engine emits a *fence* the server passes through untouched (Dynamo: an
  empty step on a second choice, ``n=2``), and the events read up to it are
  exactly what that step produced, however many (none, when the server holds
  text back). Deterministic, with no timing involved.
* `ServedFrontend` (`frontend`) — a server in a thread of this process: one
  per process, started on first use (`ensure`), a `lifecycle.Server` with a
  `ThreadLauncher`: a readiness wait bounded by `start_timeout`; a failed
  start is retried once on a new port, then raises `ServerUnavailableError`
  saying why; `close` (also at exit, through `lifecycle.owners`) stops the
  server, joins the thread and removes what the start wrote
  (`cleanup_paths`). A forked child never uses its parent's server: it starts
  its own (or the subclass refuses with the typed error, `fork_policy`). A
  server run as a subprocess (smg's gateways) is a `lifecycle.Server` with a
  `SubprocessLauncher` directly.
* `ParserPair`, `ServedEngine` and the served parser classes (`parsers`) — the
  served-parser base: a backend gives one `ServedEngine` (its one-shot request
  and its streamed request for a (reasoning, tool) pair), and the base maps
  the server's answers to parsebridge results, one-shot and streamed.
* `StreamRequest`, `fence_splitter`, `message_calls`, `delta_of` (`answers`) — a
  server's OpenAI answers read as parsebridge's objects, and the streamed request
  whose steps are fenced (`read_to_fence`).

A second in-process server backend plugs in by subclassing `ServedFrontend` —
`backend` (its parsebridge name), `_start(port)` (a coroutine run on the
frontend's loop that starts the server and returns once it listens), `_stop()`,
`_is_ready()` — and by giving a `ServedEngine` around `ScriptBoard`,
`model_folder`, `open_sse` in its adapter package (`adapters/dynamo` is the
first; `adapters/smg` is the subprocess one). This API is kept stable.
"""

from __future__ import annotations

from ...lifecycle import free_port, wait_until
from .frontend import ServedFrontend
from .http import HttpStatusError, SseReader, get_json, open_sse, post_json, read_to_fence
from .model_folder import ModelFolder, model_folder
from .steps import Script, ScriptBoard

__all__ = [
    "HttpStatusError",
    "ModelFolder",
    "Script",
    "ScriptBoard",
    "ServedFrontend",
    "SseReader",
    "free_port",
    "get_json",
    "model_folder",
    "open_sse",
    "post_json",
    "read_to_fence",
    "wait_until",
]
