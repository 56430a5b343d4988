"""What a backend is: a source of named tool and reasoning parsers.

A backend module is imported only when a spec names it (see `registry`), and
a framework backend imports its framework only inside these methods, so
`import parsebridge` stays light.

Writing a backend (in-tree or third-party via the ``parsebridge.backends``
entry-point group, value ``"package.module:BackendClass"``):

* subclass `Backend`, set `name`, `import_name`, `distribution`, `install_command` (a
  `FrameworkBackend` derives the last three from `name` unless it sets them);
* implement the two listing methods and the two factories; factories receive
  the backend's own registered name (the registry has already resolved
  aliases, family names and `-`/`_` spellings) and return objects that follow
  `parsebridge.protocol.ToolParser` / `ReasoningParser`, usually subclasses of
  `ToolParserBase` / `ReasoningParserBase` with `backend` and `name` set;
* optionally `create_pipeline` (or only `pipeline_class`, the class it builds) when the
  framework has its own per-request reasoning→tool chain that its server drives.

In-tree backends: ``parsebridge.adapters.builtin:BuiltinBackend``,
``parsebridge.adapters.python_backend:PythonBackend``,
``parsebridge.adapters.vllm:VllmBackend``, ``parsebridge.adapters.sglang:SglangBackend``.
"""

from __future__ import annotations

import abc
import importlib
import importlib.util
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._frameworks.install import DISTRIBUTIONS, install_hint
from .._version import __version__
from ..protocol import (
    BackendNotInstalledError,
    Pipeline,
    ReasoningParser,
    ToolParser,
    ToolSpec,
)


@dataclass
class BackendInfo:
    """What `parsebridge list` shows about one backend."""

    name: str
    available: bool
    version: str | None = None
    reason: str | None = None
    install: str | None = None
    tool_parsers: list[str] = field(default_factory=list)
    reasoning_parsers: list[str] = field(default_factory=list)
    api_shape: str | None = None


class Backend(abc.ABC):
    """A source of parsers; one instance per process, shared by all requests."""

    name: ClassVar[str]
    #: Top-level module that must be importable (None: always available).
    import_name: ClassVar[str | None] = None
    #: Distribution whose version is reported.
    distribution: ClassVar[str | None] = None
    install_command: ClassVar[str] = ""
    #: What the backend needs, in words, where that is not the `distribution` to import (llamacpp:
    #: a harness built from an sdist): the not-installed error says it instead of "the package".
    needs: ClassVar[str | None] = None
    #: Its parser names in the family table are not names a user reads as a parser (llamacpp: a
    #: chat template): a target made from the table is named by the family (``llamacpp:hermes``)
    #: and `describe` says what that name runs.
    labels_by_family: ClassVar[bool] = False
    #: Each parser configuration costs a process of its own (smg: a gateway per configuration):
    #: the conformance suite's workers then take one configuration's units together.
    groups_units: ClassVar[bool] = False
    #: How heavy importing the framework is (0: light; 1: it imports torch; 2: torch and a large
    #: tree more): the conformance suite forks the workers of lighter backends first, so their
    #: units run while the heavier frameworks are still importing in the parent.
    import_weight: ClassVar[int] = 0
    #: The modes ("oneshot", "stream") in which the framework's own server reads a tool call only
    #: when the request declares that tool, and what it does, in a sentence (`parse` and `compare`
    #: say it where a call was not read: the server's behaviour, not a parse error).
    undeclared_tools_modes: ClassVar[tuple[str, ...]] = ()
    undeclared_tools: ClassVar[str] = ""

    def undeclared_tools_rule(self, parser: str, mode: str, *, any_declared: bool) -> str | None:
        """`undeclared_tools` where it explains an unread call of `parser` (this backend's own name)
        in `mode` ("oneshot" or "stream") of a request that declares some tools (`any_declared`)
        but not that one, or none; None where the server would have read it."""
        return self.undeclared_tools if mode in self.undeclared_tools_modes else None

    def version(self) -> str | None:
        dist = self.distribution
        if dist is None:
            return __version__
        try:
            import importlib.metadata  # lazy: importlib.metadata pulls in email/zipfile/csv (~15 ms)

            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    def unavailable_reason(self) -> str | None:
        """Why this backend cannot work here, found without importing the framework."""
        if self.import_name and importlib.util.find_spec(self.import_name) is None:
            return f"module {self.import_name!r} is not installed"
        return None

    def is_available(self) -> bool:
        return self.unavailable_reason() is None

    def require(self) -> None:
        """Raise `BackendNotInstalledError` (with the install command) if unavailable."""
        reason = self.unavailable_reason()
        if reason is not None:
            raise BackendNotInstalledError(
                self.name,
                self.distribution or self.import_name or self.name,
                self.install_command,
                reason,
                needs=self.needs,
            )

    def describe(self, name: str) -> str | None:
        """What the parser `name` (as a spec names it) runs, where the name does not say it
        (llamacpp: the template a family name stands for), or None."""
        return None

    def api_shape(self) -> str | None:
        """A short label of the framework API shape in use (for support tables)."""
        return None

    @abc.abstractmethod
    def tool_parser_names(self) -> list[str]:
        """Every tool-call parser name this backend registers."""

    @abc.abstractmethod
    def reasoning_parser_names(self) -> list[str]:
        """Every reasoning parser name this backend registers."""

    @abc.abstractmethod
    def create_tool_parser(
        self, name: str, *, tools: Sequence[ToolSpec] | None, **options: Any
    ) -> ToolParser:
        """A tool parser for the backend's own registered `name`."""

    @abc.abstractmethod
    def create_reasoning_parser(self, name: str, **options: Any) -> ReasoningParser:
        """A reasoning parser for the backend's own registered `name`."""

    def passthrough_name(self, name: str) -> bool:
        """Whether `name` is taken as given, not looked up among the registered names (llamacpp's
        template paths)."""
        return False

    def option_names(self, kind: str, name: str) -> Collection[str] | None:
        """The keyword options the parser `name` of `kind` takes, or None to pass any through unchecked.

        The registry refuses any other option with `UnknownOptionError` before the parser is built,
        so a misspelt option fails the same way on every backend that answers here.
        """
        return None

    def create_pipeline(
        self,
        reasoning: str | None,
        tool: str | None,
        *,
        tools: Sequence[ToolSpec] | None,
        reasoning_started: bool | None = None,
        **options: Any,
    ) -> Pipeline | None:
        """A native reasoning→tool chain, or None to use the generic `Pipeline`: the backend's
        `pipeline_class` built for both parsers, when it has one and both are named."""
        if reasoning is None or tool is None:
            return None
        cls = self.pipeline_class()
        if cls is None:
            return None
        return cls(reasoning, tool, tools=tools, reasoning_started=reasoning_started, **options)

    def pipeline_class(self) -> Callable[..., Pipeline] | None:
        """The class of the backend's own reasoning→tool chain (built with the reasoning and tool
        names, `tools`, `reasoning_started` and the options), or None: none of its own."""
        return None

    def server_forced_choices(self) -> bool:
        """Whether this backend's tool parsers, built with a request's ``tool_choice="required"`` or
        named function (the `tool_choice` option), give what the framework's own chat server gives
        for that request — the JSON or native-format parsing it picks per parser. `OutputProcessor`
        then runs them for such requests instead of its own JSON stages (docs/serving.md)."""
        return False

    def info(self, with_parsers: bool = True) -> BackendInfo:
        reason = self.unavailable_reason()
        info = BackendInfo(
            name=self.name,
            available=reason is None,
            version=self.version() if reason is None else None,
            reason=reason,
            install=self.install_command or None,
        )
        if reason is None and with_parsers:
            try:
                info.tool_parsers = sorted(self.tool_parser_names())
                info.reasoning_parsers = sorted(self.reasoning_parser_names())
                info.api_shape = self.api_shape()
            except Exception as exc:  # a framework that imports but cannot list
                info.available = False
                info.reason = f"{type(exc).__name__}: {exc}"
        return info


