"""`smg:NAME` parser objects: smg's Rust parsers, run inside its gateway, read over HTTP.

Every parse is a chat request to the gateway started for the parser's
configuration (`_gateway`), on the first parse; the scripted worker answers
with the text being parsed (`_worker`), and what the gateway returns is the
reading (`_client.SmgEngine`; the parser classes and the mapping to results
are the served-parser base's, `_served.parsers`). One-shot: the non-streamed
message. Streams: each `feed` is one engine step and returns what the gateway
streamed for that step; `flush` ends the request. A tool parser's gateway
runs only that tool parser, a reasoning parser's only that reasoning parser,
a pipeline's both (smg's own chain).
"""

from __future__ import annotations

from .._served.parsers import ServedPipeline, ServedReasoningParser, ServedToolParser
from ._client import THINK_MARKERS, SmgEngine

__all__ = ["THINK_MARKERS", "SmgPipeline", "SmgReasoningParser", "SmgToolParser"]


class SmgToolParser(ServedToolParser):
    """`smg:NAME` tool-call parser: smg's Rust tool parser, run by its gateway for a request with tools."""

    backend = "smg"
    engine_class = SmgEngine


class SmgReasoningParser(ServedReasoningParser):
    """`smg:NAME` reasoning parser: smg's Rust reasoning parser, run by its gateway."""

    backend = "smg"
    engine_class = SmgEngine


class SmgPipeline(ServedPipeline):
    """smg's own reasoning→tool chain: one gateway running both parsers, one request per parse."""

    backend = "smg"
    engine_class = SmgEngine
