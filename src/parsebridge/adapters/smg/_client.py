"""OpenAI chat requests to an smg gateway: `SmgEngine`, the served-parser engine of ``smg:``.

A one-shot parse is one non-streamed request whose answer is the whole
text. A stream is one streamed request with ``n=2``: the worker sends the
text of each `feed` as one engine step on choice 0, then a tick on choice 1
(`_worker`). The gateway handles its worker's stream in order, so the choice-0
events read before a step's tick are what that step produced
(`_served.read_to_fence`); what comes after the last tick, up to ``[DONE]``,
is the end of the stream. The per-event path builds no pydantic object.
"""

from __future__ import annotations

import http.client
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ...formats import think as _think
from ...protocol import BackendError, ToolSpec
from ...protocol.errors import ServerUnavailableError
from ...protocol.tools import openai_tool
from .._served import HttpStatusError, ModelFolder, SseReader, open_sse, post_json
from .._served.answers import StreamRequest, fence_splitter
from .._served.model_folder import prompt_text
from .._served.parsers import Markers, ParserPair, ServedEngine
from .._served.steps import undelivered
from ._gateway import Gateway, release, runtime
from ._worker import prompt_for

#: Tools sent when a parser has none: smg runs its tool parser only for a request that declares
#: tools; once it does, it reads a call to any tool one-shot (streamed, only to a declared one).
PLACEHOLDER_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "parsebridge_any_tool", "parameters": {"type": "object"}}}
]
PATH = "/v1/chat/completions"
REQUEST_TIMEOUT = 120.0
#: Reasoning markers used to locate the block in the text (smg returns only strings).
THINK_MARKERS: tuple[str, str] = (_think.START, _think.END)
T = TypeVar("T")


def _tools_payload(pair: ParserPair, tools: Sequence[ToolSpec] | None) -> list[Any] | None:
    if pair.tool is None:
        return None
    out = [openai_tool(t) for t in (tools or ()) if t]
    return out or PLACEHOLDER_TOOLS


def _body(key: str, tools: list[Any] | None, stream: bool, prompt: str | None = None) -> dict[str, Any]:
    messages = prompt_for(prompt_text(key, prompt))
    body: dict[str, Any] = {"model": "parsebridge", "messages": messages, "stream": stream}
    if tools is not None:
        body["tools"] = tools
    if stream:
        body["n"] = 2
    return body


def _with_restart(pair: ParserPair, user: Any, send: Callable[[Gateway], T]) -> T:
    """`send(gateway)`; when the gateway died under it, once more on a restarted one. The pool
    keeps the gateway while the request is open (`Runtime.gateway`'s `hold`)."""
    rt = runtime()
    gw = rt.gateway(pair, user, user.own_folder, hold=True)
    try:
        return _sent(gw, send)
    finally:
        rt.done(gw)


def _sent(gw: Gateway, send: Callable[[Gateway], T]) -> T:
    try:
        return send(gw)
    except HttpStatusError as exc:
        raise BackendError("smg", gw.label, "chat", str(exc)) from exc
    except TimeoutError as exc:
        raise hung(gw, "chat completion") from exc
    except (OSError, http.client.HTTPException) as exc:
        if gw.alive():
            raise
        if gw.closed:  # closed under the request (its last parser, from another thread): not died
            raise ServerUnavailableError(
                "smg",
                f"gateway {gw.label} was closed while this parse was under way (its last parser was "
                "closed, from another thread); the next parse starts it again",
            ) from exc
    gw.restart()
    return send(gw)


def hung(gw: Gateway, call: str) -> BackendError:
    """A gateway that did not answer in `REQUEST_TIMEOUT` (hung, or stopped by SIGSTOP) is stopped,
    and the next request starts a new one (once in the gateway's life, as after a death). Before,
    it was kept, and every later request on it waited out the timeout again."""
    gw.server.stop(now=True)
    return BackendError(
        "smg",
        gw.label,
        call,
        f"the gateway did not answer in {REQUEST_TIMEOUT:g} s; it was stopped, and the next request "
        f"starts a new one: {gw.log_tail()}",
    )


