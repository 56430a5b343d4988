"""What a request's prompt and ``reasoning_started=`` mean on each backend: the rule, written once.

A reasoning parser's output starts inside reasoning or outside it. Each backend
decides it the way its framework's server does, so a prompt never moves a reading
away from what that server gives (docs/python-api.md "Where reasoning starts", docs/serving.md):

* ``builtin`` (rule ``"markers"``): the prompt's text decides when it holds a
  reasoning marker: open when its last start marker comes after its last end
  marker, closed when an end marker comes last; a prompt with neither says
  nothing (the parser's default applies). Token ids are decoded first.
* ``vllm`` (rule ``"token_ids"``): the prompt's token ids go to vLLM's reasoning
  parser, as vLLM's server passes them (``is_reasoning_end`` on the prompt before
  a stream, ``set_prompt_token_ids`` before a one-shot parse); text is encoded
  with the parser's tokenizer. The parser decides; a plain chat prompt closes
  nothing.
* ``sglang`` (rule ``"ignored"``): SGLang's server derives ``force_reasoning`` from
  the chat template and the request's ``chat_template_kwargs`` (and
  ``reasoning_effort``), never from the prompt. The prompt is accepted and
  changes nothing.
* ``dynamo`` and ``smg`` (rule ``"rendered"``): their servers render the prompt
  themselves and their parsers look at the rendered text (Dynamo's ``qwen3`` and
  ``glm45`` start inside reasoning when it ends with an open ``<think>``, and
  outside when it does not or ends with ``<think></think>``). The prompt's text
  (token ids read with the parser's tokenizer) reaches their server as the
  rendered prompt of the request, and their parsers decide (smg 1.13's
  ``minimax_m2`` reads it; its ``qwen3`` starts outside reasoning whatever it says).
* any other backend (``python:`` parsers of your own): its `parse`/`stream` get
  the prompt when they take the keyword; when they do not, the prompt is refused
  with `UnsupportedOptionError` before any text is read.

Where reasoning ends is the servers' second difference. SGLang's server hands
every chunk of the output to its reasoning detector, also after reasoning ended
(the detector reopens reasoning at a later start marker and drops the answer's
closing tags), and the detector's content goes on to the tool parser; vLLM's
server stops asking the reasoning parser once it says reasoning ended and hands
the rest, as the model wrote it, to the tool parser or to the client. So a
``sglang:`` parser served inside vLLM (the plugin) keeps the whole output when no
tool parser follows it (`reads_whole_output`); with a tool parser, vLLM's
hand-off stands (the one place the two servers' readings cannot be made equal).

``reasoning_started=True/False`` (it always wins over a prompt) stands for what a
chat template does: builtin takes it as the start state; vLLM, Dynamo and smg get a prompt that
ends with the start marker (True) or with the start and end markers (False, a
template that wrote ``<think></think>``); SGLang gets it as ``force_reasoning``.
``False`` asks for output that starts outside reasoning: where the framework's
parser does not read it so (it starts inside reasoning whatever its server is
told, e.g. vLLM's and SGLang's DeepSeek-R1), it is refused with
`UnsupportedOptionError`, checked once per parser configuration on a probe text
without markers, one-shot and streamed; never parsed against the caller's wish.
``True`` gives the reading that framework's server gives after a template that
opened reasoning (a parser that starts outside reasoning whatever the prompt
says keeps doing so there, as in its server).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal

from .errors import UnsupportedOptionError

log = logging.getLogger("parsebridge")

PromptRule = Literal["markers", "token_ids", "ignored", "rendered", "parser"]

#: The rule per backend (see above); a backend not listed: ``"parser"``, its own signature decides.
PROMPT_RULES: dict[str, PromptRule] = {
    "builtin": "markers",
    "vllm": "token_ids",
    "sglang": "ignored",
    "dynamo": "rendered",
    "smg": "rendered",
}

#: Backends whose server reads the whole output through the reasoning parser (see above).
READS_WHOLE_OUTPUT = frozenset({"sglang"})

#: The per-request options that carry the prompt.
PROMPT_OPTIONS = ("prompt", "prompt_token_ids")

#: Text with no reasoning marker of any family: whether a start state is honoured is read on it.
PROBE_TEXT = "Sure."


def started_from_prompt(prompt: str, starts: Sequence[str], ends: Sequence[str]) -> bool | None:
    """The ``"markers"`` reading: whether a prompt leaves the model inside an open reasoning block
    (its last start marker after its last end marker); None when it holds neither."""
    opened = max(prompt.rfind(s) for s in starts)
    closed = max(prompt.rfind(e) for e in ends)
    if opened == closed == -1:
        return None
    return opened > closed


def prompt_rule(backend: str | None) -> PromptRule:
    """How `backend` reads a request's prompt (see the module docstring)."""
    return PROMPT_RULES.get(backend or "", "parser")


def reads_whole_output(backend: str | None) -> bool:
    """Whether `backend`'s server hands the whole output to its reasoning parser, also after reasoning
    ended (SGLang), rather than only until the parser says it ended (vLLM)."""
    return (backend or "") in READS_WHOLE_OUTPUT


def prompt_start_state(backend: str | None, prompt: str, start: str, end: str) -> bool | None:
    """What a decoded prompt says about the start state under `backend`'s rule (None: nothing).

    For the ``"markers"`` rule (and parsers of your own read by the processor or a
    plugin) the prompt's last marker decides; a backend whose server ignores the
    prompt says nothing; vLLM's parsers read token ids themselves, and Dynamo's and
    smg's the rendered prompt (None here).
    """
    rule = prompt_rule(backend)
    if rule in ("ignored", "token_ids", "rendered") or not start or not end:
        return None
    return started_from_prompt(prompt, (start,), (end,))


