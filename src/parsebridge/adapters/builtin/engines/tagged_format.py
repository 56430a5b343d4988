"""A tagged-parameter format: its tag texts, how a call and its parameters are laid out, and the
marker sets they imply (worked out once per format).

`tagged.TaggedCallStream` (the machine) reads a format through these class attributes; each
family's stream subclass sets its tags (`tagged_parser.Tags`) and the structural rules below.
The rules on which the conventions differ live with the machine (`servers_*`) and the values
(`tagged_values`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from ....formats import qwen3_coder as _qwen3_coder
from .call_steps import clean_name
from .markers import first_chars, marker_finder

#: Each format's marker sets (`TaggedFormat._derived`), by stream class.
_DERIVED: dict[type, tuple[Any, ...]] = {}


class TaggedFormat:
    """The tags and layout of one tagged-parameter format (see the module docstring)."""

    #: block start/end (``start=None``: a call opens straight from content, as in MiniCPM's ``<function``).
    start: ClassVar[str | None] = None
    end: ClassVar[str | None] = None
    #: call open before its name (None: the name follows the block start directly, GLM style).
    call_open: ClassVar[str | None] = None
    #: call close (None: the block end closes the call).
    call_close: ClassVar[str | None] = None
    #: what ends a call name opened by `call_open`.
    call_name_close: ClassVar[str] = ">"
    param_open: ClassVar[str] = _qwen3_coder.PARAM
    param_name_close: ClassVar[str] = ">"
    #: a separate value open after the key (GLM's ``<arg_value>``), else None.
    value_open: ClassVar[str | None] = None
    param_close: ClassVar[str] = _qwen3_coder.PARAM_END
    #: A block holds one call: after the call's close, the rest of the block is a tail (content
    #: unless whitespace) and the call's span runs to the block's end; a call open inside a
    #: call is not a tag. Else a block may hold several calls and a call's close ends its span.
    one_call_per_block: ClassVar[bool] = False
    #: A call may open straight from content, without the block start (Qwen3-Coder's
    #: ``<function=…>`` written without ``<tool_call>``): after its close, a block end that
    #: follows (whitespace between) is structure of the call; anything else is content again.
    bare_calls: ClassVar[bool] = False
    #: The rule turning a call's or (``>``-closed) parameter's name text into a name.
    name_of: ClassVar[Callable[[str], str | None]] = staticmethod(clean_name)
    #: A parameter head that is not one (no name, or not closed by its tag) is shown as content;
    #: else it is dropped and what follows it is read as stray text or tags.
    shows_bad_param_head: ClassVar[bool] = True
    #: At end of output, a parameter's key cut off before its value stays in the flagged arguments.
    keeps_cut_key: ClassVar[bool] = True

    @staticmethod
    def _value_ends_of(cls: type[TaggedFormat]) -> tuple[str, ...]:
        """The tags that may end a value: its close, the next parameter's head, the call's close."""
        return (cls.param_close, cls.param_open, *(m for m in (cls.call_close or cls.end,) if m))

    @classmethod
    def _derived(cls) -> tuple[Any, ...]:
        """The marker sets the format's tags imply (worked out once per format)."""
        starts = tuple(m for m in (cls.start,) if m) or (cls.call_open or "",)
        if cls.bare_calls and cls.start and cls.call_open:
            starts = (cls.start, cls.call_open)
        name_ends = (
            ("\n", cls.param_open, *(m for m in (cls.end, cls.start) if m))
            if cls.call_open is None
            else (cls.call_name_close, "\n", "<")
        )
        pname_ends = (
            (cls.param_name_close, "\n", "<")
            if cls.param_name_close == ">"
            else (
                cls.param_name_close,
                *(m for m in (cls.value_open, cls.param_open, cls.end, cls.call_close, cls.start) if m),
            )
        )
        in_call_markers = tuple(
            m
            for m in (cls.param_open, cls.call_close, cls.end, cls.start, cls.call_open)
            if m and not (m == cls.call_open and cls.one_call_per_block)
        )
        block_markers = tuple(m for m in (cls.call_open, cls.end, cls.start) if m)
        # (and a value's own open tag, GLM's <arg_value>: text that opens a nested example, `tagged_values`)
        value_ends = (*cls._value_ends_of(cls), *(m for m in (cls.value_open,) if m))
        opaque_ends = tuple(m for m in (cls.end, cls.start) if m) or (cls.call_close or "",)
        return (
            starts,
            name_ends,
            pname_ends,
            marker_finder(name_ends),
            marker_finder(pname_ends),
            in_call_markers,
            block_markers,
            value_ends,
            opaque_ends,
            # a value's chunk that is its own JSON string body and holds no marker's first character
            re.compile('[^"\\\\\x00-\x1f' + re.escape(first_chars(value_ends)) + "]+").fullmatch,
        )

    @classmethod
    def derived(cls) -> tuple[Any, ...]:
        """`_derived`, worked out once per format."""
        found = _DERIVED.get(cls)
        if found is None:
            found = _DERIVED[cls] = cls._derived()
        return found
