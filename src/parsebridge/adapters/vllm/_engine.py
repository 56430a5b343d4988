"""`VllmEngine`: what it takes to open vLLM sessions for one (reasoning, tool) parser pair.

The parser classes, the tokenizer, the request object and the prompt ids
are resolved here once per parser object; every one-shot parse and every
stream then gets a fresh session (`_driver`), as vLLM's server builds its
parsers per request.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any, TypeVar

from ...protocol import BackendError, ParserUnsupportedError, TokenizerUnavailable, ToolSpec
from ...protocol.errors import token_id_list
from ...protocol.prompt_rule import PROBE_TEXT, flag_prompt, honoured, refuse_started
from ...protocol.tokenizer_ref import TokenizerRef
from .. import _tokenizers
from .._stepped import EndOfStream, call_framework, check_end_of_stream
from . import _detok, _mistral, _tokenizer
from ._compat import VllmApi, get_api
from ._driver import NativeSession, RawResult, ServingLoopSession
from ._served_tokenizer import resolve_tokenizer
from ._translate import reasoning_markers

T = TypeVar("T")


def _wrap(spec_name: str, call: str, fn: Callable[[], T]) -> T:
    """Run a vLLM call; anything it raises becomes a `BackendError` with the original as cause."""
    return call_framework("vllm", spec_name, call, fn)


def _user_tokenizer(tokenizer: Any) -> Any:
    """The caller's ``tokenizer=`` loaded now, so what cannot be had is theirs (`TokenizerUnavailable`),
    not vLLM's failure; a ``mistral-common`` reference stays a name: vLLM's own Mistral tokenizer
    is built of it (`resolve_tokenizer`)."""
    if tokenizer is None:
        return None
    named = _tokenizers.reference_of(tokenizer)
    if isinstance(named, TokenizerRef) and named.pypi == "mistral-common":
        problem = _tokenizers.vocabulary_problem(named)  # a Tekken file vLLM's is not built over
        if problem:
            raise TokenizerUnavailable(problem)
        return named
    return _tokenizers.load_user_tokenizer(named)


#: The one-shot extraction method of each kind, newest name first.
_EXTRACT_METHODS = {
    "tool": ("extract_tool_calls",),
    "reasoning": ("extract_reasoning", "extract_reasoning_content"),
}


def refuse_stub(kind: str, name: str | None, cls: type | None) -> None:
    """`ParserUnsupportedError` for a vLLM harmony capability stub, with vLLM's own reason.

    vLLM 0.33 registers `openai` / `openai_gptoss` (gpt-oss) as stubs whose
    extraction methods only raise NotImplementedError pointing at
    `HarmonyParser`: its server parses harmony output with that, on the
    token ids of the harmony encoding, never through these classes. Only a
    method the class defines itself, raising nothing but NotImplementedError
    with a message naming HarmonyParser, counts (an inherited abstract
    default, as in parsers vLLM drives another way, does not).
    """
    if cls is None or name is None:
        return
    for method in _EXTRACT_METHODS[kind]:
        own = next((vars(c)[method] for c in cls.__mro__ if method in vars(c)), None)
        code = getattr(own, "__code__", None)
        if code is None:
            continue
        said = next((c for c in code.co_consts if isinstance(c, str) and "HarmonyParser" in c), None)
        defined_here = method in vars(cls)
        if defined_here and said and set(code.co_names) == {"NotImplementedError"}:
            raise ParserUnsupportedError(
                "vllm",
                name,
                f"vLLM's {cls.__name__} is a stub whose {method} only raises NotImplementedError "
                f"({said.strip()!r}); vLLM's server parses this format with HarmonyParser on the "
                "model's token ids instead",
            )
        return


class VllmEngine:
    """Everything needed to open vLLM sessions for one (reasoning, tool) parser pair."""

    def __init__(
        self,
        tool_name: str | None,
        reasoning_name: str | None,
        *,
        tools: Sequence[ToolSpec] | None = None,
        tokenizer: Any = None,
        tool_choice: Any = "auto",
        chat_template_kwargs: dict[str, Any] | None = None,
        request_fields: dict[str, Any] | None = None,
        end_of_stream: EndOfStream = "last_chunk",
        native: bool | None = None,
    ) -> None:
        check_end_of_stream(end_of_stream)
        self.api: VllmApi = get_api()
        self.tool_name = tool_name
        self.reasoning_name = reasoning_name
        self.label = "+".join(n for n in (reasoning_name, tool_name) if n)
        self.tools = list(tools or [])
        self.tool_choice = tool_choice
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.request_fields = dict(request_fields or {})
        self.end_of_stream: EndOfStream = end_of_stream
        self.native = (
            self.api.has_parser_driver if native is None else (native and self.api.has_parser_driver)
        )
        self.tool_cls = self._registered("tool", tool_name)
        self.reasoning_cls = self._registered("reasoning", reasoning_name)
        refuse_stub("tool", tool_name, self.tool_cls)
        refuse_stub("reasoning", reasoning_name, self.reasoning_cls)
        tokenizer = _user_tokenizer(tokenizer)
        self.tokenizer = _wrap(
            self.label, "tokenizer", lambda: resolve_tokenizer(tokenizer, tool_name or reasoning_name or "")
        )
        self._parser_cls: type | None = None
        self._request: Any = None
        self._started_prompts: dict[bool, list[int]] = {}
        self._honours: dict[bool, bool] = {}
        self._encoder: Callable[[str], list[int]] | None = None
        self._id_limit: int | None = -1  # -1: not asked yet (`id_limit`)
        self._markers: tuple[str | None, str | None] | None = None
        self._settings: tuple[bool, bool] | None = None
        self._lock = threading.Lock()
        self._construct_once(users_tokenizer=tokenizer is not None)

    def _registered(self, kind: str, name: str | None) -> type | None:
        """vLLM's registered parser class of `kind` named `name` (None for no name)."""
        if not name:
            return None
        lookup = self.api.tool_parser_class if kind == "tool" else self.api.reasoning_parser_class
        return _wrap(self.label, f"get_{kind}_parser", lambda: lookup(name))

    def _construct_once(self, users_tokenizer: bool) -> None:
        """Build a session now: a parser that cannot be built fails at creation, typed."""
        try:
            self.session([])
        except BackendError as exc:
            # Some releases' Mistral parsers accept only vLLM's MistralTokenizer;
            # the default then becomes one (see `_mistral`). A user's tokenizer is never swapped.
            if users_tokenizer or "MistralTokenizer" not in str(exc):
                raise
            self.tokenizer = _wrap(self.label, "tokenizer", lambda: _mistral.build_mistral_tokenizer())
            self._parser_cls = None
            self.session([])

    # ------------------------------------------------------------------ sessions

    def request(self) -> Any:
        """A request object per session, as the server has one per request.

        Validating a ChatCompletionRequest costs about as much as parsing a
        short output (benchmarks/overhead.py), so it is validated once per
        engine and shared by every session, as a server shares one request
        between its choices: parsing only reads the request (`adjust_request`,
        which writes, runs before generation and parsebridge never calls it).
        """
        if self._request is None:
            self._request = self.api.make_request(
                self.tools or None, self.tool_choice, self.chat_template_kwargs, **self.request_fields
            )
        return self._request

    def _native_cls(self) -> type:
        with self._lock:
            if self._parser_cls is None:
                from vllm.parser import ParserManager

                cls = ParserManager.get_parser(
                    tool_parser_name=self.tool_name,
                    reasoning_parser_name=self.reasoning_name,
                    enable_auto_tools=True,
                    tokenizer=self.tokenizer,
                )
                if cls is None:
                    raise RuntimeError("vLLM's ParserManager composed no parser")
                self._parser_cls = cls
            return self._parser_cls

    def _new_session(self, prompt_token_ids: list[int]) -> NativeSession | ServingLoopSession:
        request = self._request or self.request()
        if self.native:
            return NativeSession(
                self.api,
                self._parser_cls or self._native_cls(),
                self.tokenizer,
                request,
                prompt_token_ids,
                self.chat_template_kwargs,
            )
        return ServingLoopSession(
            self.api,
            self.tool_cls,
            self.reasoning_cls,
            self.tokenizer,
            request,
            prompt_token_ids,
            self.chat_template_kwargs,
        )

    def session(self, prompt_token_ids: list[int]) -> NativeSession | ServingLoopSession:
        return _wrap(self.label, "construct", lambda: self._new_session(prompt_token_ids))

    # ------------------------------------------------------------------ prompt / tokens

    def markers(self) -> tuple[str | None, str | None]:
        if self._markers is None:
            if self.reasoning_cls is None:
                self._markers = (None, None)
            else:
                try:
                    parser = self.api.new_reasoning_parser(
                        self.reasoning_cls, self.tokenizer, self.chat_template_kwargs
                    )
                    self._markers = reasoning_markers(parser)
                except Exception:
                    self._markers = (None, None)
        return self._markers

    def prompt_ids(
        self,
        reasoning_started: bool | None,
        prompt: str | None = None,
        prompt_token_ids: Sequence[int] | None = None,
    ) -> list[int]:
        """The prompt the server would pass (the rule: `adapters.prompt_rule`).

        `reasoning_started` wins: True stands for a chat template that ends the
        prompt with the start marker, False for one that wrote the start and end
        markers, each refused (`UnsupportedOptionError`) when vLLM's parser does
        not read that prompt so. Otherwise the given ids, the given text encoded,
        or no prompt (the parser's own default).
        """
        if reasoning_started is not None:
            self.check_started(reasoning_started)
            cached = self._started_prompts.get(reasoning_started)
            if cached is None:
                cached = self._started_prompts[reasoning_started] = self._flag_ids(reasoning_started)
            return list(cached)  # encoded once per engine; each session its own list
        if prompt_token_ids is not None:
            return token_id_list(prompt_token_ids, "prompt_token_ids", self.id_limit())
        if prompt is not None:
            return self.encode(prompt)
        return []

    def _flag_ids(self, value: bool) -> list[int]:
        tail = flag_prompt(value, *self.markers())
        return self.encode(tail) if tail else []

    def check_started(self, value: bool) -> None:
        """Refuse a start state this configuration's parser does not honour (probed once, typed)."""
        if value:
            return  # True stands for the template's start; the server's reading stands (prompt_rule)
        ok = self._honours.get(value)
        if ok is None:
            ok = self._honours[value] = self._probe_started(value)
        if not ok:
            raise refuse_started(f"vllm:{self.label}", value, "vLLM")

    def _probe_started(self, value: bool) -> bool:
        """Whether the flag's prompt gives the reading asked for on `PROBE_TEXT`, one-shot and streamed."""
        ids = self._flag_ids(value)
        raw = self.oneshot(PROBE_TEXT, list(ids), "probe")
        session = self._new_session(list(ids))
        field = self.api.delta_reasoning_field
        parts = [session.step(PROBE_TEXT, self.encode(PROBE_TEXT), False), session.step("", [], True)]
        streamed = SimpleNamespace(
            reasoning="".join(getattr(d, field, None) or "" for d in parts if d is not None),
            content="".join(d.content or "" for d in parts if d is not None),
        )
        return honoured(value, raw.reasoning, raw.content) and honoured(
            value, streamed.reasoning, streamed.content
        )

    def _make_encoder(self) -> Callable[[str], list[int]]:
        """text → ids with this engine's tokenizer, chosen once (the Mistral test imports vLLM modules)."""
        tokenizer = self.tokenizer
        if _mistral.is_mistral(tokenizer):
            self._encoder = functools.partial(_mistral.encode, tokenizer)
        else:
            self._encoder = functools.partial(_tokenizer.encode_ids, tokenizer)
        return self._encoder

    def id_limit(self) -> int | None:
        """The tokenizer's vocabulary size (added tokens included), which the caller's ids are checked
        against (`token_id_list`); None when the tokenizer does not say. Asked once."""
        if self._id_limit == -1:
            try:
                self._id_limit = len(self.tokenizer)
            except Exception:  # a tokenizer without a length: ids are still checked for sign and type
                self._id_limit = None
        return self._id_limit

    def encode(self, text: str) -> list[int]:
        """Token ids for text the caller gave without ids (typed error if the tokenizer refuses it,
        e.g. lone surrogates, which no engine could have produced)."""
        try:
            return (self._encoder or self._make_encoder())(text)
        except Exception as exc:
            raise BackendError.wrapping("vllm", self.label, "tokenize", exc) from exc

    def chunks(self, text: str, per: int = 1) -> list[_tokenizer.TokenChunk]:
        """`text` as the engine would stream it with this tokenizer, `per` tokens a chunk."""
        if _mistral.is_mistral(self.tokenizer):
            return _mistral.chunks(self.tokenizer, text, per)
        return _tokenizer.token_chunks(self.tokenizer, text, per)

    def token_pieces(
        self, text: str, token_ids: Sequence[int] | None = None, prompt_ids: Sequence[int] = ()
    ) -> list[_tokenizer.TokenChunk]:
        """One chunk per token: the id, and the text vLLM's server streams for it (its own incremental
        detokenizer under the request settings its parsers leave, `_detok`). Ids: `token_ids` when
        the caller has the model's own, else `text` encoded with this engine's tokenizer."""
        ids = (
            token_id_list(token_ids, "token_pieces", self.id_limit())
            if token_ids is not None
            else self.encode(text)
        )
        if self._settings is None:
            self._settings = _detok.request_settings(self)
        try:
            texts = _detok.token_texts(self.tokenizer, ids, self._settings, prompt_ids)
            if token_ids is not None and "".join(texts) != text:
                # A model's recorded ids often end with the stop token its text leaves out: the
                # server read them so (`token_texts`), and that reading gives the recorded text.
                ended = _detok.token_texts(self.tokenizer, ids, self._settings, prompt_ids, True)
                texts = ended if "".join(ended) == text else texts
        except Exception as exc:
            raise BackendError.wrapping("vllm", self.label, "detokenize", exc) from exc
        return [_tokenizer.TokenChunk(t, (i,)) for t, i in zip(texts, ids, strict=True)]

    def special_ids(self) -> set[int]:
        return _detok.special_ids(self.tokenizer)

    # ------------------------------------------------------------------ one-shot

    def oneshot(self, text: str, prompt_ids: list[int], call: str) -> RawResult:
        # No closures: a one-shot parse is what a server pays per request.
        stage = "construct"
        try:
            session = self._new_session(prompt_ids)
            ids = self.encode(text)  # its own typed error ("tokenize")
            stage = call
            return session.oneshot(text, ids)
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError.wrapping("vllm", self.label, stage, exc) from exc
