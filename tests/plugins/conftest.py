"""Plugin tests drive the frameworks' real servers with the scripted-engine harness in tests/serving."""

from __future__ import annotations

import sys
from pathlib import Path

SERVING = Path(__file__).resolve().parent.parent / "serving"
if str(SERVING) not in sys.path:
    sys.path.insert(0, str(SERVING))
