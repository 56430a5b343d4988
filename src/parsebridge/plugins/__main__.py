"""``python -m parsebridge.plugins vllm``: the vLLM plugin's file path (for ``--tool-parser-plugin`` on vLLM 0.11)."""

from __future__ import annotations

import sys

from . import vllm_plugin_file

USAGE = """\
usage: python -m parsebridge.plugins vllm

Prints the path of the vLLM plugin file, for `vllm serve --tool-parser-plugin PATH` on
vLLM releases that load plugins by file (0.11); newer releases take the module name
`parsebridge.plugins.vllm`.

exit status:
  0    the path was printed (or this help)
  2    usage error: no or another argument"""


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if argv != ["vllm"]:
        print(USAGE, file=sys.stderr)
        return 2
    print(vllm_plugin_file())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
