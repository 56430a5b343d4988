"""The plugins' names and settings: the ``pb:`` prefix and the ``PARSEBRIDGE_PLUGIN_*`` variables.

What each variable means is in `parsebridge.plugins`; here are their names,
their defaults and how they are read (at registration, from the environment).
"""

from __future__ import annotations

import logging
import os
from typing import Literal

from ..policy.guard import ON_ERROR_CHOICES, OnError
from ..protocol import InvalidSpecError

Kind = Literal["tool", "reasoning"]

_log = logging.getLogger("parsebridge")

PREFIX = "pb:"
ENV_BACKENDS = "PARSEBRIDGE_PLUGIN_BACKENDS"
ENV_PARSERS = "PARSEBRIDGE_PLUGIN_PARSERS"
ENV_ON_ERROR = "PARSEBRIDGE_PLUGIN_ON_ERROR"

#: Which framework each plugin serves from the other one.
OTHER_FRAMEWORK = {"vllm": "sglang", "sglang": "vllm"}


#: What each plugin enumerates when ``PARSEBRIDGE_PLUGIN_BACKENDS`` is not set: SGLang loads its
#: entry point in every server process of every install, so it gets builtin only (vLLM's import
#: costs seconds); vLLM loads its plugin only when asked to, and gets SGLang's parsers too.
DEFAULT_BACKENDS: dict[str, tuple[str, ...]] = {"vllm": ("builtin", "sglang"), "sglang": ("builtin",)}


class PluginConfigError(InvalidSpecError):
    """A ``PARSEBRIDGE_PLUGIN_*`` setting a plugin cannot use; the message names the variable and entry."""

    def __init__(self, variable: str, entry: str, reason: str) -> None:
        self.variable, self.entry, self.reason = variable, entry, reason
        super().__init__(f"{variable}: entry {entry!r}: {reason}")


def default_backends(framework: str) -> list[str]:
    """Backends whose parsers a plugin for `framework` enumerates (see ``PARSEBRIDGE_PLUGIN_BACKENDS``)."""
    raw = os.environ.get(ENV_BACKENDS, "")
    if raw.strip():
        return [b.strip().lower() for b in raw.split(",") if b.strip()]
    return list(DEFAULT_BACKENDS[framework])


def parse_env_parsers(text: str | None = None) -> list[tuple[str | None, str]]:
    """``PARSEBRIDGE_PLUGIN_PARSERS`` as (name or None, spec) pairs."""
    raw = os.environ.get(ENV_PARSERS, "") if text is None else text
    out: list[tuple[str | None, str]] = []
    for entry in raw.split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, spec = entry.partition("=")
        out.append((name.strip(), spec.strip()) if sep else (None, entry))
    return out


def on_error_policy() -> OnError:
    """``PARSEBRIDGE_PLUGIN_ON_ERROR`` (default fallback); `PluginConfigError` for another value
    (`registrations` reads it, so a typo stops the server's start, not each request)."""
    value = os.environ.get(ENV_ON_ERROR, "fallback").strip().lower()
    if value not in ON_ERROR_CHOICES:
        choices = " or ".join(map(repr, ON_ERROR_CHOICES))
        raise PluginConfigError(ENV_ON_ERROR, value, f"the failure policy is {choices}")
    return value  # type: ignore[return-value]


#: How the plugins' docstrings name each framework.
FRAMEWORK_LABELS = {"vllm": "vLLM", "sglang": "SGLang"}
