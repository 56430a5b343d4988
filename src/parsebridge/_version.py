"""The package version, in a leaf module so any layer can read it without importing the package root.

Also the Python version check `parsebridge/__init__.py` runs first: from a source checkout
(``PYTHONPATH=src``, where pip's ``requires-python`` never ran) an older Python would otherwise
fail later with an unrelated ``ImportError`` (``cannot import name 'Self' from 'typing'``).
Written for any Python 3: no syntax or library newer than the oldest one it must refuse.
"""

import sys

__version__ = "0.1.0"
#: The oldest Python parsebridge runs on (pyproject.toml's ``requires-python``).
REQUIRES_PYTHON = (3, 11)


def check_python(version_info=sys.version_info):  # (no annotations: read by any Python 3)
    """Raise ImportError naming the Python found and the one needed, when it is too old."""
    if tuple(version_info[:2]) < REQUIRES_PYTHON:
        found = ".".join(str(part) for part in version_info[:3])
        needed = f"{REQUIRES_PYTHON[0]}.{REQUIRES_PYTHON[1]}"
        raise ImportError(
            f"parsebridge needs Python {needed} or newer; this is Python {found} ({sys.executable}). "
            f"Run it with python{needed} or newer (e.g. python{needed} -m venv .venv && .venv/bin/pip install .)."
        )
