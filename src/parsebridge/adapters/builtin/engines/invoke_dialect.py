"""The markup of the invoke formats (`invoke`): a `Dialect`'s marker texts, and an open tag's attributes.

What differs between DeepSeek's DSML, Step-3's steptml, Kimi K3 and MiniCPM 5 is data: their
markers, the attributes naming a function and a parameter, and how attribute values are escaped.
The machine that reads them all is `invoke.InvokeStream`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Dialect", "tag_attrs"]

_ATTR = re.compile(r"""([A-Za-z_][\w:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_TAG = re.compile(r"""(?:\s+[A-Za-z_][\w:-]*\s*=\s*(?:"[^"]*"|'[^']*'))*\s*/?\s*\Z""")


@dataclass(frozen=True)
class Dialect:
    """The marker texts of one invoke format."""

    section_begins: tuple[str, ...]
    section_end: str
    invoke_open: str  # followed by attributes and ``>`` (or ``/>``)
    invoke_close: str
    param_open: str
    param_close: str
    #: Step-3's per-call wrapper: head_begin TYPE head_end <invoke…> call_end ("" when none).
    head_begin: str = ""
    head_end: str = ""
    call_end: str = ""
    #: what ends an open tag, and the attributes naming the function and a parameter
    tag_end: str = ">"
    name_attr: str = "name"
    key_attr: str = "name"
    #: attribute values escape ``"`` and ``&`` as ``&quot;``/``&amp;`` (Kimi K3)
    unescape: bool = False
    #: markers around plain content that are dropped (Kimi K3's response channel)
    unwrap: tuple[str, ...] = ()
    #: a value's text may hold CDATA sections, each running to `cdata_close` whatever tags it holds
    #: (MiniCPM 5's ``<![CDATA[…]]>``; "": none; one never closed is text); `convert` unwraps them
    cdata_open: str = ""
    cdata_close: str = ""

    @property
    def markers(self) -> tuple[str, ...]:
        extra = tuple(m for m in (self.head_begin, self.head_end, self.call_end) if m)
        return (
            *self.section_begins,
            *((self.section_end,) if self.section_end else ()),
            self.invoke_open,
            self.invoke_close,
            self.param_open,
            self.param_close,
            *extra,
            *self.unwrap,
        )


def tag_attrs(tag: str, unescape: bool = False) -> dict[str, str]:
    """`` name="x" string="true"`` → {"name": "x", "string": "true"} (first occurrence wins).

    Only a tag that is nothing but attributes counts: anything else gives {}.
    """
    out: dict[str, str] = {}
    if not _TAG.match(tag):
        return out
    for m in _ATTR.finditer(tag):
        value = m.group(2) if m.group(2) is not None else m.group(3)
        if unescape:
            value = value.replace("&quot;", '"').replace("&amp;", "&")
        out.setdefault(m.group(1), value)
    return out
