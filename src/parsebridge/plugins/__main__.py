"""``python -m parsebridge.plugins vllm``: the vLLM plugin's file path (for ``--tool-parser-plugin`` on vLLM 0.11)."""

from __future__ import annotations

import sys

from . import vllm_plugin_file


def main(argv: list[str]) -> int:
    if argv[:1] != ["vllm"]:
        print(
            "usage: python -m parsebridge.plugins vllm   (prints the vLLM plugin file's path)",
            file=sys.stderr,
        )
        return 2
    print(vllm_plugin_file())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
