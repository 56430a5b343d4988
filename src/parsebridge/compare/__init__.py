"""compare: backends side by side on users' own transcripts (one output or a log).

A product of its own beside `conformance` (whose runner and divergence
classes it reuses): `engine` runs the comparisons, `models` is the JSON
contract, `render` the table/HTML views, `cli` the ``parsebridge compare``
command.

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

__all__ = ["CompareResult", "compare", "iter_compare", "run_comparisons"]


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
