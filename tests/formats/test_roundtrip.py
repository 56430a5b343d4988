"""Round trip, property-based: calls → the family's renderer → a backend's parser → the same calls back.

Hypothesis draws the calls (names; nested, unicode and escaped arguments;
several calls; text around them where the format keeps it as content) and
the chunkings; `parsebridge.conformance.roundtrip` defines what an example
is and how a reading is checked (the conformance command draws the same
examples from a seed). Builtin: every reading — one-shot, random chunks,
one character per chunk — must be exactly the rendered calls and content.
Frameworks (vLLM, SGLang when installed, marked ``framework``): divergences
are tallied, not raised (printed at the end of the session; the conformance
report's ``roundtrip`` section has them per family); only an exception
escaping the adapters untyped fails.

    PARSEBRIDGE_ROUNDTRIP_EXAMPLES=2000 pytest tests/formats/test_roundtrip.py   # a long run
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _building import build_or_skip
from parsebridge.conformance import roundtrip as rt
from parsebridge.conformance.roundtrip import Example, Tally, check, draw_example

_EXAMPLES = int(os.environ.get("PARSEBRIDGE_ROUNDTRIP_EXAMPLES", "0"))
BUILTIN_EXAMPLES = _EXAMPLES or 20
FRAMEWORK_EXAMPLES = _EXAMPLES or 10

#: backend → family → tally, printed by conftest at the end of the session.
TALLIES: dict[str, dict[str, Tally]] = {}


class HypothesisDraw:
    """`roundtrip.Draw` over hypothesis's interactive data (so failing examples shrink)."""

    _strategies: ClassVar[dict[Any, st.SearchStrategy[Any]]] = {}  # built once: one per draw is slow

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def integer(self, lo: int, hi: int) -> int:
        key = ("int", lo, hi)
        if key not in self._strategies:
            self._strategies[key] = st.integers(lo, hi)
        return self.data.draw(self._strategies[key])

    def string(self, alphabet: str, lo: int, hi: int) -> str:
        key = ("text", alphabet, lo, hi)
        if key not in self._strategies:
            self._strategies[key] = st.text(st.sampled_from(alphabet), min_size=lo, max_size=hi)
        return self.data.draw(self._strategies[key])

    def choice(self, options: Any) -> Any:
        key = ("choice", tuple(options))
        if key not in self._strategies:
            self._strategies[key] = st.sampled_from(key[1])
        return self.data.draw(self._strategies[key])


def _params(backends: tuple[str, ...]) -> list[Any]:
    out = []
    for backend in backends:
        marks: list[Any] = []
        if backend != "builtin":
            marks.append(pytest.mark.framework)
            if importlib.util.find_spec(backend) is None:
                marks.append(pytest.mark.skip(reason=f"{backend} is not installed"))
        for family in rt.roundtrip_families(backend):
            out.append(pytest.param(backend, family, id=f"{backend}-{family}", marks=marks))
    return out


def _roundtrip(backend: str, family: str, data: st.DataObject) -> tuple[Example, Any]:
    d = HypothesisDraw(data)
    ex = draw_example(d, family)
    # builtin: any raise fails; a framework skips only when its parser cannot run here
    subject = build_or_skip(
        backend, f"its parser for {family}", lambda: rt.subject_for(backend, family, ex.tools)
    )
    chunkings = rt.chunkings_for(d, backend, subject, ex.output)
    result = check(subject, ex, chunkings)
    tally = TALLIES.setdefault(backend, {}).setdefault(family, Tally())
    tally.spec = subject.target.tool_spec
    tally.add(ex, result)
    return ex, result


def _settings(examples: int) -> Any:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


@pytest.mark.parametrize(("backend", "family"), _params(("builtin",)))
@_settings(BUILTIN_EXAMPLES)
@given(data=st.data())
def test_roundtrip_builtin(backend: str, family: str, data: st.DataObject) -> None:
    ex, result = _roundtrip(backend, family, data)
    problems = result.escaped + result.errors + [f"{d.cls.value}: {d.detail}" for d in result.differences]
    assert not problems, (ex.output, problems)


@pytest.mark.parametrize(("backend", "family"), _params(("vllm", "sglang")))
@_settings(FRAMEWORK_EXAMPLES)
@given(data=st.data())
def test_roundtrip_framework(backend: str, family: str, data: st.DataObject) -> None:
    _ex, result = _roundtrip(backend, family, data)
    assert not result.escaped, result.escaped  # typed errors and divergences are tallied, not raised


# ---------------------------------------------------------------- the machinery itself


def test_every_builtin_tool_family_takes_part() -> None:
    from parsebridge.adapters.builtin import TOOL_PARSERS

    assert set(TOOL_PARSERS) <= set(rt.roundtrip_families("builtin"))


def test_a_wrong_reading_is_caught() -> None:
    """The check can fail: a renderer/parser mismatch (content dropped, a call lost) is a divergence."""
    d = rt.RandomDraw(1)
    ex = draw_example(d, "hermes")
    wrong = Example("hermes", ex.output + "\nsurprise", ex.content, ex.calls, ex.tools)
    res = check(rt.subject_for("builtin", "hermes", ex.tools), wrong, [("char", list(wrong.output))])
    assert "content_differs" in res.classes or "content_duplicated" in res.classes, res.classes
    lost = Example("hermes", ex.output, ex.content, [*ex.calls, {"name": "zz", "arguments": {}}], ex.tools)
    res = check(rt.subject_for("builtin", "hermes", ex.tools), lost, [])
    assert "call_missing" in res.classes


def test_seeded_draws_are_reproducible() -> None:
    a = [draw_example(rt.RandomDraw(7), f).output for f in ("hermes", "qwen3_coder", "pythonic")]
    b = [draw_example(rt.RandomDraw(7), f).output for f in ("hermes", "qwen3_coder", "pythonic")]
    assert a == b


def test_report_section_for_builtin() -> None:
    section = rt.run_roundtrip(["builtin"], families=["hermes", "qwen3_xml"], examples=5, seed=3)
    per = section["backends"]["builtin"]
    assert set(per) == {"hermes", "qwen3_xml"}
    assert all(t["inputs"] == 5 and t["clean"] == 5 and not t["classes"] for t in per.values())
    md = "\n".join(rt.render_markdown(section))
    assert "| tool:hermes | 5/5 |" in md


def test_report_section_does_not_depend_on_jobs() -> None:
    """The conformance CLI runs the round trip in forked workers: the section must be the same."""
    one = rt.run_roundtrip(
        ["builtin"], families=["hermes", "pythonic", "mistral"], examples=4, seed=5, jobs=1
    )
    two = rt.run_roundtrip(
        ["builtin"], families=["hermes", "pythonic", "mistral"], examples=4, seed=5, jobs=2
    )
    one.pop("elapsed_s"), two.pop("elapsed_s")
    assert one == two and list(one["backends"]["builtin"]) == ["hermes", "mistral", "pythonic"]
