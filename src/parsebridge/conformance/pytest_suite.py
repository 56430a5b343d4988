"""The conformance suite as pytest items: what `pytest_plugin` loads once ``--parsebridge-spec``
is given (the plugin itself is loaded in every pytest run of the environment, so it stays light).
"""

from __future__ import annotations

import inspect
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from ..adapters import resolve
from ..adapters.python_backend import load_class
from ..protocol import ParsebridgeError, ParserSpec, ReasoningParserBase, ToolParserBase, family_table
from .chunking import parse_chunkings
from .log_files import directory_files, iter_log, not_utf8_in
from .runner import Runner, plan_explicit, spec_family
from .transcripts import bundled_transcripts, select, split_names

KINDS = ("tool", "reasoning")


def spec_kinds(spec: str) -> list[str]:
    """Which kinds a spec names (see module doc); raises `pytest.UsageError` when none."""
    for kind in KINDS:
        if spec.startswith(kind + "="):
            return [kind]
    parsed = ParserSpec.parse(spec)
    if parsed.backend == "python":
        cls = load_class(parsed.name)
        if issubclass(cls, ToolParserBase):
            return ["tool"]
        if issubclass(cls, ReasoningParserBase):
            return ["reasoning"]
        declared = getattr(cls, "kind", None)
        if declared in KINDS:
            return [declared]
        try:
            params = set(inspect.signature(getattr(cls, "parse")).parameters)  # noqa: B009
        except (TypeError, ValueError, AttributeError):
            params = set()
        return ["reasoning" if "reasoning_started" in params else "tool"]
    kinds, errors = [], []
    for kind in KINDS:
        try:
            resolve(kind, parsed)  # type: ignore[arg-type]
            kinds.append(kind)
        except Exception as exc:
            errors.append(str(exc))
    if not kinds:
        raise pytest.UsageError(f"--parsebridge-spec {spec}: " + " / ".join(dict.fromkeys(errors)))
    return kinds


def _kind_and_spec(raw: str, kind: str) -> str:
    return raw.split("=", 1)[1] if raw.startswith(kind + "=") else raw


def _importable_from_here(config: pytest.Config) -> None:
    """The start folder and the rootdir on `sys.path` (front), as ``python -m pytest`` puts the first."""
    for folder in (config.rootpath, config.invocation_params.dir):
        path = str(folder)
        if path not in sys.path:
            sys.path.insert(0, path)


def checked_specs(config: pytest.Config, specs: list[str]) -> list[tuple[str, str]]:
    """(kind, spec) for every ``--parsebridge-spec``; any spec that cannot load is a `pytest.UsageError`."""
    if any("python:" in raw for raw in specs):
        _importable_from_here(config)
    out = []
    for raw in specs:
        try:
            kinds = spec_kinds(raw)
        except (ParsebridgeError, ImportError) as exc:
            said = str(exc)
            raise pytest.UsageError(
                f"--parsebridge-spec: {said}" if said.startswith(raw) else f"--parsebridge-spec {raw}: {said}"
            ) from None
        out += [(kind, _kind_and_spec(raw, kind)) for kind in kinds]
    _check_selection(config)
    return out


def _check_selection(config: pytest.Config) -> None:
    """``--parsebridge-family`` and ``--parsebridge-transcripts`` as `conformance` checks its own: a
    family that is none (a typo) ran no test and said nothing, a missing file was an INTERNALERROR."""
    try:
        families = split_names(config.getoption("parsebridge_family"), "--parsebridge-family")
        chunkings = split_names(config.getoption("parsebridge_chunking"), "--parsebridge-chunking")
    except ParsebridgeError as exc:  # an option given but naming nothing
        raise pytest.UsageError(str(exc)) from None
    try:
        for family in families:
            family_table().check(family)
    except ParsebridgeError as exc:
        raise pytest.UsageError(f"--parsebridge-family: {exc}") from None
    for path in config.getoption("parsebridge_transcripts") or ():
        if not Path(path).exists():
            raise pytest.UsageError(f"--parsebridge-transcripts: {path}: no such file or directory")
    try:
        parse_chunkings(chunkings or None)
    except ParsebridgeError as exc:
        raise pytest.UsageError(f"--parsebridge-chunking: {exc}") from None


