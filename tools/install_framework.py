#!/usr/bin/env python3
"""Install a framework parsers-only: `parsebridge install-framework`, runnable from a clone.

    python tools/install_framework.py vllm-latest     # or sglang-0.5.23, vllm-oldest, all, --list

The recipe and the requirement files live in the package
(`src/parsebridge/_frameworks/`); this wrapper loads that module by file
path, so it also runs where parsebridge and its dependencies are not
installed yet (CI's `python3 tools/install_framework.py --resolve …`).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_MODULE = Path(__file__).resolve().parent.parent / "src" / "parsebridge" / "_frameworks" / "install.py"
_spec = importlib.util.spec_from_file_location("parsebridge_install_framework", _MODULE)
assert _spec is not None and _spec.loader is not None
_install = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _install
_spec.loader.exec_module(_install)

REQ_DIR = _install.REQ_DIR
available = _install.available
resolve = _install.resolve
install = _install.install
main = _install.main

if __name__ == "__main__":
    sys.exit(main())
