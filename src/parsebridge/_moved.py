"""Old import paths that still work for a while, with a DeprecationWarning.

The package `parsebridge.comparison` was `parsebridge.compare`, the name of the function
``pb.compare(...)`` too: the import system binds a subpackage on its parent, so importing
the package replaced the function. Renamed, the function is the only `parsebridge.compare`;
code that still imports ``parsebridge.compare[.MODULE]`` gets the renamed modules' names
through a stand-in module that warns once. The stand-in for the package is callable as the
function, so ``pb.compare(...)`` keeps working after such an import too.

`OldPaths` sits last on `sys.meta_path`: it is asked only about names nothing else finds,
and it imports nothing until an old path is imported (not even `importlib`'s modules: what
`import parsebridge` imports is counted, `benchmarks/import_cost.py`).
"""

from __future__ import annotations

import sys
import types
import warnings
from typing import Any

#: Old package path → its new one.
MOVED = {"parsebridge.compare": "parsebridge.comparison"}


class _StandIn(types.ModuleType):
    """An old module path: its attributes are the new module's; the package's is callable as
    `pb.compare` (the function the package's name shadowed)."""

    def __init__(self, name: str, new: str) -> None:
        super().__init__(name)
        self.__dict__["_new"] = new

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # the import system's own (`__path__`, `__file__`): never the new module's
            raise AttributeError(name)
        return getattr(_imported(self.__dict__["_new"]), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _imported("parsebridge.comparison").compare(*args, **kwargs)


def _imported(name: str) -> types.ModuleType:
    """The module `name`, imported (`importlib.import_module` without importing `importlib`)."""
    __import__(name)
    return sys.modules[name]


class OldPaths:
    """Finds ``parsebridge.compare`` and its submodules; loads each as a `_StandIn`. A finder and
    a loader by the import system's protocol (`find_spec`; `create_module`, `exec_module`), not
    by `importlib.abc`'s classes: importing those cost `import parsebridge` a third of its
    instructions (`importlib.resources`, `tempfile`, `shutil`, `lzma`)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        for old, new in MOVED.items():
            if fullname == old or fullname.startswith(old + "."):
                # Here, not at the top: only an old path needs it (see the module doc).
                from importlib.machinery import ModuleSpec

                spec = ModuleSpec(fullname, self, is_package=True)
                spec.loader_state = new + fullname[len(old) :]
                return spec
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        new = str(spec.loader_state)
        _imported(new)  # a name that does not exist there fails here, as it did
        warnings.warn(
            f"{spec.name} is now {new}; the old path will be removed", DeprecationWarning, stacklevel=2
        )
        return _StandIn(spec.name, new)

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the stand-in reads the new module's names when asked."""
