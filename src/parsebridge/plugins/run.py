"""Register parsebridge parsers, then run a server module as ``python -m`` would.

    python -m parsebridge.plugins.run dynamo.frontend --dyn-chat-processor vllm \\
        --tool-call-parser pb:builtin:hermes --reasoning-parser pb:builtin:qwen3

For launchers that take parser names but never import a parser plugin:
Dynamo 1.6.1's frontend parses vLLM's ``--tool-parser-plugin`` and does not
import it, and an SGLang run from a source tree has no installed entry
point. This registers the plugin of every framework installed here (vLLM:
`parsebridge.plugins.vllm`; SGLang: `parsebridge.plugins.sglang.register_all`)
in this process, then runs MODULE with the remaining arguments. Processes the
server starts later register only through the frameworks' own hooks.
"""

from __future__ import annotations

import importlib.util
import runpy
import sys


def register_installed() -> list[str]:
    """Register into every installed framework; the frameworks registered into."""
    done = []
    if importlib.util.find_spec("vllm") is not None:
        importlib.import_module("parsebridge.plugins.vllm")
        done.append("vllm")
    if importlib.util.find_spec("sglang") is not None:
        importlib.import_module("parsebridge.plugins.sglang").register_all()
        done.append("sglang")
    return done


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args else 2
    module, rest = args[0], args[1:]
    register_installed()
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
