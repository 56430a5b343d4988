"""Which marker text is one token in a model's vocabulary, from the family table.

A family row of `protocol/families.toml` may list `single_tokens`: the
tokens its format's markers are made of that are one token in the model's
vocabulary (checked against the family's real vocabulary on PyPI where one
exists, `tools/check_vocab_markers.py`). A marker of such a family that is not
itself listed is several tokens in the model's output: DeepSeek V3.2/V4's
``<｜DSML｜invoke`` is ``<`` ``｜DSML｜`` ``inv`` ``oke``, and Kimi K3's
``<|close|>think<|sep|>`` is three tokens.

parsebridge's approximate tokenizers (the synthetic vocabulary the framework
adapters build, the approximate split conformance uses) ask `may_be_atomic`
before they make a marker one token, so they never make atomic what the model
splits. Markers of families that declare nothing keep today's behaviour
(atomic), since nothing is known about them.
"""

from __future__ import annotations

import functools

from ..protocol.family_rows import rows

__all__ = ["may_be_atomic", "multi_token_markers", "single_tokens"]


@functools.cache
def single_tokens() -> frozenset[str]:
    """Every token the family table declares single (all families, both kinds)."""
    return frozenset(t for row in rows() for t in row.single_tokens)


@functools.cache
def multi_token_markers() -> frozenset[str]:
    """Markers of the families that declare their single tokens, which are several tokens."""
    # Imported here: the format modules load lazily, on first use (this is that first use).
    from . import reasoning_format, tool_format

    out: set[str] = set()
    for row in rows():
        if not row.single_tokens:
            continue
        fmt = tool_format(row.name) if row.kind == "tool" else reasoning_format(row.name)
        out.update(m for m in fmt.markers if m and m not in row.single_tokens)
    return frozenset(out - single_tokens())


def may_be_atomic(text: str) -> bool:
    """Whether a marker-like string may be one token: not a known multi-token marker, and not
    a declared single token with more text around it (``<|close|>think<|sep|>``, ``<｜DSML｜invoke``)."""
    if text in single_tokens():
        return True
    if text in multi_token_markers():
        return False
    return not any(tok in text for tok in single_tokens())
