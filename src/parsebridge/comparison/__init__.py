"""comparison: backends side by side on users' own transcripts (one output or a log).

A product of its own beside `conformance` (whose runner and divergence
classes it reuses): `engine` runs the comparisons (`pb.compare` is its
`compare`), `models` is the JSON contract, `render` the table/HTML views;
`executors` and `ray_executor` run the comparisons locally or on a Ray
cluster (Ray itself is imported only for ``executor="ray"``). The
``parsebridge compare`` command is `parsebridge.cli.compare_command`.

This package was `parsebridge.compare`, the function's name too; the old
path still imports, with a DeprecationWarning (`parsebridge._moved`).
"""

from __future__ import annotations

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