class SmgEngine(ServedEngine):
    """One parser pair on its own gateway (`_gateway`), fed by the process's scripted worker.

    The generation prompt reaches the gateway as a request brings it (`ServedEngine.prompt`, in
    the user message the folder's chat template renders as is), and the worker answers with the
    ids the caller gave or the text encoded with the gateway's tokenizer. Measured on 1.13: after a
    rendered prompt that ends with ``<think>``, ``minimax_m2``, ``ling`` and ``dots3`` start inside
    reasoning; ``qwen3``, ``glm45`` and ``kimi_k25`` start outside whatever the prompt ends with
    (sglang issue 35148: the gateway's ``qwen3`` and a prefilled ``<think>``), and ``deepseek_r1``
    inside. So the reading is what smg's gateway gives; conformance shows the difference where a
    transcript's prompt opened the block.
    """

    backend = "smg"

    def __init__(self, pair: ParserPair, tools: Sequence[ToolSpec] | None, options: dict[str, Any]) -> None:
        super().__init__(pair, tools, options)
        self._tools_payload = _tools_payload(pair, tools)
        self._split = fence_splitter("smg", self.label, fence_has_text=True)

    @property
    def markers(self) -> Markers:
        return THINK_MARKERS

    def folder(self) -> ModelFolder:
        return self.own_folder or runtime().folder

    def oneshot(
        self, text: str, prompt: str | None = None, token_ids: Sequence[int] | None = None
    ) -> dict[str, Any]:
        """The gateway's chat message for a non-streamed request whose output is `text` (its ids).

        A non-streamed request's worker sends every output id in its final message (an SGLang
        scheduler does), so the gateway reads them at once, whatever the steps were."""
        board, steps = runtime().worker_for(self.own_folder).board, self.steps(text, token_ids)

        def send(gw: Gateway) -> Any:
            script = board.open()  # a fresh one per try: a request that reached the worker used it up
            for step in steps:
                script.put(step)
            script.end()
            try:
                body = _body(script.key, self._tools_payload, False, prompt)
                answer = post_json(gw.port, PATH, body, REQUEST_TIMEOUT)
            finally:
                script.cancel()
            if not script.taken:  # the worker answered it as a readiness probe ("ok")
                raise BackendError("smg", gw.label, "chat completion", undelivered("request"))
            return answer

        return _with_restart(self.pair, self, send)["choices"][0]["message"]  # type: ignore[no-any-return]

    def stream_request(self, prompt: str | None = None) -> StreamRequest:
        rt = runtime()
        script = rt.worker_for(self.own_folder).board.open()
        body = _body(script.key, self._tools_payload, True, prompt)

        opened: list[Gateway] = []  # the gateway the response came from, for `alive`

        def open() -> SseReader:
            gw = rt.gateway(self.pair, self, self.own_folder, hold=True)
            opened.append(gw)
            try:
                return open_sse(gw.port, PATH, body, REQUEST_TIMEOUT)
            except HttpStatusError as exc:
                raise BackendError("smg", gw.label, "chat", str(exc)) from exc
            except TimeoutError as exc:
                raise hung(gw, "stream") from exc

        def alive() -> bool:
            return all(gw.alive() for gw in opened)

        def closed() -> None:
            for gw in opened:
                rt.done(gw)

        def stuck() -> None:
            for gw in opened:
                hung(gw, "stream")

        return StreamRequest(
            script,
            open,
            self._split,
            backend="smg",
            alive=alive,
            on_close=closed,
            on_hang=stuck,
            skip_empty=True,
            ends_early=True,
        )

    def close(self) -> None:
        """Stop this pair's gateway unless another parser uses it (and the worker with the last one)."""
        release(self.pair, self, self.own_folder)
