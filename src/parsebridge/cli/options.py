"""A misspelt option is named as such, with the options it looks like.

argparse reads a subcommand's unknown option as an extra argument: ``parse --tool-parsr
builtin:hermes out.txt`` then takes the spec for the input file and reports, with the
top-level usage, ``unrecognized arguments: --tool-parsr out.txt``; ``conformance --backnd
builtin`` takes ``builtin`` for a sub-subcommand (``invalid choice: 'builtin' (choose from
'diff', 'support')``). `check_options` reads the line first, with the parser of the
(sub-)subcommand each word belongs to, and stops at the first option none of them knows, or
at a misspelt subcommand (``comapre``: argparse lists the choices but suggests none).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from ..protocol.errors import closest
from ..terminal import whole_number

_NUMBER = re.compile(r"^-\d+(\.\d*)?$")


#: argparse type: a whole number ≥ 0, for how many things are shown or drawn.
count = whole_number(0)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The (sub-)subcommands `parser` takes, by name (none: an empty dict)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _known(parser: argparse.ArgumentParser, option: str) -> argparse.Action | None:
    """The action `option` names in `parser`: exactly, as a unique prefix (argparse's
    abbreviations), or a short option with its value attached (``-j4``)."""
    actions = parser._option_string_actions
    if option in actions:
        return actions[option]
    if option.startswith("--"):
        hits = {a for o, a in actions.items() if o.startswith(option)}
        return hits.pop() if len(hits) == 1 else None
    return actions.get(option[:2])


def _takes_values(action: argparse.Action | None) -> bool:
    return action is not None and action.nargs != 0


def check_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """Exit with a usage error naming the first option of the line that its subcommand does
    not know, and the options it looks like; any other mistake is left to argparse."""
    current, expects_value = parser, False
    for word in argv:
        if word == "--":
            return
        if word.startswith("-") and word != "-" and not _NUMBER.match(word):
            option = word.split("=", 1)[0]
            action = _known(current, option)
            if action is None:
                hint = closest(option, [o for o in current._option_string_actions if o.startswith("--")], n=1)
                did = f" (did you mean {hint[0]}?)" if hint else ""
                current.error(f"unrecognized option {option}{did}")
            expects_value = "=" not in word and _takes_values(action)
            continue
        if not expects_value:
            subs = _subcommands(current)
            if subs and word not in subs:
                _misspelt_subcommand(current, word, list(subs))
            current = subs.get(word, current)
        expects_value = False


def _misspelt_subcommand(parser: argparse.ArgumentParser, word: str, names: list[str]) -> None:
    """A word where a (sub-)subcommand goes that looks like one (``comapre``): named, with it;
    anything else is left to argparse (its "invalid choice", or a positional it takes)."""
    hint = closest(word, names, n=1)
    if hint:
        parser.error(f"unknown command {word!r} (did you mean {hint[0]!r}?)")
