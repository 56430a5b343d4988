import sys

try:  # (Ctrl-C while the command's modules load: a line and status 130, as later on; no traceback)
    from .cli import console_main
except KeyboardInterrupt:
    print("interrupted (Ctrl-C)", file=sys.stderr)
    sys.exit(130)

console_main()
