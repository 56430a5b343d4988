"""parsebridge benchmarks: every figure is a ratio measured side by side in one run.

Run `python -m benchmarks` (all sections) or `python -m benchmarks --quick`
(small sizes, for CI). Results print as a table and are written as JSON.
"""
