"""What `compare` runs on each transcript: explicit specs, families, backends and chunkings.

`ComparePlan` is checked once up front (a typo fails before any work) and is
picklable: it is what every worker, a local process or a Ray actor, is
built from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from ..adapters import get_backend
from ..adapters.builtin.engines.conventions import check_conventions
from ..adapters.registry import check_spec
from ..conformance.chunking import Chunking, chunkings_of, parse_chunkings
from ..conformance.runner import Target, target_for
from ..conformance.transcripts import Transcript
from ..protocol import InvalidSpecError, ParserSpec, family_table
from .defaults import DEFAULT_COMPARE_CHUNKINGS

SpecLike = str | Target


# ---------------------------------------------------------------- what to compare


def _canon(spec: str) -> str:
    return str(ParserSpec.parse(spec))


def _target(tool: str | None, reasoning: str | None) -> Target:
    return Target.explicit(
        tool=_canon(tool) if tool else None, reasoning=_canon(reasoning) if reasoning else None
    )


def _split_label(text: str) -> tuple[str | None, str | None]:
    """``"R + T"`` (or ``R+T``) → (reasoning, tool); a single spec is a tool spec."""
    if "+" in text:
        r, _, t = text.partition("+")
        return _one_spec(r.strip(), text) or None, _one_spec(t.strip(), text) or None
    return None, _one_spec(text.strip(), text)


def _one_spec(part: str, given: str) -> str:
    """`part`, refused when it holds several specs (``"builtin:hermes vllm:hermes"``): a string
    names one parser, or one pipeline, as each ``--tool-parser`` does; no parser name has a space
    or a comma, so this says what to do instead of "no parser named 'hermes vllm:hermes'"."""
    several = part.replace(",", " ").split()
    if len(several) > 1:
        raise InvalidSpecError(
            f"{given!r} holds {len(several)} specs; a spec string names one parser (or one pipeline, "
            f"'REASONING + TOOL'): give each apart, {several!r} (on the command line, one "
            "--tool-parser per spec)"
        )
    return part


@overload
def _listed(values: object, option: str = ..., *, targets: Literal[False] = ...) -> list[str]: ...
@overload
def _listed(values: object, option: str, *, targets: Literal[True]) -> list[str | Target]: ...


def _listed(values: object, option: str = "reasoning_parsers", *, targets: bool = False) -> list[Any]:
    """A list of names given as a list, or as one string: one name (a spec), never its characters.
    With `targets` (the specs), a `Target` stands for itself, alone or in the list. Anything else
    (a number, None in the list, a dict, whose keys would be read as the names) is
    `InvalidSpecError` naming `option`: it was a bare TypeError from deep in the plan."""
    if isinstance(values, ParserSpec):
        return [str(values)]
    if isinstance(values, str) or (targets and isinstance(values, Target)):
        return [values]
    if values is None:
        return []
    if isinstance(values, Mapping) or not isinstance(values, Iterable):
        raise InvalidSpecError(f"compare: {option} is a name or a list of names, not {type(values).__name__}")
    names = [str(v) if isinstance(v, ParserSpec) else v for v in values]
    what = "spec (a str such as 'builtin:hermes')" if targets else "name (a str)"
    for v in names:
        if not (isinstance(v, str) or (targets and isinstance(v, Target))):
            raise InvalidSpecError(f"compare: {option} holds {v!r}, which is no {what}")
    return names


def targets_from(
    specs: SpecLike | Sequence[SpecLike] | None = None, reasoning_parsers: str | Sequence[str] | None = None
) -> list[Target]:
    """Explicit targets from tool specs and reasoning specs (the CLI's repeated flags).

    Pairing: equal counts are zipped (the i-th reasoning parser with the i-th
    tool parser); one of either kind is combined with every one of the
    other; only one kind gives single-parser targets. A spec may also be a
    whole pipeline, ``"builtin:qwen3 + vllm:hermes"`` (reasoning + tool), or
    a `Target`. Duplicates are dropped.
    """
    tools: list[Target | str] = []
    for s in _listed(specs, "specs", targets=True):
        if isinstance(s, Target):
            tools.append(s)
        else:
            reasoning, tool = _split_label(s)
            tools.append(_target(tool, reasoning) if reasoning else (tool or ""))
    reasons = [_canon(_one_spec(r.strip(), r)) for r in _listed(reasoning_parsers)]
    plain = [t for t in tools if isinstance(t, str)]
    fixed = [t for t in tools if isinstance(t, Target)]
    out: list[Target] = list(fixed)
    if plain and reasons:
        if len(plain) == len(reasons):
            out += [_target(t, r) for t, r in zip(plain, reasons, strict=True)]
        elif len(reasons) == 1:
            out += [_target(t, reasons[0]) for t in plain]
        elif len(plain) == 1:
            out += [_target(plain[0], r) for r in reasons]
        else:
            raise InvalidSpecError(
                f"{len(plain)} tool parsers and {len(reasons)} reasoning parsers: give equal numbers "
                "(paired in order), or one of either kind (combined with each of the other)"
            )
    else:
        out += [_target(t, None) for t in plain]
        out += [_target(None, r) for r in reasons]
    seen: dict[str, Target] = {}
    for t in out:
        seen.setdefault(t.label, t)
    return list(seen.values())


def available_backends() -> list[str]:
    """Backends of the family table that can run here (frameworks installed), in table order."""

    out = []
    for name in family_table().backends():
        try:
            if get_backend(name).is_available():
                out.append(name)
        except Exception:  # a third-party backend whose module is broken: not available
            continue
    return out


def resolve_families(families: Sequence[str]) -> tuple[str | None, str | None]:
    """``--family`` names (comma/``+`` separated) → (tool family, reasoning family), canonical names."""
    table = family_table()
    tool_fam = reasoning_fam = None
    for item in families:
        for name in (n.strip() for n in item.replace("+", ",").split(",")):
            if not name:
                continue
            t, r = table.get("tool", name), table.get("reasoning", name)
            if t is None and r is None:
                known = ", ".join(sorted({f.name for f in table}))
                raise InvalidSpecError(f"unknown family {name!r}; families: {known}")
            tool_fam = t.name if t is not None else tool_fam
            reasoning_fam = (
                r.name if r is not None and (t is None or reasoning_fam is None) else reasoning_fam
            )
    return tool_fam, reasoning_fam


def family_targets(families: Sequence[str], backends: Sequence[str]) -> tuple[list[Target], dict[str, str]]:
    """Each backend's parsers for the named families (a tool family and/or a reasoning family).

    Returns the runnable targets and, per backend that lacks a parser, why.
    """
    table = family_table()
    tool_fam, reasoning_fam = resolve_families(families)
    probe = Transcript(
        id="family",
        output="",
        family=tool_fam or reasoning_fam,
        kind="tool" if tool_fam else "reasoning",
        reasoning_family=reasoning_fam if tool_fam else None,
    )
    targets, unsupported = [], {}
    for b in backends:
        target = target_for(probe, b, table)
        if target.unsupported:
            unsupported[b] = target.unsupported
        else:
            targets.append(target)
    return targets, unsupported


def mode_names(chunkings: Sequence[Chunking]) -> dict[str, str]:
    """MODE → chunking name: ``oneshot``, ``stream`` (first streamed), ``stream:NAME`` (the others)."""
    out: dict[str, str] = {}
    for c in chunkings:
        if not c.streamed:
            out["oneshot"] = c.name
        elif "stream" not in out:
            out["stream"] = c.name
        else:
            out[f"stream:{c.name}"] = c.name
    return out


def _chunk_names(chunkings: str | Sequence[str] | None) -> tuple[str, ...]:
    """Canonical chunking names, oneshot first (added when not given): it is what streams are compared with."""
    parsed = chunkings_of(chunkings, DEFAULT_COMPARE_CHUNKINGS)  # "" is no longer one-shot alone
    if not any(not c.streamed for c in parsed):
        parsed.insert(0, parse_chunkings(["oneshot"])[0])
    else:
        parsed.sort(key=lambda c: c.streamed)
    return tuple(c.name for c in parsed)


def _load_python_specs(targets: Sequence[Target]) -> None:
    """Import every ``python:module:Class`` of the targets: a typo fails now, not per transcript."""

    for t in targets:
        for kind, spec in (("reasoning", t.reasoning_spec), ("tool", t.tool_spec)):
            if spec:
                check_spec(kind, spec)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ComparePlan:
    """What every transcript is run through; picklable, sent once to each worker.

    `targets` set: those for every transcript (explicit specs or ``--family``).
    Empty: each transcript's own family, on each of `backends` (via the family table).
    """

    targets: tuple[Target, ...] = ()
    unsupported: tuple[tuple[str, str], ...] = ()
    backends: tuple[str, ...] = ()
    chunkings: tuple[str, ...] = ("oneshot", *DEFAULT_COMPARE_CHUNKINGS)
    explicit: bool = True
    #: ``--family`` given: (kind, family) pairs; a transcript of that family also gets its own
    #: reasoning family's parser (a hermes transcript whose prompt opened ``<think>``).
    families: tuple[tuple[str, str], ...] = ()
    #: builtin parsers' ``conventions=``: "servers" (their default, what a user of them gets) or
    #: "lossless" (the reading the bundled fixtures' `expected` was written for).
    conventions: str = "servers"

    @classmethod
    def build(
        cls,
        specs: SpecLike | Sequence[SpecLike] | None = None,
        *,
        reasoning_parsers: str | Sequence[str] | None = None,
        family: str | Sequence[str] | None = None,
        backends: str | Sequence[str] | None = None,
        chunkings: str | Sequence[str] | None = None,
        validate: bool = True,
        conventions: str | None = None,
    ) -> ComparePlan:
        """Check specs, families, backends and chunkings up front (a typo fails before any work)."""

        chunk_names = _chunk_names(chunkings)
        conv = check_conventions(conventions)
        if isinstance(backends, str):  # "vllm,sglang", as --backends takes them
            backends = [b.strip() for b in backends.split(",") if b.strip()]
        backends = _listed(backends, "backends")
        family = _listed(family, "family") or None
        if backends:  # canonical names (VLLM → vllm); an unknown one → error listing the known ones
            backends = list(dict.fromkeys(get_backend(b).name for b in backends))
        targets = targets_from(specs, reasoning_parsers)
        if targets:
            if family or backends:
                raise InvalidSpecError("give parser specs, or --family/--backends, not both")
            if validate:
                _load_python_specs(targets)
            return cls(tuple(targets), chunkings=chunk_names, explicit=True, conventions=conv)
        chosen = list(backends) if backends else available_backends()
        if backends and validate:
            for b in backends:
                get_backend(b).require()  # asked for by name: say how to install it
        if family:
            fams = [family] if isinstance(family, str) else list(family)
            found, unsupported = family_targets(fams, chosen)
            if not found:
                raise InvalidSpecError(
                    "no backend here has a parser for "
                    + ", ".join(fams)
                    + "".join(f"\n  {b}: {why}" for b, why in unsupported.items())
                )
            tool_fam, reasoning_fam = resolve_families(fams)
            named = tuple((k, f) for k, f in (("tool", tool_fam), ("reasoning", reasoning_fam)) if f)
            return cls(
                tuple(found),
                tuple(unsupported.items()),
                tuple(chosen),
                chunk_names,
                explicit=False,
                families=named,
                conventions=conv,
            )
        return cls((), (), tuple(chosen), chunk_names, explicit=False, conventions=conv)

    def parsed_chunkings(self) -> list[Chunking]:
        return parse_chunkings(list(self.chunkings))

    @property
    def modes(self) -> dict[str, str]:
        return mode_names(self.parsed_chunkings())
