"""Python source that a model wrote (pythonic calls, Sarashina's literals), parsed with `ast`
without the warnings Python's parser gives about it.

Python's parser warns about an invalid escape in a string literal (``"C:\\home"``, ``"\\("``):
a DeprecationWarning on 3.11, a SyntaxWarning, shown by default, from 3.12; the value keeps the
backslash either way. Those warnings are about the model's text, not about this program, so a
reader must not print them; and under ``-W error`` (or pytest's ``filterwarnings = error``) they
become a SyntaxError, and the same output would read differently. Only a string literal with a
backslash gives such a warning on the way to a literal, so only such source pays for
`warnings.catch_warnings`. That swaps the process's filters for the parse and puts back what it
saw on entry, so two threads inside it at once can leave each other's filters in place (an
``ignore`` of this module's outliving the parse, or another thread's parse running under
``error``); a lock keeps this module's own parses one at a time. Code elsewhere that swaps the
filters from another thread can still cross them, as the `warnings` module documents.
"""

from __future__ import annotations

import ast
import threading
import warnings

# One parse at a time inside `catch_warnings` (see the module's docstring).
_FILTERS_SWAP = threading.Lock()


def parse_expression(source: str) -> ast.Expression:
    """`ast.parse(source, mode="eval")`, its parser's warnings about the source left unsaid."""
    if "\\" not in source:
        return ast.parse(source, mode="eval")
    with _FILTERS_SWAP, warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(source, mode="eval")
