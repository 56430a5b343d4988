"""Where a builtin reasoning parser's output starts: inside reasoning or outside it.

Decided once per parse or stream, before any text is read (so a stream never takes
anything back), in this order:

1. the caller's ``reasoning_started=``;
2. a prompt (the ``"markers"`` rule of `parsebridge.protocol.prompt_rule`): open when its last start marker comes after its last end marker (the
   template ended it with ``<think>``), closed when an end marker comes last (a
   template that wrote ``<think></think>`` turned thinking off); a prompt holding
   neither marker says nothing and falls through;
3. the parser's default: ``started=`` when given; else outside reasoning when
   ``chat_template_kwargs`` turns thinking off (``enable_thinking``/``thinking``
   false, the option the frameworks' parsers read, so one config works on every
   backend; a switch that is no boolean is refused when the parser is built, see
   `wrong_thinking_switch`); else inside reasoning under ``conventions="servers"`` for the families
   both servers start there (``servers_started`` in `families.toml`: their parsers
   assume thinking is on unless the request turns it off); else the family's
   `starts_in_prompt` (the chat template opens the block).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....formats import ReasoningFormat
from ....protocol import ReasoningParserBase
from ....protocol.prompt_rule import started_from_prompt
from .conventions import SERVERS, check_conventions, servers_started

__all__ = [
    "FormatReasoningParser",
    "default_start",
    "resolve_started",
    "started_from_prompt",
    "thinking_turned_off",
    "wrong_thinking_switch",
]

#: The chat-template options that switch thinking on or off (`thinking_turned_off`).
THINKING_SWITCHES = ("enable_thinking", "thinking")


def resolve_started(
    reasoning_started: bool | None,
    prompt: str | None,
    default: bool,
    starts: Sequence[str],
    ends: Sequence[str],
) -> bool:
    """The start state: the explicit flag, then what the prompt says, then `default`."""
    if reasoning_started is not None:
        return reasoning_started
    if prompt is not None:
        said = started_from_prompt(prompt, starts, ends)
        if said is not None:
            return said
    return default


def thinking_turned_off(chat_template_kwargs: object) -> bool:
    """Whether chat-template options turn thinking off (``enable_thinking``, or ``thinking``, false).

    Read as a chat template reads them (a non-empty string is truthy: thinking stays on), which is
    what a vLLM server's rendered prompt did; parsebridge's own entry points refuse such a value
    first (`wrong_thinking_switch`)."""
    if not isinstance(chat_template_kwargs, dict):
        return False
    # A switch set to None is unset (`wrong_thinking_switch` takes None too): it must not hide the
    # other, as ``{"thinking": None, "enable_thinking": False}`` did (read as thinking on).
    switches = (chat_template_kwargs.get(key) for key in THINKING_SWITCHES[::-1])
    thinking = next((value for value in switches if value is not None), None)
    return thinking is not None and not thinking


def wrong_thinking_switch(chat_template_kwargs: object) -> tuple[str, object] | None:
    """The first thinking switch (`THINKING_SWITCHES`) in `chat_template_kwargs` that is neither a
    bool nor None, as (key, value); None when all are. ``{"enable_thinking": "no"}`` would leave
    thinking on (the string is truthy), so the callers refuse it, as they refuse
    ``reasoning_started="false"``, rather than guess at spellings a template would not read."""
    if not isinstance(chat_template_kwargs, dict):
        return None
    for key in THINKING_SWITCHES:
        value = chat_template_kwargs.get(key)
        if value is not None and not isinstance(value, bool):
            return key, value
    return None


def default_start(name: str, started: bool | None, template_default: bool, options: dict[str, Any]) -> bool:
    """A parser's default start state (step 3 above); the `conventions` option is checked here."""
    convention = check_conventions(options.get("conventions"))
    if started is not None:
        return started
    if thinking_turned_off(options.get("chat_template_kwargs")):
        return False
    if convention == SERVERS and name in servers_started():
        return True
    return template_default


class FormatReasoningParser(ReasoningParserBase):
    """A builtin reasoning parser described by a `ReasoningFormat` (subclasses set `format` and `name`).

    Holds what every such parser needs before it reads text: its markers and its start state
    (the rule above, from the format's start and end markers).
    """

    backend = "builtin"
    format: ReasoningFormat

    def __init__(self, *, started: bool | None = None, prompt: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.started_by_default = default_start(self.name, started, self.format.starts_in_prompt, options)
        self.prompt = prompt
        self.markers = self.format.markers

    def is_started(self, reasoning_started: bool | None = None, prompt: str | None = None) -> bool:
        """The start state: explicit flag, then a prompt, then the default."""
        prompt = self.prompt if prompt is None else prompt
        return resolve_started(
            reasoning_started, prompt, self.started_by_default, self.format.starts, self.format.ends
        )