def _load(paths: list[str]) -> list[Any]:
    """The transcripts of ``--parsebridge-transcripts``, read as `conformance --transcripts` reads
    them; a file it refuses (malformed, not UTF-8, not gzip, empty) or a folder without a transcript
    file is one ``ERROR:`` line, where it was an INTERNALERROR traceback or no test without a word."""
    out: list[Any] = []
    for path in map(Path, paths):
        files = directory_files(path)[0] if path.is_dir() else [path]
        if not files:
            raise pytest.UsageError(
                f"--parsebridge-transcripts: {path}: no transcript files in this directory or its subfolders"
            )
        for f in files:
            if path.is_file() and path.stat().st_size == 0:  # ran as one transcript with no output
                raise pytest.UsageError(
                    f"--parsebridge-transcripts: {f}: no transcripts in it (empty file; expected JSON Lines, "
                    "YAML, or a text file holding one raw output)"
                )
            try:
                out.extend(iter_log(f))
            except UnicodeDecodeError as exc:
                raise pytest.UsageError(f"--parsebridge-transcripts: {not_utf8_in(str(f), exc)}") from None
            except ParsebridgeError as exc:
                raise pytest.UsageError(f"--parsebridge-transcripts: {exc}") from None
    return out


class ConformanceFailure(Exception):
    """Raised by a conformance item; carries the formatted report."""


class ConformanceItem(pytest.Item):
    """One (spec, transcript, chunking) of the conformance suite."""

    def __init__(self, *, plan: _Plan, target: Any, transcript: Any, chunking: Any, **kw: Any) -> None:
        super().__init__(**kw)
        self.plan = plan
        self.target = target
        self.transcript = transcript
        self.chunking = chunking
        self.add_marker(pytest.mark.parsebridge)

    def runtest(self) -> None:
        result = self.plan.result(self.target, self.transcript, self.chunking.name)
        status = result.status
        if status == "pass":
            return
        if status == "unsupported":
            pytest.skip(result.reason or result.detail)
        if status == "diverge" and result.known:
            pytest.xfail(f"documented divergence: {result.verdict.reason}")
        if status == "diverge" and self.plan.allow_diverge:
            warnings.warn(f"{self.name}: {result.detail}", stacklevel=1)
            return
        raise ConformanceFailure(_format(result, self.transcript))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


def _format(result: Any, transcript: Any) -> str:
    import json

    lines = [
        f"{result.status}: {result.spec} on transcript {result.transcript!r} ({result.family}), "
        f"chunking {result.chunking}",
    ]
    for d in result.verdict.differences:
        flag = " (documented)" if d.known else ""
        lines.append(f"  - {d.cls.value} [{d.source}]{flag}: {d.detail}")
    if not result.verdict.differences and result.reason:
        lines.append(f"  {result.reason}")
    lines.append(f"output: {transcript.output!r}")
    expected = transcript.expected_for(result.backend)
    if expected is not None:
        lines.append(f"expected: {json.dumps(expected.normalized(), ensure_ascii=False)}")
    if result.observation is not None:
        obs = result.observation
        lines.append(f"observed: {json.dumps(obs.reading(), ensure_ascii=False)}")
        if obs.error:
            lines.append(f"error: {obs.error}")
    return "\n".join(lines)


class _Plan:
    """The runner and its per-(target, transcript) results, computed once for every chunking."""

    def __init__(self, chunkings: list[Any], allow_diverge: bool) -> None:
        self.runner = Runner(chunkings)
        self.allow_diverge = allow_diverge
        self._done: dict[tuple[str, str, str], dict[str, Any]] = {}

    def result(self, target: Any, transcript: Any, chunking: str) -> Any:
        key = (target.label, transcript.id, transcript.family or "")
        rows = self._done.get(key)
        if rows is None:
            results = self.runner.run_transcript(target, transcript, explicit=True)
            rows = self._done[key] = {r.chunking: r for r in results}
        return rows[chunking]


def _transcripts_for(config: pytest.Config, kind: str, spec: str) -> list[Any]:
    families = split_names(config.getoption("parsebridge_family"), "--parsebridge-family")
    if not families:
        fam = spec_family(kind, spec)
        families = [fam] if fam else []
    files = config.getoption("parsebridge_transcripts")
    if files:
        return list(select(_load(files), families=families or None, kinds=[kind]))
    return bundled_transcripts(families or None, [kind])


def collect(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item], specs: list[tuple[str, str]]
) -> None:
    """One item per (spec, transcript, chunking), appended to `items`."""
    chunkings = parse_chunkings(
        split_names(config.getoption("parsebridge_chunking"), "--parsebridge-chunking") or None
    )
    plan = _Plan(chunkings, config.getoption("parsebridge_allow_diverge"))
    chained = config.getoption("parsebridge_reasoning_spec")
    for kind, spec in specs:
        transcripts = _transcripts_for(config, kind, spec)
        if kind == "tool":
            pairs = plan_explicit(transcripts, tool=spec, reasoning=chained)
            pairs = (p for p in pairs if p[1].kind == "tool")
        else:
            pairs = plan_explicit(transcripts, reasoning=spec)
        for target, t in pairs:
            for c in chunkings:
                items.append(
                    ConformanceItem.from_parent(
                        session,
                        name=f"parsebridge[{target.label}|{t.id}|{c.name}]",
                        plan=plan,
                        target=target,
                        transcript=t,
                        chunking=c,
                    )
                )
