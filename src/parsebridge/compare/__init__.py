"""compare: backends side by side on users' own transcripts (one output or a log).

A product of its own beside `conformance` (whose runner and divergence
classes it reuses): `engine` runs the comparisons, `models` is the JSON
contract, `render` the table/HTML views, `cli` the ``parsebridge compare``
command; `executors` and `ray_executor` run the comparisons locally or on
a Ray cluster (Ray itself is imported only for ``executor="ray"``).

`pb.compare(...)` is the function `engine.compare`. This package has the same
name, so importing it would replace that attribute of `parsebridge`; the
module is therefore callable and forwards to the function, so
``pb.compare(...)`` works whichever of the two it resolves to.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .engine import CompareResult, compare, iter_compare, run_comparisons
from .ray_executor import RayExecutorError, RayUnavailableError

__all__ = [
    "CompareResult",
    "RayExecutorError",
    "RayUnavailableError",
    "compare",
    "iter_compare",
    "run_comparisons",
]


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
