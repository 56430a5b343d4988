"""parsebridge parser objects backed by Dynamo's frontend (see `_frontend`).

A parser object holds configuration only; the frontend is started, and the
parser pair registered on it (with the model folder's tokenizer), the first
time one parses. One-shot: a non-streamed request whose engine steps one
token at a time, as a deployment's does (Dynamo builds its non-streamed
answer from the engine's steps, and its reading depends on them), and the
answer's message is the result. Streamed: one streamed request per stream; each
`feed` is one engine step, and returns what the frontend streamed for that
step (read up to the step's fence: deterministic, see `_served`); `flush`
ends the engine with ``finish_reason="stop"`` in an empty last step and
returns what the frontend sent from then to the end. The parser classes and
the mapping of answers to results are the served-parser base's
(`_served.parsers`); this module gives Dynamo's requests (`DynamoEngine`).

What Dynamo's request carries: the parser's tools (as ``tools``), the
options `tool_choice`, `chat_template_kwargs` and `reasoning_effort` when
given, and the generation prompt (`ServedEngine.prompt`). Dynamo's reasoning
parsers read the rendered prompt: measured on 1.6.1, ``qwen3`` and ``glm45``
read ``Plan.</think>Checking.`` as reasoning ``Plan.`` and content
``Checking.`` after a prompt that ends with ``<think>``, and as content
``Plan.Checking.`` after one that does not or ends with ``<think></think>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...formats import reasoning_format
from ...protocol import BackendError, ParserUnsupportedError, ToolSpec, family_table
from ...protocol.errors import ServerUnavailableError
from ...protocol.tools import openai_tool
from .._served import HttpStatusError, ModelFolder, SseReader, open_sse, post_json
from .._served.answers import StreamRequest, fence_splitter
from .._served.model_folder import prompt_text
from .._served.parsers import (
    Markers,
    ParserPair,
    ServedEngine,
    ServedPipeline,
    ServedReasoningParser,
    ServedToolParser,
)
from .._served.steps import undelivered
from . import REQUEST_OPTIONS
from ._frontend import DynamoFrontend, frontend

PATH = "/v1/chat/completions"
#: Seconds a stream waits for the frontend's answer to one step before it fails (BackendError).
STEP_TIMEOUT = 60.0


def _markers(reasoning: str | None) -> Markers:
    """The reasoning format's markers for a Dynamo reasoning parser name (to locate the block)."""
    if reasoning is None:
        return None, None
    fam = family_table().get("reasoning", reasoning)
    if fam is None:
        return None, None
    try:
        fmt = reasoning_format(fam.name)
    except Exception:  # a family without a reasoning format of its own
        return None, None
    return fmt.start or None, fmt.end or None


