"""The probe tests' helper modules (`_probe_servers`, `_probe_model`) import from this folder."""

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
