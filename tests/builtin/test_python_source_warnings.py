"""Pythonic and Sarashina calls read Python source the model wrote with `ast`; a string with an
invalid escape (a Windows path, LaTeX) makes Python's parser warn about that text. Builtin reads
such a call under any warning filter, ``-W error`` included, and lets no such warning out."""

from __future__ import annotations

import sys
import threading
import warnings

import pytest
from _streaming import assert_streams_like_oneshot, run_stream

from parsebridge import get_tool_parser

OUTPUTS = {
    "pythonic": ('[get_weather(city="C:\\home\\docs")]', "get_weather", {"city": "C:\\home\\docs"}),
    "sarashina": (
        '<|tool_calls|>[{"name": "solve", "arguments": {"latex": "\\(x^2\\)"}}]',
        "solve",
        {"latex": "\\(x^2\\)"},
    ),
}


@pytest.mark.parametrize("family", sorted(OUTPUTS))
@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_a_call_with_an_invalid_escape_reads_under_warnings_as_errors(family: str, conventions: str) -> None:
    text, name, arguments = OUTPUTS[family]
    parser = get_tool_parser(f"builtin:{family}", conventions=conventions)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = parser.parse(text)
        assert_streams_like_oneshot(parser, text)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [(name, arguments)]


@pytest.mark.parametrize("family", sorted(OUTPUTS))
def test_no_parser_warning_about_the_models_text_is_let_out(family: str) -> None:
    text = OUTPUTS[family][0]
    parser = get_tool_parser(f"builtin:{family}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parser.parse(text)
        run_stream(parser, list(text))
    assert [str(w.message) for w in caught] == []


def test_parses_in_threads_leave_the_warning_filters_as_they_were() -> None:
    """`catch_warnings` puts back the filters it saw on entry; two threads inside it at once
    would leave one's ``ignore`` in place after both are done (seen 3 runs of 3 before the lock)."""
    text, name, arguments = OUTPUTS["pythonic"]
    readings: list[object] = []

    def read_many() -> None:
        parser = get_tool_parser("builtin:pythonic")
        for _ in range(1500):
            readings.append([(c.name, c.arguments) for c in parser.parse(text).tool_calls])

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            filters = list(warnings.filters)
            threads = [threading.Thread(target=read_many) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert warnings.filters == filters
    finally:
        sys.setswitchinterval(switch)
    assert readings == [[(name, arguments)]] * 6000