class DynamoEngine(ServedEngine):
    """One parser pair on the frontend: the request body, one-shot calls, and new streams."""

    backend = "dynamo"

    def __init__(self, pair: ParserPair, tools: Sequence[ToolSpec] | None, options: dict[str, Any]) -> None:
        super().__init__(pair, tools, options)
        self.fields = {k: options[k] for k in REQUEST_OPTIONS if options.get(k) is not None}
        self._markers = _markers(pair.reasoning)
        self._model: str | None = None
        self._frontend: DynamoFrontend | None = None
        self._stops = -1  # the frontend's `stops` when `_model` was registered on it
        self._split = fence_splitter("dynamo", self.label, fence_has_text=False)

    @property
    def markers(self) -> Markers:
        return self._markers

    def model(self) -> tuple[DynamoFrontend, str]:
        """The frontend (started) and the model name of this pair (registered on first use)."""
        fe, model, _ = self._registered()
        return fe, model

    def _registered(self) -> tuple[DynamoFrontend, str, int]:
        """`model`, and the frontend's `stops` it was registered under. Registered again once the
        frontend stopped since, even where another thread's parse has started it again (it was
        running, so this pair's model, gone with the old one, was asked for: HTTP 404 for good)."""
        fe = frontend()
        model, stops = self._model, self._stops
        if model is None or self._frontend is not fe or not fe.running or stops != fe.stops:
            stops = fe.stops  # read first: a stop during the registration leaves it stale, not wrong
            model = fe.model_for(self.pair, self, self.own_folder)
            self._model, self._frontend, self._stops = model, fe, stops
        return fe, model, stops

    def folder(self) -> ModelFolder:
        return self.own_folder or frontend().folder

    def body(self, model: str, key: str, stream: bool, prompt: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "user", "content": prompt_text(key, prompt)}],
            "stream": stream,
            **self.fields,
        }
        if self.tools:
            body["tools"] = [openai_tool(t) for t in self.tools]  # (its frontend takes only that form)
        if stream:  # choice 1 carries the fences; usage on every chunk keeps empty deltas coming
            body["n"] = 2
            body["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
        return body

    def oneshot(
        self, text: str, prompt: str | None = None, token_ids: Sequence[int] | None = None
    ) -> dict[str, Any]:
        """The frontend's message for `text`, non-streamed, the engine stepping `oneshot_step` tokens."""
        fe, model, stops = self._registered()
        script = fe.board.open()
        try:
            for step in self.steps(text, token_ids):
                script.put(step)
            script.end()
            answer = post_json(fe.ensure(), PATH, self.body(model, script.key, False, prompt))
        except Exception as exc:
            if fe.stops != stops:  # (refused, reset, 503 while stopping, 404 from a restarted one)
                raise _stopped_under_way() from exc
            if isinstance(exc, HttpStatusError):
                raise BackendError("dynamo", self.label, "chat completion", str(exc)) from exc
            raise
        finally:
            script.cancel()
        if not script.finished and fe.stops != stops:
            # The close forgot the script before the engine took it: the engine, still answering
            # what the stopping server had taken, found no script and ended at once (an empty answer).
            raise _stopped_under_way()
        if not script.taken:  # the engine found no script and ended at once: an empty answer
            raise BackendError("dynamo", self.label, "chat completion", undelivered("request"))
        choices = answer.get("choices") or []
        if not choices:
            raise BackendError("dynamo", self.label, "chat completion", f"no choices in {answer!r}")
        return choices[0].get("message") or {}  # type: ignore[no-any-return]

    def stream_request(self, prompt: str | None = None) -> StreamRequest:
        fe, model, stops = self._registered()
        if fe.api is not None and not fe.api.streams:
            raise ParserUnsupportedError(
                "dynamo",
                self.label,
                f"streaming needs ai-dynamo-runtime 1.3 or newer (installed: {fe.api.version}): "
                "older frontends put every engine output on choice 0, so a stream's steps cannot "
                "be told apart; one-shot parsing works",
            )
        script = fe.board.open()
        body = self.body(model, script.key, True, prompt)

        def open() -> SseReader:
            try:
                return open_sse(fe.ensure(), PATH, body, STEP_TIMEOUT)
            except Exception as exc:  # (as `oneshot`: 503 while stopping, 404 from a restarted one)
                if fe.stops != stops:
                    raise _stopped_under_way() from exc
                raise

        return StreamRequest(
            script,
            open,
            self._split,
            backend="dynamo",
            alive=lambda: fe.running,
        )

    def close(self) -> None:
        """Stop the frontend unless another parser uses it (it starts again on the next parse)."""
        fe, self._frontend, self._model = self._frontend, None, None
        if fe is not None:
            fe.release(self)


class DynamoToolParser(ServedToolParser):
    """`dynamo:NAME` tool-call parser: Dynamo's frontend with ``tool_call_parser=NAME``."""

    backend = "dynamo"
    engine_class = DynamoEngine


class DynamoReasoningParser(ServedReasoningParser):
    """`dynamo:NAME` reasoning parser: Dynamo's frontend with ``reasoning_parser=NAME``."""

    backend = "dynamo"
    engine_class = DynamoEngine


class DynamoPipeline(ServedPipeline):
    """Dynamo's own reasoning→tool chain: one frontend model with both parsers."""

    backend = "dynamo"
    engine_class = DynamoEngine


def _stopped_under_way() -> ServerUnavailableError:
    return ServerUnavailableError(
        "dynamo",
        "the frontend stopped while this parse was under way (a parser sharing it was "
        "closed, from another thread); the next parse starts it again",
    )
