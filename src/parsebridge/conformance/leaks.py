"""Marker text in a reading that has no reference to compare with (`check_invariants`).

With no correct reading to compare against, any format marker in content or
reasoning is a leak, with one exception: an output the token limit cut
(``finish_reason: length``). The policy (docs/tokens.md, truncated output)
keeps a call that is not whole as content, its markers included, so those
markers are the reading doing its job. What counts as that kept call: the
content's end that is also the output's end, from the last opening of the
marker that starts it; a marker earlier in the content (a whole call left as
text, say) is still a leak.
"""

from __future__ import annotations

from collections.abc import Sequence


def _common_end(a: str, b: str) -> int:
    """How many characters `a` and `b` share at their ends."""
    n = 0
    for x, y in zip(reversed(a), reversed(b), strict=False):
        if x != y:
            break
        n += 1
    return n


def _kept_cut_call(text: str, output: str, markers: Sequence[str]) -> int:
    """Where in `text` the kept text of the cut call begins (`len(text)`: none kept). Trailing
    whitespace is not compared: a reading may strip it."""
    text = text.rstrip()
    shared = _common_end(text, output.rstrip())
    tail = text[len(text) - shared :]
    found = [(tail.find(m), m) for m in markers if m and m in tail]
    if not found:
        return len(text)
    _, opener = min(found)
    return len(text) - shared + tail.rfind(opener)


def leaked_markers(text: str, markers: Sequence[str], cut_output: str | None = None) -> list[str]:
    """The `markers` that show up in `text`, outside the cut call a truncated output keeps
    (`cut_output`: the whole output when the token limit cut it, else None)."""
    if cut_output is not None:
        text = text[: _kept_cut_call(text, cut_output, markers)]
    return [m for m in markers if m and m in text]