@functools.lru_cache(maxsize=256)
def _takes(fn: Callable[..., Any], name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def takes_option(fn: Callable[..., Any], name: str) -> bool:
    """Whether callable `fn` takes keyword `name` (or any keyword)."""
    target = getattr(fn, "__func__", fn)
    try:
        return _takes(target, name)
    except TypeError:  # unhashable callable
        return _takes.__wrapped__(target, name)


def check_prompt_options(spec: str, fn: Callable[..., Any], options: dict[str, Any]) -> None:
    """Refuse, before parsing, a prompt option that `fn` (a parser's parse or stream) does not take."""
    for name in PROMPT_OPTIONS:
        if options.get(name) is not None and not takes_option(fn, name):
            other = next(o for o in PROMPT_OPTIONS if o != name)
            why = (
                f"its parse/stream take the prompt as {other}= only"
                + (" (decode the ids with the model's tokenizer)" if other == "prompt" else "")
                if takes_option(fn, other)
                else "its parse/stream take no prompt (pass reasoning_started=)"
            )
            raise UnsupportedOptionError(spec, name, _short(options[name]), why)


def _says_nothing(parser: Any, prompt: str) -> bool:
    """Whether a prompt holds neither of the parser's reasoning markers (the ``"markers"`` reading)."""
    markers = (*(getattr(parser, "markers", ()) or ()), "", "")
    return (
        started_from_prompt(prompt, (markers[0] or "",), (markers[1] or "",)) is None if markers[0] else True
    )


def start_options(
    parser: Any,
    reasoning_started: bool | None,
    default: bool | None,
    prompt: str | None = None,
    prompt_token_ids: Sequence[int] | None = None,
) -> tuple[bool | None, dict[str, Any]]:
    """(start state, prompt options for `parser`'s parse/stream) for one request, by the rule above.

    The request's flag wins. A prompt goes to the parser when its backend's server
    reads one and the parser's parse and stream take it (vLLM: text or token ids;
    builtin: text, token ids decoded with the parser's tokenizer); SGLang's server
    never reads the prompt, so it is dropped; a parser of your own that takes no
    prompt gets the ``"markers"`` reading of it here. `default` (a processor's or
    plugin's own start state) applies when the request says nothing. `parser`: a
    parser or a guard around one (its `inner`). Used by `OutputProcessor` and by
    the plugin classes, so both read a prompt the same way.
    """
    if reasoning_started is not None:
        return reasoning_started, {}
    if parser is None or (prompt is None and prompt_token_ids is None):
        return default, {}
    inner = getattr(parser, "inner", parser)
    if prompt_rule(getattr(inner, "backend", None)) == "ignored":
        return default, {}
    given: dict[str, Any] = {}
    if prompt is not None:
        given["prompt"] = prompt
    if prompt_token_ids is not None:
        given["prompt_token_ids"] = list(prompt_token_ids)
    taken = {k: v for k, v in given.items() if takes_option(inner.parse, k) and takes_option(inner.stream, k)}
    if taken:
        if default is not None and prompt is not None and _says_nothing(inner, prompt):
            return (
                default,
                {},
            )  # the request's own state (thinking turned off) stands where the prompt is silent
        return None, taken
    text = prompt if prompt is not None else _decoded(inner, prompt_token_ids)
    if text is None:
        return default, {}
    if takes_option(inner.parse, "prompt") and takes_option(inner.stream, "prompt"):
        return None, {"prompt": text}
    markers = (*(getattr(inner, "markers", ()) or ()), "", "")
    said = prompt_start_state("builtin", text, markers[0] or "", markers[1] or "")
    return (default if said is None else said), {}


def _decoded(parser: Any, ids: Sequence[int] | None) -> str | None:
    """Prompt ids as text, with the parser's tokenizer (None: it has none, or cannot decode them).

    A tokenizer that cannot decode them leaves the request read as if it gave no prompt, which
    is said (a warning on the ``parsebridge`` logger, per request, as the failure policy says a
    fallback), as a run over records says it of a record's ids (`conformance.record_use`).
    """
    decode = getattr(getattr(parser, "tokenizer", None), "decode", None)
    if ids is None or not callable(decode):
        return None
    try:
        return str(decode(list(ids)))
    except Exception as exc:
        spec = f"{getattr(parser, 'backend', 'python')}:{getattr(parser, 'name', type(parser).__name__)}"
        log.warning(
            "prompt_token_ids not read: %s's tokenizer cannot decode them (%s: %s); "
            "the request is read as if it gave no prompt",
            spec,
            type(exc).__name__,
            exc,
        )
        return None


def refuse_started(spec: str, value: bool, framework: str) -> UnsupportedOptionError:
    """The error for a start state the framework's parser does not honour."""
    where = "inside" if not value else "outside"
    return UnsupportedOptionError(
        spec,
        "reasoning_started",
        value,
        f"{framework}'s parser starts {where} reasoning on a probe text without markers even when "
        f"its server is told {'the prompt opened' if value else 'the prompt closed'} reasoning",
    )


def honoured(value: bool, reasoning: str | None, content: str | None) -> bool:
    """Whether a reading of `PROBE_TEXT` matches the start state asked for."""
    return bool(reasoning) == value and bool(content) != value


def flag_prompt(value: bool, start: str | None, end: str | None) -> str | None:
    """The prompt tail a chat template writes for a start state (None: the markers cannot say it)."""
    if value:
        return start or None
    if start and end:
        return start + end
    return end or None


def _short(value: object) -> object:
    if isinstance(value, str) and len(value) > 40:
        return value[:37] + "..."
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) > 8:
        return f"[{len(value)} token ids]"
    return value