class FrameworkBackend(Backend):
    """A framework adapter package: `_compat.get_api()` and three classes in `.parsers`.

    The vLLM, SGLang, Dynamo and smg adapters have this shape, so the backend
    object is written once and each says only what differs (its names, its
    options, how it finds its framework): the modules are imported on first
    use, after `require()` has checked that the framework is importable.
    """

    #: Class names in the adapter's `parsers` module: tool parser, reasoning parser, pipeline.
    parser_classes: ClassVar[tuple[str, str, str]]
    #: The keyword options its tool and reasoning parsers take (its engine's keywords; a test
    #: checks them against the engine's signature). Reasoning parsers: the same unless set.
    tool_options: ClassVar[frozenset[str]]
    reasoning_options: ClassVar[frozenset[str]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A framework names itself once: unless the class sets them, its module is its `name`, and
        its distribution and install command are what `_frameworks.install` says for that name."""
        super().__init_subclass__(**kwargs)
        own = cls.__dict__
        if "name" not in own:
            return
        if "import_name" not in own:
            cls.import_name = cls.name
        if "distribution" not in own:
            cls.distribution = DISTRIBUTIONS.get(cls.name, cls.name)
        if "install_command" not in own:
            cls.install_command = install_hint(cls.name)
        if "reasoning_options" not in own and "tool_options" in own:
            cls.reasoning_options = cls.tool_options

    def option_names(self, kind: str, name: str) -> Collection[str] | None:
        return self.tool_options if kind == "tool" else self.reasoning_options

    def _module(self, name: str) -> Any:
        self.require()
        return importlib.import_module(f"{type(self).__module__}.{name}")

    def _api(self) -> Any:
        return self._module("_compat").get_api()

    def api_shape(self) -> str | None:
        return self._api().api_shape()  # type: ignore[no-any-return]

    def tool_parser_names(self) -> list[str]:
        return self._api().tool_parser_names()  # type: ignore[no-any-return]

    def server_forced_choices(self) -> bool:
        return bool(self._api().forced_choices)

    def reasoning_parser_names(self) -> list[str]:
        return self._api().reasoning_parser_names()  # type: ignore[no-any-return]

    def create_tool_parser(
        self, name: str, *, tools: Sequence[ToolSpec] | None, **options: Any
    ) -> ToolParser:
        cls = getattr(self._module("parsers"), self.parser_classes[0])
        return cls(name, tools, **options)  # type: ignore[no-any-return]

    def create_reasoning_parser(self, name: str, **options: Any) -> ReasoningParser:
        cls = getattr(self._module("parsers"), self.parser_classes[1])
        return cls(name, **options)  # type: ignore[no-any-return]

    def pipeline_class(self) -> Callable[..., Pipeline] | None:
        """The framework's own chain: one session parses reasoning then tools, as one server request."""
        return getattr(self._module("parsers"), self.parser_classes[2])  # type: ignore[no-any-return]
