"""Blanking secrets (the API key, the password of a URL's ``user:password@``) out of what is shown.

A server may echo a request's headers back (in an error message, in content, in arguments), and
the probe shows what the server sent: in the table, in `--json`, in a `--save` file and in error
messages. A secret can reach those in more forms than the one it was sent in: escaped by JSON
(a quote, a backslash, a non-ASCII character), quoted by `repr` (a failure's detail quotes what
came that way), percent-encoded as a URL writes it, or inside a Basic credential. `Redactor`
knows every form; `redact_data` blanks a structure's strings before it is serialised, so no
escaping applied afterwards can hide a secret from it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

#: What a secret is replaced with.
BLANK = "***"


def _forms(secret: str) -> set[str]:
    """Each way `secret` can be written in what the probe shows."""
    forms = {
        secret,
        json.dumps(secret)[1:-1],  # JSON with \\uXXXX escapes (json.dumps' default)
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],  # a detail's !r quote
        ascii(secret)[1:-1],
        quote(secret, safe=""),  # as a URL's user information holds it
    }
    # a form's JSON escape too: a repr'd detail inside --json, a JSON error text quoted again
    forms |= {json.dumps(f)[1:-1] for f in list(forms)}
    return {f for f in forms if f}


class Redactor:
    """Blanks each of `secrets` (empty ones ignored) out of text and structures, in every form."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        forms: set[str] = set()
        for secret in secrets:
            if secret:
                forms |= _forms(secret)
        #: Longest first: a form that holds another (the JSON escape of a quote holds the quote)
        #: is replaced whole.
        self.forms = sorted(forms, key=len, reverse=True)

    def text(self, text: str) -> str:
        for form in self.forms:
            if form in text:
                text = text.replace(form, BLANK)
        return text

    def data(self, value: Any) -> Any:
        """`value` (JSON-like: dicts, lists, strings, numbers) with every string redacted."""
        if not self.forms:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value


def basic_credential(user: str, password: str) -> str:
    """The ``Authorization: Basic`` value of `user` and `password` (RFC 7617, UTF-8)."""
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
