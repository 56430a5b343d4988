"""The base of the tagged-parameter parsers: a format's markers by role become its stream class.

`tagged.TaggedCallStream` is the machine that reads the calls; this module is what a
format module writes to use it (`Tags`, `stream_flags`), and what follows from that:
the stream class, the parser's markers, its tool-result message, its schema types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

from ....formats import tool_format
from ....protocol.parsers import ToolSpec
from .conventions import SERVERS
from .scan import BuiltinToolStream
from .schema_values import schema_types
from .tagged import TaggedCallStream
from .tool_parser import BuiltinToolParser


class Tags(NamedTuple):
    """A format's markers by role (see `TaggedCallStream`; None: the stream's default)."""

    start: str | None = None
    end: str | None = None
    call_open: str | None = None
    call_close: str | None = None
    param_open: str | None = None
    param_name_close: str | None = None
    value_open: str | None = None
    param_close: str | None = None


class TaggedCallParser(BuiltinToolParser):
    """Base of the tagged-parameter formats: schema types from `tools`, one stream class per format.

    A format sets `tags` (its markers in the roles `TaggedCallStream` names), and its stream
    class is made from them; or it sets its own `stream_class`. Its `markers` follow
    from the stream class's (unless it sets them), and its tool-result message is its format's.
    """

    stream_class: ClassVar[type[BuiltinToolStream]] = TaggedCallStream
    tags: ClassVar[Tags | None] = None
    #: Reading rules turned on in the stream made from `tags` (e.g. ``servers_drops_undeclared``).
    stream_flags: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        tags = cls.__dict__.get("tags")
        if tags is not None and "stream_class" not in cls.__dict__:
            name = cls.__name__.removesuffix("Parser") + "Stream"
            attrs = {key: value for key, value in tags._asdict().items() if value is not None}
            attrs |= dict.fromkeys(cls.__dict__.get("stream_flags", ()), True)
            cls.stream_class = type(name, (TaggedCallStream,), {**attrs, "__module__": cls.__module__})
        stream = cls.stream_class
        if "markers" not in cls.__dict__ and issubclass(stream, TaggedCallStream):
            name_close = stream.param_name_close if stream.param_name_close != ">" else None
            found = (stream.start, stream.end, stream.call_open, stream.call_close, stream.param_open)
            cls.markers = tuple(m for m in (*found, name_close, stream.value_open, stream.param_close) if m)

    def has_tool_calls(self, text: str) -> bool:
        """A block start, or (a format with `bare_calls`) a call open, in `text`."""
        stream = self.stream_class
        if getattr(stream, "bare_calls", False) and stream.call_open and stream.call_open in text:  # type: ignore[attr-defined]
            return True
        return super().has_tool_calls(text)

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The tool-result message of this parser's format (``formats/<name>.py``)."""

        return tool_format(self.name).format_tool_result(tool_call_id, result)

    def __init__(self, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        # (where both servers type a value by its schema's `type` only, "servers" does too)
        by_type = self.conventions == SERVERS and getattr(self.stream_class, "servers_types_by_type", False)
        self.param_types = schema_types(self.tools, infer=not by_type)
