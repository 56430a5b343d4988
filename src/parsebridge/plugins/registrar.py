"""`Registrar`: a framework plugin's `register` and `register_all`, shared by both plugins."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from .registrations import Registration, kind_of, plugin_name, registrations
from .settings import FRAMEWORK_LABELS, Kind


class Registrar:
    """A framework plugin's `register` and `register_all`: per registration, a subclass of the
    plugin's tool or reasoning class bound to the spec, put in the framework's tables."""

    def __init__(
        self,
        framework: str,
        bases: dict[Kind, type],
        install: Callable[[Registration, type], None],
        module: str,
        registered: dict[str, type],
    ) -> None:
        self.framework = framework
        self._bases, self._install, self._module, self.registered = bases, install, module, registered

    def class_for(self, reg: Registration) -> type:
        """The class serving `reg`: its base for the kind, with the spec as `pb_spec`."""
        base = self._bases[reg.kind]
        label = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", reg.spec))
        doc = f"parsebridge `{reg.spec}` in {FRAMEWORK_LABELS[self.framework]}."
        attrs = {"pb_spec": reg.spec, "__module__": self._module, "__doc__": doc}
        return type(f"Pb{label}{base.__name__.removeprefix('Parsebridge')}", (base,), attrs)

    def add(self, reg: Registration) -> type:
        cls = self.class_for(reg)
        self._install(reg, cls)
        self.registered[reg.name] = cls
        return cls

    def register(self, spec: str, name: str | None = None, kind: Kind | None = None) -> str:
        """Register one parsebridge parser (any config string) into the framework; return the name
        it serves under. `name` defaults to ``pb:`` + the spec, lower-cased (SGLang looks reasoning
        parsers up lower-cased); `kind` is read from the spec (a ``python:`` class says by its base
        class) when not given."""
        reg = Registration((name or plugin_name(spec)).lower(), kind or kind_of(spec), spec)
        self.add(reg)
        return reg.name

    def register_all(self, backends: Iterable[str] | None = None) -> list[str]:
        """Register every parser of `backends` (default: builtin and the other framework when
        installed) and the ``PARSEBRIDGE_PLUGIN_PARSERS`` entries; return the names."""
        names = []
        for reg in registrations(self.framework, backends=backends):
            self.add(reg)
            names.append(reg.name)
        return names
