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

from ..protocol import ParsebridgeError
from .settings import on_error_policy


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


def _findable(module: str) -> bool:
    """Whether `module` can be run: looked up before registering (which imports the frameworks,
    seconds), so a misspelt name is said at once, not as a traceback after them."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing, or an empty name
        return False


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    module, rest = args[0], args[1:]
    if not _findable(module):
        print(f"error: no module named {module!r} to run (as python -m {module} would)", file=sys.stderr)
        return 2
    try:
        on_error_policy()  # read here too: with no framework installed nothing else reads it
        register_installed()
    except ParsebridgeError as exc:  # a PARSEBRIDGE_PLUGIN_* setting the plugins cannot use
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
